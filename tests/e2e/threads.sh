# Every thread is sampled on its own CPU clock: each worker appears with its
# name, its sampled time follows its own CPU time within 10 %, and the total
# is within 2 % of CPU time / period. cpu-time counts user-mode time (the
# task clock with exclude_kernel).
. "$(dirname "$0")/lib.sh"
profile p "$B/tests/bin/wl_threads" 4 0.5 || fail "wl_threads exited $?"
"$SONDE" report --view threads --format csv p >threads.csv || fail "report --view threads failed"
"$SONDE" report --group-by thread --metric time --format csv p >weights.csv || fail "report --metric time failed"
# The reference interval for a count is [user time, user + system time]:
# getrusage's split of the two is itself estimated from scheduler ticks.
in_range() { # SAMPLES USER_MS CPU_MS TOLERANCE
	awk -v s="$1" -v u="$2" -v c="$3" -v t="$4" 'BEGIN { exit !(s >= u * (1 - t) - 1 && s <= c * (1 + t) + 1) }'
}
sum_cpu=0 sum_user=0 sum_samples=0
while read -r _ name _ tid _ cpu _ user; do
	row=$(awk -F, -v tid="$tid" '$2 == tid' threads.csv)
	[ -n "$row" ] || fail "thread $name (tid $tid) missing from the profile"
	# its sampled time at 1 ms a period: the periods its samples stand for
	samples=$(awk -F, -v tid="$tid" '$1 == tid {printf "%d", $2}' weights.csv)
	tname=$(echo "$row" | cut -d, -f3)
	[ "$tname" = "$name" ] || fail "tid $tid named '$tname', expected '$name'"
	cpu_ms=$((cpu / 1000000)) user_ms=$((user / 1000000))
	in_range "$samples" "$user_ms" "$cpu_ms" 0.10 ||
		fail "$name: $samples samples for $user_ms ms user / $cpu_ms ms CPU (more than 10 % off)"
	pass "$name: $samples samples for $user_ms ms user / $cpu_ms ms CPU"
	sum_cpu=$((sum_cpu + cpu)) sum_user=$((sum_user + user)) sum_samples=$((sum_samples + samples))
done < <(grep '^thread ' p.out)
cpu_ms=$((sum_cpu / 1000000)) user_ms=$((sum_user / 1000000))
in_range "$sum_samples" "$user_ms" "$cpu_ms" 0.02 ||
	fail "$sum_samples samples for $user_ms ms user / $cpu_ms ms CPU of the workers (more than 2 % off)"
pass "all workers: $sum_samples samples for $user_ms ms user / $cpu_ms ms CPU"
