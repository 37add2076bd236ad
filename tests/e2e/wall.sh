# wall-time samples blocked time too; cpu-time only running time; both at
# once are told apart by source.
. "$(dirname "$0")/lib.sh"
t0=$(date +%s%N)
SONDE_SAMPLE=wall-time@10ms,cpu-time@1ms profile p "$B/lifecycle" wall || fail "exit $?"
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -qx 'wall done' p.out || fail "output: $(cat p.out)"
"$SONDE" report --view sources --format csv p >src.csv || fail "report --view sources failed"
f=$(ls p/*.sonde)
valid_stream "$f"
# wall-time is source 0, cpu-time source 1 (header order).
count() { grep '"kind":"SAMPLE"' "$T/dump.json" | grep -c "\"source\":$1,"; }
wall=$(count 0) cpu=$(count 1)
# 0.4 s asleep + 0.4 s of CPU (longer in wall time on a busy machine):
# at least 80 wall periods, at most the elapsed time; 400 cpu periods.
awk -v n="$wall" -v e="$elapsed_ms" 'BEGIN { exit !(n >= 65 && n <= e / 10 + 2) }' ||
	fail "wall-time: $wall samples in $elapsed_ms ms"

awk -v n="$cpu" 'BEGIN { exit !(n >= 360 && n <= 440) }' || fail "cpu-time: $cpu samples for 0.4 s CPU"
# Blocked time shows up in sleeper only for wall-time.
sl=$("$SONDE" report --format csv p | awk -F, '$1 == "sleeper" {print $4}')
awk -v n="${sl:-0}" 'BEGIN { exit !(n >= 25 && n <= 50) }' || fail "sleeper: ${sl:-0} samples (wall-time only, expected ~40)"
pass "wall-time $wall samples, cpu-time $cpu samples, sleeper ${sl} (wall only)"
