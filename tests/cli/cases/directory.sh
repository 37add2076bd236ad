# analyze.cli.directory: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mkdir -p prof/sub
	mk flat prof/x.host.1.sonde --pid 1
	mk flat prof/sub/x.host.2.sonde --pid 2
	echo ignored >prof/notes.txt
	run "$SONDE" report --format csv prof
	expect_rc 0 "directory"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,120,60.00,120,60.00,mkstream
mk_alpha,40,20.00,140,70.00,mkstream
mk_gamma,40,20.00,40,20.00,mkstream
mk_main,0,0.00,200,100.00,mkstream
mk_recurse,0,0.00,20,10.00,mkstream
EOF
	run "$SONDE" report prof
	grep -qx 'samples: 180 (200 periods)  streams: 2  processes: 2  threads: 4' "$T/out" || fail "directory header"
	run "$SONDE" report --view threads --format csv prof
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,periods,first_ns,last_ns
1,1,main,70,70,1001000,70001000
1,2,worker-end,20,30,1005000,30005000
2,2,main,70,70,1001000,70001000
2,3,worker-end,20,30,1005000,30005000
EOF
	run "$SONDE" report --format folded prof
	grep -qx 'mk_main;mk_alpha;mk_beta 100' "$T/out" || fail "folded merged across streams"
	mkdir empty
	run "$SONDE" report empty
	expect_rc 4 "empty directory"
	expect_err_line "sonde: empty: no .sonde files in this directory (give the output directory of 'sonde run', or stream files)"
