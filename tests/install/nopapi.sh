#!/bin/bash
# nopapi.sh BUILD_DIR - sonde builds without PAPI's and libpfm4's headers (issue 22 item
# 2: PAPI and libpfm4 are loaded at run time, so they are optional at build time too):
# a tree configured with -DSONDE_PAPI=OFF (as one without libpapi-dev/libpfm4-dev gets
# by itself) builds the runtime and the CLI; a PAPI sampling source is dropped with one
# line saying why and the run samples cpu-time; a PAPI counter is unavailable with the
# same reason; `sonde events` says PAPI is not built in.
set -u
B=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T" || exit 1
gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$B/CMakeCache.txt")
cmake -S "$SRC" -B nb -G "${gen:-Unix Makefiles}" -DSONDE_PAPI=OFF -DSONDE_WERROR=ON >cfg.log 2>&1 ||
	{ tail -20 cfg.log >&2; fail "configure with SONDE_PAPI=OFF"; }
cmake --build nb -j2 --target sonde sonde_cli >build.log 2>&1 ||
	{ grep -E 'error|Error' build.log | head -20 >&2; fail "build without PAPI"; }
readelf -d nb/libsonde.so | grep -iE 'NEEDED.*(papi|pfm)' && fail "libsonde.so needs PAPI"
why="this sonde was built without PAPI"
# a PAPI sampling source: dropped, said, cpu-time instead; the program runs as it would
nb/sonde run -o p -e PAPI_TOT_CYC@100000 -- sh -c 'exit 7' >run.out 2>run.err
rc=$?
[ "$rc" -eq 7 ] || fail "exit status $rc (the program's is 7): $(cat run.err)"
grep -qxF "sonde: PAPI_TOT_CYC: $why (PAPI sources dropped; rebuild with libpapi-dev and libpfm4-dev, or sample with cpu-time)" run.err ||
	fail "no line saying PAPI is not built in: $(cat run.err)"
grep -qxF "sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)" run.err ||
	fail "no fallback line: $(cat run.err)"
nb/sonde report --view sources --format csv p >sources.csv 2>/dev/null || fail "report of the run"
grep -q '^cpu-time,' sources.csv || fail "the run did not sample cpu-time: $(cat sources.csv)"
# a PAPI counter: unavailable, with the reason
SONDE_COUNTERS=PAPI_TOT_CYC LD_PRELOAD=$T/nb/libsonde.so SONDE_OUTPUT=$T/c /bin/true 2>cnt.err ||
	fail "a program with a PAPI counter failed: $(cat cnt.err)"
grep -qxF "sonde: SONDE_COUNTERS: PAPI_TOT_CYC: unavailable: $why (rebuild with libpapi-dev and libpfm4-dev) (see 'sonde events')" cnt.err ||
	fail "counter: $(cat cnt.err)"
nb/sonde events --all >events.txt 2>&1 || fail "sonde events"
grep -qE 'PAPI +unavailable \(sonde was built without libpapi' events.txt || fail "events: $(grep -i papi events.txt)"
echo "PASS: built without PAPI; a PAPI source and a PAPI counter say why"
