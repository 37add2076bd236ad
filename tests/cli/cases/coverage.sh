# analyze.cli.coverage: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 8 item 7: the coverage account, exact arithmetic over the `coverage` stream
	# (mkstream.c lists every number); then THREAD_CPU / THREAD_END cpu in dump, corrupt
	# cpu records, and streams that cannot have an account
	mk coverage c.sonde --pid 100
	run "$SONDE" report c.sonde
	expect_rc 0 "coverage report"
	grep '^coverage\|^  thread\|^  [0-9]* more' "$T/out" >cov.txt
	expect_file cov.txt <<'EOF'
coverage: cpu 547.500 ms measured by the kernel in 4 threads, sampled 360.000 ms by cpu-time@1ms: 65.75% of cpu time
coverage gaps: signals_blocked 100.000 ms, not sampled 50.000 ms, kernel mode 12.500 ms (sys time: cpu-time samples user mode only; wall-time puts it under the calls that spent it), ring_full 4.000 ms, throttled 3.000 ms, stopped 2.000 ms, busy 1.000 ms, unexplained 15.000 ms
coverage: the CPU time of 1 thread is known up to the last flush only (no THREAD_END: the process was killed, data after the last flush is lost; 10.000 ms sampled after it are not counted)
coverage: 1 thread with no CPU time recorded left out (7.000 ms sampled)
coverage: drops are not split by source: all are counted at the cpu-time period (cpu-time@1ms)
  thread 102 (blocked, pid 100): cpu 102.500 ms, sampled 0.000 ms (0.00% of user); signals_blocked 100.000 ms, kernel mode 2.500 ms, unexplained 0.000 ms
  thread 101 (worker, pid 100): cpu 50.000 ms, sampled 0.000 ms (0.00% of cpu); not sampled 50.000 ms, unexplained 0.000 ms
  thread 100 (main, pid 100): cpu 350.000 ms, sampled 320.000 ms (94.12% of user); kernel mode 10.000 ms, ring_full 4.000 ms, throttled 3.000 ms, busy 1.000 ms, unexplained 12.000 ms
  thread 103 (flushed, pid 100): cpu 45.000 ms up to the last flush, sampled 40.000 ms (88.89% of cpu); unexplained 5.000 ms
EOF
	# the block comes after the notes, before the rows
	[ "$(sed -n 4p "$T/out" | cut -c1-14)" = "sonde: warning" ] && [ "$(sed -n 5p "$T/out" | cut -c1-12)" = "sonde: note:" ] &&
		[ "$(sed -n 6p "$T/out" | cut -c1-14)" = "coverage: cpu " ] ||
		fail "coverage block placement: $(head -6 "$T/out")"
	run "$SONDE" report --view coverage --format csv c.sonde
	expect_rc 0 "coverage csv"
	expect_file "$T/out" <<'EOF'
pid,tid,name,cpu_ms,cpu_from,user_ms,sys_ms,sampled_ms,coverage_pct,coverage_of,ring_full_ms,busy_ms,in_dl_ms,no_thread_ms,stopped_ms,fd_stolen_ms,stack_ms,throttled_ms,queue_overflow_ms,signals_blocked_ms,other_drops_ms,kernel_ms,kernel_as_user_ms,not_sampled_ms,unexplained_ms,after_flush_ms
100,100,main,350.000,thread_end,340.000,10.000,320.000,94.12,user,4.000,1.000,0.000,0.000,0.000,0.000,0.000,3.000,0.000,0.000,0.000,10.000,0.000,0.000,12.000,0.000
100,101,worker,50.000,thread_end,,,0.000,0.00,cpu,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,50.000,0.000,0.000
100,102,blocked,102.500,thread_end,100.000,2.500,0.000,0.00,user,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,100.000,0.000,2.500,0.000,0.000,0.000,0.000
100,103,flushed,45.000,last_flush,,,40.000,88.89,cpu,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,5.000,10.000
100,104,old,,,,,7.000,,,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,,,,,0.000
,,total,547.500,last_flush,,,360.000,65.75,cpu,4.000,1.000,0.000,0.000,2.000,0.000,0.000,3.000,0.000,100.000,0.000,12.500,0.000,50.000,15.000,10.000
EOF
	# every view's json has the total; --view coverage also every thread; the account adds up
	for args in "--format json" "--view threads --format json" "--group-by thread --format json" \
		    "--view coverage --format json"; do
		run "$SONDE" report $args c.sonde
		expect_rc 0 "$args"
		python3 - "$T/out" "$args" <<'EOF' || fail "coverage json ($args)"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["coverage"]
