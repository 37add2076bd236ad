# analyze_did_you_mean: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
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
