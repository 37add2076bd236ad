# analyze.cli.report_weight: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	run "$SONDE" report --metric weight a.sonde
	expect_rc 0 "weight"
	expect_file "$T/out" <<EOF
samples: 90 (100.000 ms)  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: not shown (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$DROPS
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

   self_ms   self%   total_ms  total%  function
    60.000  60.00%     60.000  60.00%  mk_beta
    20.000  20.00%     70.000  70.00%  mk_alpha
    20.000  20.00%     20.000  20.00%  mk_gamma
     0.000   0.00%    100.000 100.00%  mk_main
     0.000   0.00%     10.000  10.00%  mk_recurse
EOF
