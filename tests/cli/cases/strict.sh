# analyze.cli.strict: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mkdir prof
	mk flat prof/a.sonde
	printf 'not a stream' >prof/b.sonde
	run "$SONDE" report prof
	expect_rc 0 "non-strict"
	expect_err_line "sonde: prof/b.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	grep -qx '        60  60.00%         60  60.00%  mk_beta' "$T/out" || fail "non-strict report"
	run "$SONDE" report --strict prof
	expect_rc 4 "strict"
	expect_err_line "sonde: prof/b.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	[ ! -s "$T/out" ] || fail "strict printed a report"
	off=$("$SONDE" dump prof/a.sonde | grep '"kind":"SAMPLE"' | sed -n 32p |
		sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) prof/a.sonde >prof/c.sonde
	rm prof/b.sonde
	run "$SONDE" report prof
	expect_rc 0 "a truncated stream"
	expect_err_line "sonde: prof/c.sonde: truncated at byte $off (using the valid prefix)"
	grep -qx 'samples: 121 (131 periods)  streams: 2  processes: 1  threads: 4' "$T/out" || fail "truncated counts: $(head -n 1 "$T/out")"
	grep -qxF 'sonde: prof/c.sonde: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; samples after its last flush are lost)' "$T/out" ||
		fail "a truncated stream has no END: said in the header"
	# a truncated stream has no END record: --strict refuses it
	run "$SONDE" report --strict prof
	expect_rc 4 "strict with a truncated stream"
	expect_err_line "sonde: prof/c.sonde: truncated at byte $off (using the valid prefix)"
	expect_err_line "sonde: prof/c.sonde: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; --strict refuses it)"
	[ ! -s "$T/out" ] || fail "strict printed a report"
