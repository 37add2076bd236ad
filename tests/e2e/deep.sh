# Deep recursion: a 132-frame stack is unwound whole (every sample reaches
# main); with SONDE_MAX_DEPTH=64 stacks are cut to 64 frames and flagged.
# Sample counts follow the CPU time wl_deep says it used (within 10 %), and
# nearly all of it is in deep_leaf. Recursion of depth 1000: with
# SONDE_MAX_DEPTH=256 every stack deeper than 256 frames is flagged and shows
# under a [truncated] root in every view, counted in the report's header; with
# SONDE_MAX_DEPTH=1024 the whole stack is there (main, _start). The same for the
# stack where a thread waits ([blocked], wall-time).
. "$(dirname "$0")/lib.sh"
profile p "$B/tests/bin/wl_deep" 128 0.3 || fail "wl_deep exited $?"
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

SONDE_MAX_DEPTH=64 profile q "$B/tests/bin/wl_deep" 128 0.1 || fail "wl_deep exited $?"
f=$(ls q/*.sonde)
"$SONDE" dump "$f" >q.json
samples=$(grep -c '"kind":"SAMPLE"' q.json)
trunc=$(grep '"kind":"SAMPLE"' q.json | grep -c '"flags":1')
read -r user_ms cpu_ms < <(cpu_of q.out main)
expect_samples "wl_deep 128, SONDE_MAX_DEPTH=64" "$samples" "$user_ms" "$cpu_ms" 0.10
[ "$trunc" -ge $((samples * 95 / 100)) ] ||
	fail "SONDE_MAX_DEPTH=64: $trunc of $samples samples flagged truncated"
maxd=$("$SONDE" report --format folded q 2>/dev/null |
	awk '{ n = split($1, f, ";"); n -= f[1] == "[truncated]"; if (n > m) m = n } END {print m}')
[ "$maxd" -le 64 ] || fail "SONDE_MAX_DEPTH=64 but a stack has $maxd frames"
pass "SONDE_MAX_DEPTH=64: $trunc of $samples samples truncated, deepest $maxd frames"

# check_cut DIR LIMIT LEAF: the folded view of DIR against what wl_deep did.
# Its stacks at LEAF are DEPTH + 4 > LIMIT frames deep: every one is cut. A
# path under [truncated] holds at least LIMIT - 4 frames (the limit counts
# sonde's own frames where a blocking call's stack is taken, which paths leave
# out; inlined frames add some), and main only when the stack was just over
# the limit (the descent passes every depth); every
# other path is whole, from _start through main (or libc's own start-up and
# exit code before and after main: a sample in __new_exitfn's first calloc
# beside a CPU hog). The [truncated] paths are
# the samples flagged 1 in the stream (sonde dump), and the report's header
# says how many, with the limit and its variable. Prints the number cut.
check_cut() {
	local d=$1 lim=$2 leaf=$3
	"$SONDE" report --format folded "$d" >"$d.folded" 2>"$d.notes" || fail "$d: report failed"
	read -r cut cutleaf leaf_all bad < <(awk -v lim="$lim" -v leaf="$leaf" '
		{ n = split($1, f, ";"); c = $NF; at = $1 ~ ("(^|;)" leaf "(;|$)")
		  if (at) leaf_all += c
		  if (f[1] == "[truncated]") {
			cut += c; if (at) cutleaf += c
			if (n - 1 < lim - 4) bad += c # (a stack just over the limit keeps main)
		  } else if (f[1] != "_start" || $1 !~ /;main;/ && !startup($1)) {
			if (!($1 ~ /^\[(kernel|off-cpu|sonde)\]$/)) bad += c
		  } }
		# libc before or after main (atexit registration, exit handlers):
		# whole from _start, without main and without the workload
		function startup(p) {
			return p ~ /^_start;__libc_start_main;/ && p !~ /;(run_deep|descend|deep_[a-z_]*)(;|$)/
		}
		END { print cut + 0, cutleaf + 0, leaf_all + 0, bad + 0 }' "$d.folded")
	[ "$leaf_all" -gt 0 ] || fail "$d: no sample through $leaf"
	[ "$cutleaf" -eq "$leaf_all" ] ||
		fail "$d: $cutleaf of $leaf_all samples through $leaf (DEPTH + 4 frames) under [truncated]"
	# a sample whose unwind stopped on an error (flag 2, partial) is neither:
	# libunwind can fail at an instruction it has no rule for; those are said
	local partial
	partial=$("$SONDE" dump "$d"/*.sonde | grep '"kind":"SAMPLE"' | grep -E '"flags":(2|3|6|7|10|11|14|15|18|19|22|23|26|27|30|31)[,}]' |
		grep -o '"weight":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
	[ "$bad" -le "$partial" ] || fail "$d: $bad samples neither whole (_start..main) nor cut at $lim frames ($partial flagged partial): $(awk -v lim="$lim" '{ n = split($1, f, ";") } f[1] == "[truncated]" && n - 1 < lim - 4 || f[1] != "[truncated]" && (f[1] != "_start" || $1 !~ /;main;/ && ($1 !~ /^_start;__libc_start_main;/ || $1 ~ /;(run_deep|descend|deep_[a-z_]*)(;|$)/)) && $1 !~ /^\[(kernel|off-cpu|sonde)\]$/' "$d.folded" | cut -c1-300 | head -5)"
	local flagged flagged_w total json
	"$SONDE" dump "$d"/*.sonde >"$d.json" || fail "$d: dump failed"
	# the folded view counts periods (weights: accounted [blocked] samples stand
	# for several), the header and json count samples
	flagged=$(grep '"kind":"SAMPLE"' "$d.json" | grep -Ec '"flags":(1|3|5|7|9|17|19|21|23|25)[,}]')
	flagged_w=$(grep '"kind":"SAMPLE"' "$d.json" | grep -E '"flags":(1|3|5|7|9|17|19|21|23|25)[,}]' |
		grep -o '"weight":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
	total=$(grep -c '"kind":"SAMPLE"' "$d.json")
	[ "$cut" -eq "$flagged_w" ] ||
		fail "$d: $cut periods under [truncated], $flagged_w in the samples flagged truncated in the stream"
	json=$("$SONDE" report --format json "$d" 2>/dev/null | head -c 3000)
	[ "$(field "$json" truncated_samples)" = "$flagged" ] ||
		fail "$d: json truncated_samples $(field "$json" truncated_samples), $flagged flagged"
	grep -q "^sonde: warning: $flagged of $total samples truncated at $lim frames (.*raise SONDE_MAX_DEPTH, up to 1024)" "$d.notes" ||
		fail "$d: no header line for $flagged of $total samples truncated at $lim: $(cat "$d.notes")"
	echo "$cut"
}

# check_whole DIR LEAF: nothing cut: no flag, no [truncated], no note; every
# path through LEAF (DEPTH + 4 frames) from _start through main.
check_whole() {
	local d=$1 leaf=$2
	"$SONDE" report --format folded "$d" >"$d.folded" 2>"$d.notes" || fail "$d: report failed"
	grep -q 'truncated' "$d.folded" "$d.notes" && fail "$d: truncated: $(grep truncated "$d.notes")"
	"$SONDE" dump "$d"/*.sonde >"$d.json" || fail "$d: dump failed"
	grep '"kind":"SAMPLE"' "$d.json" | grep -Eq '"flags":(1|3|5|7|9|17|19|21|23|25)[,}]' &&
		fail "$d: samples flagged truncated"
	local json
	json=$("$SONDE" report --format json "$d" 2>/dev/null | head -c 3000)
	[ "$(field "$json" truncated_samples)" = 0 ] || fail "$d: json truncated_samples $(field "$json" truncated_samples)"
	read -r whole all < <(awk -v leaf="$leaf" '$1 ~ ("(^|;)" leaf "(;|$)") {
		n = split($1, f, ";"); all += $NF; if (f[1] == "_start" && $1 ~ /;main;/ && n >= 1004) whole += $NF }
		END { print whole + 0, all + 0 }' "$d.folded")
	[ "$all" -gt 0 ] && [ "$whole" -eq "$all" ] ||
		fail "$d: $whole of $all samples through $leaf whole (_start..main, >= 1004 frames)"
	echo "$all"
}

SONDE_MAX_DEPTH=256 profile c1 "$B/tests/bin/wl_deep" 1000 0.3 || fail "wl_deep 1000 exited $?"
n=$(check_cut c1 256 deep_leaf) || exit 1
pass "depth 1000, SONDE_MAX_DEPTH=256: $n periods under [truncated], as flagged and counted in the header; the others whole"
SONDE_MAX_DEPTH=1024 profile c2 "$B/tests/bin/wl_deep" 1000 0.3 || fail "wl_deep 1000 exited $?"
n=$(check_whole c2 deep_leaf) || exit 1
pass "depth 1000, SONDE_MAX_DEPTH=1024: all $n samples at deep_leaf from _start through main, none truncated"

# The stack where the thread waits (wall-time, [blocked] under deep_wait).
SONDE_SAMPLE=wall-time@1ms SONDE_MAX_DEPTH=256 profile w1 "$B/tests/bin/wl_deep" 1000 0.5 sleep ||
	fail "wl_deep 1000 sleep exited $?"
n=$(check_cut w1 256 deep_wait) || exit 1
grep -q 'deep_wait;[^ ]*\[blocked\] ' w1.folded || fail "w1: no [blocked] under deep_wait: $(head -c 600 w1.folded)"
pass "depth 1000 waiting, SONDE_MAX_DEPTH=256: $n periods under [truncated], [blocked] ones included"
SONDE_SAMPLE=wall-time@1ms SONDE_MAX_DEPTH=1024 profile w2 "$B/tests/bin/wl_deep" 1000 0.5 sleep ||
	fail "wl_deep 1000 sleep exited $?"
n=$(check_whole w2 deep_wait) || exit 1
grep -q '^_start;[^ ]*;main;[^ ]*deep_wait;[^ ]*\[blocked\] ' w2.folded ||
	fail "w2: no whole [blocked] stack under deep_wait: $(head -c 600 w2.folded)"
pass "depth 1000 waiting, SONDE_MAX_DEPTH=1024: all $n samples at deep_wait whole, [blocked] ones included"
