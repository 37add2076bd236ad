#!/bin/bash
# Shell tests of the `sonde` CLI over streams written by mkstream (known contents; see the
# scenario comments in mkstream.c for the counts asserted here).
# usage: test_cli.sh CASE SONDE MKSTREAM PRELOAD_STUB [FUZZ_STREAM MODE]
# CASE is a file cases/CASE.sh, sourced here with these helpers (CMake registers every
# cases/*.sh as the test analyze.cli.CASE: a new case is a new file).
set -u
CASE=$1 SONDE=$2 MK=$3 STUB=$4
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
# the real consumers' checks (npm.sh: the speedscope app and playwright-core for chromium)
CONSUMERS=$(cd "$(dirname "$0")/../consumers" && pwd)
# in sanitizer builds, undefined behaviour fails the test instead of printing and going on
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
# run CMD...: stdout -> $T/out, stderr -> $T/err, status -> $rc
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect_rc() { [ "$rc" -eq "$1" ] || { cat "$T/err" >&2; fail "exit status $rc, expected $1 ($2)"; }; }
# expect_file FILE (expected text on stdin): exact comparison
expect_file() { diff -u - "$1" >&2 || fail "unexpected content of $(basename "$1")"; }
expect_err_line() { grep -qxF -- "$1" "$T/err" || { cat "$T/err" >&2; fail "missing stderr line: $1"; }; }
expect_err_empty() { [ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "unexpected stderr"; }; }

mk() { "$MK" "$@" >/dev/null || fail "mkstream $*"; }

FLAT_TABLE='      self   self%      total  total%  function
        60  60.00%         60  60.00%  mk_beta
        20  20.00%         70  70.00%  mk_alpha
        20  20.00%         20  20.00%  mk_gamma
         0   0.00%        100 100.00%  mk_main
         0   0.00%         10  10.00%  mk_recurse'
# what the flat stream dropped (4 of 100 + 4 samples asked for), stated before the rows
DROPS='sonde: warning: 4 of 104 samples dropped (3.85%: ring_full 3, busy 1; ring_full: raise SONDE_BUFFER_KB)'
W_DROPS='"warnings":["sonde: warning: 4 of 104 samples dropped (3.85%: ring_full 3, busy 1; ring_full: raise SONDE_BUFFER_KB)"],"throttled":[],"coverage":{"computed":false,"why":"the streams do not record their threads'"'"' CPU time (written by an older sonde)"}'
# streams that count sources of one name at different periods (views that count samples
# say so after the drops)
MIXED='sonde: warning: samples of sources with different periods are counted alike (cpu-time@1ms, cpu-time@10ms) (use --metric time to weigh each by its period, or --source NAME)'
# the flat stream holds a cpu-time@1ms and a wall-time@10ms source: the views that add
# samples show cpu-time and say so after the drops
PICKED='sonde: note: showing source cpu-time only: the streams hold several sources (cpu-time, wall-time), whose clocks are never added (show another with --source wall-time)'
W_NOTES='"warnings":["sonde: warning: 4 of 104 samples dropped (3.85%: ring_full 3, busy 1; ring_full: raise SONDE_BUFFER_KB)","'"$PICKED"'"],"throttled":[],"source_shown":"cpu-time","coverage":{"computed":false,"why":"the streams do not record their threads'"'"' CPU time (written by an older sonde)"}'

CASEFILE=$(dirname "$0")/cases/$CASE.sh
[ -f "$CASEFILE" ] || fail "unknown case"
. "$CASEFILE"
echo "PASS [$CASE]"
