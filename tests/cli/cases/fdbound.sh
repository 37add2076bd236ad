# analyze.cli.fdbound: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# The report holds a few descriptors whatever the number of streams and --jobs (the
	# workers read at most 2 x jobs files ahead of the merging, and close each once read):
	# 200 streams under a limit of 24 open files are all read. A stream that cannot be
	# opened for want of descriptors stops the report (a report without it would be
	# wrong), in one line, never a smaller profile with exit 0.
	mkdir d
	for i in $(seq 1 200); do mk flat d/s$i.sonde --pid $((1000 + i)); done
	for j in 1 2 4 8; do
		(ulimit -n 24 && exec "$SONDE" report --jobs $j d) >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc -eq 0 ] || fail "--jobs $j under ulimit -n 24: status $rc: $(head -3 "$T/err")"
		head -1 "$T/out" | grep -q ' streams: 200 ' || fail "--jobs $j: $(head -1 "$T/out")"
	done
	(ulimit -n 5 && exec "$SONDE" report --jobs 2 d) >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 0 ] || fail "under ulimit -n 5 the report exited 0: $(head -1 "$T/out")"
	grep -q '^sonde: d/s[0-9]*\.sonde: Too many open files (the report stops: it would leave streams out; raise the limit of open files, ulimit -n)$' "$T/err" ||
		fail "under ulimit -n 5: $(cat "$T/err")"
