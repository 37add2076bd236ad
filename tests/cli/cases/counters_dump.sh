# analyze.cli.counters_dump: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk counters c.sonde
	run "$SONDE" dump c.sonde
	expect_rc 0 "dump counters"
	python3 - "$T/out" <<'EOF' || fail "dump of counters"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
h = recs[0]["info"]
assert h["counters"][0] == {"name": "context-switches.voluntary", "group": "context-switches",
                            "unit": "count", "source": "getrusage:ru_nvcsw"}, h
assert h["counters_unavailable"][0]["name"] == "cpu-migrations", h
s = [r for r in recs if r["kind"] == "SAMPLE"]
assert s[0]["deltas"] == [1, 0, 2] and s[0]["flags"] == 0, s[0]
assert [x for x in s if x.get("flags") == 8][0].get("deltas") is None
g = [r for r in recs if r["kind"] == "REGION"]
assert g[0]["counts"] == [0, 0, 0] and g[3]["counts"] == [3, 1, 10], g
EOF
