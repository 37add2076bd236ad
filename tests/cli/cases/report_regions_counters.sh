# analyze.cli.report_regions_counters: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk counters c.sonde
	run "$SONDE" report --view regions --format csv c.sonde
	expect_rc 0 "regions with counts"
	expect_file "$T/out" <<'EOF'
path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced,context-switches.voluntary,context-switches.involuntary,page-faults
region=load,2,6.000,4.000,2.000,3.000,1.000,4.000,0,7,2,18
region=load/region=parse,1,2.000,2.000,2.000,2.000,0.000,2.000,0,1,1,5
EOF
	run "$SONDE" report --view regions --format json --by-thread c.sonde
	python3 - "$T/out" <<'EOF' || fail "regions json counts"
import json, sys
d = json.load(open(sys.argv[1]))["regions"]
assert d[0]["thread"] == 4242 and d[0]["context-switches.voluntary"] == 7 and d[0]["page-faults"] == 18, d
assert d[1]["path"] == "region=load/region=parse" and d[1]["context-switches.involuntary"] == 1, d
EOF
	run "$SONDE" report --view regions c.sonde
	sed -n 3p "$T/out" | grep -qE '^region=load +2 +6\.000 .* 0 +7 +2 +18$' || fail "regions text: $(cat "$T/out")"
	# regions without counts: no counter columns
	mk ctx x.sonde
	run "$SONDE" report --view regions --format csv x.sonde
	sed -n 1p "$T/out" | grep -qx 'path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced' || fail "no counts: no columns"
