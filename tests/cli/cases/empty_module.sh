# analyze.cli.empty_module: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 11: a MODULE with an empty path (UBSan: strndup(NULL, 0)) is the main
	# program's (FORMAT.md): named after the HEADER exe
	mk bad_empty_module m.sonde
	run "$SONDE" report --format folded m.sonde
	expect_rc 0 "empty module path"
	expect_file "$T/out" <<'EOF'
mkstream-test+0x10 2
EOF
