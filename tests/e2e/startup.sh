# What a process that asks for nothing special leaves and loads (issue 9 items
# 5 and 8): PAPI and libpfm4 are not loaded unless a PAPI event is asked for; a
# fork-then-exec child leaves no stream of its own (the new image writes that
# pid's); a process that ends before its first sample writes one small valid
# stream (header, modules, its thread's CPU time, END; no samples); a process
# that lives a flush period without a sample has its stream on disk while it
# still runs; sonde run hands children an absolute output directory.
. "$(dirname "$0")/lib.sh"

# 1. PAPI and libpfm4 stay out of a process that does not ask for them
LD_PRELOAD="$LIB" SONDE_OUTPUT=m1 grep -cE 'libpapi|libpfm' /proc/self/maps >maps.out 2>maps.err
[ "$(cat maps.out)" = 0 ] || fail "libpapi/libpfm mapped without a PAPI event: $(cat maps.out) lines; $(cat maps.err)"
LD_PRELOAD="$LIB" SONDE_OUTPUT=m2 SONDE_COUNTERS=PAPI_TOT_CYC grep -cE 'libpapi' /proc/self/maps >maps2.out 2>/dev/null
[ "$(cat maps2.out)" -gt 0 ] || fail "PAPI_TOT_CYC asked for, but libpapi not loaded"
pass "libpapi/libpfm loaded only when a PAPI event is asked for"

# 2. fork-then-exec: one stream per process (the shell and its two children).
# A child sampled before its exec keeps a stream of its own (docs/FORMAT.md) and
# a first period may be as short as period/64: at 1 s, no process here is sampled
LD_PRELOAD="$LIB" SONDE_OUTPUT=fe SONDE_SAMPLE=cpu-time@1s /bin/sh -c '/bin/true; /bin/true; echo "sh $$"' >fe.out 2>fe.err ||
	fail "sh failed: $(cat fe.err)"
n=$(ls fe | wc -l)
[ "$n" = 3 ] || fail "fork-then-exec: $n streams for 3 processes: $(ls fe | tr '\n' ' ')"
[ "$(ls fe | grep -cE '^(da)?sh\.')" = 1 ] && [ "$(ls fe | grep -c '^true\.')" = 2 ] ||
	fail "fork-then-exec: streams $(ls fe | tr '\n' ' ')"
# exec without fork: the pid's stream is the new image's only
LD_PRELOAD="$LIB" SONDE_OUTPUT=ex SONDE_SAMPLE=cpu-time@1s /bin/sh -c 'exec /bin/true' 2>ex.err || fail "exec: $(cat ex.err)"
[ "$(ls ex | tr '\n' ' ')" = "$(ls ex | grep '^true\.' | tr '\n' ' ')" ] && [ "$(ls ex | wc -l)" = 1 ] ||
	fail "exec: streams $(ls ex | tr '\n' ' ')"
pass "fork-then-exec and exec: one stream per process ($(ls fe | tr '\n' ' '))"

# 3. ends before its first sample: one small valid stream, no samples
f=$(ls fe/true.* | head -n 1)
valid_stream "$f"
grep -q '"kind":"SAMPLE"' "$T/dump.json" && fail "$f: /bin/true has samples?"
grep -q '"kind":"THREAD_END"' "$T/dump.json" || fail "$f: no THREAD_END"
size=$(stat -c %s "$f")
[ "$size" -lt 4096 ] || fail "$f: $size bytes for a process without samples"
pass "/bin/true: one valid stream of $size bytes, no samples"

# 4. lives a flush period without a sample: with a writer thread
# (SONDE_WRITER=thread; a program with threads has one) the file exists
# while it runs
LD_PRELOAD="$LIB" SONDE_OUTPUT=lz SONDE_FLUSH_MS=50 SONDE_WRITER=thread sleep 3 &
pid=$!
for i in $(seq 100); do [ -e lz ] && [ -n "$(ls lz)" ] && break; sleep 0.05; done
kill -0 $pid 2>/dev/null || fail "sleep ended before its stream was checked"
[ -n "$(ls lz 2>/dev/null)" ] || fail "no stream while sleep 3 runs (flush period 50 ms)"
wait $pid
valid_stream "$(ls lz/*)"
pass "a process without samples has its stream after one flush period (writer thread)"
# A single-threaded program has no writer thread (docs/ENV.md, "What the
# program can see of sonde"): its samples write, so a sleeper writes
# nothing until it ends; ended by SIGTERM, it writes the whole stream from
# the signal's handler, and dies by the signal
LD_PRELOAD="$LIB" SONDE_OUTPUT=lt SONDE_FLUSH_MS=50 sleep 3 &
pid=$!
sleep 0.5
[ "$(grep -c '^Threads:' /proc/$pid/status)" = 1 ] && [ "$(awk '/^Threads:/ {print $2}' /proc/$pid/status)" = 1 ] ||
	fail "sleep under sonde: $(grep '^Threads:' /proc/$pid/status) (1 without sonde)"
kill -TERM $pid
wait $pid; st=$?
[ $st -eq 143 ] || fail "sleep + SIGTERM: status $st"
valid_stream "$(ls lt/*)"
grep '"kind":"END"' "$T/dump.json" | grep -q '"signal":15' || fail "sleep + SIGTERM: $(tail -n 1 "$T/dump.json")"
pass "single-threaded sleeper: one task, as without sonde; SIGTERM: complete stream written by the handler"

# 5. sonde run: children that run elsewhere write into the same directory
mkdir sub
"$SONDE" run -o rel -- /bin/sh -c 'cd sub && /bin/true' >run.out 2>run.err || fail "sonde run: $(cat run.err)"
[ ! -e sub/rel ] || fail "a child wrote into sub/rel"
[ "$(ls rel | grep -c '^true\.')" = 1 ] || fail "the child's stream is not in rel: $(ls rel | tr '\n' ' ')"
pass "sonde run: a child in another directory writes into the same output directory"
