# run.sh BUILD_DIR CASE - one fault-injection case (tests/fault/CMakeLists.txt).
#
# Each case runs a program (fault_wl; the sweeps also lifecycle and dlrpath)
# under libsonde with the fault shim preloaded first (shim.c: SD_FAULT fails
# chosen calls that libsonde makes, never the program's) and checks three
# things:
#   (a) the program is unchanged: the exit status and stdout of a plain run;
#   (b) sonde says what happened, in its exact words, on stderr, and/or the
#       stream records why data is missing (NOTE, incomplete stream,
#       coverage: threads not sampled);
#   (c) the analyzer (sonde dump, sonde report) reads what is left, or
#       refuses it with its own one-line message, without crashing.
# Every case checks, in the shim's log, that its fault really fired.
# No expectation is a timing threshold: a fault meant for a later call is
# reached by letting the program run until the shim's log exists (WL_UNTIL),
# and sample counts are compared with the CPU time the program reports.
. "$(dirname "$0")/../e2e/lib.sh"
# The cases (tests/fault/CMakeLists.txt registers each as fault.CASE from this line):
# one fault each, its exact message and what the stream keeps; libsonde's own memory
# (nomalloc: no malloc call of its own, mem/mem.h); every call of one function failed
# in turn (sweep_*).
CASES="outdir create create_emfile write_first write_later perf_probe perf_thread_emfile perf_thread_refused counters_probe counters_thread timer_lazy timer_none malloc_writer buffer modules_scan ring_main ring_thread ring_none ring_threads_none proc_task spared nomalloc sweep_mmap sweep_mmap_after sweep_open sweep_openat sweep_write sweep_timer_create sweep_perf_event_open sweep_dlopen sweep_fork_mmap sweep_fork_openat sweep_fork_write"
CASE=${2:?usage: run.sh BUILD_DIR CASE}
case " $CASES " in *" $CASE "*) ;; *) fail "unknown case '$CASE' (not in CASES)" ;; esac
P=$(pwd -P) # $T as the kernel names it (sonde prints resolved paths)
SHIM="$B/tests/bin/libsonde_fault.so"
WL="$B/tests/bin/fault_wl"
[ -x "$WL" ] && [ -f "$SHIM" ] || fail "build fault_wl and libsonde_fault.so first"

# The plain run, the reference for (a).
WL_ARGS=(2 20000)
RUN_ARGS=("${WL_ARGS[@]}") # what faulted runs the program with, by default
"$WL" "${WL_ARGS[@]}" >plain.out 2>plain.err
plain_rc=$?
[ "$plain_rc" = 0 ] || fail "fault_wl fails without sonde: $(cat plain.err)"

