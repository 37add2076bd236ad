# Deep recursion: a 132-frame stack is unwound whole (every sample reaches
# main); with SONDE_MAX_DEPTH=64 stacks are cut to 64 frames and flagged.
# Sample counts follow the CPU time wl_deep says it used (within 10 %), and
# nearly all of it is in deep_leaf.
. "$(dirname "$0")/lib.sh"
profile p "$B/wl_deep" 128 0.3 || fail "wl_deep exited $?"
"$SONDE" report --format folded p >folded.txt
# Samples in the work at the bottom (deep_leaf) must show all the way up.
total=$(awk '$1 ~ /;deep_leaf$/ {s += $NF} END {print s+0}' folded.txt)
all=$(awk '{s += $NF} END {print s+0}' folded.txt)
read -r user_ms cpu_ms < <(cpu_of p.out main)
expect_samples "wl_deep 128" "$all" "$user_ms" "$cpu_ms" 0.10
awk -v t="$total" -v a="$all" 'BEGIN { exit !(t >= 0.9 * a) }' || fail "only $total of $all samples in deep_leaf"
whole=$(awk '$1 ~ /^_start;.*;main;.*;deep_leaf$/ { n = split($1, f, ";"); if (n >= 132) s += $NF } END {print s+0}' folded.txt)
awk -v w="$whole" -v t="$total" 'BEGIN { exit !(w >= 0.99 * t) }' ||
	fail "$whole of $total deep_leaf samples have a whole stack of >= 132 frames"
pass "$whole of $total deep_leaf samples unwound through >= 132 frames to _start ($all samples for $user_ms ms user / $cpu_ms ms CPU)"

SONDE_MAX_DEPTH=64 profile q "$B/wl_deep" 128 0.1 || fail "wl_deep exited $?"
f=$(ls q/*.sonde)
"$SONDE" dump "$f" >q.json
samples=$(grep -c '"kind":"SAMPLE"' q.json)
trunc=$(grep '"kind":"SAMPLE"' q.json | grep -c '"flags":1')
read -r user_ms cpu_ms < <(cpu_of q.out main)
expect_samples "wl_deep 128, SONDE_MAX_DEPTH=64" "$samples" "$user_ms" "$cpu_ms" 0.10
[ "$trunc" -ge $((samples * 95 / 100)) ] ||
	fail "SONDE_MAX_DEPTH=64: $trunc of $samples samples flagged truncated"
maxd=$("$SONDE" report --format folded q | awk '{ n = split($1, f, ";"); if (n > m) m = n } END {print m}')
[ "$maxd" -le 64 ] || fail "SONDE_MAX_DEPTH=64 but a stack has $maxd frames"
pass "SONDE_MAX_DEPTH=64: $trunc of $samples samples truncated, deepest $maxd frames"
