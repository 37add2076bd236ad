# analyze.cli.report_min_percent: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --min-percent P on the flat view: functions whose total is below P % of the counted
	# samples go (P itself stays), before --top; percentages stay those of all samples
	mk flat a.sonde
	run "$SONDE" report --min-percent 20 --format csv a.sonde
	expect_rc 0 "flat --min-percent"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,60.00,60,60.00,mkstream
mk_alpha,20,20.00,70,70.00,mkstream
mk_gamma,20,20.00,20,20.00,mkstream
mk_main,0,0.00,100,100.00,mkstream
EOF
	# of the cpu-time periods (100; 90 samples): mk_gamma has 20 (10 samples of weight 2),
	# mk_recurse 10
	run "$SONDE" report --min-percent 11.2 --source cpu-time --format csv a.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,60.00,60,60.00,mkstream
mk_alpha,20,20.00,70,70.00,mkstream
mk_gamma,20,20.00,20,20.00,mkstream
mk_main,0,0.00,100,100.00,mkstream
EOF
	run "$SONDE" report --min-percent 20 --top 2 --format json a.sonde
	expect_file "$T/out" <<EOF
{"incomplete_streams":0,$W_NOTES,"metric":"periods","samples":90,"periods":100,"weight_ms":100.000,"truncated_samples":0,"streams":1,"unreadable_streams":0,"processes":1,"processes_without_stream":0,"threads":2,"dropped":4,"dropped_region_events":0,"rows":[
{"function":"mk_beta","self":60,"self_pct":60.00,"total":60,"total_pct":60.00,"module":"mkstream"},
{"function":"mk_alpha","self":20,"self_pct":20.00,"total":70,"total_pct":70.00,"module":"mkstream"}]}
EOF
	run "$SONDE" report --min-percent 15 a.sonde
	sed -n 8,100p "$T/out" >t.txt
	expect_file t.txt <<'EOF'
      self   self%      total  total%  function
        60  60.00%         60  60.00%  mk_beta
        20  20.00%         70  70.00%  mk_alpha
        20  20.00%         20  20.00%  mk_gamma
         0   0.00%        100 100.00%  mk_main
EOF
	# 0 keeps every row; without the option the flat view keeps every row too (the
	# default 0.5 is the tree's): thread main of `stats` has mk_beta in 10 of 4010
	# samples (0.25 %)
	run "$SONDE" report --min-percent 0 --format csv a.sonde
	[ "$(wc -l <"$T/out")" -eq 6 ] || fail "--min-percent 0 keeps all rows"
	mk stats s.sonde --count 4000
	run "$SONDE" report --where thread=main --format csv s.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_alpha,4000,99.75,4000,99.75,mkstream
mk_beta,10,0.25,10,0.25,mkstream
mk_main,0,0.00,4010,100.00,mkstream
EOF
	run "$SONDE" report --where thread=main --min-percent 0.26 --format csv s.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_alpha,4000,99.75,4000,99.75,mkstream
mk_main,0,0.00,4010,100.00,mkstream
EOF
	run "$SONDE" report --min-percent 101 --format csv a.sonde
	expect_rc 0 "nothing left"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
EOF
	run "$SONDE" report --min-percent -1 a.sonde
	expect_rc 2 "negative --min-percent"
	expect_err_line "sonde: report: --min-percent: '-1' is not a percentage (see 'sonde report --help')"