# faulted NAME SPEC [FAULT_WL ARGS...]: runs fault_wl under libsonde and the
# shim with SD_FAULT=SPEC, into the output directory NAME; stdout NAME.out,
# stderr NAME.err, the shim's log NAME.log; the status in $rc. Variables set
# on the call (WL_UNTIL=..., SONDE_...=...) reach the program.
faulted() {
	local name=$1 spec=$2
	shift 2
	[ $# -gt 0 ] || set -- "${RUN_ARGS[@]}"
	LD_PRELOAD="$SHIM:$LIB" SONDE_OUTPUT="$name" SD_FAULT="$spec" SD_FAULT_LOG="$T/$name.log" \
		"$WL" "$@" >"$name.out" 2>"$name.err"
	rc=$?
}

# unchanged NAME: (a), against the plain run (lines "cpu ..." aside: they
# are the CPU time the program measured, asked for with WL_CPU=1).
unchanged() {
	[ "$rc" = "$plain_rc" ] || fail "$1: exit status $rc, $plain_rc without sonde; stderr: $(cat "$1.err")"
	grep -v '^cpu ' "$1.out" >"$1.cmp"
	cmp -s plain.out "$1.cmp" || fail "$1: the program's output changed: $(diff plain.out "$1.cmp" | head -n 5)"
}

# fired NAME LINE: the shim's log has LINE (a fault that really happened),
# the caller's offset in libsonde.so left out.
faults() { sed 's/ libsonde\.so+0x[0-9a-f]*//' "$1.log" 2>/dev/null; }
fired() {
	faults "$1" | grep -qxF -- "$2" ||
		fail "$1: the fault did not fire as '$2' (log: $(head -c 300 "$1.log" 2>/dev/null))"
}

# fired_like NAME REGEX: the same, for a line matched by an extended regex.
fired_like() {
	faults "$1" | grep -qE -- "$2" ||
		fail "$1: no fault like '$2' fired (log: $(head -c 300 "$1.log" 2>/dev/null))"
}

# said NAME TEXT: sonde's stderr is exactly TEXT (one line per message).
said() {
	[ "$(cat "$1.err")" = "$2" ] || fail "$1: stderr is
$(cat "$1.err")
expected
$2"
}

# stream NAME: the one stream file in NAME/.
stream() {
	local f
	f=$(ls "$1"/*.sonde 2>/dev/null)
	[ -n "$f" ] && [ "$(echo "$f" | wc -l)" = 1 ] || fail "$1: expected one stream, found: ${f:-none}"
	echo "$f"
}

# analyzer_ok FILE: (c) sonde dump, sonde report and its coverage view end
# with one of the CLI's own exit codes (0 ok, 3 I/O, 4 bad input: never a
# crash or a sanitizer's report), every line they print on stderr starts
# with "sonde: " (or "coverage: "); the dump is left in $T/dump.json, its
# status in $dump_rc, the report in $T/report.txt, the coverage view (CSV)
# in $T/coverage.csv.
analyzer_ok() {
	local f=$1 r
	"$SONDE" dump "$f" >"$T/dump.json" 2>"$T/dump.err"
	dump_rc=$?
	case $dump_rc in 0 | 3 | 4) ;; *) fail "$f: sonde dump exited $dump_rc: $(head -c 500 "$T/dump.err")" ;; esac
	"$SONDE" report "$f" >"$T/report.txt" 2>"$T/report.err"
	r=$?
	case $r in 0 | 3 | 4) ;; *) fail "$f: sonde report exited $r: $(head -c 500 "$T/report.err")" ;; esac
	"$SONDE" report --view coverage --format csv "$f" >"$T/coverage.csv" 2>>"$T/report.err"
	r=$?
	case $r in 0 | 3 | 4) ;; *) fail "$f: sonde report --view coverage exited $r: $(head -c 500 "$T/report.err")" ;; esac
	# (the coverage view also notes on stderr what it could not measure)
	if grep -qvE '^(sonde|coverage): ' "$T/dump.err" "$T/report.err"; then
		fail "$f: the analyzer said something not in its own words: $(grep -hvE '^(sonde|coverage): ' "$T/dump.err" "$T/report.err" | head -n 3)"
	fi
	return 0
}

# shaped NAME: every line on stderr is one sonde message, shaped
# "sonde: <what>: <why> (<hint>)".
shaped() {
	local bad
	bad=$(grep -vE '^sonde: [^:]+(:[^(]*)?: .+ \(.+\)$' "$1.err")
	[ -z "$bad" ] || fail "$1: stderr has lines that are not one-line sonde messages: $bad"
}

# count_kind KIND: how many records of KIND $T/dump.json has.
count_kind() { grep -c "\"kind\":\"$1\"" "$T/dump.json"; }

# weights_match NAME TOL: the samples' weights stand for the CPU time the
# program's threads say they used (lines "cpu NAME cpu_ns N user_ns N").
weights_match() {
	local w u c
	w=$(grep '"kind":"SAMPLE"' "$T/dump.json" | grep -o '"weight":[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
	u=$(awk '$1 == "cpu" { s += $6 } END { printf "%.1f", s / 1e6 }' "$1.out")
	c=$(awk '$1 == "cpu" { s += $4 } END { printf "%.1f", s / 1e6 }' "$1.out")
	expect_samples "$1: sample weights" "$w" "$u" "$c" "$2"
}

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo "?")
fallback_msg="sonde: cpu-time@1ms: perf_event task clock unavailable: Permission denied, perf_event_paranoid=$paranoid (sampling with a POSIX CPU-time timer, limited to the scheduler tick; lower kernel.perf_event_paranoid for exact rates)"

# perf_event must work here for the cases that fail it on purpose.
perf_ok() {
	LD_PRELOAD="$LIB" SONDE_OUTPUT=probe "$WL" 0 10 >/dev/null 2>probe.err
	grep -q 'perf_event task clock unavailable' probe.err && skip "perf_event is refused here already"
	rm -rf probe probe.err
}

case $CASE in

# The output directory cannot be opened: the first open() libsonde makes is
# the start of its walk of SONDE_OUTPUT. One line, no stream, the program
# runs on.
outdir)
	faulted o 'open:1'
	fired o 'fault open 1 (.): EACCES'
	unchanged o
	said o "sonde: SONDE_OUTPUT: 'o': Permission denied (set SONDE_OUTPUT to a writable directory; this run is not profiled)"
	[ -e o ] && fail "outdir: the output directory was made anyway"
	pass "outdir: said once, nothing written, program unchanged"
	;;

# The stream file cannot be created (openat of <exe>.<host>.<pid>.sonde).
create)
	faulted c 'openat/.sonde:1+'
	fired_like c '^fault openat 1 \(fault_wl\..*\.sonde\): EACCES$'
	unchanged c
	said c "sonde: SONDE_OUTPUT: cannot create a file in '$P/c': Permission denied (set SONDE_OUTPUT to a writable directory; this run is not profiled)"
	[ -z "$(ls c)" ] || fail "create: files were left: $(ls c)"
	# A run that is not profiled does not pay for sampling: each thread's next
	# sample turns its sources off. strace shows the deliveries of the sampling
	# signal (SIGPROF here) after the line that says so: at most 3 for each of
	# the program's 3 threads, while it burns on (before: one per ms of CPU,
	# 727 of 735, and a throttling line beside a CPU hog).
	if command -v strace >/dev/null; then
		strace -f -qq -e trace=write -e signal=SIGPROF -o c2.strace \
			env LD_PRELOAD="$SHIM:$LIB" SONDE_OUTPUT=c2 SD_FAULT='openat/.sonde:1+' \
			SD_FAULT_LOG="$T/c2.log" SONDE_SIGNAL=27 WL_CPU=1 "$WL" 2 60000 >c2.out 2>c2.err ||
			fail "create: under strace: exit $?: $(head -3 c2.err)"
		read -r before after < <(awk '/write\(2, "sonde: SONDE_OUTPUT: cannot cre/ { lost = 1; next }
			/--- SIGPROF/ { if (lost) a++; else b++ } END { print b + 0, (lost ? a + 0 : -1) }' c2.strace)
		cpu_ms=$(awk '$1 == "cpu" { s += $4 } END { printf "%d", s / 1e6 }' c2.out)
		[ "$after" -ge 0 ] || fail "create: strace did not see the line: $(grep -c . c2.strace) lines"
		[ "$cpu_ms" -ge 500 ] || fail "create: the program ran $cpu_ms ms of CPU, too little to tell"
		[ "$after" -le 9 ] ||
			fail "create: $after samples were delivered after the stream was lost ($before before; the program ran $cpu_ms ms of CPU)"
		pass "create: said once, no file, program unchanged; $after signals after the loss ($before before) in $cpu_ms ms of CPU"
	else
		pass "create: said once, no file, program unchanged (no strace here: the sources left on are not checked)"
	fi
	;;

# Out of descriptors when the file is made: the directory's descriptor was
# the one kept for it; sonde closes it and makes the file by its absolute
# path. Nothing is lost and nothing needs saying.
create_emfile)
	faulted e 'openat/.sonde:1=EMFILE'
	fired_like e '^fault openat 1 \(fault_wl\..*\.sonde\): EMFILE$'
	unchanged e
	said e ""
	valid_stream "$(stream e)"
	analyzer_ok "$(stream e)"
	pass "create_emfile: the file made by its path on the second try, stream complete"
	;;

# The first write of the stream fails (ENOSPC): one line; the file is cut
# back to whole records (empty here) and the analyzer says so.
write_first)
	faulted w 'write/.sonde:1'
	fired_like w '^fault write 1 \(.*/w/fault_wl\..*\.sonde\): ENOSPC$'
	unchanged w
	f=$(stream w)
	said w "sonde: $P/$f: write failed: No space left on device (profiling data from now on is discarded; check free space)"
	[ -s "$f" ] && fail "write_first: the file is not empty ($(stat -c %s "$f") bytes)"
	analyzer_ok "$f"
	[ "$dump_rc" = 4 ] && [ "$(cat "$T/dump.err")" = "sonde: $f: empty file (not a sonde stream; the profiled process wrote nothing)" ] ||
		fail "write_first: sonde dump: status $dump_rc, $(cat "$T/dump.err")"
	pass "write_first: said once, empty file, the analyzer says it is empty"
	;;

# A later write fails (EIO, then every write after it): the file keeps the
# records written before, whole; the stream has no END and the report says
# it is incomplete.
write_later)
	WL_UNTIL="$T/w.log" faulted w 'write/.sonde:3+=EIO'
	fired_like w '^fault write 3 \(.*/w/fault_wl\..*\.sonde\): EIO$'
	unchanged w
	f=$(stream w)
	said w "sonde: $P/$f: write failed: Input/output error (profiling data from now on is discarded; check free space)"
	analyzer_ok "$f"
	[ "$dump_rc" = 0 ] && [ ! -s "$T/dump.err" ] || fail "write_later: sonde dump: status $dump_rc, $(cat "$T/dump.err")"
	head -n 1 "$T/dump.json" | grep -q '"kind":"HEADER"' || fail "write_later: no HEADER first"
	[ "$(count_kind END)" = 0 ] || fail "write_later: an END record was written after the failure"
	grep -qxF "sonde: $f: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; samples after its last flush are lost)" "$T/report.txt" ||
		fail "write_later: the report does not say the stream is incomplete: $(head -n 8 "$T/report.txt")"
	pass "write_later: said once, a valid prefix of $(wc -l <"$T/dump.json") records, reported incomplete"
	;;

# perf_event_open refused at start (the probe): the POSIX-timer fallback is
# said, recorded in the header and a NOTE, and the weights still add up.
perf_probe)
	perf_ok
	WL_CPU=1 faulted p 'perf_event_open:1'
	fired_like p '^fault perf_event_open 1 \([0-9]+\): EACCES$'
	unchanged p
	said p "$fallback_msg"
	f=$(stream p)
	valid_stream "$f"
	analyzer_ok "$f"
	head -n 1 "$T/dump.json" | grep -qF "\"mechanism\":\"posix-timer:thread-cputime\",\"signal\":" ||
		fail "perf_probe: the header does not name the timer: $(head -c 800 "$T/dump.json")"
	head -n 1 "$T/dump.json" | grep -qF "\"fallback_reason\":\"perf_event_open refused: Permission denied (perf_event_paranoid=$paranoid)\"" ||
		fail "perf_probe: the header does not say why: $(head -c 800 "$T/dump.json")"
	grep '"kind":"NOTE"' "$T/dump.json" | grep -qF "perf_event task clock unavailable" || fail "perf_probe: no NOTE"
	weights_match p 0.15
	pass "perf_probe: fallback said, recorded, weights match the CPU time"
	;;

