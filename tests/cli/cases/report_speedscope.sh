# analyze.cli.report_speedscope: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --format speedscope of mkstream's timeline, counters and papi streams: the file's
	# shape (schema, shared frames with files, one sampled profile per thread or per
	# --group-by value, units), samples root first in time order, and per function the
	# same self and total as sonde's own csv for samples, weight (ns), counters and a
	# PAPI source; -o, usage errors; then the real speedscope app opens it in headless
	# chromium and its Sandwich view shows the csv's numbers.
	mk timeline t.sonde
	mk counters c.sonde
	mk papi p.sonde
	cat >check.py <<'EOF'
import json, sys
path, metric = sys.argv[1], sys.argv[2]
d = json.load(open(path))
def die(msg):
    print("speedscope check: " + msg, file=sys.stderr)
    sys.exit(1)
if d.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
    die("no $schema")
frames = d["shared"]["frames"]
if not frames or any(not isinstance(f.get("name"), str) for f in frames):
    die("bad frames %r" % frames)
self, total = {}, {}
for p in d["profiles"]:
    if p["type"] != "sampled" or len(p["samples"]) != len(p["weights"]):
        die("profile %s: not sampled, or samples and weights differ in length" % p["name"])
    if p["startValue"] != 0 or p["endValue"] != sum(p["weights"]) or any(w <= 0 for w in p["weights"]):
        die("profile %s: endValue %r, weights %r" % (p["name"], p["endValue"], p["weights"][:5]))
    for s, w in zip(p["samples"], p["weights"]):
        names = [frames[i]["name"] for i in s]
        self[names[-1]] = self.get(names[-1], 0) + w
        for n in set(names):
            total[n] = total.get(n, 0) + w
if metric == "shape":
    print(json.dumps({"profiles": [[p["name"], p["unit"], p["endValue"],
                      [[frames[i]["name"] for i in s] for s in p["samples"]]] for p in d["profiles"]],
                      "files": sorted({f["name"] + " " + f.get("file", "").rsplit("/", 1)[-1] for f in frames})}))
    sys.exit(0)
fmt = (lambda v: "%.3f" % (v / 1e6)) if metric == "ms" else (lambda v: "%d" % v)
for n in sorted(total):
    print("%s,%s,%s" % (n, fmt(self.get(n, 0)), fmt(total[n])))
EOF
	# csv FILE ARGS...: sonde's flat csv as function,self,total (sorted)
	csv() { local f=$1; shift; "$SONDE" report --format csv "$@" "$f" 2>/dev/null | awk -F, 'NR > 1 {print $1 "," $2 "," $4}' | sort; }
	# same STREAM CHECK_METRIC ARGS...: speedscope's sums per function equal the csv's
	same() {
		local f=$1 m=$2; shift 2
		"$SONDE" report --format speedscope "$@" "$f" >ss.json 2>/dev/null || fail "speedscope $* $f"
		python3 check.py ss.json "$m" | sort >got.csv || fail "speedscope $* $f: check"
		csv "$f" "$@" >want.csv
		[ -s want.csv ] && cmp -s got.csv want.csv || fail "speedscope $* $f: $(tr '\n' ' ' <got.csv) against sonde's csv $(tr '\n' ' ' <want.csv)"
	}
	same t.sonde n --metric periods
	same t.sonde ms --metric weight
	same c.sonde n --metric periods
	# without --metric: time where every source counted is time (issue 22 item 11)
	"$SONDE" report --format speedscope t.sonde >d.json 2>/dev/null &&
		"$SONDE" report --format speedscope --metric time t.sonde >dt.json 2>/dev/null &&
		cmp -s d.json dt.json || fail "speedscope without --metric is not --metric time"
	"$SONDE" report --format speedscope p.sonde >dp.json 2>/dev/null &&
		"$SONDE" report --format speedscope --metric periods p.sonde >dpp.json 2>/dev/null &&
		cmp -s dp.json dpp.json || fail "speedscope of a PAPI source without --metric is not periods"
	# a counter is not offered by call path (cli.c, sd_cli_counter_by_code)
	"$SONDE" report --format speedscope --metric page-faults t.sonde >ss.json 2>ss.err &&
		fail "speedscope with a counter metric: $(head -c 200 ss.json)"
	grep -q "^sonde: report: --metric page-faults: not offered by call path: " ss.err ||
		fail "speedscope with a counter metric: $(cat ss.err)"
	same c.sonde ms --metric time --source cpu-time
	same p.sonde n --metric weight
	same t.sonde n --where thread=worker --source wall-time --metric periods
	same t.sonde n --where 'function~beta' --metric periods
	# the shape: per thread, root first, in time order, units, files of the frames
	run "$SONDE" report --format speedscope t.sonde
	expect_rc 0 "speedscope"
	# main samples cpu-time@1ms, worker wall-time@10ms: two clocks, never added; the
	# profile shows cpu-time (worker's are --source wall-time's) and the notes say so
	expect_err_line "sonde: note: showing source cpu-time only: the streams hold several sources (cpu-time, wall-time), whose clocks are never added (show another with --source wall-time)"
	python3 check.py "$T/out" shape >got.json || fail "speedscope shape"
	python3 - got.json <<'EOF' || fail "speedscope shape: $(cat got.json)"
