# Regions the stream does not see end (issue 18 items 10 and 11), on
# tests/fixtures/programs/regionends.c, whose own CLOCK_MONOTONIC is the ground truth:
#   1. a region "run" still open when the stream ends: reported on while the
#      program runs, and after SIGKILL, with SONDE_REGIONS=on and trace. Every
#      row has excl <= incl; run is counted (open, closed at the stream's last
#      timestamp), its inclusive time between the program's time at the end of
#      the last step the stream closed and at the end of the next one (10 %).
#   2. SONDE_REGIONS=trace with the smallest ring: most events dropped (the
#      stream counts them). No call is made of another's begin and end: each
#      row's max within what the program measured around its longest call,
#      tiny (a leaf) has excl = incl, the calls left out are said, and what is
#      neither shown nor left out is at most half the dropped events.
# Usage: regionends.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/regionends"
[ -x "$P" ] || skip "no regionends program in $B"

# rows_ok CSV WHAT: every row of a regions csv has excl_ms <= incl_ms.
rows_ok() {
	awk -F, 'NR > 1 && $4 > $3 { print; bad = 1 } END { exit bad }' "$1" >"$1.bad" ||
		fail "$2: excl > incl: $(cat "$1.bad") (all: $(cat "$1"))"
}

# open_ok DIR OUT WHAT: the regions of a stream whose run is open, against the
# program's step lines in OUT.
open_ok() {
	local d=$1 out=$2 what=$3
	"$SONDE" report --view regions --format csv "$d" >"$d.csv" 2>"$d.rerr" ||
		fail "$what: report: $(cat "$d.rerr")"
	"$SONDE" report --view regions --group-by region --format csv "$d" >"$d.g.csv" 2>/dev/null ||
		fail "$what: report --group-by region"
	rows_ok "$d.csv" "$what"
	rows_ok "$d.g.csv" "$what, --group-by region"
	local run steps forced grun
	run=$(awk -F, '$1 == "region=run" {print $2, $3, $9}' "$d.csv")
	read -r steps forced < <(awk -F, '$1 == "region=run/phase=step" {print $2, $9}' "$d.csv")
	grun=$(awk -F, '$1 == "region=run" {print $2, $3}' "$d.g.csv")
	[ "${run%% *}" = 1 ] || fail "$what: region=run has '$run' (calls incl forced), expected 1 open call: $(cat "$d.csv")"
	[ "$(echo "$run" | cut -d' ' -f3)" = 1 ] || fail "$what: region=run not counted as forced: $run"
	[ "$grun" = "$(echo "$run" | cut -d' ' -f1,2)" ] ||
		fail "$what: --group-by region: run '$grun', plain view '$run'"
	local closed=$((steps - forced)) incl lo hi
	incl=$(echo "$run" | cut -d' ' -f2)
	# the program's time at the end of step K; a step the kill cut before
	# its line: the last line's time plus a cycle (UNIT 20 ms + 5 ms) a step
	read -r lo hi < <(awk -v k="$closed" '$1 == "step" { t[$2] = $4 / 1e6; n = $2 }
		END { last = t[n]; lo = k <= n ? t[k] : last; hi = k + 1 <= n ? t[k + 1] : last + 25 * (k + 1 - n)
		      print lo, hi }' "$out")
	[ "$closed" -gt 0 ] && [ -n "$lo" ] && [ -n "$hi" ] ||
		fail "$what: $closed closed steps in the stream; program: $(tail -n 2 "$out")"
	awk -v i="$incl" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(i >= 0.9 * lo && i <= 1.1 * hi) }' ||
		fail "$what: run incl $incl ms, the program was $lo ms in at step $closed's end, $hi ms at the next"
	echo "$what: run $incl ms open (program: $lo..$hi ms), $closed steps closed"
}

for mode in on trace; do
	SONDE_REGIONS=$mode SONDE_FLUSH_MS=50 LD_PRELOAD="$LIB" SONDE_OUTPUT=k$mode "$P" -o 0 -u 20 \
		>k$mode.out 2>k$mode.err &
	pid=$!
	sleep 1
	cp -r k$mode r$mode # the stream as it is while the program runs
	sleep 0.5
	kill -KILL $pid
	wait $pid 2>/dev/null
	m1=$(open_ok r$mode k$mode.out "SONDE_REGIONS=$mode, running") || exit 1
	m2=$(open_ok k$mode k$mode.out "SONDE_REGIONS=$mode, SIGKILL") || exit 1
	"$SONDE" report --view regions --format json k$mode >k$mode.json 2>/dev/null
	python3 - k$mode.json <<'EOF' || fail "$mode: json $(cat k$mode.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["open_at_end"] >= 1 and d["left_out"] == 0, d