# perf_event_open out of descriptors for the threads the program starts:
# they sample on a POSIX timer instead, said once.
perf_thread_emfile)
	perf_ok
	WL_CPU=1 faulted p 'perf_event_open:2+=EMFILE'
	fired_like p '^fault perf_event_open 2 \([0-9]+\): EMFILE$'
	unchanged p
	said p "sonde: cpu-time@1ms: no file descriptor left for a perf_event task clock (RLIMIT_NOFILE); threads from now on may sample with a POSIX CPU-time timer (raise ulimit -n for exact rates)"
	f=$(stream p)
	valid_stream "$f"
	analyzer_ok "$f"
	weights_match p 0.15
	pass "perf_thread_emfile: said once, weights match the CPU time"
	;;

# perf_event_open refused (not for want of descriptors) for the threads the
# program starts, after the probe at start worked (a seccomp filter set
# since): each samples on a POSIX timer instead, said once
# (a NOTE too). Samples are weighted by the timer's overruns, so the totals
# stay right. (The header still names perf_event:task-clock as the
# mechanism: it is one per source, not per thread.)
perf_thread_refused)
	perf_ok
	WL_CPU=1 faulted p 'perf_event_open:2+'
	fired_like p '^fault perf_event_open 2 \([0-9]+\): EACCES$'
	unchanged p
	said p "sonde: cpu-time@1ms: perf_event task clock refused for a new thread: Permission denied (such threads sample with a POSIX CPU-time timer, limited to the scheduler tick; lower kernel.perf_event_paranoid for exact rates)"
	f=$(stream p)
	valid_stream "$f"
	analyzer_ok "$f"
	for th in 1 2 3; do
		grep '"kind":"SAMPLE"' "$T/dump.json" | grep -q "\"thread\":$th," || fail "perf_thread_refused: thread $th has no sample"
	done
	grep '"kind":"NOTE"' "$T/dump.json" | grep -qF "perf_event task clock refused for a new thread" ||
		fail "perf_thread_refused: no NOTE"
	weights_match p 0.15
	pass "perf_thread_refused: said once, threads sampled on their timers, weights match the CPU time"
	;;

