# The timeline formats on a real program: tests/fixtures/programs/phases.c (two threads, N
# iterations of phase=solve (with region=smooth inside), exchange and checkpoint)
# under SONDE_REGIONS=trace, then
#   1. --format trace: per thread, N region slices of each phase on its region track,
#      whose durations add up to the regions view's inclusive time of that phase and
#      thread (the same REGION records, so to the µs); the X events of every track
#      nest; the counter tracks add up to --view counters;
#   2. --format speedscope: per function the csv's self samples;
#   3. the real speedscope app opens both in headless chromium (when npm.sh can have
#      it; said otherwise).
# Light: well under a second of CPU. Usage: timeline.sh BUILD_DIR
CONSUMERS=$(cd "$(dirname "$0")/../consumers" && pwd)
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/phases"
[ -x "$P" ] || skip "no phases program in $B"
N=6
SONDE_REGIONS=trace WL_CPU=1 profile a "$P" -t 2 -i $N -u 0.5 || fail "phases: exit $?"
valid_stream "$(ls a/*.sonde)"

"$SONDE" report --format trace -o a.trace.json a >/dev/null || fail "report --format trace"
"$SONDE" report --view regions --by-thread --group-by phase --format csv a >r.csv ||
	fail "report --view regions"
"$SONDE" report --view counters --format csv a 2>/dev/null |
	awk -F, 'NR > 1 && $3 == "available" && $5 > 0 {print $1 "," $5}' | sort >counters.csv
python3 - a.trace.json r.csv counters.csv "$N" <<'EOF' || fail "trace: see above"
import csv, json, re, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n = int(sys.argv[4])
R = 1000000000
tracks, regions, sums = {}, {}, {}
for e in ev:
    if e["ph"] == "X":
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        if e["cat"] == "region" and e["name"].startswith("phase="):
            k = (e["tid"] - R, e["name"])
            c, d = regions.get(k, (0, 0.0))
            regions[k] = (c + 1, d + e["dur"])
    elif e["ph"] == "C":
        name = re.sub(r" \(tid [0-9]+\)$", "", e["name"])
        sums[name] = sums.get(name, 0) + e["args"]["delta"]
bad = []
for k, xs in tracks.items():
    stack = []
    for e in sorted(xs, key=lambda e: (e["ts"], -e["dur"])):
        while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-6:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-6:
            bad.append("track %r: %s at %s does not nest in %s" % (k, e["name"], e["ts"], stack[-1]["name"]))
            break
        stack.append(e)
rows = list(csv.DictReader(open(sys.argv[2])))
for r in rows:
    k = (int(r["thread"]), r["path"])
    c, d = regions.get(k, (0, 0.0))
    if c != n or c != int(r["calls"]) or abs(d / 1000 - float(r["incl_ms"])) > 0.002 * c:
        bad.append("%s of thread %s: %d slices, %.3f ms; the regions view: %s calls, %s ms"
                   % (k[1], k[0], c, d / 1000, r["calls"], r["incl_ms"]))
if len(rows) != 6:
    bad.append("regions view rows: %d, expected 3 phases x 2 threads" % len(rows))
want = dict(l.strip().split(",") for l in open(sys.argv[3]) if l.strip())
got = {k: str(v) for k, v in sums.items() if v}
if got != want:
    bad.append("counter tracks %s, --view counters %s" % (got, want))
for b in bad:
    print("trace: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
pass "trace: $N slices of each phase per thread, as timed by the regions view"

"$SONDE" report --format speedscope --metric periods -o a.speedscope.json a >/dev/null || fail "report --format speedscope"
python3 - a.speedscope.json <<'EOF' | sort >got.csv || fail "speedscope: not a speedscope file"
import json, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
self = {}
for p in d["profiles"]:
    assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
    for s, w in zip(p["samples"], p["weights"]):
        n = frames[s[-1]]["name"]
        self[n] = self.get(n, 0) + w
for n, v in self.items():
    print("%s,%d" % (n, v))
EOF
"$SONDE" report --format csv a 2>/dev/null | awk -F, 'NR > 1 && $2 > 0 {print $1 "," $2}' | sort >want.csv
cmp -s got.csv want.csv || fail "speedscope self per function $(tr '\n' ' ' <got.csv) against the csv $(tr '\n' ' ' <want.csv)"
pass "speedscope: the csv's self samples per function"

if dir=$(bash "$CONSUMERS/npm.sh"); then
	for f in a.trace.json a.speedscope.json; do
		node "$CONSUMERS/speedscope_check.mjs" "$dir" shots $f >ss.out 2>&1 || fail "speedscope app on $f: $(cat ss.out)"
	done
	pass "the speedscope app opens both"
else
	echo "note: the speedscope app is not available here: not opened"
fi
