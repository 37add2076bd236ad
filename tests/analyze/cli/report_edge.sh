# analyze_report_edge: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk edge e.sonde
	run "$SONDE" report --format csv e.sonde
	expect_rc 0 "edge"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_main,2,33.33,5,83.33,mkstream
0x1234,1,16.67,1,16.67,
[no stack],1,16.67,1,16.67,
[unknown]+0x10,1,16.67,1,16.67,
[vdso]+0x20,1,16.67,1,16.67,[vdso]
EOF
