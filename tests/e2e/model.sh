# `sonde report --view model` on regions whose time grows by a known law with
# an annotated parameter (tests/fixtures/programs/scaling.c, SONDE_REGIONS=on):
#   lin ~ n, nlogn ~ n log n, quad ~ n^2 give back that term and exponent with
#   R^2 >= 0.95; grid ~ n * m (two parameters) gives n * m; the noisy region
#   (work ~ n plus 60 times as much in a pseudo-random quarter of the calls) is said to fit poorly
#   or fairly, never "good"; the table has one row per size with 25 calls each;
#   csv and json carry the same. The law checks fit the shortest call per size
#   (--fit min): preemption on a shared machine only adds time, so the minimum
#   of 25 calls is the work's own (9 were all cut beside a hog, two helpers'
#   builds and a test suite: R^2 0.78); the noisy check fits the mean (the
#   default) of 9 calls, in a run of its own.
#   ctest runs it alone (RUN_SERIAL), and every call is shorter than a time slice
#   (scaling.c: 5 us to 5 ms): under sustained oversubscription long calls are
#   time-sliced and short ones are not, which bends any law (seen: grid R^2 0.88
#   beside a CPU hog and another test; lin n^(5/4) and quad n^(7/3) with calls of
#   20-70 ms beside a hog, 6 runs in 6). Now 12 of 12 beside a hog.
# Usage: model.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
S="$B/tests/bin/scaling"
[ -x "$S" ] || skip "no scaling program in $B"

# Samples every 10 ms: a sample inside a call adds the handler's time to it (35 us
# here), and at 1 ms every call of over 1 ms has some: 3.5 samples put 4 % on the
# longest lin call and fitted n^(5/4) beside a CPU hog. Calls of under 4 ms at 10 ms
# mostly have none, so the shortest of 9 is the work's own.
SONDE_SAMPLE=cpu-time@10ms SONDE_REGIONS=on profile one "$S" -r 25 || fail "scaling: exit $?"
SONDE_SAMPLE=cpu-time@10ms SONDE_REGIONS=on profile two "$S" -2 -r 25 || fail "scaling -2: exit $?"
SONDE_SAMPLE=cpu-time@10ms SONDE_REGIONS=on profile noisy "$S" -N -r 9 || fail "scaling -N: exit $?"
want() { # want REGION PARAMS TERM
	"$SONDE" report --view model --fit min --region "$1" --param "$2" "$3" >"$1.txt" 2>"$1.err" ||
		fail "--view model --region $1: exit $?: $(cat "$1.err")"
	grep -q "^model: t = [-0-9.e]* [+-] [0-9.e+-]* \* $4 ms\$" "$1.txt" ||
		fail "$1: expected the term $4: $(grep -E '^(model|fit):' "$1.txt")"
	r2=$(sed -n 's/^fit: R^2 \([0-9.]*\),.*/\1/p' "$1.txt")
	awk -v r="$r2" 'BEGIN { exit !(r >= 0.95) }' || fail "$1: R^2 $r2 < 0.95"
	pass "$1: $(grep '^model:' "$1.txt" | sed 's/^model: //'), R^2 $r2"
}
want lin n one 'n'
want nlogn n one 'n \* log2(n)'
want quad n one 'n^2'
want grid n,m two 'n \* m'
# the table: 6 sizes, 25 calls each
rows=$(awk '$1 ~ /^[0-9]+$/ && $2 == 25' quad.txt | wc -l)
[ "$rows" -eq 6 ] || fail "quad table: $rows rows of 25 calls, expected 6: $(cat quad.txt)"
"$SONDE" report --view model --region noisy --param n noisy >noisy.txt 2>&1 || fail "noisy: exit $?"
grep -q '^fit: .*(good)' noisy.txt && fail "noisy data said to fit well: $(grep -E '^(model|fit):' noisy.txt)"
grep -q '^fit: .*(\(poor\|fair\)): the means do not follow one model' noisy.txt ||
	fail "noisy: no honest verdict: $(grep '^fit:' noisy.txt)"
pass "noisy: $(grep '^fit:' noisy.txt | cut -c1-80)"
"$SONDE" report --view model --fit min --region quad --param n --format csv one >quad.csv || fail "csv"
[ "$(head -n 1 quad.csv)" = "n,calls,mean_ms,stddev_ms,min_ms,model_ms,error_pct" ] || fail "csv header: $(head -n 1 quad.csv)"
"$SONDE" report --view model --fit min --region quad --param n --format json one >quad.json || fail "json"
/usr/bin/python3 - quad.json <<'PY' || fail "json: $(head -c 300 quad.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"].endswith("* n^2 ms") and d["of"] == "min" and d["r2"] >= 0.95, d
assert len(d["values"]) == 6 and all(v["calls"] == 25 for v in d["values"]), d["values"]
PY
pass "csv and json carry the table and the model"
# errors: too few values, a region that is not there, a missing --param
"$SONDE" report --view model --region quad --param m one >e1.out 2>e1.err && fail "a parameter never set: exit 0"
grep -q "^sonde: report: --view model: quad has 0 distinct values of --param" e1.err || fail "no-param message: $(cat e1.err)"
"$SONDE" report --view model --region nope --param n one >e2.out 2>e2.err && fail "no such region: exit 0"
grep -q "^sonde: report: --view model: no calls of region=nope in the streams" e2.err || fail "no-region message: $(cat e2.err)"
"$SONDE" report --view model --region quad one >e3.out 2>e3.err && fail "no --param: exit 0"
grep -q "^sonde: report: --view model needs --region NAME and --param" e3.err || fail "usage message: $(cat e3.err)"
pass "too few values, a missing region and a missing --param are said"
exit 0