import json, sys
g = json.load(open(sys.argv[1]))
P = g["profiles"]
assert [p[:3] for p in P] == [["mkstream[4242] main (tid 4242)", "nanoseconds", 8000000]], [p[:3] for p in P]
A, B, G = ["mk_main", "mk_alpha"], ["mk_main", "mk_alpha", "mk_beta"], ["mk_main", "mk_gamma"]
assert P[0][3] == [A, A, A, B, B, G, G, G], P[0][3]
assert g["files"] == ["mk_alpha mkstream.c", "mk_beta mkstream.c", "mk_gamma mkstream.c", "mk_main mkstream.c"], g["files"]
EOF
	"$SONDE" report --format speedscope --source wall-time t.sonde >ww.json 2>/dev/null || fail "speedscope --source wall-time"
	python3 check.py ww.json shape >gotw.json || fail "speedscope shape (wall-time)"
	python3 -c 'import json,sys; P=json.load(open(sys.argv[1]))["profiles"]; B=["mk_main","mk_alpha","mk_beta"]; sys.exit(not ([p[:3] for p in P] == [["mkstream[4242] worker (tid 4243)", "nanoseconds", 40000000]] and P[0][3] == [B] * 4))' gotw.json ||
		fail "speedscope --source wall-time: $(cat gotw.json)"
	"$SONDE" report --format speedscope --metric weight t.sonde >w.json 2>/dev/null || fail "speedscope --metric weight"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u=[(p["unit"],p["endValue"]) for p in d["profiles"]]; sys.exit(u != [("nanoseconds",8000000)] and print(u) is None)' w.json ||
		fail "speedscope --metric weight: units and totals"
	"$SONDE" report --format speedscope --metric weight p.sonde >pw.json || fail "speedscope papi"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u=[(p["unit"],p["endValue"]) for p in d["profiles"]]; sys.exit(u != [("none",50000000)] and print(u) is None)' pw.json ||
		fail "speedscope --metric weight of a PAPI source: unit none"
	# --group-by: one profile per value, as the group-by view's rows
	"$SONDE" report --format speedscope --group-by phase --metric periods t.sonde >g.json || fail "speedscope --group-by"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print("%s,%d" % (p["name"], p["endValue"])) for p in d["profiles"]]' g.json >got.csv
	"$SONDE" report --group-by phase --format csv t.sonde | awk -F, 'NR > 1 {print "phase=" $1 "," $2}' >want.csv
	[ -s want.csv ] && cmp -s got.csv want.csv || fail "speedscope --group-by phase: $(cat got.csv) against $(cat want.csv)"
	# -o FILE, usage errors
	run "$SONDE" report --format speedscope -o t.speedscope.json t.sonde
	expect_rc 0 "speedscope -o"
	grep -qxF "sonde: speedscope profile written to t.speedscope.json (open it with speedscope FILE or at https://www.speedscope.app)" "$T/out" || fail "speedscope -o: $(cat "$T/out")"
	python3 check.py t.speedscope.json n >/dev/null || fail "speedscope -o: the file"
	for opt in "--view tree" "--top 3" "--stats thread" "--min-percent 1"; do
		run "$SONDE" report --format speedscope $opt t.sonde
		expect_rc 2 "speedscope $opt"
		expect_err_line "sonde: report: --format speedscope makes a profile of every sample per thread, or per --group-by value (use it without --view, --top, --stats or --min-percent)"
	done
	# the real consumer: speedscope opens it; its Sandwich view of the first profile
	# (thread main) has the csv's self and total per function
	dir=$(bash "$CONSUMERS/npm.sh") || exit 77
	node "$CONSUMERS/speedscope_check.mjs" "$dir" "$T/shots" t.speedscope.json --sandwich 20 >ss.out 2>&1 ||
		fail "speedscope app: $(cat ss.out)"
	grep -qxF "importer: Importing as speedscope json file" ss.out || fail "speedscope importer: $(cat ss.out)"
	# the file is in time (no --metric): the app shows durations (3.00ms, 0.00ns), which
	# are the csv's --metric time in ms
	awk -F'\t' 'function ms(v) { u = v; sub(/^[0-9.]+/, "", u); sub(/[a-zµ]+$/, "", v)
		return u == "ns" ? v / 1e6 : u == "ms" ? v : u == "s" ? v * 1e3 : v / 1e3 }
		/^sandwich: / {sub(/^sandwich: /, ""); split($1, s, " "); split($2, t, " ")
		printf "%s,%.3f,%.3f\n", $3, ms(s[1]), ms(t[1])}' ss.out | sort >got.csv
	"$SONDE" report --format csv --metric time --where thread=main t.sonde 2>/dev/null |
		awk -F, 'NR > 1 {printf "%s,%.3f,%.3f\n", $1, $2, $4}' | sort >want.csv
	[ -s want.csv ] && cmp -s got.csv want.csv || fail "speedscope Sandwich: $(tr '\n' ' ' <got.csv) against sonde's csv $(tr '\n' ' ' <want.csv)"
	for f in w.json g.json; do
		node "$CONSUMERS/speedscope_check.mjs" "$dir" "$T/shots" $f >ss.out 2>&1 || fail "speedscope app on $f: $(cat ss.out)"
	done