assert c["computed"] is True and c["why"] is None and c["spec"] == "cpu-time@1ms", c
assert c["drops_at_cpu_time_period"] is True and c["threads_unknown"] == 1, c
assert c["unknown_sampled_ms"] == 7.0, c
t = c["total"]
assert t["threads"] == 4 and t["cpu_ms"] == 547.5 and t["sampled_ms"] == 360.0, t
assert t["coverage_pct"] == 65.75 and t["coverage_of"] == "cpu" and t["cpu_from"] == "last_flush", t
assert t["gaps_ms"]["signals_blocked"] == 100.0 and t["gaps_ms"]["stopped"] == 2.0, t
assert t["gaps_ms"]["kernel"] == 12.5 and t["gaps_ms"]["not_sampled"] == 50.0, t
def adds_up(r):
    return abs(r["sampled_ms"] + sum(r["gaps_ms"].values()) + r["unexplained_ms"] - r["cpu_ms"]) < 1e-6
assert adds_up(t), t
if "coverage" in sys.argv[2]:
    th = {r["tid"]: r for r in c["threads"]}
    assert len(th) == 5, th
    assert th[100]["coverage_of"] == "user" and th[100]["user_ms"] == 340.0 and th[100]["unexplained_ms"] == 12.0
    assert th[101]["gaps_ms"]["not_sampled"] == 50.0 and th[101]["user_ms"] is None
    assert th[102]["gaps_ms"]["signals_blocked"] == 100.0 and th[102]["unexplained_ms"] == 0.0
    assert th[103]["cpu_from"] == "last_flush" and th[103]["after_flush_ms"] == 10.0
    assert th[104]["cpu_ms"] is None and th[104]["cpu_from"] is None and th[104]["sampled_ms"] == 7.0
    for r in c["threads"]:
        assert r["cpu_ms"] is None or adds_up(r), r
else:
    assert "threads" not in c, c
EOF
	done
	run "$SONDE" report --view coverage c.sonde
	expect_rc 0 "coverage text"
	grep -q '^   total        4     547.500\*      360.000   65.75% cpu         15.000 ' "$T/out" || fail "coverage view total: $(cat "$T/out")"
	grep -qE '^ +100 +104 +unknown +7\.000 .*\(no CPU time recorded\)$' "$T/out" || fail "coverage view unknown thread"
	# filters do not change the account (it is the run's)
	run "$SONDE" report --where thread=main --source wall-time --format json c.sonde
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["coverage"]["total"]; assert t["sampled_ms"] == 360.0, t' "$T/out" || fail "filters changed the account"
	# a user/sys split the samples disprove is not used, in its thread's row and the total's
	mk coverage_split cs.sonde --pid 300
	run "$SONDE" report --view coverage --format json cs.sonde
	expect_rc 0 "coverage_split json"
	python3 - "$T/out" <<'EOF' || fail "coverage split rejected: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
