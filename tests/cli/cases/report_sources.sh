# analyze.cli.report_sources: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	run "$SONDE" report --view sources --format csv a.sonde
	expect_rc 0 "sources csv"
	expect_file "$T/out" <<'EOF'
source,spec,samples,weight,period,unit,mechanism
cpu-time,cpu-time@1ms,90,100000000,1000000,ns,perf_event:task-clock
wall-time,wall-time@10ms,10,100000000,10000000,ns,posix-timer:monotonic
EOF
