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
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
