#!/bin/bash
# check.sh - runs an annotated test program (tests/api) and checks the
# optional-linking promise of include/sonde.h: the program needs no library
# and gives the same output with and without sonde.
#
# usage: check.sh MODE BUILD_DIR EXPECTED PROGRAM [ARGS...]
#   plain    PROGRAM ARGS, not preloaded, exits 0 and prints exactly EXPECTED
#   preload  the same binary run plainly and with LD_PRELOAD=BUILD_DIR/libsonde.so
#            SONDE_OUTPUT=<tmp>: identical stdout and exit status, and the
#            preloaded run wrote a .sonde stream (its contents are checked by
#            the end-to-end tests, not here)
#   linkage  PROGRAM does not need libsonde.so (no DT_NEEDED), refers to the
#            runtime's sonde_rt_* entry points only weakly, and is a PIE (so
#            those references bind at load time to a preloaded runtime)
# Exit 0 pass, 1 fail (reason on stderr), 77 skip (reason printed).
set -u
[ $# -ge 4 ] || { sed -n '6,15p' "$0" >&2; exit 2; }
MODE=$1 B=$(cd "$2" && pwd) EXPECTED=$3
shift 3
PROG=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/sonde-api.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $(basename "$PROG"): $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

"$@" >"$T/plain.out" 2>"$T/plain.err"
plain_rc=$?

case $MODE in
plain)
	[ $plain_rc -eq 0 ] || fail "exited $plain_rc: $(head -c 2000 "$T/plain.err")"
	diff -u "$EXPECTED" "$T/plain.out" >&2 || fail "output differs from $EXPECTED"
	echo "ok: plain run, expected output, exit 0"
	;;
preload)
	[ -f "$B/libsonde.so" ] || skip "$B/libsonde.so not built"
	# Under AddressSanitizer the preloaded runtime comes before libasan.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	LD_PRELOAD="$B/libsonde.so" SONDE_OUTPUT="$T/p" "$@" >"$T/pre.out" 2>"$T/pre.err"
	pre_rc=$?
	[ $pre_rc -eq $plain_rc ] ||
		fail "exit status $pre_rc preloaded, $plain_rc plain; stderr: $(head -c 2000 "$T/pre.err")"
	diff -u "$T/plain.out" "$T/pre.out" >&2 || fail "stdout differs when preloaded"
	ls "$T"/p/*.sonde >/dev/null 2>&1 ||
		fail "no .sonde stream in SONDE_OUTPUT; stderr: $(head -c 2000 "$T/pre.err")"
	for f in "$T"/p/*.sonde; do
		[ -s "$f" ] || fail "$(basename "$f") is empty"
	done
	echo "ok: same stdout and exit status ($pre_rc) with and without sonde; $(ls "$T"/p/*.sonde | wc -l) stream(s)"
	;;
linkage)
	command -v readelf >/dev/null || skip "no readelf"
	readelf -d "$PROG" >"$T/dyn" 2>&1 || fail "readelf -d failed"
	grep -q 'NEEDED.*libsonde' "$T/dyn" && fail "links libsonde.so (DT_NEEDED): annotations must not need it"
	readelf -h "$PROG" | grep -q 'Type:.*DYN' ||
		fail "not a PIE: weak references would not bind to a preloaded runtime"
	readelf -W --dyn-syms "$PROG" | awk '$8 ~ /^sonde_rt_/' >"$T/syms"
	[ -s "$T/syms" ] || fail "no sonde_rt_* references at all (annotations compiled out?)"
	awk '$5 != "WEAK" || $7 != "UND" { bad = 1; print }
	     END { exit bad }' "$T/syms" >&2 || fail "sonde_rt_* references above are not weak undefined"
	echo "ok: no DT_NEEDED on libsonde, PIE, $(wc -l <"$T/syms") weak sonde_rt_* references"
	;;
*)
	echo "check.sh: unknown mode $MODE" >&2
	exit 2
	;;
esac
exit 0