# A perf_event counter (SONDE_COUNTERS=cpu-migrations) refused when sonde
# probes it at start (the second perf_event_open, after the clock's):
# said, listed in the header as unavailable with the reason, never written
# as zeros.
counters_probe)
	perf_ok
	SONDE_COUNTERS=cpu-migrations faulted c 'perf_event_open:2'
	fired_like c '^fault perf_event_open 2 \([0-9]+\): EACCES$'
	unchanged c
	reason="perf_event_paranoid=$paranoid: kernel-side events read 0 for this user (Permission denied), and no other source exists"
	said c "sonde: SONDE_COUNTERS: cpu-migrations: unavailable: $reason (run as root or lower kernel.perf_event_paranoid; see 'sonde events')"
	f=$(stream c)
	valid_stream "$f"
	analyzer_ok "$f"
	head -n 1 "$T/dump.json" | grep -qF "\"counters\":[],\"counters_unavailable\":[{\"name\":\"cpu-migrations\",\"reason\":\"$reason\"}]" ||
		fail "counters_probe: header: $(head -n 1 "$T/dump.json" | grep -o '"counters.*')"
	grep '"kind":"SAMPLE"' "$T/dump.json" | grep -q '"deltas"' && fail "counters_probe: samples carry deltas"
	pass "counters_probe: said, listed as unavailable, no deltas written"
	;;

# The main thread's counter refused (the third perf_event_open): said once;
# its samples are flagged "no counter values" (8), never given zeros. (The
# hint names RLIMIT_NOFILE whatever the error.)
counters_thread)
	perf_ok
	SONDE_COUNTERS=cpu-migrations faulted c 'perf_event_open:3'
	fired_like c '^fault perf_event_open 3 \([0-9]+\): EACCES$'
	unchanged c
	f=$(stream c)
	pid=$(echo "$f" | sed 's/.*\.\([0-9]*\)\.sonde$/\1/')
	said c "sonde: thread $pid: counters unavailable: Permission denied (its samples carry no counter values; check /proc/sys/kernel/perf_event_paranoid, seccomp and container limits)"
	valid_stream "$f"
	analyzer_ok "$f"
	th=$(grep '"kind":"THREAD",' "$T/dump.json" | grep "\"tid\":$pid," | grep -o '"thread":[0-9]*' | cut -d: -f2)
	grep '"kind":"SAMPLE"' "$T/dump.json" | grep "\"thread\":$th," >main.json
	[ -s main.json ] || fail "counters_thread: the main thread has no samples"
	grep -o '"flags":[0-9]*' main.json | cut -d: -f2 | awk '{ if (int($1 / 8) % 2 == 0) bad++ } END { exit bad > 0 }' ||
		fail "counters_thread: samples of the main thread not flagged 8: $(grep -c . main.json) samples, $(grep -c '"flags"' main.json) with flags"
	[ "$(grep -c '"flags"' main.json)" = "$(grep -c . main.json)" ] || fail "counters_thread: samples of the main thread without flags"
	pass "counters_thread: said once, the thread's samples flagged without counters"
	;;

