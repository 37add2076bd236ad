# analyze.cli.progress: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --progress when stderr is not a terminal (a batch job): whole lines through the log
	# sink, and one at the end with the streams used of those given; nothing without it
	mk flat a.sonde --pid 100
	mk flat b.sonde --pid 200
	: >empty.sonde
	run "$SONDE" report --progress a.sonde b.sonde empty.sonde
	expect_rc 0 "--progress"
	grep -Eq '^sonde: read 2 of 3 streams, [0-9]+ MB in [0-9]+\.[0-9] s$' "$T/err" ||
		fail "--progress: no final line: $(cat "$T/err")"
	run "$SONDE" report a.sonde b.sonde
	grep -q 'streams, ' "$T/err" && fail "a progress line without --progress: $(cat "$T/err")"
	run "$SONDE" diff --progress a.sonde b.sonde
	expect_rc 0 "diff --progress"
	[ "$(grep -c '^sonde: read 1 of 1 streams' "$T/err")" -eq 2 ] || fail "diff --progress: $(cat "$T/err")"
