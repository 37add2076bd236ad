# analyze.cli.report_dup: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk dup d.sonde
	run "$SONDE" report --format folded d.sonde
	expect_rc 0 "dup"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha [libmkdup.so] 1
mk_main;mk_alpha [mkstream] 3
EOF
