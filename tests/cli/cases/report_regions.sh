# analyze.cli.report_regions: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk ctx c.sonde
	run "$SONDE" report --view regions c.sonde
	expect_rc 0 "regions"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
path                         calls      incl_ms      excl_ms       min_ms      mean_ms    stddev_ms       max_ms  forced
region=outer                     4       50.000       44.500        3.000       12.500       13.219       35.000       1
region=outer/region=inner        4        5.500        5.500        0.500        1.375        0.960        3.000       2
forced: 3 calls ended by sonde (open when its thread ended, or closed by a misnested end; timed up to that point)
left out: 1 call whose begin or end was dropped, or that ran inside such a call (in no row; raise SONDE_BUFFER_KB, or use SONDE_REGIONS=on)
EOF
	run "$SONDE" report --view regions --by-thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced
4242,region=outer,2,12.000,8.000,3.000,6.000,3.000,9.000,0
4243,region=outer,2,38.000,36.500,3.000,19.000,16.000,35.000,1
4242,region=outer/region=inner,2,4.000,4.000,1.000,2.000,1.000,3.000,0
4243,region=outer/region=inner,2,1.500,1.500,0.500,0.750,0.250,1.000,2
EOF
	run "$SONDE" report --view regions --by-thread c.sonde
	sed -n 3p "$T/out" | grep -qE '^4242 \(main\)  +region=outer +2 +12\.000 ' || fail "by-thread text"
	run "$SONDE" report --view regions --format json --where region=outer c.sonde
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"forced":1,"open_at_end":0,"left_out":0,"dropped_region_events":0,"regions":[
{"path":"region=outer","calls":4,"incl_ms":50.000,"excl_ms":44.500,"min_ms":3.000,"mean_ms":12.500,"stddev_ms":13.219,"max_ms":35.000,"forced":1}]}
EOF
	# merged over streams by path
	mk ctx d.sonde --swap-ids --pid 5000
	run "$SONDE" report --view regions --format csv c.sonde d.sonde
	expect_file "$T/out" <<'EOF'
path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced
region=outer,8,100.000,89.000,3.000,12.500,13.219,35.000,2
region=outer/region=inner,8,11.000,11.000,0.500,1.375,0.960,3.000,4
EOF
	# cut inside the 12th REGION (T1's end of outer at 10 ms): T1's outer is still open
	# and ends at T1's last sample (65 samples 1 ms apart from 1 us: 65.001 ms); T2's
	# THREAD_END is cut too: its outer begun at 5 ms ends at its last sample (35.005 ms)
	"$SONDE" dump c.sonde >full.json || fail "dump"
	off=$(grep '"kind":"REGION"' full.json | sed -n 12p | sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) c.sonde >t.sonde
	run "$SONDE" report --view regions --by-thread --format csv t.sonde
	expect_rc 0 "regions truncated"
	expect_err_line "sonde: t.sonde: truncated at byte $off (using the valid prefix)"
	expect_file "$T/out" <<'EOF'
thread,path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced
4242,region=outer,1,64.001,60.001,64.001,64.001,0.000,64.001,1
4243,region=outer,2,33.005,31.505,3.000,16.503,13.503,30.005,1
4242,region=outer/region=inner,2,4.000,4.000,1.000,2.000,1.000,3.000,0
4243,region=outer/region=inner,2,1.500,1.500,0.500,0.750,0.250,1.000,2
EOF
	mk flat a.sonde
	run "$SONDE" report --view regions a.sonde
	expect_rc 4 "no regions"
	expect_err_line "sonde: no region records (run with SONDE_REGIONS=on)"
