# analyze.cli.same_stream: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Issue 19 item 13: a stream given twice (a directory and a file in it, a symlink, a
	# hard link, a copy) counts once, and the duplicate is said. Files are the same by
	# st_dev/st_ino; copies by their HEADER (pid, host and clock origin).
	mkdir d
	mk flat d/a.sonde
	HEAD='samples: 90 (100 periods)  streams: 1  processes: 1  threads: 2'
	run "$SONDE" report d d/a.sonde
	expect_rc 0 "dir and file"
	grep -qxF "$HEAD" "$T/out" || { cat "$T/out"; fail "dir and file: counted twice"; }
	expect_err_line "sonde: d/a.sonde: the same file as d/a.sonde, read already (counted once)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "dir and file: more than one line"; }
	ln -s d/a.sonde link.sonde
	ln d/a.sonde hard.sonde
	cp d/a.sonde copy.sonde
	run "$SONDE" report --format csv d/a.sonde link.sonde hard.sonde copy.sonde
	expect_rc 0 "links and copy"
	expect_err_line "sonde: link.sonde: the same file as d/a.sonde, read already (counted once)"
	expect_err_line "sonde: hard.sonde: the same file as d/a.sonde, read already (counted once)"
	expect_err_line "sonde: copy.sonde: the same stream as d/a.sonde (pid 4242 on testhost, started at the same time; counted once)"
	grep -qxF 'mk_beta,60,60.00,60,60.00,mkstream' "$T/out" || { cat "$T/out"; fail "links and copy: counted more than once"; }
	# --jobs: the same answer
	run "$SONDE" report --jobs 2 --format csv copy.sonde d
	expect_rc 0 "jobs"
	expect_err_line "sonde: d/a.sonde: the same stream as copy.sonde (pid 4242 on testhost, started at the same time; counted once)"
	grep -qxF 'mk_beta,60,60.00,60,60.00,mkstream' "$T/out" || fail "jobs: counted twice"
	# streams that differ in pid, or only in their clock origin, are two streams
	mk flat b.sonde --pid 100
	mk flat c.sonde --clock 5
	run "$SONDE" report d/a.sonde b.sonde c.sonde
	expect_rc 0 "three streams"
	grep -qxF 'samples: 270 (300 periods)  streams: 3  processes: 2  threads: 6' "$T/out" || { cat "$T/out"; fail "three streams"; }
	grep -q 'counted once' "$T/err" && fail "distinct streams said to be the same"
	# the streams view lists a stream once
	run "$SONDE" report --view streams --format csv d d/a.sonde copy.sonde
	expect_rc 0 "streams view"
	[ "$(grep -c 'a.sonde' "$T/out")" -eq 1 ] || fail "streams view: listed twice"
	[ "$(wc -l <"$T/out")" -eq 2 ] || fail "streams view: rows"
