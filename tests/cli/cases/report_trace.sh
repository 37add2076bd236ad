# analyze.cli.report_trace: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --format trace: the Chrome JSON trace of the `timeline` stream of mkstream.c (known
	# sample times, regions and counters): its tracks and names, the exact stack slices
	# (merged over consecutive samples, split at a gap) and region slices, X events that
	# nest on every track, ts in µs with 3 decimals, counter tracks that add up to
	# --view counters (here and on the `counters` stream: samples without deltas, flag
	# 8, THREAD_END deltas), times on the run's clock across two streams, --where, -o,
	# the usage errors; then the real speedscope app opens it in headless chromium.
	mk timeline t.sonde
	mk counters c.sonde
	mk timeline p1.sonde --pid 100 --clock 1000000000
	mk timeline p2.sonde --pid 200 --clock 1005000000
	cat >check.py <<'EOF'
import json, re, sys
path, what = sys.argv[1], sys.argv[2]
text = open(path).read()
d = json.loads(text)
def die(msg):
    print("trace check: " + msg, file=sys.stderr)
    sys.exit(1)
if not isinstance(d, dict) or d.get("displayTimeUnit") != "ns" or not isinstance(d.get("traceEvents"), list):
    die("not the object form with traceEvents and displayTimeUnit ns")
ev = d["traceEvents"]
for m in re.finditer(r'"(ts|dur)":([0-9.eE+-]+)', text):
    if not re.fullmatch(r"[0-9]+\.[0-9]{3}", m.group(2)):
        die("%s %s is not µs with 3 decimals" % m.groups())
for e in ev:
    if e["ph"] not in "MXC" or not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
        die("unexpected event %r" % e)
names = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M" and "name" in e["args"]}
# X events of every track nest: sorted by (ts, -dur), each inside the open one
tracks = {}
for e in ev:
    if e["ph"] == "X":
        if e["dur"] <= 0:
            die("X event without duration %r" % e)
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
for k, xs in tracks.items():
    stack = []
    for e in sorted(xs, key=lambda e: (e["ts"], -e["dur"])):
        while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-6:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-6:
            die("track %r: %r overlaps %r without nesting" % (k, e, stack[-1]))
        stack.append(e)
def xs(cat):
    return sorted((e["pid"], e["tid"], e["name"], e["ts"], e["dur"], bool(e.get("args", {}).get("forced")))
                  for e in ev if e["ph"] == "X" and e["cat"] == cat)
# counters: each track's values in time order; their sums by counter name
sums, last = {}, {}
for e in ev:
    if e["ph"] == "C":
        k = (e["pid"], e["name"])
        if e["ts"] < last.get(k, -1):
            die("counter track %s goes back in time" % e["name"])
        last[k] = e["ts"]
        n = re.sub(r" \(tid [0-9]+\)$", "", e["name"])
        sums[n] = sums.get(n, 0) + e["args"]["delta"]
if what == "counters":
    for n, v in sorted(sums.items()):
        print("%s,%d" % (n, v))
    sys.exit(0)
print(json.dumps({"names": sorted("%d %d %s=%s" % (k[0], k[1], k[2], v) for k, v in names.items()),
                  "sample": xs("sample"), "region": xs("region")}))
EOF
	# the slices of the timeline stream (pid 4242, main 4242, worker 4243; µs): merged
	# over samples 1.2 ms apart (the timer's jitter), split at the 5 ms gap
	run "$SONDE" report --format trace t.sonde
	expect_rc 0 "trace"
	expect_err_empty
	python3 check.py "$T/out" slices >got.json || fail "trace: $(cat "$T/out" | head -c 300)"
	python3 - got.json <<'EOF' || fail "trace slices: $(cat got.json)"
import json, sys
g = json.load(open(sys.argv[1]))
P, M, W, R = 4242, 4242, 4243, 4242 + 1000000000
want_names = sorted(["%d 0 process_name=mkstream[4242]" % P, "%d %d thread_name=main" % (P, M),
                     "%d %d thread_name=worker" % (P, W), "%d %d thread_name=main regions" % (P, R)])
want_samples = sorted([(P, M, "mk_main", 0.0, 7400.0), (P, M, "mk_alpha", 0.0, 5400.0),
    (P, M, "mk_beta", 3000.0, 2400.0), (P, M, "mk_gamma", 5400.0, 2000.0),
    (P, M, "mk_main", 11400.0, 1000.0), (P, M, "mk_gamma", 11400.0, 1000.0),
    (P, W, "mk_main", 0.0, 8000.0), (P, W, "mk_alpha", 0.0, 8000.0), (P, W, "mk_beta", 0.0, 8000.0)])
want_regions = sorted([(P, R, "phase=solve", 500.0, 6000.0, False), (P, R, "region=inner", 1000.0, 1000.0, False),
    (P, R, "region=inner", 3000.0, 3500.0, True), (P, R, "region=tail", 11000.0, 2000.0, True)])
