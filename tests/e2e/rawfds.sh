# Descriptors closed behind sonde's back (issue 8 item 5): a program closes
# every descriptor from 3 up with the close_range system call, through libc's
# syscall() and through an inline `syscall` instruction, then keeps computing
# and reuses the numbers sonde's descriptors had (RLIMIT_NOFILE 100: sonde
# keeps at most 7, at 93 and up; after a raw close_range the program's 31
# files and 31 pipes take 3..95, 4 numbers are left for sonde to re-arm its
# stream and two clocks; the counters are not re-opened; through libc's
# syscall(), which spares sonde's descriptors, 30 and 30 take 3..92). Its
# output and status must not change (it checks its files' contents and
# offsets and its pipes' bytes), it must not hang, the stream must be whole,
# with samples after the call, and a gap must be accounted (UNSAMPLED).
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/rawfds"

for m in syscall asm pending; do
	n=31
	[ $m = syscall ] && n=30
	mkdir -p "plain$m" "files$m"
	(ulimit -n 100; exec timeout 60 "$P" "$m" "plain$m" $n) >"plain$m.out" 2>&1; want=$?
	[ $want -eq 0 ] || fail "$m: the program fails even without sonde ($want): $(cat "plain$m.out")"
	# cpu-migrations: a perf_event counter group (context switches and faults
	# come from getrusage and need no descriptor)
	timeout 60 bash -c 'ulimit -n 100; LD_PRELOAD="$0" SONDE_OUTPUT="$1" SONDE_COUNTERS="$5" exec "$2" "$3" "$4" "$6"' \
		"$LIB" "p$m" "$P" "$m" "files$m" context-switches,cpu-migrations $n >"p$m.out" 2>"p$m.err"; st=$?
	[ $st -eq 124 ] && fail "$m: hung under sonde"
	[ $st -eq $want ] || fail "$m: exit $st under sonde, $want without: $(cat "p$m.out" "p$m.err")"
	cmp -s "plain$m.out" "p$m.out" || fail "$m: output changed: $(cat "p$m.out")"
	f=$(ls "p$m"/*.sonde)
	valid_stream "$f"
	after=$("$SONDE" report --format csv "p$m" | awk -F, '$1 == "after_close" {print $4}')
	tafter=$("$SONDE" report --format csv "p$m" | awk -F, '$1 == "thread_after" {print $4}')
	# 0.5 s and 0.4 s of CPU after the call, sampled every 1 ms
	[ "${after:-0}" -ge 350 ] || fail "$m: ${after:-0} samples in after_close (0.5 s of CPU after the call)"
	[ "${tafter:-0}" -ge 280 ] || fail "$m: ${tafter:-0} samples in thread_after (0.4 s of CPU after the call)"
	if [ $m = syscall ]; then
		# libc's syscall() reaches sonde's close_range wrapper: nothing lost.
		[ -s "p$m.err" ] && fail "$m: said something: $(cat "p$m.err")"
		grep -q '"kind":"UNSAMPLED"' "$T/dump.json" && fail "$m: a gap was recorded"
	else
		n=$(grep -c '^sonde: ' "p$m.err")
		[ "$n" -eq 1 ] || fail "$m: expected one sonde: line, got: $(cat "p$m.err")"
		grep -q "^sonde: .*: the stream's descriptor was closed behind sonde's back (a raw close_range or close system call): the same file was opened again and profiling goes on" "p$m.err" ||
			fail "$m: stderr: $(cat "p$m.err")"
		grep -q '"kind":"NOTE".*lost their sampling descriptors to a raw close_range' "$T/dump.json" ||
			fail "$m: no NOTE about the sampling descriptors"
		# Both threads' gaps are accounted, each bounded by the audit period
		# (one 10 ms writer tick) plus scheduling noise.
		gaps=$(grep '"kind":"UNSAMPLED"' "$T/dump.json" | grep -c '"fd_closed"')
		[ "$gaps" -ge 2 ] || fail "$m: $gaps UNSAMPLED fd_closed records, expected one per thread"
		big=$(grep '"kind":"UNSAMPLED"' "$T/dump.json" | sed 's/.*"cpu_ns":\([0-9]*\).*/\1/' | awk '$1 > 60000000' | wc -l)
		[ "$big" -eq 0 ] || fail "$m: a gap above 60 ms: $(grep '"kind":"UNSAMPLED"' "$T/dump.json")"
		# The perf counter group is off for those threads after the call: their
		# samples are flagged, not zeros.
		grep '"kind":"SAMPLE"' "$T/dump.json" | grep -q '"flags":8' || fail "$m: no sample flagged without counters"
	fi
	pass "$m: output and status unchanged, $after + $tafter samples after close_range"
done