th = {r["tid"]: r for r in c["threads"]}
t = c["total"]
assert th[300]["split_rejected"] is True and th[300]["coverage_of"] == "cpu" and th[300]["user_ms"] is None, th[300]
assert th[300]["coverage_pct"] == 95.0 and th[300]["unexplained_ms"] == 5.0, th[300]
assert th[301]["split_rejected"] is False and th[301]["coverage_of"] == "user" and th[301]["user_ms"] == 45.0, th[301]
assert th[301]["gaps_ms"]["kernel"] == 5.0 and th[301]["unexplained_ms"] == 5.0, th[301]
assert t["split_rejected"] is True and t["coverage_of"] == "cpu" and t["user_ms"] is None, t
assert t["cpu_ms"] == 150.0 and t["sampled_ms"] == 135.0 and t["coverage_pct"] == 90.0, t
assert t["gaps_ms"]["kernel"] == 5.0 and t["unexplained_ms"] == 10.0, t
EOF
	run "$SONDE" report cs.sonde
	grep -qF "coverage: the kernel's user/sys split of 1 thread was not used" "$T/out" ||
		fail "no note of the split not used: $(grep coverage "$T/out")"
	# a share over 100 % of user and a negative rest each say why (issue 22 item 10)
	mk coverage_over co.sonde --pid 400
	run "$SONDE" report co.sonde
	grep -qxF "coverage: cpu 45.000 ms measured by the kernel in 1 thread (user 43.000, sys 2.000), sampled 44.000 ms by cpu-time@1ms: 102.33% of user time (over 100%: user time is the kernel's estimate from its ticks)" "$T/out" ||
		fail "over 100% of user without why: $(grep coverage "$T/out")"
	grep -qF ", over 1.000 ms (sampled more than measured: the kernel's tick-based user/sys split put some user time under sys)" "$T/out" ||
		fail "negative rest without why: $(grep coverage "$T/out")"
	# -q: no coverage block
	run "$SONDE" report -q co.sonde
	expect_rc 0 "-q"
	grep -q '^coverage' "$T/out" && fail "-q kept the coverage block: $(head -8 "$T/out")"
	grep -q '^ *44 100.00% .*mk_main$' "$T/out" || fail "-q lost the rows: $(cat "$T/out")"
	for v in threads tree streams sources; do
		run "$SONDE" report -q --view $v co.sonde
		grep -q '^coverage' "$T/out" && fail "-q --view $v kept the coverage block"
		run "$SONDE" report --view $v co.sonde
		grep -q '^coverage' "$T/out" || fail "--view $v without -q: no coverage block"
	done
	# dump names the new fields
	run "$SONDE" dump c.sonde
	grep -qF '"kind":"THREAD_CPU","thread":4,"t":60000000,"cpu_ns":45000000}' "$T/out" || fail "dump THREAD_CPU"
	grep -qF '"kind":"THREAD_END","thread":1,"t":400000000,"name":"main","deltas":[],"cpu":{"cpu_ns":350000000,"user_ns":340000000,"sys_ns":10000000}}' "$T/out" || fail "dump THREAD_END cpu"
	# malformed cpu records are corrupt
	for w in "thread_cpu:THREAD_CPU names a thread that no THREAD record defined before it" \
		 "end_cpu:THREAD_END cpu is not a map" \
		 "end_cpu_ns:THREAD_END cpu \`cpu_ns\` is not an unsigned integer"; do
		off=$("$MK" "bad_${w%%:*}" b.sonde) || fail "mkstream bad_${w%%:*}"
		run "$SONDE" report b.sonde
		expect_rc 4 "bad ${w%%:*}"
		expect_err_line "sonde: b.sonde: corrupt record at byte $off (${w#*:})"
	done
	# old streams (no cpu), PAPI-only streams: said, not computed
	mk flat a.sonde
	run "$SONDE" report --view coverage --format csv a.sonde
	expect_rc 0 "old stream coverage"
	expect_err_line "sonde: coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)"
	sed -n 2p "$T/out" | grep -qx '4242,4242,main,,,,,70.000,,,3.000,1.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,,,,,0.000' || fail "old stream row: $(cat "$T/out")"
	mk papi p.sonde
	run "$SONDE" report p.sonde
	grep -qx 'coverage: not computed: no cpu-time source was recorded: the other sources do not measure CPU time (sample with SONDE_SAMPLE=cpu-time@1ms for an account)' "$T/out" || fail "papi: not computed"
	# a mix: the old stream is left out of the total, said
	run "$SONDE" report c.sonde a.sonde
	grep -qx 'coverage: 3 threads with no CPU time recorded left out (107.000 ms sampled)' "$T/out" || fail "mixed old and new: $(grep coverage "$T/out")"