EOF
	pass "$m1; $m2"
done

# load.py: the report's json (argv 1) as d, the program's "NAME key N ..." lines
# (argv 2) as truth, d's rows by path as rows
cat >load.py <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    truth[f[0]] = dict(zip(f[1::2], map(int, f[2::2])))
rows = {r["path"]: r for r in d["regions"]}
EOF

# 2. A 64 KB ring for a million region events, drained by a writer thread
# every 10 ms (SONDE_WRITER=thread; a program with threads has one).
SONDE_WRITER=thread SONDE_REGIONS=trace SONDE_BUFFER_KB=64 profile d "$P" -t 5000 -n 100 ||
	fail "tiny regions: exit $?"
"$SONDE" report --view regions --format json d >d.json 2>d.rerr || fail "tiny: report $(cat d.rerr)"
"$SONDE" report --view regions d >d.txt 2>/dev/null
python3 - d.json d.out <<'EOF' || fail "tiny regions: $(cat d.out) / $(cat d.txt)"
exec(open("load.py").read())  # d, truth, rows
dropped, left = d["dropped_region_events"], d.get("left_out", 0)
assert dropped > 0, "no region event dropped: the test needs a full ring"
shown = 0
for path, name in (("region=batch", "batch"), ("region=batch/region=tiny", "tiny")):
    r, t = rows.get(path), truth[name]
    if r is None:
        continue
    assert r["excl_ms"] <= r["incl_ms"], (path, r)
    assert r["calls"] <= t["calls"], (path, r, t)
    # no call longer than the longest the program timed around one
    assert r["max_ms"] <= t["max_ns"] / 1e6 * 1.01 + 0.001, (path, r, t)
    shown += r["calls"]
tiny = rows.get("region=batch/region=tiny")
assert tiny is None or tiny["excl_ms"] == tiny["incl_ms"], ("leaf", tiny)
b = rows.get("region=batch")
assert b is None or b["incl_ms"] <= truth["batch"]["sum_ns"] / 1e6 * 1.01, (b, truth["batch"])
# a call neither shown nor left out lost both its events
unseen = truth["tiny"]["calls"] + truth["batch"]["calls"] - shown - left
assert 0 <= 2 * unseen <= dropped, (shown, left, unseen, dropped)
print(f"{shown} calls shown, {left} left out, {dropped} events dropped")
EOF
grep -q '^left out: [0-9]* call' d.txt || fail "tiny regions: the text does not say what was left out: $(cat d.txt)"
pass "tiny regions with a full ring: $(python3 -c "import json; d = json.load(open('d.json')); print(sum(r['calls'] for r in d['regions']), 'calls shown,', d['left_out'], 'left out,', d['dropped_region_events'], 'events dropped')"); every max within the program's"
# 2b. The same single-threaded program without a writer thread (the
# default): its region ends drain the ring when a quarter is used, so
# nothing is dropped and every call is shown.
SONDE_REGIONS=trace SONDE_BUFFER_KB=64 profile e "$P" -t 5000 -n 100 || fail "tiny regions, no writer thread: exit $?"
"$SONDE" report --view regions --format json e >e.json 2>e.rerr || fail "tiny, no writer thread: report $(cat e.rerr)"
python3 - e.json e.out <<'EOF' >e.n || fail "tiny regions, no writer thread: $(cat e.out) / $(head -c 600 e.json)"
exec(open("load.py").read())  # d, truth, rows
assert d["dropped_region_events"] == 0 and d.get("left_out", 0) == 0, d
for path, name in (("region=batch", "batch"), ("region=batch/region=tiny", "tiny")):
    assert rows[path]["calls"] == truth[name]["calls"], (path, rows[path], truth[name])
print(rows["region=batch/region=tiny"]["calls"] + rows["region=batch"]["calls"])
EOF
pass "tiny regions, single-threaded, no writer thread: every call shown ($(cat e.n)), none dropped"
exit 0
