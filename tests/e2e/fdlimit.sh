# Out of file descriptors (a low RLIMIT_NOFILE): threads that cannot get a
# perf_event descriptor sample with a POSIX CPU-time timer instead, one line
# says so, and every thread's sample weights still add up to its CPU time.
# Under ulimit -n 40 sonde keeps at most 1 + 37 / 16 = 3 descriptors (its
# stream and two clocks, docs/ENV.md "Descriptors"): main and the first
# thread get a perf_event clock, the other three a timer.
. "$(dirname "$0")/lib.sh"
(ulimit -n 40; LD_PRELOAD="$LIB" SONDE_OUTPUT=p SONDE_COUNTERS=none exec "$B/tests/bin/wl_threads" 4 0.4) >p.out 2>p.err ||
	fail "wl_threads failed with ulimit -n 40: $(cat p.err)"
grep -q '^checksum ' p.out || fail "output changed: $(cat p.out)"
want="sonde: cpu-time@1ms: no file descriptor left for a perf_event task clock within sonde's share of RLIMIT_NOFILE (3 of 40); threads from now on may sample with a POSIX CPU-time timer (raise ulimit -n for exact rates)"
[ "$(cat p.err)" = "$want" ] || fail "stderr: $(cat p.err)"
f=$(ls p/*.sonde)
valid_stream "$f"
# weight per tid, from the dump: THREAD maps stream thread ids to tids.
awk -F'[:,}]' '
	/"kind":"THREAD",/ { for (i = 1; i < NF; i++) { if ($i == "\"thread\"") th = $(i+1); if ($i == "\"tid\"") tid[th] = $(i+1) } }
	/"kind":"SAMPLE"/ { for (i = 1; i < NF; i++) { if ($i == "\"thread\"") th = $(i+1); if ($i == "\"weight\"") w[th] += $(i+1) } }
	END { for (th in tid) print tid[th], w[th] + 0 }' "$T/dump.json" >weights.txt
while read -r _ name _ tid _ cpu _ user; do
	got=$(awk -v t="$tid" '$1 == t {print $2}' weights.txt)
	cpu_ms=$((cpu / 1000000)) user_ms=$((user / 1000000))
	# tick-bound timers: allow 15 %
	awk -v s="${got:-0}" -v u="$user_ms" -v c="$cpu_ms" 'BEGIN { exit !(s >= u * 0.85 - 4 && s <= c * 1.15 + 4) }' ||
		fail "$name: weight ${got:-0} periods for $user_ms ms user / $cpu_ms ms CPU"
	pass "$name: weight $got periods for $cpu_ms ms of CPU"
done < <(grep '^thread ' p.out)

# With a perf_event counter too (cpu-migrations): threads that get no counter
# descriptors say so once, and their samples are flagged (never zeros).
(ulimit -n 9; LD_PRELOAD="$LIB" SONDE_OUTPUT=c SONDE_COUNTERS=cpu-migrations exec "$B/tests/bin/wl_threads" 4 0.2) >c.out 2>c.err ||
	fail "wl_threads with counters failed with ulimit -n 9: $(cat c.err)"
grep -q '^checksum ' c.out || fail "output changed: $(cat c.out)"
grep -qE "^sonde: thread [0-9]+: counters unavailable: no file descriptor left within sonde's share of RLIMIT_NOFILE \(1 of 9\) \(its samples carry no counter values; raise RLIMIT_NOFILE\)$" c.err ||
	fail "no counters message: $(cat c.err)"
"$SONDE" dump "$(ls c/*.sonde)" | grep '"kind":"SAMPLE"' | grep -q '"flags":8' || fail "samples without counters are not flagged"
pass "counters out of descriptors: said once, samples flagged"

# Counters from getrusage (context switches, faults) need no descriptor: every
# thread's samples carry them, none is flagged, and nothing is said about them.
(ulimit -n 9; LD_PRELOAD="$LIB" SONDE_OUTPUT=r SONDE_COUNTERS=page-faults,context-switches exec "$B/tests/bin/wl_threads" 4 0.2) >r.out 2>r.err ||
	fail "wl_threads with rusage counters failed with ulimit -n 9: $(cat r.err)"
grep -q '^checksum ' r.out || fail "output changed: $(cat r.out)"
grep -q 'counters unavailable' r.err && fail "rusage counters said unavailable: $(cat r.err)"
"$SONDE" dump "$(ls r/*.sonde)" >r.json
grep '"kind":"SAMPLE"' r.json | grep -q '"flags":8' && fail "rusage counters: samples flagged without counters"
grep '"kind":"SAMPLE"' r.json | grep -q '"deltas":' || fail "rusage counters: no sample carries deltas"
pass "counters from getrusage: no descriptor needed, every sample carries them"
