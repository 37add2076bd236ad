# analyze.cli.thread_end: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 9: THREAD_END deltas belong to their thread and process: group-by rows add
	# up to the totals (by function a counter is not offered: report_counters.sh)
	mk counters_end c.sonde
	run "$SONDE" report --metric context-switches --group-by thread --format csv c.sonde
	expect_rc 0 "group-by thread"
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4243,503,97.48
4242,13,2.52
EOF
	run "$SONDE" report --metric context-switches --group-by process --format csv c.sonde
	expect_file "$T/out" <<'EOF'
process,context-switches,percent
mkstream[4242],516,100.00
EOF
	run "$SONDE" report --view counters --format csv c.sonde
	[ "$(awk -F, '$2 == "context-switches" { s += $5 } END { print s }' "$T/out")" -eq 516 ] ||
		fail "counters view total: $(cat "$T/out")"
	run "$SONDE" report --metric page-faults --group-by host,source --format csv c.sonde
	expect_file "$T/out" <<'EOF'
host,source,page-faults,percent
testhost,(none),45,69.23
testhost,cpu-time,20,30.77
EOF
	# --where thread keeps that thread's tail; --source leaves thread ends out
	run "$SONDE" report --metric context-switches --where thread=4243 --group-by thread --format csv c.sonde
	sed -n 2p "$T/out" | grep -qx '4243,503,100.00' || fail "--where thread: $(cat "$T/out")"
	run "$SONDE" report --metric context-switches --source cpu-time --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4242,10,100.00
EOF
	# in samples, thread ends count nothing
	run "$SONDE" report --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,periods,percent
4242,10,100.00
4243,0,0.00
EOF
