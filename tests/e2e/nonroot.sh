# As an unprivileged user (perf_event_paranoid 2 is the usual setting), the
# per-thread task clock still works: every thread is sampled at the rate asked.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
command -v setpriv >/dev/null || skip "setpriv not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody"
chmod 755 "$T"
mkdir -m 777 out
for p in "$B" "$B/tests/bin/wl_threads" "$LIB"; do
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$p" ||
		skip "$p is not readable by nobody"
done
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/out/p" "$B/tests/bin/wl_threads" 2 0.3 >p.out 2>p.err ||
	fail "wl_threads failed as nobody: $(cat p.err)"
[ -s p.err ] && fail "unexpected stderr as nobody: $(cat p.err)"
f=$(ls out/p/*.sonde)
valid_stream "$f"
head -n 1 "$T/dump.json" | grep -q '"mechanism":"perf_event:task-clock"' ||
	fail "as nobody the task clock was not used: $(head -n 1 "$T/dump.json")"
"$SONDE" report --view threads --format csv out/p >threads.csv
"$SONDE" report --group-by thread --metric time --format csv out/p >weights.csv
while read -r _ name _ tid _ cpu _ user; do
	# its sampled time at 1 ms a period: the periods its samples stand for
	samples=$(awk -F, -v tid="$tid" '$1 == tid {printf "%d", $2}' weights.csv)
	cpu_ms=$((cpu / 1000000)) user_ms=$((user / 1000000))
	expect_samples "nobody: $name" "${samples:-0}" "$user_ms" "$cpu_ms" 0.10
	pass "nobody: $name ${samples} samples for $user_ms ms user / $cpu_ms ms CPU"
done < <(grep '^thread ' p.out)
