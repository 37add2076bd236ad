# Region timing aggregated in the process (SONDE_REGIONS=on, REGION_STATS) on
# a real program, tests/fixtures/programs/phases.c, and what the regions view makes of
# it:
#   1. two threads, nested regions, N iterations: exactly N calls per phase and
#      per nested region in each thread; --group-by region one row per region
#      (2N calls); inclusive times between the elapsed times the program
#      measured inside and around the same calls (lib.sh region_times_ok);
#      iterations sort as numbers.
#   2. the stream grows with the number of distinct regions, not with calls:
#      10^3 and 10^6 iterations of the same regions give streams of about the
#      same size (the 10^6 one not 2 KB larger), with the exact call counts.
#      (A run also writes each changed region's totals once a flush period:
#      that grows with time, so both runs flush only at their end here.)
#   3. nothing is lost on fork (the child's stream counts the child's calls
#      only), SIGTERM and SIGKILL beyond one flush period.
#   4. the splice: `--view tree` puts each context level under the frame of the
#      function that opened it (phase=solve under run, region=smooth under
#      solve: different depths), and --context-above keeps the old layout.
# Usage: regions.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/phases"
[ -x "$P" ] || skip "no phases program in $B"

# 1. Two threads, 12 iterations (values 0..11: 10 and 11 sort after 9).
N=12
SONDE_REGIONS=on WL_CPU=1 profile a "$P" -t 2 -i $N -u 0.5 || fail "two threads: exit $?"
valid_stream "$(ls a/*.sonde)"
"$SONDE" report --view regions --by-thread --group-by phase --format csv a >a.csv ||
	fail "report --group-by phase --by-thread failed"
for phase in solve exchange checkpoint; do
	calls=$(awk -F, -v p="phase=$phase" '$2 == p {print $3}' a.csv | tr '\n' ' ')
	[ "$calls" = "$N $N " ] || fail "phase=$phase: calls per thread '$calls', expected $N in each of 2 threads: $(cat a.csv)"
done
"$SONDE" report --view regions --group-by region --format csv a >r.csv || fail "report --group-by region failed"
[ "$(sed 1d r.csv | cut -d, -f1)" = "region=smooth" ] || fail "--group-by region: rows $(cut -d, -f1 r.csv | tr '\n' ' ')"
smooth_calls=$(awk -F, 'NR == 2 {print $2}' r.csv)
[ "$smooth_calls" -eq $((2 * N)) ] || fail "region=smooth: $smooth_calls calls, expected $((2 * N))"
# inclusive times against the program's own clock (the sum over its threads)
smooth_ms=$(awk -F, 'NR == 2 {print $3}' r.csv)
solve_ms=$("$SONDE" report --view regions --group-by phase --format csv a | awk -F, '$1 == "phase=solve" {print $3}')
why=$(region_times_ok a.out 1e6 "$smooth_ms" "$solve_ms") || fail "times (ms): $why"
read -r psolve psmooth < <(awk '$1 == "wall" { a += $4; b += $6 } END { print a / 1e6, b / 1e6 }' a.out)
"$SONDE" report --view regions --group-by iteration --format csv a | sed 1d | cut -d, -f1 >it.txt
seq 0 $((N - 1)) | sed 's/^/iteration=/' >it.want
cmp -s it.txt it.want || fail "iterations not in numeric order: $(tr '\n' ' ' <it.txt)"
pass "two threads x $N iterations: $N calls per phase per thread, region=smooth $smooth_calls calls; smooth $smooth_ms ms and solve $solve_ms ms against the program's $psmooth and $psolve ms; iterations in numeric order"

# 2. Stream size: 10^3 against 10^6 iterations of the same 4 regions (no
# iteration values, work units of 0 ms, samples every second at most).
for n in 1000 1000000; do
	SONDE_REGIONS=on SONDE_SAMPLE=cpu-time@1s SONDE_FLUSH_MS=60000 profile s$n "$P" -I -u 0 -i $n ||
		fail "$n iterations: exit $?"
	"$SONDE" report --view regions --format csv s$n >s$n.csv || fail "report s$n"
	calls=$(awk -F, '$1 == "phase=solve/region=smooth" {print $2}' s$n.csv)
	[ "$calls" = "$n" ] || fail "$n iterations: region=smooth has '$calls' calls: $(cat s$n.csv)"
