# analyze.cli.report_folded: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	run "$SONDE" report --format folded a.sonde
	expect_rc 0 "folded"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 20
mk_main;mk_recurse;mk_recurse;mk_beta 10
EOF
	run "$SONDE" report --format folded --metric weight a.sonde
	expect_rc 0 "folded weight"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20000000
mk_main;mk_alpha;mk_beta 50000000
mk_main;mk_gamma 20000000
mk_main;mk_recurse;mk_recurse;mk_beta 10000000
EOF
	run "$SONDE" report --format folded --addresses a.sonde
	expect_rc 0 "folded addresses"
	[ "$(wc -l <"$T/out")" -eq 4 ] || fail "4 folded lines with --addresses"
	grep -qE '^mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+ 20$' "$T/out" || fail "module+offset names"
	! grep -q mk_ "$T/out" || fail "--addresses still shows names"
