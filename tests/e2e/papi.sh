# Sampling on PAPI event overflow, on both kinds of machine this project runs on.
#
# Where PAPI's perf_event component works (libpfm4 found a PMU to call the
# default), perf::TASK-CLOCK (a software event, so a VM without a hardware PMU
# can have it) reproduces the known split alone and beside cpu-time in one
# run, samples of each source told apart, as many as the CPU time the program
# says it used; PAPI_TOT_CYC, which needs hardware, fails clearly where it is
# missing; PAPI sampling survives fork.
#
# Where the component is disabled (libpfm4 finds no default PMU, as in some
# KVM guests: then PAPI refuses every event, software ones too), every PAPI
# source gets one line that says exactly that and why, the same reason
# `sonde events` gives, and the program runs on, sampled with cpu-time@1ms:
# the same split and counts are checked on that fallback.
#
# Which kind this machine is comes from `sonde events`; a third state (the
# component up but perf::TASK-CLOCK refused) is not expected and fails.
. "$(dirname "$0")/lib.sh"
PAPI_EV=perf::TASK-CLOCK
DISABLED="PAPI's perf_event component is disabled: "

"$SONDE" events --format csv >events.csv || fail "sonde events failed"
row=$(grep "^papi-native,$PAPI_EV," events.csv) || fail "sonde events has no $PAPI_EV row: $(cat events.csv)"
case $row in
"papi-native,$PAPI_EV,available,"*) mode=works ;;
"papi-native,$PAPI_EV,unavailable,,$DISABLED"*)
	mode=disabled
	reason=${row#papi-native,$PAPI_EV,unavailable,,}
	grep -q "^papi,perf_event component,unavailable,papi,$reason; " events.csv ||
		fail "sonde events: the component row does not give the same reason: $(grep '^papi,' events.csv)"
	echo "note: on this machine $reason: PAPI sources must fall back to cpu-time@1ms"
	;;
*) fail "sonde events: $PAPI_EV is neither available nor refused for a disabled component: $row" ;;
esac

# fallback_said ERRFILE EVENT [LAST]: stderr is the one line for EVENT on a
# machine with the component disabled, then, if LAST is "last", the line
# saying no source was left.
fallback_said() {
	local want="sonde: $2: $reason (sample with cpu-time@1ms; see 'sonde events')"
	[ "${3:-}" = last ] && want="$want
sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)"
	[ "$(cat "$1")" = "$want" ] || fail "$2: stderr was
$(cat "$1")
expected
$want"
}

