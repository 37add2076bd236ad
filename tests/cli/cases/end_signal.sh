# analyze.cli.end_signal: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 8: END reason `signal` is said (the signal by number and name)
	mk flat a.sonde --end-signal 11
	run "$SONDE" report a.sonde
	expect_rc 0 "END signal"
	sed -n 4p "$T/out" | grep -qxF 'sonde: a.sonde: process 4242 was killed by signal 11 (SIGSEGV) (the profile covers its run up to the signal)' ||
		fail "signal note: $(sed -n 4p "$T/out")"
	! grep -q 'incomplete' "$T/out" || fail "a stream with END is not incomplete"
	run "$SONDE" report --view streams --format csv a.sonde
	sed -n 2p "$T/out" | grep -qx 'a.sonde,4242,,testhost,signal,11,0,100,4,0,0' || fail "streams row: $(cat "$T/out")"
	mk flat b.sonde
	run "$SONDE" report b.sonde
	! grep -q 'signal\|incomplete' "$T/out" || fail "exit: nothing to say"
