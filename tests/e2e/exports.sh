# exports.sh - what the exports show first (issue 22 item 11), on a program started by a
# shell (sh -c): the shell's stream has a few samples, the program's most.
#   title: the page's title names the program with the most samples, and how many other
#          programs there are (before: the first stream's, the shell's);
#   speedscope: the file is in time (nanoseconds, the samples' CPU time) and opens on the
#          busiest thread, the program's, not the shell's read first (before: periods,
#          unit none, and profile 0).
CASES="title speedscope"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: exports.sh BUILD_DIR CASE}
"$SONDE" run -o prof -- sh -c "i=0; while [ \$i -lt 30000 ]; do i=\$((i + 1)); done; '$B/tests/bin/waits' 30 >/dev/null; true" >run.out 2>&1 ||
	fail "run: $(cat run.out)"
case $case in
title)
	"$SONDE" report --format html -o page.html prof >/dev/null 2>&1 || fail "report --format html"
	t=$(grep -o '<title>[^<]*</title>' page.html)
	[ "$t" = "<title>sonde: waits and 1 more</title>" ] || fail "the page's title: $t"
	grep -q '<h1>sonde report: waits <small>and 1 other program</small></h1>' page.html ||
		fail "the page's heading: $(grep -o '<h1>.*</h1>' page.html)"
	pass "title: $t"
	;;
speedscope)
	"$SONDE" report --format speedscope -o p.json prof >/dev/null 2>&1 || fail "report --format speedscope"
	python3 - p.json <<'PY' >check.out || fail "speedscope: $(cat check.out)"
import json, sys
d = json.load(open(sys.argv[1]))
P = d["profiles"]
ends = [p["endValue"] for p in P]
assert len(P) >= 2, [(p["name"], p["endValue"]) for p in P]
assert all(p["unit"] == "nanoseconds" for p in P), [p["unit"] for p in P]
a = d["activeProfileIndex"]
assert ends[a] == max(ends) and a != 0 and P[a]["name"].startswith("waits["), (a, [(p["name"], p["endValue"]) for p in P])
print("opens on %s, %.0f ms of %d profiles" % (P[a]["name"], ends[a] / 1e6, len(P)))
PY
	pass "speedscope: $(cat check.out)"
	;;
esac
