# analyze.cli.report_flat: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk flat a.sonde
	run "$SONDE" report a.sonde
	expect_rc 0 "report"
	expect_err_empty
	expect_file "$T/out" <<EOF
samples: 90 (100 periods)  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: not shown (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$DROPS
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

$FLAT_TABLE
EOF
	run "$SONDE" report --top 2 --source cpu-time a.sonde
	expect_rc 0 "--top --source"
	sed -n 7,9p "$T/out" >top.txt
	expect_file top.txt <<'EOF'
      self   self%      total  total%  function
        60  60.00%         60  60.00%  mk_beta
        20  20.00%         70  70.00%  mk_alpha
EOF
	grep -qx 'samples: 90 (100 periods)  streams: 1  processes: 1  threads: 2' "$T/out" || fail "--source header"
	run "$SONDE" report --top x a.sonde
	expect_rc 2 "--top x"
	expect_err_line "sonde: report: --top: 'x' is not a count (see 'sonde report --help')"
	run "$SONDE" report --bogus a.sonde
	expect_rc 2 "unknown report option"
	run "$SONDE" report --format xml a.sonde
	expect_rc 2 "bad --format"
