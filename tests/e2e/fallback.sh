# Where perf_event is refused (here: a seccomp filter, as in containers or at
# perf_event_paranoid=3), cpu-time falls back to a POSIX CPU-time timer: one
# line says so, the header records the mechanism and why, and the samples'
# weights (1 + timer overrun) still add up to the CPU time the program says
# it used (within 10 %).
. "$(dirname "$0")/lib.sh"
"$B/tests/bin/noperf" true || skip "cannot install a seccomp filter here"
"$B/tests/bin/noperf" env LD_PRELOAD="$LIB" SONDE_OUTPUT=p WL_CPU=1 "$B/tests/bin/lifecycle" spin 1 >p.out 2>p.err ||
	fail "program failed under the fallback: $(cat p.err)"
grep -qx 'done' p.out || fail "program output changed"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
want="sonde: cpu-time@1ms: perf_event task clock unavailable: Permission denied, perf_event_paranoid=$paranoid (sampling with a POSIX CPU-time timer, limited to the scheduler tick; lower kernel.perf_event_paranoid for exact rates)"
[ "$(cat p.err)" = "$want" ] || fail "stderr: $(cat p.err)"
f=$(ls p/*.sonde)
valid_stream "$f"
head -n 1 "$T/dump.json" | grep -q '"mechanism":"posix-timer:thread-cputime","signal":[0-9]*,"fallback_reason":"perf_event_open refused: Permission denied' ||
	fail "header does not record the fallback: $(head -n 1 "$T/dump.json")"
grep -q '"kind":"NOTE".*perf_event task clock unavailable' "$T/dump.json" || fail "no NOTE record"
weight=$(grep '"kind":"SAMPLE"' "$T/dump.json" | grep -o '"weight":[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s}')
samples=$(grep -c '"kind":"SAMPLE"' "$T/dump.json")
# the timer only fires on ticks, but its overruns make up the periods between
read -r user_ms cpu_ms < <(cpu_of p.out spin_work)
expect_samples "fallback: weights" "$weight" "$user_ms" "$cpu_ms" 0.10
pass "fallback: $samples samples weighing $weight periods for $user_ms ms user / $cpu_ms ms CPU"
