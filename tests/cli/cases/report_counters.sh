# analyze.cli.report_counters: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk counters c.sonde
	run "$SONDE" report c.sonde
	expect_rc 0 "counters flat"
	expect_file "$T/out" <<EOF
samples: 75  streams: 1  processes: 1  threads: 2
source cpu-time: 75 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: not shown (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
counter context-switches.voluntary: 50 total, 666.7 per CPU-second (getrusage:ru_nvcsw)
counter context-switches.involuntary: 10 total, 133.3 per CPU-second (getrusage:ru_nivcsw)
counter page-faults: 80 total, 1066.7 per CPU-second (perf_event:page-faults)
counter cpu-migrations: unavailable (perf_event_paranoid is 2: counts only user space, where no migration happens)
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

      self   self%      total  total%  function
        40  53.33%         40  53.33%  mk_beta
        25  33.33%         25  33.33%  mk_gamma
        10  13.33%         50  66.67%  mk_alpha
         0   0.00%         75 100.00%  mk_main
sonde: warning: 5 samples carry no counter values (their thread's counters could not be read, flag 8; counted as samples, not as zero deltas)
EOF
	# by code, a counter is refused (its deltas are not where its events happened)
	for a in "--format csv" "" "--view tree --format folded" "--format folded" \
		 "--group-by function" "--view callers mk_alpha"; do
		run "$SONDE" report --metric context-switches $a c.sonde
		expect_rc 2 "counter by code: $a"
		case $a in
		*folded* | *tree* | *callers*) by="call path" ;;
		*) by=function ;;
		esac
		expect_err_line "sonde: report: --metric context-switches: not offered by $by: a counter's events are charged to whichever sample comes next, not to the code where they happened (per thread, process, context or region: --group-by thread, process or an attribute, or --view regions; by code: sample on the event itself, e.g. SONDE_SAMPLE=cpu-time@1ms,perf::PAGE-FAULTS@1000 and --source perf::PAGE-FAULTS)"
	done
	# an unknown or unavailable counter is said as such first (below)
	# a group sums its parts: 50 voluntary + 10 involuntary
	run "$SONDE" report --metric context-switches --group-by thread --format csv c.sonde
	expect_rc 0 "metric group"
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4242,50,83.33
4243,10,16.67
EOF
	expect_err_line "sonde: warning: 5 samples carry no counter values (their thread's counters could not be read, flag 8; counted as samples, not as zero deltas)"
	run "$SONDE" report --metric context-switches.involuntary --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,context-switches.involuntary,percent
4242,10,100.00
4243,0,0.00
EOF
	run "$SONDE" report --metric page-faults --group-by thread --format json c.sonde
	python3 - "$T/out" <<'EOF' || fail "counter json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["metric"] == "page-faults" and d["samples"] == 80, d
assert sum(r["page-faults"] for r in d["rows"]) == 80, d
assert d["rows"][0] == {"values": ["4242"], "page-faults": 80, "percent": 100.0}, d
EOF
	run "$SONDE" report --metric context-switches --group-by phase,thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
phase,thread,context-switches,percent
solve,4242,40,66.67
(none),4243,10,16.67
io,4242,10,16.67
EOF
	run "$SONDE" report --metric context-switches.voluntary --where phase=solve --group-by phase c.sonde
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
phase  context-switches.voluntary  percent
solve                          40  100.00%
EOF
	run "$SONDE" report --metric context-switches --source wall-time --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4243,10,100.00
EOF
	run "$SONDE" report --view counters --format csv c.sonde
	expect_rc 0 "counters view"
	expect_file "$T/out" <<'EOF'
counter,group,status,source,total,per_cpu_s,streams,reason
context-switches.voluntary,context-switches,available,getrusage:ru_nvcsw,50,666.7,1,
context-switches.involuntary,context-switches,available,getrusage:ru_nivcsw,10,133.3,1,
page-faults,page-faults,available,perf_event:page-faults,80,1066.7,1,
cpu-migrations,cpu-migrations,unavailable,,,,1,"perf_event_paranoid is 2: counts only user space, where no migration happens"
EOF
	run "$SONDE" report --view counters --format json c.sonde
	python3 - "$T/out" <<'EOF' || fail "counters json"
import json, sys
d = json.load(open(sys.argv[1]))["counters"]
assert d[0] == {"counter": "context-switches.voluntary", "group": "context-switches", "status": "available",
                "source": "getrusage:ru_nvcsw", "total": 50, "per_cpu_s": 666.7, "streams": 1, "reason": None}, d
assert d[3]["status"] == "unavailable" and d[3]["total"] is None and "perf_event_paranoid" in d[3]["reason"], d
EOF
	# merged across streams by name; no cpu-time source: no per-second figure
	mk counters d.sonde --pid 5000
	run "$SONDE" report --view counters --format csv c.sonde d.sonde
	sed -n 2p "$T/out" | grep -qx 'context-switches.voluntary,context-switches,available,getrusage:ru_nvcsw,100,666.7,2,' || fail "merged counters: $(cat "$T/out")"
	run "$SONDE" report --source wall-time c.sonde
	grep -qx 'counter context-switches.voluntary: 10 total (getrusage:ru_nvcsw)' "$T/out" || fail "no cpu-time: no per-second figure"
	run "$SONDE" report --metric cpu-migrations c.sonde
	expect_rc 4 "unavailable metric"
	expect_err_line "sonde: report: --metric cpu-migrations: the counter was unavailable when the program ran (perf_event_paranoid is 2: counts only user space, where no migration happens; see 'sonde events')"
	run "$SONDE" report --metric nosuch c.sonde
	expect_rc 2 "unknown metric"
	expect_err_line "sonde: report: --metric nosuch: no counter or counter group of that name in these streams (use periods, samples, weight, or a counter listed by --view counters)"
	# a stream without counters: no counter rows, no counter warning (its drops only)
	mk flat a.sonde
	run "$SONDE" report --view counters --format csv a.sonde
	expect_file "$T/out" <<'EOF'
counter,group,status,source,total,per_cpu_s,streams,reason
EOF
	expect_err_line "$DROPS"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "counters view of a stream without counters: $(cat "$T/err")"
