# analyze.cli.report_stats: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# four processes (mkstream stats: threads main, worker, idle; K = --count):
	#   pid 100 rank 0 K 10 | pid 200 rank 1 K 20 | pid 300 no rank K 30 | pid 400 rank 1 K 40
	# mk_alpha per thread: K in main, 0 in worker and idle; mk_beta: 10 in main, K in
	# worker, 0 in idle. Expected values: population statistics of these numbers.
	mk stats p1.sonde --pid 100 --rank 0 --count 10
	mk stats p2.sonde --pid 200 --rank 1 --count 20
	mk stats p3.sonde --pid 300 --count 30
	mk stats p4.sonde --pid 400 --rank 1 --count 40
	P="p1.sonde p2.sonde p3.sonde p4.sonde"
	# threads (12): alpha 10,20,30,40 and eight 0: mean 100/12 = 8.333, stddev
	# sqrt(3000/12 - 8.333^2) = 13.437; beta 10,10,0, 10,20,0, 10,30,0, 10,40,0
	run "$SONDE" report --stats thread --format csv $P
	expect_rc 0 "stats thread"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,140,58.33,140,58.33,mkstream,0,11.667,40,12.134,12,100/102,400/401
mk_alpha,100,41.67,100,41.67,mkstream,0,8.333,40,13.437,12,100/101,400/400
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,12,100/100,100/100
EOF
	# processes (4): alpha 10,20,30,40; beta 20,30,40,50
	run "$SONDE" report --stats process --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,140,58.33,140,58.33,mkstream,20,35.000,50,11.180,4,100,400
mk_alpha,100,41.67,100,41.67,mkstream,10,25.000,40,11.180,4,100,400
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,4,100,100
EOF
	# ranks (2): rank 0 = pid 100, rank 1 = pids 200 and 400; pid 300 has no rank among
	# ranked streams (a launcher): in no unit. alpha 10,60; beta 20,80. min_at and
	# max_at: the unit (rank, pid, pid/tid) of the min and max, the first loaded on a tie
	run "$SONDE" report --stats rank --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,140,58.33,140,58.33,mkstream,20,50.000,80,30.000,2,0,1
mk_alpha,100,41.67,100,41.67,mkstream,10,35.000,60,25.000,2,0,1
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,2,0,0
EOF
	run "$SONDE" report --stats process --format json --top 1 $P
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"periods","samples":240,"periods":240,"weight_ms":240.000,"truncated_samples":0,"streams":4,"unreadable_streams":0,"processes":4,"processes_without_stream":0,"threads":12,"dropped":0,"dropped_region_events":0,"stats":"process","rows":[
{"function":"mk_beta","self":140,"self_pct":58.33,"total":140,"total_pct":58.33,"module":"mkstream","min":20,"mean":35.000,"max":50,"stddev":11.180,"n":4,"min_at":"100","max_at":"400"}]}
EOF
	run "$SONDE" report --stats thread $P
	sed -n 6,100p "$T/out" >t.txt
	expect_file t.txt <<'EOF'
      self   self%      total  total%  function         min         mean        max       stddev      n   min_at   max_at
       140  58.33%        140  58.33%  mk_beta            0       11.667         40       12.134     12  100/102  400/401
       100  41.67%        100  41.67%  mk_alpha           0        8.333         40       13.437     12  100/101  400/400
         0   0.00%        240 100.00%  mk_main            0        0.000          0        0.000     12  100/100  100/100
EOF
	# ms with --metric weight (1 ms per sample here); every thread still counts when
	# --where leaves it no samples; --min-percent and --stats together
	run "$SONDE" report --stats process --metric weight --format csv $P
	expect_file "$T/out" <<'EOF'
function,self_ms,self_pct,total_ms,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,140.000,58.33,140.000,58.33,mkstream,20.000,35.000,50.000,11.180,4,100,400
mk_alpha,100.000,41.67,100.000,41.67,mkstream,10.000,25.000,40.000,11.180,4,100,400
mk_main,0.000,0.00,240.000,100.00,mkstream,0.000,0.000,0.000,0.000,4,100,100
EOF
	run "$SONDE" report --stats thread --where thread=worker --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,100,100.00,100,100.00,mkstream,0,8.333,40,13.437,12,100/100,400/401
mk_main,0,0.00,100,100.00,mkstream,0,0.000,0,0.000,12,100/100,100/100
EOF
	run "$SONDE" report --stats rank --min-percent 50 --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,140,58.33,140,58.33,mkstream,20,50.000,80,30.000,2,0,1
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,2,0,0
EOF
	# group-by rows, sorted as the group-by view: per process across ranks (pid 400 is
	# rank 1: 90 there, 0 in rank 0; pid 300's samples are in no rank)
	run "$SONDE" report --stats rank --group-by process --format csv $P
	expect_file "$T/out" <<'EOF'
process,periods,percent,min,mean,max,stddev,n,min_at,max_at
mkstream[400],90,37.50,0,45.000,90,45.000,2,0,1
mkstream[300],70,29.17,0,0.000,0,0.000,2,0,0
mkstream[200],50,20.83,0,25.000,50,25.000,2,0,1
mkstream[100],30,12.50,0,15.000,30,15.000,2,1,0
EOF
	run "$SONDE" report --stats process --group-by function --format json $P
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"periods","samples":240,"periods":240,"weight_ms":240.000,"truncated_samples":0,"group_by":["function"],"stats":"process","rows":[
{"values":["mk_beta"],"periods":140,"percent":58.33,"min":20,"mean":35.000,"max":50,"stddev":11.180,"n":4,"min_at":"100","max_at":"400"},
{"values":["mk_alpha"],"periods":100,"percent":41.67,"min":10,"mean":25.000,"max":40,"stddev":11.180,"n":4,"min_at":"100","max_at":"400"}]}
EOF
	run "$SONDE" report --stats thread --group-by function $P
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function     periods  percent         min         mean        max       stddev      n   min_at   max_at
mk_beta          140   58.33%           0       11.667         40       12.134     12  100/102  400/401
mk_alpha         100   41.67%           0        8.333         40       13.437     12  100/101  400/400
EOF
	# one stream: a single process, every row has stddev 0
	run "$SONDE" report --stats rank --format csv p3.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n,min_at,max_at
mk_beta,40,57.14,40,57.14,mkstream,40,40.000,40,0.000,1,300,300
mk_alpha,30,42.86,30,42.86,mkstream,30,30.000,30,0.000,1,300,300
mk_main,0,0.00,70,100.00,mkstream,0,0.000,0,0.000,1,300,300
EOF
	run "$SONDE" report --stats host p1.sonde
	expect_rc 2 "bad --stats"
	expect_err_line "sonde: report: --stats: unknown value 'host' (see 'sonde report --help')"
	for bad in "--view tree" "--view threads" "--format folded"; do
		run "$SONDE" report --stats thread $bad p1.sonde
		expect_rc 2 "--stats $bad"
		expect_err_line "sonde: report: --stats adds columns to the flat and --group-by views (use it without --view, and with --format text, csv or json)"
	done
