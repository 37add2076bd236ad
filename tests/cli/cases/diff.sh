# analyze.cli.diff: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# mk_alpha's share doubles from diff_a (20 of 100) to diff_b (80 of 200)
	mk diff_a a.sonde
	mk diff_b b.sonde
	run "$SONDE" diff --format csv a.sonde b.sonde
	expect_rc 0 "diff"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,a,a_pct,b,b_pct,delta,ratio
mk_alpha,20,20.00,80,40.00,20.00,2.000
mk_beta,50,50.00,66,33.00,-17.00,0.660
mk_gamma,30,30.00,44,22.00,-8.00,0.733
mk_recurse,0,0.00,10,5.00,5.00,inf
EOF
	run "$SONDE" diff a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
a: a.sonde: 100 periods
b: b.sonde: 200 periods

           a       a%            b       b%     delta     ratio  function
          20   20.00%           80   40.00%    +20.00     2.000  mk_alpha
          50   50.00%           66   33.00%    -17.00     0.660  mk_beta
          30   30.00%           44   22.00%     -8.00     0.733  mk_gamma
           0    0.00%           10    5.00%     +5.00       inf  mk_recurse
EOF
	run "$SONDE" diff --format json --top 1 --metric weight a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
{"metric":"weight","a":{"path":"a.sonde","total":100.000},"b":{"path":"b.sonde","total":200.000},"keys":["function"],"rows":[
{"values":["mk_alpha"],"a":20.000,"a_pct":20.00,"b":80.000,"b_pct":40.00,"delta":20.00,"ratio":2.000}]}
EOF
	run "$SONDE" diff --format json --where 'function!=mk_alpha' --top 1 b.sonde a.sonde
	expect_file "$T/out" <<'EOF'
{"metric":"periods","a":{"path":"b.sonde","total":120},"b":{"path":"a.sonde","total":80},"keys":["function"],"rows":[
{"values":["mk_recurse"],"a":10,"a_pct":8.33,"b":0,"b_pct":0.00,"delta":-8.33,"ratio":0.000}]}
EOF
	# directories on both sides; group-by keys
	mkdir da db && cp a.sonde da/ && cp b.sonde db/ && mk ctx db/c.sonde
	run "$SONDE" diff --group-by phase,thread --format csv da db
	expect_file "$T/out" <<'EOF'
phase,thread,a,a_pct,b,b_pct,delta,ratio
(none),4242,100,100.00,200,66.67,-33.33,0.667
solve,4242,0,0.00,50,16.67,16.67,inf
(none),4243,0,0.00,25,8.33,8.33,inf
exchange,4242,0,0.00,15,5.00,5.00,inf
inner,4243,0,0.00,10,3.33,3.33,inf
EOF
	run "$SONDE" diff a.sonde
	expect_rc 2 "one PATH"
	expect_err_line "sonde: diff: give two PATHs, A and B (see 'sonde diff --help')"
	run "$SONDE" diff a.sonde nosuch
	expect_rc 3 "missing B"
	run "$SONDE" diff --format folded a.sonde b.sonde
	expect_rc 2 "folded"
	run "$SONDE" diff --absolute --format csv a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
function,a,a_pct,b,b_pct,delta,ratio
mk_alpha,20,20.00,80,40.00,60,4.000
mk_beta,50,50.00,66,33.00,16,1.320
mk_gamma,30,30.00,44,22.00,14,1.467
mk_recurse,0,0.00,10,5.00,10,inf
EOF
