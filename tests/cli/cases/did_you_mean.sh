# analyze.cli.did_you_mean: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# typos are answered with the nearest name, and the report still runs
	run "$SONDE" reprot x
	expect_rc 2 "command typo"
	expect_err_line "sonde: reprot: unknown command (did you mean 'report'? see 'sonde --help')"
	run "$SONDE" frobnicate
	expect_err_line "sonde: frobnicate: unknown command (see 'sonde --help')"
	mk ctx c.sonde
	run "$SONDE" report --group-by phse --format csv c.sonde
	expect_rc 0 "group-by typo"
	expect_err_line "sonde: report: --group-by phse: no attribute of that name in the streams (did you mean 'phase'? attributes: phase, iteration, run, region)"
	run "$SONDE" report --where 'iteraton=1' --format csv c.sonde
	expect_err_line "sonde: report: --where iteraton: no attribute of that name in the streams (did you mean 'iteration'? attributes: phase, iteration, run, region)"
	run "$SONDE" report --where '!zzz' --group-by function --format csv c.sonde
	expect_err_line "sonde: report: --where zzz: no attribute of that name in the streams (attributes: phase, iteration, run, region)"
	run "$SONDE" report --where 'phase=solve' --group-by thread,function --format csv c.sonde
	expect_err_empty
	# options and their values too
	run "$SONDE" report --fromat csv c.sonde
	expect_rc 2 "option typo"
	expect_err_line "sonde: report: unknown option '--fromat' (did you mean '--format'? see 'sonde report --help')"
	run "$SONDE" report --format=cvs c.sonde
	expect_err_line "sonde: report: --format: unknown value 'cvs' (did you mean 'csv'? see 'sonde report --help')"
	run "$SONDE" report --view treee c.sonde
	expect_err_line "sonde: report: --view: unknown value 'treee' (did you mean 'tree'? see 'sonde report --help')"
	run "$SONDE" report --stats threads c.sonde
	expect_err_line "sonde: report: --stats: unknown value 'threads' (did you mean 'thread'? see 'sonde report --help')"
	run "$SONDE" report --bogus c.sonde
	expect_err_line "sonde: report: unknown option '--bogus' (see 'sonde report --help')"
	run "$SONDE" diff --absolut c.sonde c.sonde
	expect_err_line "sonde: diff: unknown option '--absolut' (did you mean '--absolute'? see 'sonde diff --help')"
	run "$SONDE" run --smaple cpu-time@1ms -- true
	expect_rc 2 "run option typo"
	expect_err_line "sonde: run: unknown option '--smaple' (did you mean '--sample'? usage: sonde run [-e SPEC]... [-F HZ] [-o DIR] -- CMD [ARGS])"
