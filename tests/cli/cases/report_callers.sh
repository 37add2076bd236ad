# analyze.cli.report_callers: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# flat: mk_beta is reached through mk_alpha (50) and mk_recurse;mk_recurse (10)
	mk flat a.sonde
	run "$SONDE" report --view callers mk_beta --format csv a.sonde
	expect_rc 0 "callers"
	expect_file "$T/out" <<'EOF'
caller,periods,percent,module
mk_alpha,50,83.33,mkstream
mk_recurse,10,16.67,mkstream
EOF
	run "$SONDE" report --view callees mk_main --format csv a.sonde
	expect_file "$T/out" <<'EOF'
callee,periods,percent,module
mk_alpha,70,70.00,mkstream
mk_gamma,20,20.00,mkstream
mk_recurse,10,10.00,mkstream
EOF
	run "$SONDE" report --view callees mk_alpha a.sonde
	expect_file "$T/out" <<EOF
$DROPS
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function mk_alpha: total 70 (70.00% of all), self 20 (20.00%)
   periods  percent  callee
        50   71.43%  mk_beta
        20   28.57%  [self]
EOF
	# recursion: each sample counts once per row (mk_recurse is its own caller and callee)
	run "$SONDE" report --view callers mk_recurse --format json a.sonde
	expect_file "$T/out" <<EOF
{"incomplete_streams":0,$W_NOTES,"metric":"periods","function":"mk_recurse","total":10,"total_pct":10.00,"self":0,"self_pct":0.00,"callers":[
{"caller":"mk_main","periods":10,"percent":100.00,"module":"mkstream"},
{"caller":"mk_recurse","periods":10,"percent":100.00,"module":"mkstream"}]}
EOF
	run "$SONDE" report --view callees mk_recurse --format csv a.sonde
	expect_file "$T/out" <<'EOF'
callee,periods,percent,module
mk_beta,10,100.00,mkstream
mk_recurse,10,100.00,mkstream
EOF
	run "$SONDE" report --view callers mk_main --format csv a.sonde
	expect_file "$T/out" <<'EOF'
caller,periods,percent,module
[root],100,100.00,
EOF
	run "$SONDE" report --view callers mk_beta --metric weight --format csv --top 1 a.sonde
	expect_file "$T/out" <<'EOF'
caller,weight_ms,percent,module
mk_alpha,50.000,83.33,mkstream
EOF
	run "$SONDE" report --view callers nosuch a.sonde
	expect_rc 2 "unknown function"
	expect_err_line "sonde: report: --view callers nosuch: no function of that name in these samples (give a name of the flat view)"
	run "$SONDE" report a.sonde --view callers
	expect_rc 2 "no NAME"
	expect_err_line "sonde: report: --view callers needs a function name (e.g. --view callers main)"
	# dup: two functions named mk_alpha; the plain name takes both, the display name one
	mk dup d.sonde
	run "$SONDE" report --view callers mk_alpha --format csv d.sonde
	expect_file "$T/out" <<'EOF'
caller,periods,percent,module
mk_main,4,100.00,mkstream
EOF
	run "$SONDE" report --view callers "mk_alpha [libmkdup.so]" --format csv d.sonde
	expect_file "$T/out" <<'EOF'
caller,periods,percent,module
mk_main,1,100.00,mkstream
EOF