# split_checked DIR OUT SOURCE LABEL: the split within sampling noise (share_tol) of the one
# wl_split measured, and as many samples of SOURCE as the CPU time it used
# stands for (10 %).
split_checked() {
	local dir=$1 out=$2 src=$3 label=$4 total leaf want a user_ms cpu_ms tol lost
	"$SONDE" report --source "$src" --format folded "$dir" >"$dir.$src.folded" || fail "$label: report --source $src failed"
	total=$(awk '{s += $NF} END {print s + 0}' "$dir.$src.folded")
	for leaf in leaf_a leaf_b leaf_c leaf_d; do
		want=$(leaf_share "$out" "$leaf")
		a=$(awk -v l="$leaf" '{ n = split($1, f, ";"); if (f[n] == l) s += $NF } END {print s + 0}' "$dir.$src.folded")
		tol=$(share_tol "$total" "$want")
		within "$(awk -v a="$a" -v t="$total" 'BEGIN {printf "%.2f", t ? 100 * a / t : 0}')" "$want" "$tol" ||
			fail "$label: $leaf $a of $total samples of $src; it took $want % of the leaves' CPU (± $tol)"
	done
	read -r user_ms cpu_ms < <(cpu_of "$out" main)
	lost=0
	[ "$src" = cpu-time ] || lost=$(signal_lost "$dir"/*.sonde)
	expect_samples "$label: samples of $src ($lost more counted as signal_lost)" "$((total + lost))" "$user_ms" "$cpu_ms" 0.10
	pass "$label: $src split within sampling noise, $total samples + $lost signal_lost for $user_ms ms user / $cpu_ms ms CPU"
}

# signal_lost FILE...: the PAPI overflows the kernel counted but never
# signalled, as the streams' DROPS records say (some kernels lose signals of
# one of two sampling events of a thread: 6.18 here, beside cpu-time's clock).
signal_lost() {
	local f
	for f in "$@"; do "$SONDE" dump "$f"; done |
		awk 'match($0, /"signal_lost":[0-9]+/) { s += substr($0, RSTART + 14, RLENGTH - 14) } END { print s + 0 }'
}

# 1. perf::TASK-CLOCK alone.
SONDE_SAMPLE="$PAPI_EV@1000000" profile p "$B/tests/bin/wl_split" 0.6 || fail "wl_split under PAPI: exit $?"
grep -q '^checksum ' p.out || fail "wl_split: output changed: $(cat p.out)"
f=$(ls p/*.sonde)
if [ $mode = works ]; then
	[ -s p.err ] && fail "stderr: $(cat p.err)"
	"$SONDE" dump "$f" | head -n 1 | grep -q '"name":"perf::TASK-CLOCK","spec":"perf::TASK-CLOCK@1000000","unit":"events","period":1000000,"mechanism":"papi:overflow"' ||
		fail "header does not describe the PAPI source"
	split_checked p p.out "$PAPI_EV" "$PAPI_EV@1000000"
else
	fallback_said p.err "$PAPI_EV" last
	"$SONDE" dump "$f" | head -n 1 | grep -q '"sources":\[{"name":"cpu-time","spec":"cpu-time@1ms",' ||
		fail "header does not describe the cpu-time fallback: $("$SONDE" dump "$f" | head -n 1 | cut -c1-400)"
	split_checked p p.out cpu-time "$PAPI_EV@1000000 (component disabled)"
fi

# 2. Both sources in one run: each reproduces the split; samples told apart.
# Where PAPI cannot work, cpu-time samples alone, and the line names the PAPI
# source only (a valid source is left).
SONDE_SAMPLE="cpu-time@1ms,$PAPI_EV@1000000" profile b "$B/tests/bin/wl_split" 0.6 || fail "two sources: exit $?"
if [ $mode = works ]; then
	[ -s b.err ] && fail "two sources: stderr: $(cat b.err)"
	split_checked b b.out cpu-time "two sources"
	split_checked b b.out "$PAPI_EV" "two sources"
	"$SONDE" dump "$(ls b/*.sonde)" | grep '"kind":"SAMPLE"' | grep -q '"source":1,' || fail "no samples of source 1"
else
	fallback_said b.err "$PAPI_EV"
	"$SONDE" dump "$(ls b/*.sonde)" >b.json
	grep '"kind":"SAMPLE"' b.json | grep -q '"source":1,' && fail "samples of a source that was dropped"
	split_checked b b.out cpu-time "two sources, PAPI dropped"
fi

# 3. PAPI_TOT_CYC needs a hardware PMU: a clear message, and the run goes on.
WL_CPU=1 SONDE_SAMPLE=PAPI_TOT_CYC@2000000 profile h "$B/tests/bin/lifecycle" spin 0.2 || fail "PAPI_TOT_CYC: program failed"
grep -qx done h.out || fail "PAPI_TOT_CYC: output changed"
read -r user_ms cpu_ms < <(cpu_of h.out spin_work)
spin=$("$SONDE" report --format csv h | awk -F, '$1 == "spin_work" {print $4}')
if [ $mode = disabled ]; then
	fallback_said h.err PAPI_TOT_CYC last
	expect_samples "PAPI_TOT_CYC: the cpu-time fallback" "${spin:-0}" "$user_ms" "$cpu_ms" 0.10
	pass "PAPI_TOT_CYC: component disabled, said so; sampled with cpu-time ($spin samples for $cpu_ms ms CPU)"
elif grep -q '^sonde: PAPI_TOT_CYC: event not available on this CPU: ' h.err; then
	grep -q "(try perf::TASK-CLOCK or cpu-time@1ms; see 'sonde events')$" h.err || fail "PAPI_TOT_CYC: hint missing: $(cat h.err)"
	grep -qx "sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)" h.err ||
		fail "PAPI_TOT_CYC: no fallback line: $(cat h.err)"
	expect_samples "PAPI_TOT_CYC: the cpu-time fallback" "${spin:-0}" "$user_ms" "$cpu_ms" 0.10
	pass "PAPI_TOT_CYC unavailable here: clear message, sampled with cpu-time instead"
else
	[ ! -s h.err ] || fail "PAPI_TOT_CYC: $(cat h.err)"
	pass "PAPI_TOT_CYC available on this machine (hardware PMU present)"
fi

# 4. Bad counts are refused with the accepted range (before PAPI is asked).
SONDE_SAMPLE="$PAPI_EV@5" profile c "$B/tests/bin/lifecycle" spin 0.05 || fail "bad count: program failed"
grep -qx "sonde: SONDE_SAMPLE: '$PAPI_EV@5': a PAPI event needs a count from 1000 to 2147483647 (e.g. perf::TASK-CLOCK@1000000)" c.err ||
	fail "bad count message: $(cat c.err)"
pass "bad PAPI count refused with the accepted range"

# 5. fork: the child re-initialises PAPI and samples on its own (or, where
# PAPI cannot, on the cpu-time fallback: said once, in the parent).
WL_CPU=1 SONDE_SAMPLE="$PAPI_EV@1000000" profile k "$B/tests/bin/lifecycle" fork || fail "fork under PAPI: exit $?"
grep -q '^child status 0$' k.out || fail "fork under PAPI: $(cat k.out)"
if [ $mode = works ]; then
	[ ! -s k.err ] || fail "fork under PAPI: $(cat k.err)"
else
	fallback_said k.err "$PAPI_EV" last
fi
child=""
for s in k/*.sonde; do "$SONDE" dump "$s" | head -n 1 | grep -q '"fork_of"' && child=$s; done
[ -n "$child" ] || fail "fork: no child stream"
n=$("$SONDE" report --format csv "$child" | awk -F, '$1 == "child_work" {print $4}')
read -r user_ms cpu_ms < <(cpu_of k.out child_work)
lost=$(signal_lost "$child")
expect_samples "fork ($mode): child_work in the child's stream ($lost more counted as signal_lost)" "$((${n:-0} + lost))" "$user_ms" "$cpu_ms" 0.10
pass "sampling survives fork ($mode: $n samples + $lost signal_lost in the child for $cpu_ms ms CPU)"
