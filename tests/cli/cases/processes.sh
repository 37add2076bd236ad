# analyze.cli.processes: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --view processes and --group-by process: one row per process image, named
	# NAME[PID] from the header's argv[0], else exe, else '?' (mkstream.c: the coverage
	# stream's CPU is 547.5 ms in 4 of its 5 threads, one known up to the last flush)
	mk coverage c.sonde --pid 100 --argv0 /opt/bin/solver --ppid 7 --clock 2000000000
	mk flat a.sonde --pid 200 --no-argv --clock 2500000000
	mk flat b.sonde --pid 300 --no-argv --no-exe --no-end --clock 3000000000
	# one pid, two images: sh exec'd /bin/true, which was killed by signal 9
	mk flat e1.sonde --pid 400 --argv0 sh --end-reason exec --clock 3100000000
	mk flat e2.sonde --pid 400 --argv0 /bin/true --end-signal 9 --clock 3200000000
	ALL="c.sonde a.sonde b.sonde e1.sonde e2.sonde"
	run "$SONDE" report --view processes $ALL
	expect_rc 0 "processes"
	sed -n '/^process /,$p' "$T/out" >p.txt
	expect_file p.txt <<'EOF'
process                 pid     ppid      cpu_ms  samples threads   start_ms    wall_ms  end         command
solver[100]             100        7     547.500      372       5      0.000   1000.000  exit        /opt/bin/solver a,"b"\n
mkstream-test[200]      200        1           -      100       2    500.000   1000.000  exit        (no argv)
?[300]                  300        1           -      100       2   1000.000     70.001  incomplete  (no argv)
sh[400]                 400        1           -      100       2   1100.000   1000.000  exec        sh a,"b"\n
true[400]               400        1           -      100       2   1200.000   1000.000  signal 9    /bin/true a,"b"\n
cpu_ms of 1 process is partial: a thread's CPU time is unknown, or known up to the last flush only (killed or still running; see --view coverage); '-': no CPU time recorded
EOF
	run "$SONDE" report --view processes --format csv --top 3 $ALL
	expect_rc 0 "processes csv"
	expect_file "$T/out" <<'EOF'
process,pid,ppid,name,cpu_ms,cpu_threads,samples,threads,start_ms,wall_ms,end,signal,exe,command,file,stream,no_stream
solver[100],100,7,solver,547.500,4,372,5,0.000,1000.000,exit,,/usr/bin/mkstream-test,"/opt/bin/solver a,""b""
",c.sonde,true,
mkstream-test[200],200,1,mkstream-test,,0,100,2,500.000,1000.000,exit,,/usr/bin/mkstream-test,,a.sonde,true,
?[300],300,1,?,,0,100,2,1000.000,70.001,incomplete,,,,b.sonde,true,
EOF
	run "$SONDE" report --view processes --format json $ALL
	expect_rc 0 "processes json"
	python3 - "$T/out" <<'EOF' || fail "processes json: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"]
assert [x["process"] for x in p] == ["solver[100]", "mkstream-test[200]", "?[300]", "sh[400]", "true[400]"], p
assert p[0] == {"process": "solver[100]", "pid": 100, "ppid": 7, "name": "solver", "cpu_ms": 547.5,
                "cpu_threads": 4, "cpu_from_flush": 1, "samples": 372, "threads": 5, "start_ms": 0.0,
                "wall_ms": 1000.0, "end": "exit", "signal": None, "exe": "/usr/bin/mkstream-test",
                "command": "/opt/bin/solver a,\"b\"\n", "file": "c.sonde", "stream": True,
                "no_stream": None}, p[0]
assert p[1]["command"] is None and p[1]["exe"] == "/usr/bin/mkstream-test" and p[1]["cpu_ms"] is None, p[1]
assert p[2]["exe"] is None and p[2]["name"] == "?" and p[2]["end"] == "incomplete", p[2]
assert p[3]["end"] == "exec" and p[4]["end"] == "signal" and p[4]["signal"] == 9, p[3:]
EOF
	# --group-by process: the same labels; the two images of pid 400 are two rows
	run "$SONDE" report --group-by process --format csv $ALL
	expect_file "$T/out" <<'EOF'
process,periods,percent
solver[100],377,48.52
?[300],100,12.87
mkstream-test[200],100,12.87
sh[400],100,12.87
true[400],100,12.87
EOF
	run "$SONDE" report --group-by process,thread e1.sonde
	grep -q '^sh\[400\]  *400 (main)  *70 ' "$T/out" || fail "group-by process text: $(cat "$T/out")"
	# --where process= matches the pid, the name or the label; the processes view counts
	# the samples kept (CPU time is the kernel's, unfiltered)
	run "$SONDE" report --view processes --format json --where process=400 $ALL
	python3 -c 'import json,sys; print(" ".join("%s,%d" % (x["process"], x["samples"]) for x in json.load(open(sys.argv[1]))["processes"]))' "$T/out" >w.txt
	[ "$(cat w.txt)" = "solver[100],0 sh[400],100 true[400],100 mkstream-test[200],0 ?[300],0" ] ||
		fail "where process=400: $(cat w.txt)"
	run "$SONDE" report --group-by process --format csv --where 'process=true[400]' $ALL
	[ "$(sed -n 2p "$T/out")" = "true[400],100,100.00" ] || fail "where label: $(cat "$T/out")"
	run "$SONDE" report --group-by process --format csv --where 'process~^(sh|solver)$' $ALL
	[ "$(cut -d, -f1 "$T/out" | tr '\n' ' ')" = "process solver[100] sh[400] " ] || fail "where name regex: $(cat "$T/out")"
	run "$SONDE" report --view processes --format folded c.sonde
	expect_rc 2 "processes folded"
