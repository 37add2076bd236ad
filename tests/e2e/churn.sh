# Thread, fork and dlopen/dlclose churn: the program finishes with its normal
# output and status, every stream (parent and forked children) is valid, and
# the plugin's code, unloaded long before the end, is still symbolized, with
# samples for the CPU time wl_churn measured inside the plugin's calls.
# Repeated ROUNDS times (default 3): a deadlock against the loader shows up
# as a hang, which ctest's timeout turns into a failure.
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
"$B/tests/bin/wl_churn" 0.5 >plain.out 2>&1 || fail "plain wl_churn failed"
for r in $(seq 1 "$ROUNDS"); do
	rm -rf p p.out p.err
	watched 120 env LD_PRELOAD="$LIB" SONDE_OUTPUT=p WL_CPU=1 "$B/tests/bin/wl_churn" 0.5 >p.out 2>p.err
	st=$?
	[ $st -eq 137 ] && fail "round $r: wl_churn hung (killed after 120 s): $(head -c 6000 hang.txt)"
	[ $st -eq 0 ] || fail "round $r: wl_churn exited $st: $(cat p.err)"
	grep -v '^cpu ' p.out | cmp -s plain.out - || fail "round $r: output differs from the plain run"
	[ -s p.err ] && fail "round $r: unexpected stderr: $(cat p.err)"
	n=0
	for f in p/*.sonde; do valid_stream "$f"; n=$((n + 1)); done
	[ "$n" -eq 5 ] || fail "round $r: $n streams, expected 5 (parent + 4 forked children)"
	"$SONDE" report --format csv p >flat.csv || fail "report failed"
	plug=$(awk -F, '$1 == "plug_leaf" {print $2}' flat.csv)
	# ~750 calls of ~0.2 ms each: whether a call holds a period's end is a
	# matter of chance, so the count is known only to about +-10 %; the bound
	# below is a wide one: at least half of the periods in the plugin's time
	read -r _ plug_ms < <(cpu_of p.out plug_work)
	# and above, three standard deviations of a count of c expected (+-sqrt(c)):
	# 153 samples for 134 ms was seen once under load.
	awk -v n="${plug:-0}" -v c="$plug_ms" 'BEGIN { exit !(n >= 0.5 * c && n <= c + 3 * sqrt(c) + 2) }' ||
		fail "round $r: plug_leaf has ${plug:-0} samples for $plug_ms ms of CPU in the plugin's calls"
	grep -q '^libplug.so+0x' flat.csv && fail "round $r: unsymbolized plugin addresses"
	pass "round $r: 5 valid streams, plug_leaf $plug samples for $plug_ms ms of CPU in the plugin"
done
