# Every thread is sampled on its own CPU clock: each worker appears with its
# name, its sample count follows its own CPU time within 10 %, and the total
# is within 2 % of CPU time / period. cpu-time counts user-mode time (the
# task clock with exclude_kernel), so the reference is each thread's user time.
. "$(dirname "$0")/lib.sh"
profile p "$B/wl_threads" 4 0.5 || fail "wl_threads exited $?"
"$SONDE" report --view threads --format csv p >threads.csv || fail "report --view threads failed"
sum_cpu=0 sum_samples=0
while read -r _ name _ tid _ _ _ cpu; do
	row=$(awk -F, -v tid="$tid" '$2 == tid' threads.csv)
	[ -n "$row" ] || fail "thread $name (tid $tid) missing from the profile"
	samples=$(echo "$row" | cut -d, -f4)
	tname=$(echo "$row" | cut -d, -f3)
	[ "$tname" = "$name" ] || fail "tid $tid named '$tname', expected '$name'"
	want=$((cpu / 1000000))
	awk -v s="$samples" -v w="$want" 'BEGIN { d = s - w; if (d < 0) d = -d; exit !(d <= 0.10 * w + 1) }' ||
		fail "$name: $samples samples for $want ms of user CPU (more than 10 % off)"
	pass "$name: $samples samples for $want ms of user CPU"
	sum_cpu=$((sum_cpu + cpu)) sum_samples=$((sum_samples + samples))
done < <(grep '^thread ' p.out)
want=$((sum_cpu / 1000000))
awk -v s="$sum_samples" -v w="$want" 'BEGIN { d = s - w; if (d < 0) d = -d; exit !(d <= 0.02 * w + 2) }' ||
	fail "$sum_samples samples for $want ms of worker CPU (more than 2 % off)"
pass "all workers: $sum_samples samples for $want ms of user CPU"
