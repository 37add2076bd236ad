# analyze.cli.report_group: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk ctx c.sonde
	run "$SONDE" report --group-by phase c.sonde
	expect_rc 0 "group-by phase"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
phase        periods  percent
solve             50   50.00%
(none)            25   25.00%
exchange          15   15.00%
inner             10   10.00%
EOF
	run "$SONDE" report --group-by phase,iteration --format csv c.sonde
	expect_rc 0 "group-by two attributes"
	expect_file "$T/out" <<'EOF'
phase,iteration,periods,percent
solve,1,30,30.00
(none),(none),25,25.00
solve,2,20,20.00
exchange,1,15,15.00
inner,1,10,10.00
EOF
	run "$SONDE" report --group-by function,thread c.sonde
	expect_rc 0 "group-by function,thread"
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function  thread            periods  percent
mk_beta   4242 (main)            50   50.00%
mk_gamma  4243 (worker)          25   25.00%
mk_alpha  4242 (main)            15   15.00%
mk_main   4243 (worker)          10   10.00%
EOF
	run "$SONDE" report --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,periods,percent
4242,65,65.00
4243,35,35.00
EOF
	run "$SONDE" report --group-by run,process,module,source --format json c.sonde
	expect_rc 0 "group-by json"
	python3 - "$T/out" <<'EOF' || fail "group-by json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["group_by"] == ["run", "process", "module", "source"] and d["samples"] == 100, d
assert d["rows"] == [{"values": ["big", "mkstream[4242]", "mkstream", "cpu-time"], "periods": 90, "percent": 90.0},
                     {"values": ["(none)", "mkstream[4242]", "mkstream", "cpu-time"], "periods": 10, "percent": 10.0}], d
EOF
	run "$SONDE" report --group-by iteration --metric weight --format csv --top 1 c.sonde
	expect_file "$T/out" <<'EOF'
iteration,weight_ms,percent
1,55.000,55.00
EOF
	# merged across streams by attribute name and value (ids numbered differently)
	mk ctx d.sonde --swap-ids --pid 5000
	run "$SONDE" report --group-by phase,run --format csv c.sonde d.sonde
	expect_rc 0 "group-by two streams"
	expect_file "$T/out" <<'EOF'
phase,run,periods,percent
solve,big,100,50.00
(none),big,30,15.00
exchange,big,30,15.00
(none),(none),20,10.00
inner,big,20,10.00
EOF
	run "$SONDE" report --group-by nosuch --format csv c.sonde
	expect_file "$T/out" <<'EOF'
nosuch,periods,percent
(none),100,100.00
EOF
	run "$SONDE" report --group-by phase,, c.sonde
	expect_rc 2 "empty key"
	expect_err_line "sonde: report: --group-by: empty key (give names separated by commas, e.g. --group-by phase,function)"
	run "$SONDE" report --group-by phase --view threads c.sonde
	expect_rc 2 "group-by with a view"
	expect_err_line "sonde: report: --group-by makes its own table, or keeps levels of --view regions (use it without --view or with --view regions, and with --format text, csv or json)"