# timer_create fails for every call: where perf_event works, no thread uses
# a POSIX timer (each samples on its own task clock from its first period),
# so sonde never calls it: nothing lost, nothing said, no timer of the
# program's quota (RLIMIT_SIGPENDING) taken.
timer_lazy)
	perf_ok
	WL_CPU=1 faulted t 'timer_create:1+'
	faults t | grep -q 'timer_create' && fail "timer_lazy: sonde called timer_create: $(faults t | head -3)"
	unchanged t
	said t ""
	f=$(stream t)
	valid_stream "$f"
	analyzer_ok "$f"
	[ "$(count_kind THREAD)" = 3 ] || fail "timer_lazy: $(count_kind THREAD) threads in the stream"
	for th in 1 2 3; do
		grep '"kind":"SAMPLE"' "$T/dump.json" | grep -q "\"thread\":$th," || fail "timer_lazy: thread $th has no sample"
	done
	weights_match t 0.10
	pass "timer_lazy: no POSIX timer made, every thread sampled through perf_event, weights match the CPU time"
	;;

# No perf_event and no POSIX timer: the fallback is said, then that
# threads cannot be sampled (once); the coverage view names their CPU time
# "not sampled".
timer_none)
	perf_ok
	faulted t 'perf_event_open:1,timer_create:1+'
	fired_like t '^fault timer_create 1 \(-[0-9]+\): EAGAIN$'
	unchanged t
	pid=$(stream t | sed 's/.*\.\([0-9]*\)\.sonde$/\1/')
	said t "$fallback_msg
sonde: thread $pid: cannot start sampling: Resource temporarily unavailable (this thread is not sampled; raise RLIMIT_SIGPENDING)"
	f=$(stream t)
	valid_stream "$f"
	analyzer_ok "$f"
	[ "$(count_kind SAMPLE)" = 0 ] || fail "timer_none: $(count_kind SAMPLE) samples without any source"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$3 != "total" && !($col["sampled_ms"] == 0 && $col["not_sampled_ms"] > 0) { bad = 1; print }
		END { exit bad }' "$T/coverage.csv" >bad.txt ||
		fail "timer_none: threads not named 'not sampled' in the coverage view: $(cat bad.txt)"
	pass "timer_none: both said, every thread's CPU time shown as not sampled"
	;;

# Out of memory as the writer starts: its first allocation is the node
# array of (SONDE_MAX_DEPTH + 1) 4-byte entries, 4100 bytes by default, a
# mapping of its own with sonde's 16-byte header (mem/mem.h): the first
# mapping of 4116 bytes. One line, no stream, the program runs on.
malloc_writer)
	faulted m 'mmap/4116:1'
	fired_like m '^fault mmap 1 \(4116\): ENOMEM$'
	unchanged m
	said m "sonde: writer: cannot start: Cannot allocate memory (this run is not profiled)"
	[ -z "$(ls m)" ] || fail "malloc_writer: files were left: $(ls m)"
	pass "malloc_writer: said once, no stream, program unchanged"
	;;

