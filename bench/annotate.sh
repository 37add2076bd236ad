#!/bin/bash
# annotate.sh - what an annotation begin+end pair costs, in three setups.
#
# usage: bench/annotate.sh BUILD_DIR
#   BUILD_DIR holds libsonde.so and bench/bin/bench_annotate (cmake --build BUILD_DIR).
# env: PAIRS=10000000        pairs per timed loop (not loaded, sampling on,
#                            regions aggregated)
#      PAIRS_REGIONS=1000000 pairs per timed loop with SONDE_REGIONS=trace, where
#                            every begin and end is a REGION record on disk, and
#                            with counters read at every event
#      REPS=7                timed loops per kind; the median is printed
#      OUT=DIR               keep the profiles there (default: a new mktemp -d,
#                            removed at the end)
#
# Setups (one bench_annotate process each):
#   off      not loaded: a plain run; every call is a load and a branch
#   sampling LD_PRELOAD=libsonde.so (sampling on, default period; regions off)
#   regions  the same with SONDE_REGIONS=on (exact region timing aggregated in
#            each thread: the stream grows with distinct regions, not calls)
#   counters SONDE_REGIONS=on SONDE_REGION_COUNTERS=on (the thread's counters
#            read at every begin and end)
#   trace    SONDE_REGIONS=trace (every begin and end a REGION record, with the
#            counter totals: the mode of issue 3, for timelines)
# Kinds: handle (sonde_attr_begin_int + sonde_attr_end), name (sonde_begin +
# sonde_end), region (sonde_region_begin + sonde_region_end), and the empty
# loop they all include. Figures are ns per pair from CLOCK_MONOTONIC, median
# (min-max) over REPS loops; see bench/annotate.c.
#
# Targets, for a pair by handle: <= 5 ns off, <= 20 ns sampling (issue 3),
# <= 60 ns regions (issue 11: aggregated, no counters); counters and trace are
# printed, not targets. For reference, Caliper on this machine
# (../shared/research/caliper.md): cali_begin_region+cali_end_region ~100 ns
# per pair with no config active, 340-440 ns with a profile active.
#
# Not a ctest test: it prints figures and never fails on time. It exits
# non-zero only when it cannot run (missing build products).
set -u

die() { echo "annotate.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || { sed -n '3,11p' "$0" >&2; exit 2; }
[ -d "$1" ] || die "$1: not a directory (give the CMake build directory)"
BUILD=$(cd "$1" && pwd)
PAIRS=${PAIRS:-10000000}
PAIRS_REGIONS=${PAIRS_REGIONS:-1000000}
REPS=${REPS:-7}
BENCH=$BUILD/bench/bin/bench_annotate
LIB=$BUILD/libsonde.so
[ -x "$BENCH" ] || die "$BENCH missing (cmake --build $BUILD --target bench_annotate)"
[ -f "$LIB" ] || die "$LIB missing (cmake --build $BUILD --target sonde)"
KEEP=${OUT:+1}
OUT=${OUT:-$(mktemp -d /tmp/sonde-annotate.XXXXXX)}
mkdir -p "$OUT" || die "$OUT: cannot create"
[ -n "$KEEP" ] || trap 'rm -rf "$OUT"' EXIT

# run SETUP PAIRS [ENV...]: runs the benchmark, output in $OUT/SETUP.txt
run() {
	local setup=$1 pairs=$2
	shift 2
	rm -rf "${OUT:?}/$setup"
	env "$@" "$BENCH" "$pairs" "$REPS" >"$OUT/$setup.txt" 2>"$OUT/$setup.err" ||
		die "$setup: bench_annotate failed: $(head -c 500 "$OUT/$setup.err")"
}

echo "sonde annotation cost: ns per begin+end pair, median (min-max) of $REPS loops"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
run off "$PAIRS"
run sampling "$PAIRS" LD_PRELOAD="$LIB" SONDE_OUTPUT="$OUT/sampling"
run regions "$PAIRS" LD_PRELOAD="$LIB" SONDE_OUTPUT="$OUT/regions" SONDE_REGIONS=on
run counters "$PAIRS_REGIONS" LD_PRELOAD="$LIB" SONDE_OUTPUT="$OUT/counters" SONDE_REGIONS=on \
	SONDE_REGION_COUNTERS=on
run trace "$PAIRS_REGIONS" LD_PRELOAD="$LIB" SONDE_OUTPUT="$OUT/trace" SONDE_REGIONS=trace

# cell SETUP KIND: "median (min-max)"
cell() {
	awk -v k="$2" '$1 == k { printf "%.1f (%.1f-%.1f)", $2, $3, $4 }' "$OUT/$1.txt"
}
echo
printf '%-10s %-22s %-22s %-22s %-20s %s\n' setup handle name region "empty loop" "target (handle)"
for s in off sampling regions counters trace; do
	case $s in
	off) target="<= 5 ns" ;;
	sampling) target="<= 20 ns" ;;
	regions) target="<= 60 ns" ;;
	*) target="-" ;;
	esac
	printf '%-10s %-22s %-22s %-22s %-20s %s\n' "$s" "$(cell $s handle)" "$(cell $s name)" \
		"$(cell $s region)" "$(cell $s empty)" "$target"
done
echo
for s in off sampling regions counters trace; do
	echo "$s: $(head -n 1 "$OUT/$s.txt" | sed 's/^bench_annotate: //')"
	if [ -d "$OUT/$s" ]; then
		echo "    profile $(du -sh "$OUT/$s" | cut -f1)B; runtime said: $(grep -c '^sonde:' "$OUT/$s.err") line(s)$(grep -m1 '^sonde:' "$OUT/$s.err" | sed 's/^/, first: /')"
	fi
done
echo
echo "Caliper on this machine, for reference (../shared/research/caliper.md):"
echo "  cali_begin_region+cali_end_region ~100 ns/pair with no config active,"
echo "  340-440 ns/pair with a profile active (runtime-report); its empty loop: 5 ns."
[ -n "$KEEP" ] && echo "raw output and profiles kept in $OUT"
exit 0
