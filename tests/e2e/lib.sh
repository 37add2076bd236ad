# lib.sh - helpers for the end-to-end tests. Each test script is run by ctest
# as `bash SCRIPT BUILD_DIR`, works in its own temporary directory and exits
# 0 (pass), 1 (fail, with the reason on stderr) or 77 (skip, with the reason).
set -u
B=$(cd "$1" && pwd)
SONDE="$B/sonde"
LIB="$B/libsonde.so"
T=$(mktemp -d "${TMPDIR:-/tmp}/sonde-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "ok: $*"; }

# watched SECS CMD...: runs CMD (stdin, stdout and stderr as given) for at
# most SECS seconds; returns its status, or 137 when it was killed because it
# still ran, after writing what each task of its process tree was doing to
# hang.txt (state, wait channel and system call of every thread; gdb's
# backtraces where gdb is installed): a rare hang leaves its evidence.
watched() {
	local secs=$1; shift
	"$@" &
	local pid=$! waited=0
	while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((secs * 10)) ]; do
		sleep 0.1
		waited=$((waited + 1))
		# a finished child is reaped by wait below; kill -0 on a zombie succeeds
		[ "$(cut -d' ' -f3 /proc/$pid/stat 2>/dev/null)" = Z ] && break
	done
	if [ "$waited" -ge $((secs * 10)) ] && kill -0 "$pid" 2>/dev/null; then
		{
			local p
			for p in $pid $(pgrep -P "$pid"); do
				echo "== process $p: $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)"
				for t in /proc/$p/task/*; do
					echo "task ${t##*/} $(cut -d' ' -f3 $t/stat 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"
				done
				command -v gdb >/dev/null &&
					timeout 60 gdb -p "$p" -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#)'
			done
		} >hang.txt 2>&1
		kill -KILL "$pid" $(pgrep -P "$pid") 2>/dev/null
		wait "$pid" 2>/dev/null
		return 137
	fi
	wait "$pid"
}

# profile DIR CMD...: runs CMD preloaded into DIR; stdout -> DIR.out,
# stderr -> DIR.err; returns CMD's status.
profile() {
	local dir=$1; shift
	LD_PRELOAD="$LIB" SONDE_OUTPUT="$dir" "$@" >"$dir.out" 2>"$dir.err"
}

# valid_stream FILE: sonde dump reads it without error or warning, and it
# ends with an END record.
valid_stream() {
	local f=$1
	"$SONDE" dump "$f" >"$T/dump.json" 2>"$T/dump.err" || fail "$f: dump failed: $(cat "$T/dump.err")"
	[ -s "$T/dump.err" ] && fail "$f: dump warned: $(cat "$T/dump.err")"
	tail -n 1 "$T/dump.json" | grep -q '"kind":"END"' || fail "$f: no END record"
	return 0
}

# field JSONLINE NAME: the integer or string value of "NAME" in a JSON line.
field() {
	echo "$1" | grep -o "\"$2\":\"\\?[^,}\"]*" | head -n 1 | sed 's/.*:"\{0,1\}//'
}

# folded_share DIR LEAF: percent of samples whose innermost frame is LEAF.
folded_share() {
	"$SONDE" report --format folded "$1" | awk -v leaf="$2" '
		{ n = $NF; total += n; split($1, f, ";"); if (f[length(f)] == leaf) hit += n }
		END { if (total == 0) print "0"; else printf "%.2f\n", 100 * hit / total }'
}

# within A B TOL: |A - B| <= TOL (floats)
# region_times_ok OUT UNIT SMOOTH SOLVE: sonde's inclusive times of
# region=smooth and phase=solve (in ns for UNIT 1, ms for UNIT 1e6) against
# what tests/fixtures/programs/phases.c measured in OUT, summed over its threads: each
# must lie between the time inside the begin and end calls and the time
# around them (a thread preempted inside a begin or end under load widens only
# the outer), with 0.5 % for the clocks' rates and 0.2 ms for rounding.
region_times_ok() {
	awk -v u="$2" -v a="$3" -v c="$4" '$1 == "wall" { so += $4; mo += $6; si += $8; mi += $10 }
		END { s = 0.2e6 / u; so /= u; mo /= u; si /= u; mi /= u
			ok = mo > 0 && a >= mi * 0.995 - s && a <= mo * 1.005 + s &&
				c >= si * 0.995 - s && c <= so * 1.005 + s && a < c
			if (!ok) printf "smooth %s, solve %s; the program measured smooth %.3f..%.3f and solve %.3f..%.3f (inside..around the calls)\n", a, c, mi, mo, si, so
			exit !ok }' "$1"
}
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# share_tol N PCT: tolerance in points for a share PCT % measured from N samples:
# four standard deviations of a binomial share (sampling noise; 8.8 points at
# 50 % of 520 samples), never under 3 points. Four, not three: a run checks up to
# 16 shares, and periodic sampling of a periodic loop can alias beyond binomial
# noise (leaf_a at 42.9 % of 483 samples for 49.8 % of the CPU was seen once).
share_tol() {
	awk -v n="$1" -v p="$2" 'BEGIN { p /= 100; if (n < 1) n = 1; t = 400 * sqrt(p * (1 - p) / n);
		printf "%.2f", (t > 3 ? t : 3) }'
}

# cpu_of FILE NAME: "USER_MS CPU_MS", summed over the lines
# "cpu NAME cpu_ns N [user_ns N]" that a test program printed about the CPU
# time it really used (tests/fixtures/workloads/wl_cpu.h). A line without user_ns was
# measured around user-mode code only: its CPU time counts as user time.
cpu_of() {
	awk -v n="$2" '$1 == "cpu" && $2 == n {
		c += $4; u += ($5 == "user_ns") ? $6 : $4; k++ }
		END { if (!k) exit 1; printf "%.1f %.1f\n", u / 1e6, c / 1e6 }' "$1" ||
		fail "$1 has no 'cpu $2' line: $(head -c 500 "$1")"
}

# expect_samples LABEL N USER_MS CPU_MS TOL [PERIOD_MS]: N samples of a CPU-time
# source (one per PERIOD_MS, default 1, of user-mode time: the task clock has
# exclude_kernel) stand for the CPU the program measured: at least USER_MS and
# at most CPU_MS (the kernel splits user from system time by ticks), each
# widened by the relative tolerance TOL and one period at either end.
expect_samples() {
	local label=$1 n=$2 u=$3 c=$4 tol=$5 p=${6:-1}
	awk -v n="$n" -v u="$u" -v c="$c" -v t="$tol" -v p="$p" \
		'BEGIN { exit !(n >= (u / p) * (1 - t) - 1 && n <= (c / p) * (1 + t) + 1) }' ||
		fail "$label: $n samples for $u ms user / $c ms CPU at ${p} ms a sample (tolerance $tol)"
}

# leaf_share OUT LEAF: percent of the leaves' CPU time that LEAF took, from the
# "cpu leaf_X cpu_ns N" lines wl_split prints (what the machine really gave:
# the intended 50/30/15/5 drifts on a loaded machine).
leaf_share() {
	awk -v l="$2" '$1 == "cpu" && $2 ~ /^leaf_/ { t += $4; if ($2 == l) s += $4 }
		END { if (!t) exit 1; printf "%.2f\n", 100 * s / t }' "$1" ||
		fail "$1 has no 'cpu leaf_' lines: $(head -c 500 "$1")"
}
