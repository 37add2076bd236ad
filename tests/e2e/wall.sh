# wall-time samples blocked time too; cpu-time only running time; both at
# once are told apart by source. With both, one clock per thread serves the
# two (docs/ENV.md): at equal periods two task clocks used to lose almost
# every second signal (cpu-time 17 samples for 400 ms).
. "$(dirname "$0")/lib.sh"
for spec in wall-time@10ms,cpu-time@1ms wall-time@1ms,cpu-time@1ms; do
	rm -rf p
	wp=$(echo "$spec" | sed 's/wall-time@\([0-9]*\)ms.*/\1/')
	t0=$(date +%s%N)
	SONDE_SAMPLE=$spec WL_CPU=1 profile p "$B/tests/bin/lifecycle" wall || fail "$spec: exit $?"
	elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	grep -qx 'wall done' p.out || fail "$spec: output: $(cat p.out)"
	"$SONDE" report --view sources --format csv p >src.csv || fail "$spec: report --view sources failed"
	f=$(ls p/*.sonde)
	valid_stream "$f"
	# wall-time is source 0, cpu-time source 1 (header order); weights in periods.
	weight() { grep '"kind":"SAMPLE"' "$T/dump.json" | grep "\"source\":$1," |
		grep -o '"weight":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'; }
	wall=$(weight 0) cpu=$(weight 1)
	# wall-time: the process's whole life (0.4 s asleep, 0.4 s of CPU, longer on
	# a busy machine): at most the elapsed time, at least what the program spent.
	awk -v n="$wall" -v e="$elapsed_ms" -v p="$wp" 'BEGIN { exit !(n * p >= 780 && n * p <= e + 2 * p) }' ||
		fail "$spec: wall-time stands for $((wall * wp)) ms in $elapsed_ms ms (the program slept 400 and ran 400)"
	read -r user_ms cpu_ms < <(cpu_of p.out spin_work)
	expect_samples "$spec: cpu-time" "$cpu" "$user_ms" "$cpu_ms" 0.10
	# Blocked time shows up in sleeper only for wall-time.
	sl=$("$SONDE" report --source wall-time --metric time --format csv p | awk -F, '$1 == "[blocked]" {print $2}')
	awk -v n="${sl:-0}" 'BEGIN { exit !(n >= 360 && n <= 480) }' ||
		fail "$spec: [blocked] ${sl:-0} ms of wall-time (the program slept 400 ms)"
	"$SONDE" report --source cpu-time --format folded p | grep -q '\[blocked\]' &&
		fail "$spec: cpu-time has blocked samples"
	pass "$spec: wall-time $((wall * wp)) ms in $elapsed_ms ms, cpu-time $cpu samples for $user_ms ms user, [blocked] ${sl} ms (wall only)"
done
