# analyze.cli.errors_said: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 20 item 4: every error is said once, in one `sonde: ...` line, and the exit
	# code goes with what went wrong. Each bad command line below: exactly one line on
	# stderr, of the shape `sonde: <what>: <why> (<hint>)` where the message has a hint.
	# (`--metric=` exited 2 without a word before sd_error; `--format pprof --group-by`
	# printed a table's rows on stdout, wrote no file and exited 0, and `--format pprof
	# --stats` dropped --stats, until the options were checked against the rows.)
	mk flat a.sonde
	mk flat b.sonde --pid 2
	mkdir empty.d
	: >empty.sonde
	check() { # check RC ARGS...: one line on stderr, exit RC
		local want=$1
		shift
		run "$SONDE" "$@"
		expect_rc "$want" "$*"
		[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "not one line on stderr: $*"; }
		grep -q '^sonde: ' "$T/err" || fail "not a sonde line: $* -> $(cat "$T/err")"
	}
	for bad in "--metric=" "--metric ''" "--top x" "--bogus" "--format xml" "--view nope" \
		   "--view callers" "--jobs 0" "--min-percent -1" "--fit x" "--color-by=" \
		   "--group-by a,,b" "--stats nope" "--where =x" "--format svg --stats thread" \
		   "--view model" "--format pprof" "-o x.svg" "--format trace --top 3" \
		   "--color-by phase" "--color-by thread --format svg" "--param a,b,c,d --view model --region r" \
		   "--format pprof -o x.pb --group-by phase" "--format pprof -o x.pb --stats thread" \
		   "--format html --stats thread" "--format trace --metric weight" "--view tree --stats thread"; do
		eval "check 2 report $bad a.sonde"
	done
	check 2 report
	check 2 report --metric nosuch a.sonde
	check 2 report --view callers nosuch a.sonde
	check 2 report --metric context-switches a.sonde
	check 4 report empty.d
	# an unreadable stream is said and skipped; then that nothing was left
	run "$SONDE" report empty.sonde
	expect_rc 4 "report empty.sonde"
	expect_file "$T/err" <<'EOT'
sonde: empty.sonde: empty file (not a sonde stream; the profiled process wrote nothing)
sonde: report: no stream could be read (nothing to report)
EOT
	check 4 report --view regions a.sonde
	check 3 report /nonexistent/x.sonde
	check 2 diff a.sonde
	check 2 diff -o x.svg a.sonde b.sonde
	check 3 diff a.sonde /nonexistent/b.sonde
	check 2 dump
	check 2 dump a.sonde b.sonde
	check 4 dump empty.sonde
	check 2 events --format xml
	check 2 run
	check 2 run -e
	check 2 frobnicate
	# the one that had no word: said, with the choices
	run "$SONDE" report --metric= a.sonde
	expect_err_line "sonde: report: --metric: empty (give periods, samples, weight or a counter; see 'sonde report --help')"
