# analyze.cli.ctx_dump: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	mk ctx c.sonde
	run "$SONDE" dump c.sonde
	expect_rc 0 "dump ctx"
	python3 - "$T/out" <<'EOF' || fail "dump of context records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def strip(r):
    return {k: v for k, v in r.items() if k != "offset"}
a = [strip(r) for r in recs if r["kind"] == "ATTRIBUTE"]
assert a[0] == {"kind": "ATTRIBUTE", "attr": 1, "name": "phase", "type": "string", "scope": "thread"}, a
assert a[2] == {"kind": "ATTRIBUTE", "attr": 3, "name": "run", "type": "string", "scope": "process"}, a
c = [strip(r) for r in recs if r["kind"] == "CONTEXT"]
assert c[0] == {"kind": "CONTEXT", "node": 1, "parent": 0, "attr": 1, "value": "solve"}, c
assert c[1] == {"kind": "CONTEXT", "node": 2, "parent": 1, "attr": 2, "value": 1, "flags": 0}, c
g = [strip(r) for r in recs if r["kind"] == "REGION"]
assert g[0] == {"kind": "REGION", "thread": 1, "t": 1000000, "node": 8, "event": 1}, g
s = [strip(r) for r in recs if r["kind"] == "SAMPLE"][0]
assert s == {"kind": "SAMPLE", "thread": 1, "dt": 1000000, "source": 0, "node": 3, "weight": 1,
             "flags": 0, "context": 2, "pcontext": 6}, s
EOF
