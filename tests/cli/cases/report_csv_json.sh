# analyze.cli.report_csv_json: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	run "$SONDE" report --format csv a.sonde
	expect_rc 0 "csv"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,60.00,60,60.00,mkstream
mk_alpha,20,20.00,70,70.00,mkstream
mk_gamma,20,20.00,20,20.00,mkstream
mk_main,0,0.00,100,100.00,mkstream
mk_recurse,0,0.00,10,10.00,mkstream
EOF
	expect_err_line "$DROPS"
	run "$SONDE" report --format json a.sonde
	expect_rc 0 "json"
	python3 - "$T/out" <<'EOF' || fail "json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 90 and d["periods"] == 100 and d["metric"] == "periods", d
assert d["streams"] == 1 and d["processes"] == 1 and d["threads"] == 2 and d["dropped"] == 4
rows = {r["function"]: r for r in d["rows"]}
assert [r["function"] for r in d["rows"]] == ["mk_beta", "mk_alpha", "mk_gamma", "mk_main", "mk_recurse"]
assert rows["mk_alpha"] == {"function": "mk_alpha", "self": 20, "self_pct": 20.0, "total": 70,
                            "total_pct": 70.0, "module": "mkstream"}, rows["mk_alpha"]
assert rows["mk_main"]["total"] == 100 and rows["mk_recurse"]["total"] == 10
EOF
