# Programs that are hard on a profiler (tests/fixtures/programs/hostile.c), each run
# plain and profiled: the same output, the same exit status, no hang, and a
# complete stream. Usage: hostile.sh BUILD_DIR [CASE...] (all cases by default).
. "$(dirname "$0")/lib.sh"
shift
H="$B/tests/bin/hostile"
# The cases (one ctest entry each, e2e.hostile.CASE, registered from this line).
CASES="short_cpu short_wall smallstack altstack rtsig rtdefault blocking sigblock blockthread dlloop twocopies queuefull allsig"
cases=${*:-$CASES}

# same NAME SAMPLE ARGS...: plain vs profiled with SONDE_SAMPLE=SAMPLE.
# Leaves the profile in $T/NAME and its stderr in $T/NAME.err.
same() {
	local name=$1 sample=$2; shift 2
	timeout 60 "$H" "$@" >"$name.plain" 2>/dev/null
	local ps=$?
	SONDE_SAMPLE=$sample timeout 60 env LD_PRELOAD="$LIB" SONDE_OUTPUT="$name" "$H" "$@" \
		>"$name.out" 2>"$name.err"
	local qs=$?
	[ $qs -eq 124 ] && fail "$name: hung under sonde (killed after 60 s)"
	[ $ps -eq $qs ] || fail "$name: exit status $ps plain, $qs under sonde: $(head -3 "$name.err")"
	diff "$name.plain" "$name.out" >"$name.diff" || fail "$name: output differs under sonde:
$(cat "$name.diff")"
	local f
	f=$(ls "$name"/*.sonde 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "$name: no stream"
	valid_stream "$f"
	return 0
}

samples() { grep -c '"kind":"SAMPLE"' "$T/dump.json"; }
cpu_ms() { awk '$1 == "cpu_ms" { print $2 }' "$1.err" | tail -n 1; }
thread_cpu_ms() { awk '$1 == "thread_cpu_ms" { print $2 }' "$1.err" | tail -n 1; }

for c in $cases; do
	case $c in
	short_cpu)
		# The shortest documented periods: no SIGIO death, no livelock; the
		# sampler throttles itself, says so once, and the weights stay exact
		# (the samples stand for the CPU time the program used).
		for p in 10us 20us; do
			same "cpu$p" "cpu-time@$p" loop 0.5
			n=$(grep -c 'sonde: cpu-time@'"$p"': sampling' "cpu$p.err")
			[ "$n" -eq 1 ] || fail "cpu-time@$p: expected one throttling line, got $n: $(cat "cpu$p.err")"
			grep '"kind":"NOTE"' "$T/dump.json" | grep -q 'throttl' || fail "cpu-time@$p: no NOTE"
			# The loop's thread is the one sampled; the process's figure also
			# holds sonde's writer thread (CI once saw 883 ms of process CPU
			# for this 500 ms loop), so the thread's own clock is the truth.
			ms=$(thread_cpu_ms "cpu$p")
			pms=$(cpu_ms "cpu$p")
			w=$("$SONDE" report --metric time --format csv "cpu$p" 2>/dev/null |
				awk -F, '$1 == "loop_work" { print $2 }')
			# time in ms per function is in the report's self column.
			tot=$("$SONDE" dump "$(ls cpu$p/*.sonde)" | awk '
				/"kind":"SAMPLE"/ { match($0, /"weight":[0-9]+/); w += substr($0, RSTART + 9, RLENGTH - 9) }
				END { print w }')
			per=$(echo "$p" | sed 's/us//')
			est=$(awk -v w="$tot" -v p="$per" 'BEGIN { printf "%.0f", w * p / 1000 }')
			# user-mode CPU only is sampled; the process used ms (user+sys).
			awk -v e="$est" -v m="$ms" 'BEGIN { exit !(e >= 0.6 * m && e <= 1.1 * m) }' ||
				fail "cpu-time@$p: samples stand for $est ms, the sampled thread used $ms ms CPU (the process $pms ms)"
			pass "cpu-time@$p: throttled once, samples stand for $est ms of the thread's $ms ms (process $pms ms)"
		done
		;;
	short_wall)
		same wall10us "wall-time@10us" loop 0.5
		grep -q 'sonde: wall-time@10us: sampling' wall10us.err ||
			fail "wall-time@10us: no throttling line: $(cat wall10us.err)"
		# The reported livelock: a preloaded `timeout` (asleep in sigsuspend)
		# at wall-time@10us. Its own limit is 30 s; ours is 60.
		SONDE_SAMPLE=wall-time@10us timeout 60 env LD_PRELOAD="$LIB" SONDE_OUTPUT=tmo \
			timeout 30 "$H" loop 0.5 >tmo.out 2>tmo.err
		st=$?
		[ $st -eq 0 ] || fail "timeout under wall-time@10us: exit $st"
		diff -q wall10us.plain tmo.out >/dev/null || fail "timeout: output $(cat tmo.out)"
		pass "wall-time@10us: no livelock, throttled; a preloaded timeout(1) ends normally"
		;;
	smallstack)
		for p in 1ms 100us; do
			same "small$p" "cpu-time@$p" smallstack
			n=$(samples)
			[ "$n" -gt 0 ] || fail "smallstack@$p: no samples"
			"$SONDE" report --format folded "small$p" | grep -q small_work ||
				fail "smallstack@$p: small_work never sampled"
		done
		pass "threads at PTHREAD_STACK_MIN with 3 KiB left: sampled, not crashed"
		;;
	altstack)
		same alt "cpu-time@100us" altstack
		pass "the program's own sigaltstack is kept and used by its handler"
		;;
	rtsig)
		same rtsig "cpu-time@1ms" rtsig
		grep -q 'SIGRTMIN+4: 4 received' rtsig.out || fail "rtsig: $(grep SIGRTMIN+4: rtsig.out)"
		[ "$(samples)" -gt 0 ] || fail "rtsig: no samples"
		pass "signals the program sends itself reach its handlers"
		;;
	rtdefault)
		same rtdef "cpu-time@1ms" rtdefault
		pass "SIGRTMIN+4 keeps its default action and SIG_IGN"
		;;
	blocking)
		# wall-time never interrupts a blocked call; its blocked time is
		# accounted from outside: [blocked] under the call's stack for
		# calls sonde wraps and system calls made through syscall().
		for spec in wall-time@10ms "wall-time@1ms,cpu-time@1ms"; do
			same blk "$spec" blocking
			grep -q EINTR blk.out && fail "$spec: EINTR under sonde: $(grep EINTR blk.out)"
			read -r _ bms _ rms _ jms _ ems < <(grep blocked_ms blk.err)
			per=$(echo "$spec" | sed 's/wall-time@\([0-9]*\)ms.*/\1/')
			"$SONDE" report --source wall-time --metric time --format csv blk >blk.csv 2>/dev/null ||
				fail "$spec: report failed"
			b=$(awk -F, '$1 == "[blocked]" { printf "%.0f", $2 }' blk.csv)
			o=$(awk -F, '$1 == "[off-cpu]" { printf "%.0f", $2 }' blk.csv)
			want=$((bms + rms + jms))
			# Exact to a period per thread and tick (10 ms) at each end.
			awk -v n="${b:-0}" -v w="$want" 'BEGIN { exit !(n >= 0.95 * w - 40 && n <= 1.05 * w + 40) }' ||
				fail "$spec: [blocked] ${b:-0} ms, the program was blocked $want ms in wrapped calls"
			tot=$(awk -F, 'NR > 1 { s += $2 } END { printf "%.0f", s }' blk.csv)
			awk -v n="$tot" -v w="$ems" 'BEGIN { exit !(n >= 0.95 * w - 40 && n <= 1.05 * w + 40) }' ||
				fail "$spec: wall-time samples stand for $tot ms, the two threads lived $ems ms"
			"$SONDE" report --source wall-time --format folded blk | grep -q 'blocking_calls;[^ ]*\[blocked\]' ||
				fail "$spec: [blocked] not under blocking_calls"
			pass "$spec: no EINTR; [blocked] $b ms for $want ms blocked (raw nanosleeps $rms ms of it), [off-cpu] ${o:-0} ms, all $tot ms for $ems ms"
			rm -rf blk
		done
		;;
	sigblock)
		# While the program keeps the signal blocked (through sigprocmask),
		# the thread's sources are paused: nothing piles up in the kernel's
		# per-user queue, and the CPU time it runs is charged to
		# [signals blocked] under the code that blocked, not to the mask call.
		# Blocked by raw system calls (unseen), the queued samples are
		# delivered at the unblock and charged where they land.
		for mode in sigblock rawblock; do
			same "$mode" "cpu-time@1ms" "$mode" 0.4
			bms=$(awk '$1 == "blocked_cpu_ms" { print $2 }' "$mode.err")
			"$SONDE" report --metric time --format folded "$mode" >"$mode.folded" 2>/dev/null
			sb=$(awk '/mode_sigblock;\[signals blocked\] / { s += $NF } END { printf "%.0f", s / 1e6 }' "$mode.folded")
			bw=$(awk '/;syscall / { s += $NF } END { printf "%.0f", s / 1e6 }' "$mode.folded")
			mask=$(awk '/sigprocmask|pthread_sigmask/ { s += $NF } END { printf "%.0f", s / 1e6 }' "$mode.folded")
			if [ "$mode" = sigblock ]; then
				awk -v n="$sb" -v w="$bms" 'BEGIN { exit !(n >= 0.9 * w - 5 && n <= 1.1 * w + 5) }' ||
					fail "sigblock: [signals blocked] under mode_sigblock ${sb} ms, the program ran ${bms} ms blocked"
				[ "$mask" -le 5 ] || fail "sigblock: ${mask} ms charged to sigprocmask/pthread_sigmask"
				pass "sigblock: ${sb} ms under [signals blocked] for ${bms} ms blocked, ${mask} ms on the mask calls"
			else
				# Unseen: every queued sample still arrives; none is lost.
				tot=$(awk '{ s += $NF } END { printf "%.0f", s / 1e6 }' "$mode.folded")
				ms=$(cpu_ms "$mode")
				awk -v n="$tot" -v w="$ms" 'BEGIN { exit !(n >= 0.85 * w - 10) }' ||
					fail "rawblock: samples stand for ${tot} ms of ${ms} ms CPU"
				pass "rawblock: ${tot} ms sampled of ${ms} ms (the blocked part charged where it was delivered: ${bw} ms on the raw syscall)"
			fi
		done
		;;
	blockthread)
		# A thread that blocks every signal all its life and exits: its time
		# is charged to [signals blocked] under the code that blocked.
		same blkt "cpu-time@1ms" blockthread 0.4
		bms=$(awk '$1 == "blocked_cpu_ms" { print $2 }' blkt.err)
		"$SONDE" report --metric time --format folded blkt >blkt.folded 2>/dev/null
		sb=$(awk '/blockthread_fn;\[signals blocked\] / { s += $NF } END { printf "%.0f", s / 1e6 }' blkt.folded)
		awk -v n="$sb" -v w="$bms" 'BEGIN { exit !(n >= 0.9 * w - 5 && n <= 1.1 * w + 5) }' ||
			fail "blockthread: [signals blocked] under blockthread_fn ${sb} ms for ${bms} ms blocked"
		pass "blockthread: ${sb} ms under [signals blocked] for ${bms} ms"
		;;
	dlloop)
		# Time inside dlopen/dlclose is charged to [dlopen/dlclose] under
		# the caller, not to sonde's signal masking, and not dropped.
		same dl "cpu-time@100us" dlloop 4000 "$B/tests/bin/libplug.so"
		"$SONDE" report --metric time --format folded dl >dl.folded 2>/dev/null
		tot=$(awk '{ s += $NF } END { printf "%.0f", s / 1e6 }' dl.folded)
		in=$(awk '/mode_dlloop;\[dlopen\/dlclose\] / { s += $NF } END { printf "%.0f", s / 1e6 }' dl.folded)
		mask=$(awk '/sigprocmask|pthread_sigmask/ { s += $NF } END { printf "%.0f", s / 1e6 }' dl.folded)
		n=$(grep '"kind":"DROPS"' "$T/dump.json" | grep -o '"in_dl":[0-9]*' | tail -n 1 | cut -d: -f2)
		[ "${n:-0}" -le 2 ] || fail "dlloop: ${n} in_dl drops"
		awk -v m="$mask" -v t="$tot" 'BEGIN { exit !(m <= 0.02 * t + 1) }' ||
			fail "dlloop: ${mask} of ${tot} ms charged to signal mask calls"
		awk -v i="$in" -v t="$tot" 'BEGIN { exit !(i >= 0.5 * t) }' ||
			fail "dlloop: only ${in} of ${tot} ms under mode_dlloop;[dlopen/dlclose]"
		pass "dlloop: ${in} of ${tot} ms under [dlopen/dlclose], ${mask} ms on mask calls, ${n:-0} in_dl drops"
		;;
	queuefull)
		# The kernel's real-time queue fills while the program blocks the
		# signal (RLIMIT_SIGPENDING 64): it falls back to SIGIO, whose default
		# action would kill the program. Survived and counted.
		( ulimit -i 64 && same qf "cpu-time@1ms" rawblock 0.4 ) || exit 1
		valid_stream "$(ls qf/*.sonde | head -n 1)"
		n=$(grep '"kind":"DROPS"' "$T/dump.json" | grep -o '"queue_overflow":[0-9]*' | tail -n 1 | cut -d: -f2)
		[ "${n:-0}" -gt 0 ] || fail "queuefull: no queue_overflow drops counted"
		pass "queue full: program unchanged, ${n} queue_overflow drops counted"
		;;
	allsig)
		# A handler on every catchable signal: each signal the program sends
		# itself reaches it exactly once, sonde's included; sampling goes on.
		for spec in cpu-time@1ms "wall-time@1ms,cpu-time@100us"; do
			same allsig "$spec" allsig
			[ "$(samples)" -gt 0 ] || fail "allsig ($spec): no samples"
			rm -rf allsig
		done
		pass "a handler on every signal: same output, sampled"
		;;
	twocopies)
		# Two copies of the runtime preloaded: the second stays inactive and
		# says so; threads are not counted twice.
		mkdir -p copy && cp "$LIB" copy/libsonde.so
		LIB="$LIB:$T/copy/libsonde.so" same two "cpu-time@1ms" smallstack
		n=$(grep -c 'another copy of the runtime is already loaded' two.err)
		[ "$n" -eq 1 ] || fail "twocopies: expected one line, got $n: $(cat two.err)"
		[ "$(ls two/*.sonde | wc -l)" -eq 1 ] || fail "twocopies: $(ls two | wc -l) streams"
		th=$(grep -c '"kind":"THREAD"' "$T/dump.json")
		[ "$th" -eq 5 ] || fail "twocopies: $th threads in the stream, the program has 5"
		pass "two copies: one active, one line, $th threads"
		;;
	*) fail "unknown case $c" ;;
	esac
done
