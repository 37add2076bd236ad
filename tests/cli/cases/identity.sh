# analyze.cli.identity: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# A process is its host, pid and start (HEADER start_ticks): one pid on four hosts is
	# four processes; a pid reused on one host (another start) is two; the two streams of
	# one process (before and after an exec: the same start) are one; streams without a
	# start (earlier sondes) fall back to host and pid.
	count() { sed -n 's/.*  processes: \([0-9]*\) .*/\1/p' "$T/out"; }
	for h in a b c d; do mk flat h$h.sonde --pid 500 --host node-$h --start 1000; done
	run "$SONDE" report ha.sonde hb.sonde hc.sonde hd.sonde
	expect_rc 0 "four hosts"
	[ "$(count)" = 4 ] || fail "one pid on four hosts: $(head -1 "$T/out")"
	run "$SONDE" report --stats process --format csv ha.sonde hb.sonde hc.sonde hd.sonde
	[ "$(sed -n 2p "$T/out" | cut -d, -f11)" = 4 ] || fail "--stats process over four hosts: $(head -2 "$T/out")"
	mk flat r1.sonde --pid 600 --start 2000 --clock 1000000000
	mk flat r2.sonde --pid 600 --start 9000 --clock 9000000000
	run "$SONDE" report r1.sonde r2.sonde
	[ "$(count)" = 2 ] || fail "a reused pid: $(head -1 "$T/out")"
	mk flat x1.sonde --pid 700 --start 3000 --argv0 sh --end-reason exec
	mk flat x2.sonde --pid 700 --start 3000 --argv0 /bin/true
	run "$SONDE" report x1.sonde x2.sonde
	[ "$(count)" = 1 ] || fail "one process before and after exec: $(head -1 "$T/out")"
	mk flat o1.sonde --pid 800
	mk flat o2.sonde --pid 800
	run "$SONDE" report o1.sonde o2.sonde
	[ "$(count)" = 1 ] || fail "no start: host and pid: $(head -1 "$T/out")"
