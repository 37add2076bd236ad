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
	# open() of one stream fails with EMFILE (tests/fault's shim, next to sonde: a limit
	# low enough to hit would depend on how the workers happen to overlap)
	for j in 1 2 8; do
		ASAN_OPTIONS=verify_asan_link_order=0 \
		LD_PRELOAD="$(dirname "$SONDE")/tests/bin/libsonde_fault.so" SD_FAULT_FROM=any \
			SD_FAULT='open/s150.sonde:1=EMFILE,openat/s150.sonde:1=EMFILE' \
			"$SONDE" report --jobs $j d >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc -ne 0 ] || fail "--jobs $j, EMFILE on one stream: the report exited 0: $(head -1 "$T/out")"
		grep -qx 'sonde: d/s150\.sonde: Too many open files (the report stops: it would leave streams out; raise the limit of open files, ulimit -n)' "$T/err" ||
			fail "--jobs $j, EMFILE on one stream: $(cat "$T/err")"
	done