# A thread's sample ring cannot be mapped (mmap of SONDE_BUFFER_KB, 512 KiB
# by default): the thread has no record. Said once; the writer's scan of
# /proc/self/task then finds it and samples it from its tid (as it would a
# raw clone, but says what it is), counting the CPU time before as not
# sampled. The main thread's
# ring is the first one mapped, a program thread's the second or third.
ring_main | ring_thread)
	n=1
	[ "$CASE" = ring_thread ] && n=2
	faulted r "mmap/524288:$n"
	fired_like r "^fault mmap $n \(524288\): ENOMEM$"
	unchanged r
	f=$(stream r)
	pid=$(echo "$f" | sed 's/.*\.\([0-9]*\)\.sonde$/\1/')
	tid=$(head -n 1 r.err | sed -n 's/^sonde: thread \([0-9]*\) .*/\1/p')
	[ "$CASE" = ring_main ] && [ "$tid" != "$pid" ] && fail "ring_main: thread $tid said, not the main thread $pid"
	[ "$CASE" = ring_thread ] && [ "$tid" = "$pid" ] && fail "ring_thread: the main thread said, not a program thread"
	[ "$(sed -n 1p r.err)" = "sonde: thread $tid (fault_wl): no memory for its sample buffers: Cannot allocate memory (it is not sampled, unless sonde finds it later as a thread made without pthread_create; lower SONDE_BUFFER_KB)" ] ||
		fail "$CASE: first line: $(sed -n 1p r.err)"
	valid_stream "$f"
	analyzer_ok "$f"
	grep '"kind":"NOTE"' "$T/dump.json" | grep -qF "thread $tid (fault_wl): no memory for its sample buffers" ||
		fail "$CASE: no NOTE of the missing ring"
	th=$(grep '"kind":"THREAD",' "$T/dump.json" | grep "\"tid\":$tid," | grep -o '"thread":[0-9]*' | cut -d: -f2)
	if [ "$CASE" = ring_thread ] && [ "$(wc -l <r.err)" = 1 ] && [ -z "$th" ]; then
		# It ended before the writer's scan came (a loaded machine): said,
		# and nothing else claimed about it.
		pass "$CASE: said; thread $tid ended before sonde found it"
		exit 0
	fi
	sed -n 2p r.err | grep -qxE "sonde: thread $tid \((fault_wl|worker-[01])\): not set up as it began \(no memory then\), found by the writer's scan: sampled from its tid, stacks by frame pointers only and no counters \(lower SONDE_BUFFER_KB; build with -fno-omit-frame-pointer for call paths\)" ||
		fail "$CASE: second line: $(sed -n 2p r.err)"
	[ "$(wc -l <r.err)" = 2 ] || fail "$CASE: more said: $(cat r.err)"
	[ -n "$th" ] || fail "$CASE: thread $tid is not in the stream"
	grep '"kind":"UNSAMPLED"' "$T/dump.json" | grep -q "\"thread\":$th,.*\"reason\":\"not_sampled\"" ||
		fail "$CASE: no UNSAMPLED record for thread $tid"
	pass "$CASE: said, thread $tid found and sampled from its tid, the time before it counted as not sampled"
	;;

# No ring can be mapped at all: said for the main thread as it begins, and
# again when the writer's scan cannot take it either (once each); the
# stream has the NOTEs and no thread.
ring_none)
	faulted r 'mmap/524288:1+'
	fired_like r '^fault mmap 1 \(524288\): ENOMEM$'
	unchanged r
	f=$(stream r)
	pid=$(echo "$f" | sed 's/.*\.\([0-9]*\)\.sonde$/\1/')
	said r "sonde: thread $pid (fault_wl): no memory for its sample buffers: Cannot allocate memory (it is not sampled, unless sonde finds it later as a thread made without pthread_create; lower SONDE_BUFFER_KB)
sonde: thread $pid (fault_wl): no memory for its sample buffers: Cannot allocate memory (it is neither sampled nor accounted while this lasts; lower SONDE_BUFFER_KB)"
	valid_stream "$f"
	analyzer_ok "$f"
	grep '"kind":"NOTE"' "$T/dump.json" | grep -qF "thread $pid (fault_wl): no memory for its sample buffers" ||
		fail "ring_none: no NOTE"
	[ "$(count_kind THREAD)" = 0 ] && [ "$(count_kind SAMPLE)" = 0 ] || fail "ring_none: threads or samples without rings?"
	pass "ring_none: said as it began and when the scan failed too, recorded as NOTEs"
	;;

# Out of memory in a scan of the loader's list (its first allocation, 32
# entries of 104 bytes, and sonde's 16-byte header: a mapping of 3344 bytes)
# after the first one: fault_wl's dlopen/dlclose of libm and the writer's
# checks scan again. An incomplete scan must not record the modules it did
# not get to as unloaded: the program's code stays in its module and
# symbolized.
modules_scan)
	faulted s 'mmap/3344:2+'
	fired_like s '^fault mmap 2 \(3344\): ENOMEM$'
	unchanged s
	said s ""
	f=$(stream s)
	valid_stream "$f"
	analyzer_ok "$f"
	[ "$(count_kind MODULE_END)" = 0 ] ||
		fail "modules_scan: loaded modules recorded as unloaded: $(grep '"kind":"MODULE_END"' "$T/dump.json" | head -n 3)"
	"$SONDE" report --format folded "$f" >folded.txt || fail "modules_scan: report --format folded failed"
	awk '{ n = split($1, fr, ";"); if (fr[n] == "work") s += $NF } END { exit !(s > 0) }' folded.txt ||
		fail "modules_scan: no sample symbolized in work(): $(head -n 3 folded.txt)"
	pass "modules_scan: no false MODULE_END, samples still symbolized"
	;;

