# analyze.cli.report_papi: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk papi p.sonde
	run "$SONDE" report --metric weight p.sonde
	expect_rc 0 "papi weight"
	expect_file "$T/out" <<'EOF'
samples: 40 (50000000 events)  streams: 1  processes: 1  threads: 1
source perf::TASK-CLOCK: 40 samples (perf::TASK-CLOCK@1000000, period 1000000 events, papi:overflow)
coverage: not computed: no cpu-time source was recorded: the other sources do not measure CPU time (sample with SONDE_SAMPLE=cpu-time@1ms for an account)

self_events   self% total_events  total%  function
   30000000  60.00%     30000000  60.00%  mk_alpha
   20000000  40.00%     20000000  40.00%  mk_beta
          0   0.00%     50000000 100.00%  mk_main
EOF
	run "$SONDE" report --metric weight --format csv p.sonde
	expect_file "$T/out" <<'EOF'
function,self_events,self_pct,total_events,total_pct,module
mk_alpha,30000000,60.00,30000000,60.00,mkstream
mk_beta,20000000,40.00,20000000,40.00,mkstream
mk_main,0,0.00,50000000,100.00,mkstream
EOF
	run "$SONDE" report --metric weight --group-by source --format csv p.sonde
	expect_file "$T/out" <<'EOF'
source,weight_events,percent
perf::TASK-CLOCK,50000000,100.00
EOF
	mk flat a.sonde
	# two sources: the views show one (cpu-time), never a sum of ns and events
	run "$SONDE" report --metric weight --format csv a.sonde p.sonde
	expect_rc 0 "two units"
	expect_err_line "sonde: note: showing source cpu-time only: the streams hold several sources (cpu-time, wall-time, perf::TASK-CLOCK), whose clocks are never added (show another with --source wall-time)"
	sed -n 1p "$T/out" | grep -qx 'function,self_ms,self_pct,total_ms,total_pct,module' || fail "two units: $(head -n 2 "$T/out")"
	run "$SONDE" report --metric weight --source perf::TASK-CLOCK --format csv a.sonde p.sonde
	expect_rc 0 "one unit picked"
	sed -n 2p "$T/out" | grep -qx 'mk_alpha,30000000,60.00,30000000,60.00,mkstream' || fail "picked source"