ok = True
for k, want in (("names", want_names), ("sample", [list(x) + [False] for x in want_samples]), ("region", [list(x) for x in want_regions])):
    if [list(x) if not isinstance(x, str) else x for x in g[k]] != [list(x) if not isinstance(x, str) else x for x in want]:
        print("%s: got %s, want %s" % (k, g[k], want), file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
EOF
	# counter tracks add up to the counters view, on both streams
	for s in t c; do
		python3 check.py "$T/out" counters >/dev/null || fail "trace $s"
		"$SONDE" report --format trace $s.sonde >tr.json 2>/dev/null || fail "trace $s.sonde"
		python3 check.py tr.json counters >got.csv || fail "trace $s.sonde: check"
		"$SONDE" report --view counters --format csv $s.sonde 2>/dev/null |
			awk -F, 'NR > 1 && $3 == "available" {print $1 "," $5}' | sort >want.csv
		[ -s want.csv ] && cmp -s got.csv want.csv || fail "trace $s.sonde counters: $(cat got.csv) against sonde's $(cat want.csv)"
	done
	# two processes: each on the run's clock (p2 starts 5 ms after p1)
	run "$SONDE" report --format trace --jobs 1 p1.sonde p2.sonde
	expect_rc 0 "trace of two streams"
	python3 check.py "$T/out" slices >got.json || fail "trace p1 p2"
	python3 - got.json <<'EOF' || fail "trace of two streams: $(cat got.json)"
import json, sys
g = json.load(open(sys.argv[1]))
s = {(x[0], x[1], x[2], x[3]) for x in g["sample"]}
assert (100, 100, "mk_main", 0.0) in s and (200, 200, "mk_main", 5000.0) in s and (200, 200, "mk_gamma", 16400.0) in s, s
assert "100 0 process_name=mkstream[100]" in g["names"] and "200 0 process_name=mkstream[200]" in g["names"], g["names"]
EOF
	"$SONDE" report --format trace --jobs 2 p1.sonde p2.sonde >j2.json || fail "trace --jobs 2"
	cmp -s "$T/out" j2.json || fail "trace: --jobs 2 gives another file than --jobs 1"
	# --where: only the samples (and regions) kept; rows renumbered after a function filter
	"$SONDE" report --format trace --where phase=solve t.sonde >w.json || fail "trace --where phase=solve"
	python3 check.py w.json slices >got.json || fail "trace --where phase=solve: check"
	python3 - got.json <<'EOF' || fail "trace --where phase=solve: $(cat got.json)"
import json, sys
g = json.load(open(sys.argv[1]))
assert [x[2:5] for x in g["sample"]] == [["mk_alpha", 0.0, 5400.0], ["mk_beta", 3000.0, 2400.0], ["mk_main", 0.0, 5400.0]], g["sample"]
assert [x[2] for x in g["region"]] == ["phase=solve", "region=inner", "region=inner"], g["region"]
EOF
	"$SONDE" report --format trace --where 'function~gamma' t.sonde >w.json || fail "trace --where function~gamma"
	python3 check.py w.json slices >got.json || fail "trace --where function~gamma: check"
	python3 - got.json <<'EOF' || fail "trace --where function~gamma: $(cat got.json)"
import json, sys
g = json.load(open(sys.argv[1]))
assert [x[2:5] for x in g["sample"]] == [["mk_gamma", 5400.0, 2000.0], ["mk_gamma", 11400.0, 1000.0], ["mk_main", 5400.0, 2000.0], ["mk_main", 11400.0, 1000.0]], g["sample"]
EOF
	# the region slices follow --where as the regions view's rows (thread, regex)
	"$SONDE" report --format trace --where thread=worker t.sonde >w.json || fail "trace --where thread=worker"
	python3 check.py w.json slices >got.json || fail "trace --where thread=worker: check"
	python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); sys.exit(g["region"] != [] or {x[1] for x in g["sample"]} != {4243})' got.json ||
		fail "trace --where thread=worker: $(cat got.json)"
	"$SONDE" report --format trace --where 'phase~^sol' t.sonde >w.json || fail "trace --where phase~^sol"
	python3 check.py w.json slices >got.json || fail "trace --where phase~^sol: check"
	python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); sys.exit([x[2] for x in g["region"]] != ["phase=solve", "region=inner", "region=inner"])' got.json ||
		fail "trace --where phase~^sol: $(cat got.json)"
	# -o FILE
	run "$SONDE" report --format trace -o t.trace.json t.sonde
	expect_rc 0 "trace -o"
	grep -qxF "sonde: trace written to t.trace.json (open it in https://ui.perfetto.dev, chrome://tracing or speedscope)" "$T/out" || fail "trace -o: $(cat "$T/out")"
	python3 check.py t.trace.json slices >/dev/null || fail "trace -o: the file"
	run "$SONDE" report --format trace -o /nonexistent/dir/t.json t.sonde
	expect_rc 3 "trace -o unwritable"
	expect_err_line "sonde: /nonexistent/dir/t.json: cannot write: No such file or directory (check the path and its directory)"
	# usage errors
	for opt in "--view tree" "--group-by phase" "--metric weight" "--top 3" "--stats thread"; do
		run "$SONDE" report --format trace $opt t.sonde
		expect_rc 2 "trace $opt"
		expect_err_line "sonde: report: --format trace draws every sample, region and counter on a timeline (use it without --view, --group-by, --metric, --top, --stats or --min-percent)"
	done
	run "$SONDE" report --format csv -o x.csv t.sonde
	expect_rc 2 "-o with csv"
	expect_err_line "sonde: report: -o FILE: only --format pprof, svg, html, speedscope and trace write a file (add one of them, or leave -o out)"
	run "$SONDE" diff --format trace t.sonde t.sonde
	expect_rc 2 "diff --format trace"
	# the real consumer: speedscope opens the trace (its Trace Event importer)
	dir=$(bash "$CONSUMERS/npm.sh") || exit 77
	mv t.trace.json timeline.trace.json
	node "$CONSUMERS/speedscope_check.mjs" "$dir" "$T/shots" timeline.trace.json >ss.out 2>&1 ||
		fail "speedscope on the trace: $(cat ss.out)"
	grep -qxF "importer: Importing as Trace Event Format profile" ss.out || fail "speedscope importer: $(cat ss.out)"
