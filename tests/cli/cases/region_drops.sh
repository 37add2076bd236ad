# analyze.cli.region_drops: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 10: drops per kind of record, as a share of what was asked for, stated
	# before the rows of every view, regions included; unknown reasons by name
	mk region_drops r.sonde
	SD='sonde: warning: 3 of 6 samples dropped (50.00%: throttled 1, signals_blocked 2)'
	RD='sonde: warning: 5977108 of 5977110 region events dropped (100.00%: region_ring_full 5977108; the regions view misses them; region_ring_full: raise SONDE_BUFFER_KB)'
	run "$SONDE" report r.sonde
	expect_rc 0 "region drops"
	expect_file "$T/out" <<EOF
samples: 3  streams: 1  processes: 1  threads: 1
source cpu-time: 3 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 0 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$SD
$RD
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

      self   self%      total  total%  function
         3 100.00%          3 100.00%  mk_alpha
         0   0.00%          3 100.00%  mk_main
EOF
	run "$SONDE" report --view regions r.sonde
	expect_rc 0 "regions view"
	expect_file "$T/out" <<EOF
$SD
$RD
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
path            calls      incl_ms      excl_ms       min_ms      mean_ms    stddev_ms       max_ms  forced
region=outer        1        1.000        1.000        1.000        1.000        0.000        1.000       0
dropped: 5977108 region events lost to a full ring (the rows miss them; raise SONDE_BUFFER_KB, or use SONDE_REGIONS=on)
EOF
	run "$SONDE" report --view regions --format csv r.sonde
	expect_err_line "$RD"
	run "$SONDE" report --format json r.sonde
	python3 - "$T/out" <<'EOF' || fail "drops json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dropped"] == 3 and d["dropped_region_events"] == 5977108, d
assert len(d["warnings"]) == 2 and "region events" in d["warnings"][1], d["warnings"]
EOF
	run "$SONDE" report --view streams --format csv r.sonde
	sed -n 2p "$T/out" | grep -qx 'r.sonde,4242,,testhost,exit,,0,3,3,2,5977108' || fail "streams row: $(cat "$T/out")"
