# analyze.cli.big: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# a million samples: exact counts, and in a bounded time even under sanitizers
	mk big b.sonde --count 1000000
	start=$(date +%s)
	run "$SONDE" report --format csv b.sonde
	expect_rc 0 "big"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,500000,50.00,500000,50.00,mkstream
mk_gamma,500000,50.00,500000,50.00,mkstream
mk_alpha,0,0.00,500000,50.00,mkstream
mk_main,0,0.00,1000000,100.00,mkstream
EOF
	[ $(($(date +%s) - start)) -le 30 ] || fail "report of 1M samples took more than 30 s"
