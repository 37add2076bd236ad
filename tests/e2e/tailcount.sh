# Counts add up (issue 9): a two-thread program whose worker blocks all its life (K
# sleeps after touching N pages) and, with a long sampling period, is never sampled:
# everything it did reaches the stream only as THREAD_END deltas. The report's
# --group-by thread and process rows must add up to the --view counters total, and the
# worker's row must show what the program measured of itself with getrusage. Every
# expectation comes from the program's own numbers (no fixed counts from timing).
. "$(dirname "$0")/lib.sh"
K=2000 N=5000 SPIN_MS=300

SONDE_SAMPLE=cpu-time@50ms SONDE_COUNTERS=context-switches,minor-faults \
	profile s "$B/tests/bin/tailcount" $K $N $SPIN_MS || fail "tailcount failed: $(cat s.err)"
read -r tid wcs wmin scs smin < <(sed -n 's/^tid=\([0-9]*\) worker_cs=\([0-9]*\) worker_minflt=\([0-9]*\) self_cs=\([0-9]*\) self_minflt=\([0-9]*\)$/\1 \2 \3 \4 \5/p' s.out)
[ -n "${smin:-}" ] || fail "tailcount printed: $(cat s.out)"
f=$(ls s/*.sonde)
valid_stream "$f"
pass "program measured: worker $tid: $wcs context switches, $wmin minor faults; process: $scs, $smin"

# counters the runtime could have here (the header lists the others as unavailable)
"$SONDE" report --view counters --format csv s >counters.csv || fail "report --view counters"
for g in context-switches minor-faults; do
	total=$(awk -F, -v g="$g" '$2 == g && $3 == "available" { s += $5; n++ } END { if (n) print s }' counters.csv)
	if [ -z "$total" ]; then
		echo "note: $g unavailable here: $(grep "^$g" counters.csv)"
		continue
	fi
	"$SONDE" report --metric "$g" --group-by thread --format csv s >thread.csv || fail "$g: group-by thread"
	"$SONDE" report --metric "$g" --group-by process --format csv s >process.csv || fail "$g: group-by process"
	# by function a counter is refused (issue 18 item 3); by host it adds up too
	"$SONDE" report --metric "$g" --format csv s >flat.csv 2>flat.err && fail "$g: flat not refused"
	grep -q "not offered by function" flat.err || fail "$g: flat: $(cat flat.err)"
	"$SONDE" report --metric "$g" --group-by host --format csv s >flat.csv || fail "$g: group-by host"
	bythread=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' thread.csv)
	byproc=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' process.csv)
	byfunc=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' flat.csv)
	# the rows add up to the total, whichever way they are cut
	[ "$bythread" -eq "$total" ] || fail "$g: --group-by thread rows add up to $bythread, --view counters says $total"
	[ "$byproc" -eq "$total" ] || fail "$g: --group-by process rows add up to $byproc, --view counters says $total"
	[ "$byfunc" -eq "$total" ] || fail "$g: --group-by host rows add up to $byfunc, --view counters says $total"
	# the never-sampled worker has its own numbers: what it measured, within 10 %
	# (sonde counts from its thread's birth to its end, a little more than the window
	# the program measured between its two getrusage calls)
	w=$(awk -F, -v t="$tid" '$1 == t { print $2 }' thread.csv)
	want=$([ "$g" = context-switches ] && echo "$wcs" || echo "$wmin")
	all=$([ "$g" = context-switches ] && echo "$scs" || echo "$smin")
	awk -v w="${w:-0}" -v m="$want" 'BEGIN { exit !(w >= 0.9 * m && w <= 1.1 * m + 20) }' ||
		fail "$g: worker $tid has ${w:-no row} in --group-by thread, it measured $want itself"
	# and the process has no more than getrusage says of all of it
	awk -v p="$byproc" -v a="$all" 'BEGIN { exit !(p <= 1.1 * a + 50) }' ||
		fail "$g: process row $byproc, getrusage(RUSAGE_SELF) says $all"
	pass "$g: total $total = by thread $bythread = by process $byproc = by function $byfunc; worker $w (measured $want); process $byproc (getrusage $all)"
done
