# analyze.cli.report_model: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# exact data (1000 + n^2/4 ns a call): the model comes back exactly
	mk model mo.sonde
	run "$SONDE" report --view model --region quad --param n --format csv mo.sonde
	expect_rc 0 "model csv"
	expect_err_line "sonde: 2 calls of quad left out: a parameter was not set above them, or not a number"
	expect_file "$T/out" <<'EOF2'
n,calls,mean_ms,stddev_ms,min_ms,model_ms,error_pct
512,3,0.066536,0.000000,0.066536,0.066536,0.00
1024,3,0.263144,0.000000,0.263144,0.263144,0.00
2048,3,1.049576,0.000000,1.049576,1.049576,0.00
4096,3,4.195304,0.000000,4.195304,4.195304,0.00
8192,3,16.778216,0.000000,16.778216,16.778216,0.00
16384,3,67.109864,0.000000,67.109864,67.109864,0.00
EOF2
	run "$SONDE" report --view model --region quad --param n --format json mo.sonde
	python3 - "$T/out" <<'EOF2' || fail "model json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"] == "0.001 + 2.5e-07 * n^2 ms" and d["r2"] == 1 and d["fit"] == "good", d
assert d["left_out_calls"] == 2 and len(d["values"]) == 6 and d["values"][0]["params"] == [512], d
EOF2
	# refusals: a --param never set, --view model without --param, --fit typo
	run "$SONDE" report --view model --region quad --param m mo.sonde
	expect_rc 4 "model: no values"
	expect_err_line "sonde: report: --view model: quad has 0 distinct values of --param (0 of its 20 calls had every parameter set above it); a model needs at least 3 (run more sizes, or check --param)"
	run "$SONDE" report --view model --region quad mo.sonde
	expect_rc 2 "model: no --param"
	run "$SONDE" report --view model --region quad --param n --fit median mo.sonde
	expect_rc 2 "model: --fit"
	expect_err_line "sonde: report: --fit: 'median' is not mean or min (see 'sonde report --help')"
