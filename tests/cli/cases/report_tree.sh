# analyze.cli.report_tree: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk ctx c.sonde
	run "$SONDE" report --view tree --format folded c.sonde
	expect_rc 0 "tree folded"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
mk_main 10
run=big;mk_main;mk_gamma 15
run=big;phase=exchange;iteration=1;mk_main;mk_alpha 15
run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta 30
run=big;phase=solve;iteration=1;phase=inner;mk_main;mk_gamma 10
run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta 20
EOF
	run "$SONDE" report --view tree --min-percent 15 c.sonde
	expect_rc 0 "tree text"
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
     total  total%       self   self%  path
        90  90.00%          0   0.00%  run=big
        60  60.00%          0   0.00%    phase=solve
        40  40.00%          0   0.00%      iteration=1
        30  30.00%          0   0.00%        mk_main
        30  30.00%          0   0.00%          mk_alpha
        30  30.00%         30  30.00%            mk_beta
        20  20.00%          0   0.00%      iteration=2
        20  20.00%          0   0.00%        mk_main
        20  20.00%          0   0.00%          mk_alpha
        20  20.00%         20  20.00%            mk_beta
        15  15.00%          0   0.00%    mk_main
        15  15.00%         15  15.00%      mk_gamma
        15  15.00%          0   0.00%    phase=exchange
        15  15.00%          0   0.00%      iteration=1
        15  15.00%          0   0.00%        mk_main
        15  15.00%         15  15.00%          mk_alpha
EOF
	run "$SONDE" report --view tree --format folded --where phase=solve --metric weight c.sonde
	expect_file "$T/out" <<'EOF'
run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta 30000000
run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta 20000000
EOF
	# plain folded (flat view) stays frames only
	run "$SONDE" report --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main 10
mk_main;mk_alpha 15
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 25
EOF
	# without annotations the tree is the call tree
	mk flat a.sonde
	run "$SONDE" report --view tree --format folded a.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 20
mk_main;mk_recurse;mk_recurse;mk_beta 10
EOF
	# csv and json: the text view's nodes, in its order, as rows
	run "$SONDE" report --view tree --min-percent 15 --format csv c.sonde
	expect_rc 0 "tree csv"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,run=big,run=big,90,90.00,0,0.00
1,run=big;phase=solve,phase=solve,60,60.00,0,0.00
2,run=big;phase=solve;iteration=1,iteration=1,40,40.00,0,0.00
3,run=big;phase=solve;iteration=1;mk_main,mk_main,30,30.00,0,0.00
4,run=big;phase=solve;iteration=1;mk_main;mk_alpha,mk_alpha,30,30.00,0,0.00
5,run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta,mk_beta,30,30.00,30,30.00
2,run=big;phase=solve;iteration=2,iteration=2,20,20.00,0,0.00
3,run=big;phase=solve;iteration=2;mk_main,mk_main,20,20.00,0,0.00
4,run=big;phase=solve;iteration=2;mk_main;mk_alpha,mk_alpha,20,20.00,0,0.00
5,run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta,mk_beta,20,20.00,20,20.00
1,run=big;mk_main,mk_main,15,15.00,0,0.00
2,run=big;mk_main;mk_gamma,mk_gamma,15,15.00,15,15.00
1,run=big;phase=exchange,phase=exchange,15,15.00,0,0.00
2,run=big;phase=exchange;iteration=1,iteration=1,15,15.00,0,0.00
3,run=big;phase=exchange;iteration=1;mk_main,mk_main,15,15.00,0,0.00
4,run=big;phase=exchange;iteration=1;mk_main;mk_alpha,mk_alpha,15,15.00,15,15.00
EOF
	run "$SONDE" report --view tree --min-percent 30 --format json c.sonde
	expect_rc 0 "tree json"
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"periods","samples":100,"periods":100,"weight_ms":100.000,"truncated_samples":0,"min_percent":30,"rows":[
{"depth":0,"path":"run=big","name":"run=big","total":90,"total_pct":90.00,"self":0,"self_pct":0.00},
{"depth":1,"path":"run=big;phase=solve","name":"phase=solve","total":60,"total_pct":60.00,"self":0,"self_pct":0.00},
{"depth":2,"path":"run=big;phase=solve;iteration=1","name":"iteration=1","total":40,"total_pct":40.00,"self":0,"self_pct":0.00},
{"depth":3,"path":"run=big;phase=solve;iteration=1;mk_main","name":"mk_main","total":30,"total_pct":30.00,"self":0,"self_pct":0.00},
{"depth":4,"path":"run=big;phase=solve;iteration=1;mk_main;mk_alpha","name":"mk_alpha","total":30,"total_pct":30.00,"self":0,"self_pct":0.00},
{"depth":5,"path":"run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta","name":"mk_beta","total":30,"total_pct":30.00,"self":30,"self_pct":30.00}]}
EOF
	run "$SONDE" report --view tree --format csv --where phase=solve --metric weight --min-percent 50 c.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total_ms,total_pct,self_ms,self_pct
0,run=big,run=big,50.000,100.00,0.000,0.00
1,run=big;phase=solve,phase=solve,50.000,100.00,0.000,0.00
2,run=big;phase=solve;iteration=1,iteration=1,30.000,60.00,0.000,0.00
3,run=big;phase=solve;iteration=1;mk_main,mk_main,30.000,60.00,0.000,0.00
4,run=big;phase=solve;iteration=1;mk_main;mk_alpha,mk_alpha,30.000,60.00,0.000,0.00
5,run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta,mk_beta,30.000,60.00,30.000,60.00
EOF
	# the same nodes as the text view at any threshold
	for P in 0 10 15 25 45 90 100; do
		"$SONDE" report --view tree --min-percent $P c.sonde | tail -n +3 |
			awk '{print $1, $3, $NF}' >text.txt
		"$SONDE" report --view tree --min-percent $P --format csv c.sonde | tail -n +2 |
			awk -F, '{print $4, $6, $3}' >csv.txt
		cmp -s text.txt csv.txt || fail "tree csv and text differ at --min-percent $P"
	done
	# the default threshold (0.5 %) prunes as in text: thread main of `stats` has mk_beta
	# in 10 of 4010 samples (0.25 %)
	mk stats s.sonde --count 4000
	run "$SONDE" report --view tree --format csv --where thread=main s.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,mk_main,mk_main,4010,100.00,0,0.00
1,mk_main;mk_alpha,mk_alpha,4000,99.75,4000,99.75
EOF
	run "$SONDE" report --view tree --format csv --where thread=main --min-percent 0 s.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,mk_main,mk_main,4010,100.00,0,0.00
1,mk_main;mk_alpha,mk_alpha,4000,99.75,4000,99.75
1,mk_main;mk_beta,mk_beta,10,0.25,10,0.25
EOF
	run "$SONDE" report --view tree --format json --min-percent 101 c.sonde
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"periods","samples":100,"periods":100,"weight_ms":100.000,"truncated_samples":0,"min_percent":101,"rows":[]}
EOF
	run "$SONDE" report --view tree --min-percent x c.sonde
	expect_rc 2 "bad --min-percent"
	# --top in folded output: the heaviest N stacks, still in path order
	mk flat tf.sonde
	run "$SONDE" report --format folded --top 2 tf.sonde
	expect_rc 0 "folded --top"
	full=$("$SONDE" report --format folded tf.sonde | sort -t' ' -k2,2nr -k1,1 | head -n 2 | sort)
	[ "$(cat "$T/out")" = "$full" ] || fail "folded --top 2: $(cat "$T/out") against the two heaviest: $full"
