# Process and thread lifecycle: fork, exec, a failed exec, exit from a
# thread, _exit after atexit, SIGTERM/SIGINT/SIGHUP, SIGKILL, programs that
# close every descriptor, programs that use SIGPROF, threads born with every
# signal blocked. Each case checks the program's own output and status and
# the streams it leaves.
. "$(dirname "$0")/lib.sh"
L="$B/tests/bin/lifecycle"

# streams DIR: the stream files in DIR, one per line
streams() { ls "$1"/*.sonde 2>/dev/null; }
end_of() { "$SONDE" dump "$1" | grep '"kind":"END"' | tail -n 1; }
# samples_in PROFILE FN: the periods (1 ms each) FN's samples stand for, inclusive: the
# sampled time, not the count of samples (a throttled period, or a thread's first
# sample on its starting timer, stands for several periods).
samples_in() { "$SONDE" report --metric time --format csv "$1" | awk -F, -v fn="$2" '$1 == fn {printf "%d\n", $4}'; }
# follows_cpu LABEL PROFILE OUT FN [TOL]: FN's samples in PROFILE stand for the
# CPU time FN took by the program's own account in OUT (WL_CPU=1), within TOL
# (default 10 %).
follows_cpu() {
	local n u c
	n=$(samples_in "$2" "$4")
	read -r u c < <(cpu_of "$3" "$4")
	expect_samples "$1: $4" "${n:-0}" "$u" "$c" "${5:-0.10}"
	echo "   ($1: $4 has $n samples for $u ms user / $c ms CPU)"
}
# The work functions print the CPU time they took (lifecycle.c).
export WL_CPU=1

# fork: parent and child each have a complete stream of their own; the
# child's holds child_work and none of the parent's samples from before fork.
profile f "$L" fork || fail "fork: exit $?"
grep -q '^child status 0$' f.out || fail "fork: child failed: $(cat f.out)"
[ "$(streams f | wc -l)" -eq 2 ] || fail "fork: expected 2 streams, got $(streams f | wc -l)"
for s in $(streams f); do valid_stream "$s"; done
parent_pid=$(head -c 0 /dev/null; "$SONDE" dump "$(streams f | head -n 1)" | head -n 1 | grep -o '"pid":[0-9]*' | cut -d: -f2)
child=""
for s in $(streams f); do "$SONDE" dump "$s" | head -n 1 | grep -q '"fork_of"' && child=$s; done
[ -n "$child" ] || fail "fork: no stream has fork_of"
follows_cpu fork "$child" f.out child_work
[ -z "$(samples_in "$child" parent_work)" ] || fail "fork: child stream repeats the parent's samples"
pass "fork: parent and child streams complete, child has only its own samples"

# SONDE_FOLLOW_FORK=0: the child runs unprofiled, the parent's stream is whole.
SONDE_FOLLOW_FORK=0 profile nf "$L" fork || fail "no-follow fork: exit $?"
grep -q '^child status 0$' nf.out || fail "no-follow fork: $(cat nf.out)"
[ "$(streams nf | wc -l)" -eq 1 ] || fail "SONDE_FOLLOW_FORK=0 still wrote a child stream"
valid_stream "$(streams nf)"
[ -z "$(samples_in nf child_work)" ] || fail "SONDE_FOLLOW_FORK=0: child samples in the parent's stream"
pass "SONDE_FOLLOW_FORK=0: one stream, child unprofiled"

# exec: the pre-exec stream ends with reason exec; the new image writes its own.
profile e "$L" exec || fail "exec: exit $?"
grep -q '^done$' e.out || fail "exec: new image did not run"
[ "$(streams e | wc -l)" -eq 2 ] || fail "exec: expected 2 streams"
for s in $(streams e); do valid_stream "$s"; done
reasons=$(for s in $(streams e); do field "$(end_of "$s")" reason; done | sort | tr '\n' ' ')
[ "$reasons" = "exec exit " ] || fail "exec: END reasons are '$reasons'"
follows_cpu "exec: flushed before exec" e e.out before_exec
follows_cpu "exec: new image profiled" e e.out spin_work
pass "exec: flushed before exec, new image profiled in its own stream"

# exec that fails: sampling resumes in the same stream.
profile x "$L" exec-fail || fail "exec-fail: exit $?"
grep -q '^exec failed: No such file or directory$' x.out || fail "exec-fail: output '$(cat x.out)'"
[ "$(streams x | wc -l)" -eq 1 ] || fail "exec-fail: expected 1 stream"
valid_stream "$(streams x)"
follows_cpu "exec-fail: sampling after the failed exec" x x.out after_exec_fail
pass "exec-fail: sampling resumed"

# exit() from a thread
profile t "$L" thread-exit; st=$?
[ $st -eq 3 ] || fail "thread-exit: status $st, expected 3"
valid_stream "$(streams t)"
[ "$(field "$(end_of "$(streams t)")" reason)" = exit ] || fail "thread-exit: END reason"
follows_cpu thread-exit t t.out thread_work
pass "exit from a thread: status 3, complete stream"

# _exit after atexit: atexit handlers do not run, the stream is complete.
profile u "$L" _exit; st=$?
[ $st -eq 5 ] || fail "_exit: status $st, expected 5"
grep -q 'atexit ran' u.out && fail "_exit: atexit handler ran"
valid_stream "$(streams u)"
[ "$(field "$(end_of "$(streams u)")" reason)" = _exit ] || fail "_exit: END reason"
pass "_exit: status 5, no atexit, complete stream"

# exit_group through libc's syscall() (issue 19 item 9): completed like _exit;
# by the instruction itself, sonde cannot see it: the stream ends at the last
# flush and the report says the process ended without an exit sonde saw.
profile xg "$L" exit_group; st=$?
[ $st -eq 6 ] || fail "exit_group: status $st, expected 6"
grep -q 'atexit ran' xg.out && fail "exit_group: atexit handler ran"
valid_stream "$(streams xg)"
[ "$(field "$(end_of "$(streams xg)")" reason)" = _exit ] || fail "exit_group: END reason"
follows_cpu exit_group xg xg.out spin_work
profile xr "$L" rawexit; st=$?
[ $st -eq 6 ] || fail "rawexit: status $st, expected 6"
"$SONDE" report xr >xr.txt 2>&1 || fail "rawexit: report: $(cat xr.txt)"
grep -q "incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; samples after its last flush are lost)" xr.txt ||
	fail "rawexit: $(head -5 xr.txt)"
pass "exit_group: status 6, complete stream; by the instruction: said as an exit sonde did not see"

# SIGTERM, SIGINT, SIGHUP with default dispositions: flushed, then the
# default action (death by that signal).
for sig in TERM INT HUP; do
	env --default-signal="$sig" LD_PRELOAD="$LIB" SONDE_OUTPUT="s$sig" "$L" forever >"s$sig.out" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do grep -q alive "s$sig.out" 2>/dev/null && break; sleep 0.05; done
	sleep 0.3
	kill -"$sig" $pid
	wait $pid; st=$?
	want=$((128 + $(kill -l "$sig")))
	[ $st -eq $want ] || fail "SIG$sig: status $st, expected $want"
	valid_stream "$(streams "s$sig")"
	end=$(end_of "$(streams "s$sig")")
	[ "$(field "$end" reason)" = signal ] && [ "$(field "$end" signal)" = "$(kill -l "$sig")" ] ||
		fail "SIG$sig: END record $end"
	pass "SIG$sig: complete stream, then death by SIG$sig"
done

# SIGKILL: a valid prefix whose last sample is at most a flush period (plus
# scheduling slack) older than the program's last sign of life.
LD_PRELOAD="$LIB" SONDE_OUTPUT=k "$L" forever >k.out 2>&1 &
pid=$!
sleep 1
kill -KILL $pid
wait $pid
f=$(streams k)
"$SONDE" dump "$f" >k.json 2>k.err || fail "SIGKILL: dump failed"
grep -q '"kind":"END"' k.json && fail "SIGKILL: END record in a killed process"
origin=$(head -n 1 k.json | grep -o '"monotonic_ns":[0-9]*' | cut -d: -f2)
last_sample=$("$SONDE" report --view threads --format csv k | awk -F, 'NR > 1 && $7 > m {m = $7} END {print m}')
last_alive=$(grep alive k.out | tail -n 1 | cut -d' ' -f2)
lag_ms=$(( (last_alive - origin - last_sample) / 1000000 ))
[ "$last_sample" -gt 0 ] && [ $lag_ms -le 400 ] ||
	fail "SIGKILL: last sample $lag_ms ms before the last sign of life (flush period 100 ms)"
pass "SIGKILL: valid prefix, last sample $lag_ms ms before death"

# Closing every descriptor (a loop of close(), and closefrom): the program's
# own file gets exactly its data, and sampling goes on.
for m in closefds closefrom; do
	profile "$m" "$L" "$m" "$T/$m.data" || fail "$m: exit $?: $(cat "$m.out")"
	grep -q '^file ok$' "$m.out" || fail "$m: $(cat "$m.out")"
	valid_stream "$(streams "$m")"
	n=$(samples_in "$m" after_close_work)
	# 200 calls of 2 ms: sampling must go on after the close for all of them
	follows_cpu "$m: sampling after the descriptors were closed" "$m" "$m.out" after_close_work 0.15
	pass "$m: program's file intact, $n samples after closing"
done

# A program that uses SIGPROF keeps getting its signals.
profile g "$L" sigprof || fail "sigprof: exit $?"
grep -q '^sigprof ok$' g.out || fail "sigprof: $(cat g.out)"
pass "SIGPROF left to the program"

# A thread created while every signal is blocked is still sampled.
profile m "$L" masked || fail "masked: exit $?"
follows_cpu "masked: thread born with blocked signals" m m.out masked_work
pass "thread born with signals blocked is sampled"

# dlopen by bare name through the program's own DT_RUNPATH still finds the
# plugin (the dlopen wrapper searches the caller's paths, not sonde's).
profile r "$B/tests/bin/dlrpath" || fail "dlrpath: exit $?: $(cat r.out)"
grep -q '^loaded ' r.out || fail "dlrpath: $(cat r.out)"
pass "dlopen through the program's RUNPATH"

# A thread started by a library's constructor, before sonde's own: adopted
# and sampled on its own clock.
profile a "$B/tests/bin/early" || fail "early: exit $?"
grep -qx 'early done' a.out || fail "early: $(cat a.out)"
n=$(samples_in a early_work)
follows_cpu "early: thread alive before sonde started" a a.out early_work
pass "thread alive before sonde started: $n samples"

# SIGTERM sent to `sonde run` reaches the program, which flushes and dies by it.
"$SONDE" run -o w -- "$L" forever >w.out 2>w.err &
pid=$!
for _ in $(seq 1 100); do grep -q alive w.out 2>/dev/null && break; sleep 0.05; done
kill -TERM $pid
wait $pid; st=$?
[ $st -eq 143 ] || fail "sonde run + SIGTERM: status $st, expected 143"
valid_stream "$(streams w)"
[ "$(field "$(end_of "$(streams w)")" signal)" = 15 ] || fail "sonde run + SIGTERM: END record"
pass "sonde run passes SIGTERM on; the program's stream is complete"

# An MPI launcher's rank variable reaches the header.
PMI_RANK=3 profile rk "$L" spin 0.01 || fail "rank: exit $?"
"$SONDE" dump "$(streams rk)" | head -n 1 | grep -q '"rank":3' || fail "rank 3 not in the header"
pass "MPI rank recorded from PMI_RANK"

# A module that libc loads itself (iconv's gconv module, not through the
# program's dlopen) is recorded within a writer tick and named.
profile ic "$B/tests/bin/iconv_load"; st=$?
if [ $st -eq 3 ]; then
	echo "note: no gconv module IBM1047 here; skipped"
else
	[ $st -eq 0 ] || fail "iconv_load: exit $st"
	"$SONDE" dump "$(streams ic)" | grep -q '"kind":"MODULE".*gconv/IBM1047.so' || fail "gconv module not recorded"
	share=$("$SONDE" report --group-by module --format csv ic | awk -F, '$1 == "IBM1047.so" {print $3}')
	awk -v s="${share:-0}" 'BEGIN { exit !(s > 50) }' || fail "IBM1047.so has ${share:-0} % of samples"
	pass "module loaded by libc itself recorded and named (${share} % of samples)"
fi
