# Counters where their events happened (issue 18 item 3). A counter of
# SONDE_COUNTERS is read at each sample: its deltas since the thread's previous
# sample ride on whichever sample comes next, so by function they pointed at
# the wrong code (89-94 % of a program's page faults in a compute loop or
# __vdso_clock_gettime; a sleeper's switches in its compute code), and the
# HTML page printed "Functions by page-faults" tables. Now:
#   - the views by code (flat, tree, callers, folded, svg, html, pprof,
#     speedscope, --group-by function/file/line/module) refuse --metric COUNTER
#     in one line that says where to look instead;
#   - per thread the figures are the program's own (blocker split: one thread
#     faults N pages in fault_pages, the other computes and sleeps in
#     compute_sleep; each prints its getrusage RUSAGE_THREAD minflt and nvcsw);
#   - by code, the page faults are sampled on their own overflow (a PAPI source,
#     perf::PAGE-FAULTS@1000): fault_pages holds them.
. "$(dirname "$0")/lib.sh"
N=60000
SONDE_SAMPLE=cpu-time@1ms,perf::PAGE-FAULTS@1000 profile p "$B/tests/bin/blocker" split $N ||
	fail "blocker split: exit $?: $(cat p.err)"
papi=1
grep -q 'perf::PAGE-FAULTS' p.err && papi=0 # not available: said on stderr
flt=$(awk '$1 == "thread" && $2 == "fault_pages" { print $4 }' p.out)
sw=$(awk '$1 == "thread" && $2 == "compute_sleep" { print $6 }' p.out)
[ -n "$flt" ] && [ -n "$sw" ] || fail "program output: $(cat p.out)"

want="sonde: report: --metric page-faults: not offered by BY: a counter's events are charged to whichever sample comes next, not to the code where they happened (per thread, process, context or region: --group-by thread, process or an attribute, or --view regions; by code: sample on the event itself, e.g. SONDE_SAMPLE=cpu-time@1ms,perf::PAGE-FAULTS@1000 and --source perf::PAGE-FAULTS)"
refused() { # refused BY ARGS...: exit 2, that one line, nothing on stdout
	local by=$1; shift
	"$SONDE" report --metric page-faults "$@" p >r.out 2>r.err
	local rc=$?
	[ $rc = 2 ] || fail "--metric page-faults $*: exit $rc: $(head -3 r.out r.err)"
	[ "$(cat r.err)" = "${want/BY/$by}" ] || fail "--metric page-faults $*: $(cat r.err)"
	[ -s r.out ] && fail "--metric page-faults $*: wrote $(head -c 200 r.out)"
	return 0
}
refused function
refused function --format csv
refused "call path" --view tree
refused "call path" --view callers fault_pages
refused "call path" --format folded
refused "call path" --format svg -o x.svg
refused "call path" --format html -o x.html
refused "call path" --format pprof -o x.pb.gz
refused "call path" --format speedscope -o x.json
refused function --group-by function
refused module --group-by thread,module
pass "by code: refused in one line (flat, tree, callers, folded, svg, html, pprof, speedscope, group-by function/module)"

# the HTML page has no "Functions by" counter tables any more
"$SONDE" report --format html -o page.html p 2>/dev/null || fail "html report"
grep -q 'Functions by' page.html && fail "html: $(grep -o 'Functions by [a-z.-]*' page.html | head -3)"

# per thread: the program's own figures
"$SONDE" report --metric page-faults --group-by thread --format csv p >t.csv 2>/dev/null ||
	fail "--group-by thread: $(cat t.csv)"
top=$(sed -n 2p t.csv | cut -d, -f2)
awk -v g="$top" -v w="$flt" 'BEGIN { exit !(g >= w && g <= w * 1.05 + 200) }' ||
	fail "page faults of the faulting thread: $top in the profile, it counted $flt itself: $(cat t.csv)"
"$SONDE" report --metric context-switches.voluntary --group-by thread --format csv p >s.csv 2>/dev/null ||
	fail "--group-by thread (switches)"
got=$(awk -F, 'NR > 1 { if ($2 > m) m = $2 } END { print m + 0 }' s.csv)
awk -v g="$got" -v w="$sw" 'BEGIN { exit !(g >= w && g <= w * 1.1 + 20) }' ||
	fail "voluntary switches of the sleeper: $got in the profile, it counted $sw itself: $(cat s.csv)"
pass "per thread: page faults $top (the thread counted $flt), voluntary switches $got (it counted $sw)"

# by code, on the event's own overflow
if [ $papi = 0 ]; then
	grep -q "perf::PAGE-FAULTS" p.err || fail "no message about perf::PAGE-FAULTS: $(cat p.err)"
	skip "perf::PAGE-FAULTS unavailable here: $(grep -m1 'perf::PAGE-FAULTS' p.err)"
fi
"$SONDE" report --source perf::PAGE-FAULTS --format folded p >pf.folded 2>pf.err ||
	fail "--source perf::PAGE-FAULTS: $(cat pf.err)"
all=$(awk '{ s += $NF } END { print s + 0 }' pf.folded)
in_f=$(awk '$1 ~ /;fault_pages$/ { s += $NF } END { print s + 0 }' pf.folded)
# one sample per 1000 faults: the thread's own faults / 1000, give or take its start
awk -v n="$all" -v w="$flt" 'BEGIN { exit !(n >= int(w / 1000) - 2 && n <= w / 1000 + 5) }' ||
	fail "perf::PAGE-FAULTS: $all samples for $flt faults of the faulting thread"
[ $((in_f * 100)) -ge $((all * 95)) ] || fail "fault_pages holds $in_f of $all page-fault samples: $(cat pf.folded)"
pass "perf::PAGE-FAULTS@1000: $in_f of $all samples in fault_pages ($flt faults)"
