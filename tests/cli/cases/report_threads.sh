# analyze.cli.report_threads: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde --pid 100
	run "$SONDE" report --view threads --format csv a.sonde
	expect_rc 0 "threads csv"
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,periods,first_ns,last_ns
100,100,main,70,70,1001000,70001000
100,101,worker-end,20,30,1005000,30005000
EOF
	run "$SONDE" report --view threads --format json a.sonde
	expect_rc 0 "threads json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [(t["tid"],t["samples"],t["name"]) for t in d["threads"]]==[(100,70,"main"),(101,20,"worker-end")], d' "$T/out" || fail "threads json"
	run "$SONDE" report --view threads a.sonde
	expect_rc 0 "threads text"
	expect_file "$T/out" <<EOF
$DROPS
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
       pid        tid    samples    periods     first_ms      last_ms  name
       100        100         70         70        1.001       70.001  main
       100        101         20         30        1.005       30.005  worker-end
EOF
	run "$SONDE" report --view threads --format folded a.sonde
	expect_rc 2 "threads folded"
