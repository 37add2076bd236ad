# analyze.cli.dump: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	size=$("$MK" flat a.sonde) || fail mkstream
	run "$SONDE" dump a.sonde
	expect_rc 0 "dump"
	expect_err_empty
	# 1 HEADER, 1 MODULE, 2 THREAD, 7 FRAME, 100 SAMPLE, 2 DROPS, 1 THREAD_END, 1 END
	[ "$(wc -l <"$T/out")" -eq 115 ] || fail "dump: $(wc -l <"$T/out") lines, expected 115"
	python3 - "$T/out" "$size" <<'EOF' || fail "dump JSON"
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
kinds = collections.Counter(r["kind"] for r in recs)
assert kinds == {"HEADER": 1, "MODULE": 1, "THREAD": 2, "FRAME": 7, "SAMPLE": 100,
                 "DROPS": 2, "THREAD_END": 1, "END": 1}, kinds
h = recs[0]
assert h["offset"] == 0 and h["magic"] == "sonde" and h["version"] == 1, h
assert h["info"]["pid"] == 4242 and h["info"]["argv"] == ["mkstream", 'a,"b"\n'], h
assert h["info"]["sources"][1]["period"] == 10000000
m = recs[1]
assert set(m) == {"offset", "kind", "module", "t", "path", "build_id", "bias", "lo", "hi"}, m
assert len(m["build_id"]) == 40 and m["build_id"] == m["build_id"].lower()
s = [r for r in recs if r["kind"] == "SAMPLE"][0]
assert set(s) == {"offset", "kind", "thread", "dt", "source", "node", "weight"}, s
offs = [r["offset"] for r in recs]
assert offs == sorted(offs) and len(set(offs)) == len(offs) and offs[-1] < int(sys.argv[2])
assert recs[-1]["kind"] == "END" and recs[-1]["reason"] == "exit"
EOF
	mk edge e.sonde
	run "$SONDE" dump e.sonde
	expect_rc 0 "dump edge"
	grep -qE '^\{"offset":[0-9]+,"kind":42,"raw":\["future",true\]\}$' "$T/out" || fail "unknown kind"
	grep -qE '"kind":"SAMPLE","thread":1,"dt":1,"source":0,"node":1,"weight":1,"flags":3,"context":0,"pcontext":0,"deltas":\[\],"extra":\["more"\]\}$' "$T/out" || fail "flags/extra"
	grep -qF '"text":"note with \"quotes\"\tand\u0001 control"}' "$T/out" || fail "escaping"
	grep -qF '"path":"[vdso]","build_id":null,' "$T/out" || fail "nil build_id"
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out" || fail "edge dump not JSON"
	run "$SONDE" dump
	expect_rc 2 "dump without FILE"
