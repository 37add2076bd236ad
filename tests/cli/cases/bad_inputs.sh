# analyze.cli.bad_inputs: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	: >empty.sonde
	run "$SONDE" dump empty.sonde
	expect_rc 4 "empty dump"
	expect_err_line "sonde: empty.sonde: empty file (not a sonde stream; the profiled process wrote nothing)"
	run "$SONDE" report empty.sonde
	expect_rc 4 "empty report"
	expect_err_line "sonde: empty.sonde: empty file (not a sonde stream; the profiled process wrote nothing)"
	expect_err_line "sonde: report: no stream could be read (nothing to report)"
	run "$SONDE" dump missing.sonde
	expect_rc 3 "missing dump"
	expect_err_line "sonde: missing.sonde: No such file or directory"
	run "$SONDE" report missing.sonde
	expect_rc 3 "missing report"
	expect_err_line "sonde: missing.sonde: No such file or directory"
	mkdir adir
	run "$SONDE" dump adir
	expect_rc 3 "dump a directory"
	expect_err_line "sonde: adir: Is a directory"
	# random bytes, made deterministic; the first byte is not a msgpack array
	python3 -c 'import random,sys; r=random.Random(7); sys.stdout.buffer.write(b"\x01"+bytes(r.randrange(256) for _ in range(4096)))' >rand.sonde
	run "$SONDE" dump rand.sonde
	expect_rc 4 "random dump"
	expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	[ ! -s "$T/out" ] || fail "random dump printed records"
	run "$SONDE" report rand.sonde
	expect_rc 4 "random report"
	expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	head -c 9 a.sonde >partial.sonde
	run "$SONDE" dump partial.sonde
	expect_rc 4 "partial header dump"
	expect_err_line "sonde: partial.sonde: truncated at byte 0 (no complete HEADER record; the process may have died at startup)"
	run "$SONDE" report partial.sonde
	expect_rc 4 "partial header report"
	off=$("$MK" corrupt c.sonde) || fail mkstream
	run "$SONDE" dump c.sonde
	expect_rc 4 "corrupt dump"
	expect_err_line "sonde: c.sonde: corrupt record at byte $off (not an array starting with a record kind)"
	[ "$(wc -l <"$T/out")" -eq 6 ] || fail "corrupt dump: records before the bad one"
	off=$("$MK" cycle y.sonde) || fail mkstream
	run "$SONDE" report y.sonde
	expect_rc 4 "cycle report"
	expect_err_line "sonde: y.sonde: corrupt record at byte $off (FRAME parent is not an earlier node)"
	printf '\x92\x01\xa4sond' >foreign.sonde
	run "$SONDE" report foreign.sonde a.sonde
	expect_rc 0 "one foreign file among good ones"
	expect_err_line "sonde: foreign.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	grep -qx 'samples: 90 (100 periods)  streams: 1 (1 more unreadable, left out)  processes: 1  threads: 2' "$T/out" ||
		fail "good file reported, the bad one counted: $(head -1 "$T/out")"
	run "$SONDE" report --format json foreign.sonde a.sonde
	grep -q '"streams":1,"unreadable_streams":1,' "$T/out" || fail "json: $(head -c 400 "$T/out")"
	printf '\x94\x01\xa5sonde\x02\x80' >v2.sonde
	run "$SONDE" dump v2.sonde
	expect_rc 4 "version 2"
	expect_err_line "sonde: v2.sonde: stream format version 2 is not supported (this sonde reads version 1; use a matching sonde)"
	run "$SONDE" frobnicate
	expect_rc 2 "unknown command"
	expect_err_line "sonde: frobnicate: unknown command (see 'sonde --help')"
	run "$SONDE" --help
	expect_rc 0 "--help"
	grep -q '^  4  bad input' "$T/out" && grep -q '^  3  I/O' "$T/out" && grep -q '^  2  usage' "$T/out" ||
		fail "--help lists the exit codes"