# The stream's buffer cannot get its first 8 KiB (with sonde's 16-byte
# header, the first mapping of 8208 bytes): the record being packed is taken
# back, everything later is dropped, said once. The file holds whole records
# only (here: none), never a cut record the reader would take for a corrupt
# stream.
buffer)
	faulted m 'mmap/8208:1'
	fired_like m '^fault mmap 1 \(8208\): ENOMEM$'
	unchanged m
	said m "sonde: stream: out of memory for its buffer: Cannot allocate memory (profiling data from now on is discarded; lower SONDE_FLUSH_MS)"
	f=$(stream m)
	analyzer_ok "$f"
	[ "$dump_rc" = 4 ] && [ "$(cat "$T/dump.err")" = "sonde: $f: empty file (not a sonde stream; the profiled process wrote nothing)" ] ||
		fail "buffer: sonde dump: status $dump_rc, $(cat "$T/dump.err")"
	pass "buffer: said once, no partial record written"
	;;

# libsonde calls no malloc, calloc or realloc (issue 19 item 4): glibc gave
# each thread that did, sonde's writer and every program thread sonde set
# up, a malloc arena of its own, 64 MiB of address space. Its memory is its
# own (mem/mem.h), from mmap. Traced around a program with threads, around
# a fork and around a dlopen: the shim sees every call libsonde makes
# through its PLT (calls libc makes inside the functions libsonde calls are
# not seen; docs/ENV.md, Address space, says which remain).
nomalloc)
	for run in "$WL 2 2000" "$B/tests/bin/lifecycle fork" "$B/tests/bin/dlrpath"; do
		rm -rf tr trace.log
		LD_PRELOAD="$SHIM:$LIB" SONDE_OUTPUT=tr SD_FAULT_TRACE=1 SD_FAULT_LOG="$T/trace.log" \
			SD_FAULT= $run >trace.out 2>trace.err || fail "nomalloc: $run failed: $(cat trace.err)"
		grep -q '^call mmap ' trace.log || fail "nomalloc: $run: no mmap traced: $(head -c 300 trace.log)"
		grep '^call malloc ' trace.log >calls.txt &&
			fail "nomalloc: $run: libsonde called malloc (addr2line -e $LIB the offsets): $(head -n 5 calls.txt)"
	done
	pass "nomalloc: no malloc, calloc or realloc call of libsonde's around threads, a fork and a dlopen"
	;;

