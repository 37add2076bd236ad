# analyze.cli.truncated: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	# cut 2 bytes into the 32nd SAMPLE: 31 samples of main;alpha;beta remain
	"$SONDE" dump a.sonde >full.json || fail "dump"
	off=$(grep '"kind":"SAMPLE"' full.json | sed -n 32p | sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) a.sonde >t.sonde
	run "$SONDE" dump t.sonde
	expect_rc 0 "dump truncated"
	# HEADER, MODULE, 2 THREAD, 3 FRAME, 31 SAMPLE
	expect_err_line "sonde: t.sonde: truncated at byte $off (valid prefix of 38 records used)"
	[ "$(wc -l <"$T/out")" -eq 38 ] || fail "dump truncated: line count"
	head -n 38 full.json | cmp -s - "$T/out" || fail "dump truncated: not the prefix"
	run "$SONDE" report --format csv t.sonde
	expect_rc 0 "report truncated"
	expect_err_line "sonde: t.sonde: truncated at byte $off (using the valid prefix)"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,31,100.00,31,100.00,mkstream
mk_alpha,0,0.00,31,100.00,mkstream
mk_main,0,0.00,31,100.00,mkstream
EOF