done
small=$(du -b s1000/*.sonde | cut -f1)
big=$(du -b s1000000/*.sonde | cut -f1)
[ "$big" -le $((small + 2048)) ] || fail "stream size grows with calls: $small bytes for 10^3 iterations, $big for 10^6"
pass "stream size flat: $small bytes for 10^3 iterations, $big bytes for 10^6 (4 regions each)"

# 3. fork without exec: each process's stream has its own calls (the child's
# table starts empty, not with the parent's totals).
SONDE_REGIONS=on profile f "$P" -I -u 0.2 -i 5 -F || fail "fork: exit $?"
grep -qx 'child status 0' f.out || fail "fork: $(cat f.out)"
[ "$(ls f/*.sonde | wc -l)" -eq 2 ] || fail "fork: $(ls f) (expected two streams)"
for s in f/*.sonde; do
	calls=$("$SONDE" report --view regions --format csv "$s" | awk -F, '$1 == "phase=solve" {print $2}')
	[ "$calls" = 5 ] || fail "fork: $s has '$calls' calls of phase=solve, expected 5 (its own)"
done
pass "fork: parent and child streams have 5 calls of phase=solve each"
# exec: the image that execs writes its totals first.
SONDE_REGIONS=on profile e "$P" -I -u 0.2 -i 7 -E || fail "exec: exit $?"
calls=$(for s in e/*.sonde; do "$SONDE" report --view regions --format csv "$s" 2>/dev/null; done |
	awk -F, '$1 == "phase=solve" {print $2}')
[ "$calls" = 7 ] || fail "exec: phase=solve has '$calls' calls in the streams, expected 7"
pass "exec: the 7 calls of phase=solve written before the exec"
# misnesting under SONDE_REGIONS=on: the same messages, repaired, times kept
"$P" -i 1 -u 1 -m >mp.out 2>&1
SONDE_REGIONS=on profile m "$P" -i 1 -u 1 -m || fail "misuse with regions: exit $?"
cmp -s mp.out m.out || fail "misuse with regions: output changed"
[ "$(grep -c '^sonde: ' m.err)" -eq 4 ] || fail "misuse with regions: stderr $(cat m.err)"
"$SONDE" report --view regions --format csv m >m.csv || fail "misuse: report"
awk -F, '$1 == "phase=after" && $2 == 1 {ok = 1} END {exit !ok}' m.csv ||
	fail "misuse: annotations after the misuse not timed: $(cat m.csv)"
pass "misnesting with regions on: 4 messages, program unchanged, later regions timed"
# exec, SIGTERM, SIGKILL: the last flush period's totals are in the stream.
SONDE_REGIONS=on SONDE_FLUSH_MS=50 LD_PRELOAD="$LIB" SONDE_OUTPUT=k "$P" -I -u 1 -i 100000 >k.out 2>k.err &
pid=$!
sleep 1
kill -KILL $pid
wait $pid 2>/dev/null
calls=$("$SONDE" report --view regions --format csv k 2>/dev/null | awk -F, '$1 == "phase=solve" {print $2}')
[ "${calls:-0}" -gt 10 ] || fail "SIGKILL after 1 s: phase=solve has '${calls:-0}' calls in the stream (flush period 50 ms)"
pass "SIGKILL: $calls calls of phase=solve kept from the last flush"
SONDE_REGIONS=on LD_PRELOAD="$LIB" SONDE_OUTPUT=t "$P" -I -u 1 -i 100000 >t.out 2>t.err &
pid=$!
sleep 1
kill -TERM $pid
wait $pid 2>/dev/null
calls=$("$SONDE" report --view regions --format csv t 2>/dev/null | awk -F, '$1 == "phase=solve" {print $2}')
[ "${calls:-0}" -gt 10 ] || fail "SIGTERM after 1 s: phase=solve has '${calls:-0}' calls in the stream"
pass "SIGTERM: $calls calls of phase=solve written at the end"
# 4. The splice, on the two-thread run of 1.
"$SONDE" report --view tree --format folded a >tree.folded || fail "tree folded failed"
"$SONDE" report --view tree --format folded --context-above a >above.folded || fail "tree --context-above failed"
grep -q ';run;worker=[12];iteration=[0-9]*;phase=solve;solve;region=smooth;work ' tree.folded ||
	fail "spliced tree: no run;...;phase=solve;solve;region=smooth;work path: $(grep smooth tree.folded | head -3)"
n_smooth=$(grep -c 'region=smooth' tree.folded)
n_spliced=$(grep -c ';solve;region=smooth;' tree.folded)
[ "$n_smooth" -gt 0 ] && [ "$n_smooth" -eq "$n_spliced" ] ||
	fail "spliced tree: $n_spliced of $n_smooth region=smooth paths under solve: $(grep smooth tree.folded | grep -v ';solve;region=smooth;' | head -3)"
grep -q '^run=main-run;worker=[12];iteration=[0-9]*;phase=solve;region=smooth;[^=]*;solve;work ' above.folded ||
	fail "--context-above: $(grep smooth above.folded | head -2)"
cmp -s <(awk '{s += $NF} END {print s}' tree.folded) <(awk '{s += $NF} END {print s}' above.folded) ||
	fail "the two layouts count different samples"
pass "splice: every region=smooth under solve and phase=solve under run ($n_smooth paths); --context-above puts them above the stack, same samples"
exit 0
