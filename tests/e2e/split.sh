# A known CPU split over call paths (leaf_a/b/c/d = 50/30/15/5 % of identical
# work; the split the machine really gave, which wl_split measures, is the
# reference) is reproduced by `sonde report --format folded` within sampling noise
# (four binomial standard deviations, at least 3 points: lib.sh share_tol), and
# the stack of every sample reaches main through the whole chain; the number
# of samples follows the CPU time wl_split says it used (within 10 %).
. "$(dirname "$0")/lib.sh"
profile p "$B/tests/bin/wl_split" 0.6 || fail "wl_split exited $?"
for pair in leaf_a:50 leaf_b:30 leaf_c:15 leaf_d:5; do
	leaf=${pair%:*} intended=${pair#*:}
	want=$(leaf_share p.out "$leaf")
	got=$(folded_share p "$leaf")
	n=$("$SONDE" report --format folded p | awk '{ s += $NF } END { print s + 0 }')
	tol=$(share_tol "$n" "$want")
	within "$got" "$want" "$tol" || fail "$leaf: $got % of $n samples, it took $want % of the leaves' CPU (± $tol; intended $intended)"
	pass "$leaf $got % of samples, $want % of the CPU (intended $intended)"
done
# Every leaf sample has the full chain: main;run_split;split_round;...;dispatch;leaf
total=$("$SONDE" report --format folded p | awk '{s += $NF} END {print s}')
chained=$("$SONDE" report --format folded p |
	awk '$1 ~ /main;run_split;split_round;chain_1;.*;dispatch;leaf_[abcd]$/ {s += $NF} END {print s+0}')
read -r user_ms cpu_ms < <(cpu_of p.out main)
expect_samples "wl_split at cpu-time@1ms" "$total" "$user_ms" "$cpu_ms" 0.10
pass "$total samples for $user_ms ms user / $cpu_ms ms CPU"
awk -v c="$chained" -v t="$total" 'BEGIN { exit !(c >= 0.98 * t) }' ||
	fail "only $chained of $total samples have the whole call chain"
pass "$chained of $total samples unwound through the whole chain"
