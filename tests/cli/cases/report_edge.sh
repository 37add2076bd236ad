# analyze.cli.report_edge: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk edge e.sonde
	run "$SONDE" report --format csv e.sonde
	expect_rc 0 "edge"
	# the last sample has flags 3 (truncated, partial): its path is under [truncated]
	# (a stream without max_depth: no limit named)
	expect_err_line "sonde: warning: 1 of 6 samples truncated (16.67%: their outermost frames are missing, under [truncated]; raise SONDE_MAX_DEPTH, up to 1024)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "stderr: $(cat "$T/err")"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_main,2,33.33,5,83.33,mkstream
0x1234,1,16.67,1,16.67,
[no stack],1,16.67,1,16.67,
[unknown]+0x10,1,16.67,1,16.67,
[vdso]+0x20,1,16.67,1,16.67,[vdso]
[truncated],0,0.00,1,16.67,
EOF