# Every call of one function that libsonde makes, failed in turn (the Nth
# alone; for the functions called less often, also the Nth and every later
# one): the program is unchanged, whatever sonde says is one shaped line,
# and every stream left is whole records (sonde dump reads it without a
# warning, or says it is empty) that the report reads.
#
# sweep_mmap_after: the Nth mapping and every later one, for each N (every
# allocation of sonde's comes from mmap: mem/mem.h).
# sweep_fork_FN: the same around a program that forks (tests/fixtures/programs/
# lifecycle fork): the child's start (its own stream, its thread's sources)
# fails too.
# sweep_dlopen: the same for allocations, around a program (tests/fixtures/programs/
# dlrpath) whose dlopen finds its plugin through its own DT_RUNPATH only,
# which sonde's dlopen wrapper must search for it.
sweep_*)
	fn=${CASE#sweep_}
	args=(2 2000)
	all_after=0
	base="" # faults every run of this case has
	if [ "$CASE" = sweep_timer_create ]; then
		# POSIX timers are the fallback where perf_event is refused
		base="perf_event_open:1+"
	elif [ "$CASE" = sweep_mmap_after ]; then
		fn=mmap all_after=1 # the Nth mapping and every later one, for each N
	elif [ "$CASE" = sweep_dlopen ]; then
		fn=mmap WL="$B/tests/bin/dlrpath" args=()
		[ -x "$WL" ] || skip "no dlrpath in the build"
	elif [ "${CASE#sweep_fork_}" != "$CASE" ]; then
		# a parent and its forked child, each with a stream of its own
		fn=${CASE#sweep_fork_} WL="$B/tests/bin/lifecycle" args=(fork)
		[ -x "$WL" ] || skip "no lifecycle in the build"
	fi
	LD_PRELOAD="$SHIM:$LIB" SONDE_OUTPUT=trace SD_FAULT_TRACE=1 SD_FAULT_LOG="$T/trace.log" \
		SD_FAULT="$base" "$WL" "${args[@]}" >trace.out 2>trace.err || fail "$CASE: the traced run failed: $(cat trace.err)"
	"$WL" "${args[@]}" >plain.out 2>plain.err
	plain_rc=$?
	# (under AddressSanitizer, whose dlopen interceptor searches its own
	# paths, dlrpath cannot find its plugin without sonde)
	[ "$CASE" = sweep_dlopen ] && [ "$plain_rc" != 0 ] && skip "dlrpath fails without sonde: $(cat plain.out)"
	k=$(grep -c "^call $fn " trace.log)
	[ "$k" -gt 0 ] || fail "$CASE: libsonde made no $fn call: $(head -c 300 trace.log)"
	specs=()
	for n in $(seq 1 "$k"); do
		[ "$all_after" = 1 ] || specs+=("$fn:$n")
		[ "$k" -le 12 ] || [ "$all_after" = 1 ] && specs+=("$fn:$n+")
	done
	hits=0
	for spec in "${specs[@]}"; do
		rm -rf s s.*
		RUN_ARGS=("${args[@]}")
		faulted s "${base:+$base,}$spec"
		grep -q "^fault $fn " s.log 2>/dev/null && hits=$((hits + 1))
		unchanged s
		shaped s
		for f in s/*.sonde; do
			[ -e "$f" ] || continue
			analyzer_ok "$f"
			if [ "$dump_rc" = 0 ]; then
				[ -s "$T/dump.err" ] && fail "$spec: sonde dump warned: $(cat "$T/dump.err")"
			elif [ "$(cat "$T/dump.err")" != "sonde: $f: empty file (not a sonde stream; the profiled process wrote nothing)" ]; then
				fail "$spec: the stream is not whole records: $(cat "$T/dump.err")"
			fi
		done
	done
	[ "$hits" -gt 0 ] || fail "$CASE: no fault fired"
	pass "$CASE: ${#specs[@]} faults ($hits fired) of $k calls: program unchanged, messages shaped, streams whole"
	;;

# /proc/self/task cannot be read (no /proc, in a container or chroot): the
# writer's scan for threads made without pthread_create (and children
# sharing the program's memory) cannot run, so such threads would be
# neither sampled nor accounted: said once, and in a NOTE. (fault_wl makes
# none; tests/fixtures/programs/rawclone shows what goes missing.)
proc_task)
	faulted p 'open//proc/self/task:1+'
	fired_like p '^fault open 1 \(/proc/self/task\): EACCES$'
	unchanged p
	said p "sonde: /proc/self/task: Permission denied (threads made without pthread_create are neither sampled nor accounted while it cannot be read; check that /proc is mounted)"
	f=$(stream p)
	valid_stream "$f"
	analyzer_ok "$f"
	grep '"kind":"NOTE"' "$T/dump.json" | grep -qF "sonde: /proc/self/task: Permission denied" || fail "proc_task: no NOTE"
	pass "proc_task: said once and recorded"
	;;

# The program's threads get no ring, neither as they begin nor when the
# writer's scan finds them (every ring after the main thread's fails):
# each is said once. A thread that ends before a scan finds it is said
# only the first way.
ring_threads_none)
	faulted r 'mmap/524288:2+'
	fired_like r '^fault mmap 2 \(524288\): ENOMEM$'
	unchanged r
	f=$(stream r)
	sed -n 1p r.err | grep -qxE "sonde: thread [0-9]+ \(fault_wl\): no memory for its sample buffers: Cannot allocate memory \(it is not sampled, unless sonde finds it later as a thread made without pthread_create; lower SONDE_BUFFER_KB\)" ||
		fail "ring_threads_none: first line: $(sed -n 1p r.err)"
	n=$(wc -l <r.err)
	if [ "$n" = 2 ]; then
		sed -n 2p r.err | grep -qxE "sonde: thread [0-9]+ \((fault_wl|worker-[01])\): no memory for its sample buffers: Cannot allocate memory \(it is neither sampled nor accounted while this lasts; lower SONDE_BUFFER_KB\)" ||
			fail "ring_threads_none: second line: $(sed -n 2p r.err)"
	elif [ "$n" != 1 ]; then
		fail "ring_threads_none: more said: $(cat r.err)"
	fi
	valid_stream "$f"
	analyzer_ok "$f"
	[ "$(grep -c '"kind":"NOTE".*no memory for its sample buffers' "$T/dump.json")" = "$n" ] ||
		fail "ring_threads_none: the NOTEs do not match what was said"
	[ "$(count_kind THREAD)" = 1 ] || fail "ring_threads_none: $(count_kind THREAD) threads in the stream, only the main one has a ring"
	pass "ring_threads_none: said ($n lines), only the main thread in the stream"
	;;

# The program itself is never failed: every call libsonde makes of every
# function the shim knows fails, and fault_wl's own calls of them (it
# prints what each returned) all succeed. With SD_FAULT_FROM=any the
# program's own calls are failed too: what spares them is the caller check.
spared)
	faulted a 'open:1+,openat:1+,write:1+,mmap:1+,malloc:1+,timer_create:1+,perf_event_open:1+'
	# sonde stops at its first open (the output directory) and its message
	# cannot be written either
	fired_like a '^fault open 1 '
	fired_like a '^fault write 1 '
	unchanged a
	said a ""
	# Failing each call of sonde's in turn while it runs, the program is
	# never failed either: the sweep_* cases.
	LD_PRELOAD="$SHIM:$LIB" SONDE_OUTPUT=any SD_FAULT='open:1+' SD_FAULT_FROM=any "$WL" "${WL_ARGS[@]}" >any.out 2>any.err
	grep -qx 'open Permission denied' any.out ||
		fail "spared: with SD_FAULT_FROM=any the program's open() was not failed: $(head -n 4 any.out)"
	pass "spared: libsonde's calls all failed, the program's none"
	;;

*)
	fail "unknown case '$CASE'"
	;;
esac
