#!/bin/bash
# report-many.sh - how fast `sonde report` symbolizes many processes of big binaries,
# beside `perf report` on the same job.
#
# usage: bench/report-many.sh BUILD_DIR
# env:   OUT=DIR   keep the profiles there (default: a new mktemp -d; removed)
#        RUNS=3    timed runs per row (the fastest is printed)
#
# The job: seven `gcc -O2 -g -c` compilations of the analyzer's own sources, run at once
# by one shell (about 22 processes: sh, gcc drivers, cc1, as), profiled by `sonde run`
# (cpu-time@1ms) and by `perf record -e cpu-clock -F 1000 -g` (the same rate). Printed:
# wall and CPU seconds of `sonde report` with a cold symbol cache (SONDE_CACHE an empty
# directory each run), a warm one (the second report of the same binaries), with
# --addresses (no symbols at all), and of `perf report --stdio`, with the ratios to
# perf. perf keeps its own caches (~/.debug); it is timed warm, after one untimed run.
# A benchmark: it prints figures, it never fails on time.
set -u
BUILD=$(cd "${1:?usage: bench/report-many.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
KEEP=${OUT:+1}
OUT=${OUT:-$(mktemp -d /tmp/sonde-many.XXXXXX)}
mkdir -p "$OUT"
[ -n "$KEEP" ] || trap 'rm -rf "$OUT"' EXIT
for f in sonde libsonde.so bench/bin/runcpu; do
	[ -e "$BUILD/$f" ] || { echo "report-many.sh: $BUILD/$f missing" >&2; exit 2; }
done
command -v gcc >/dev/null || { echo "report-many.sh: gcc not found" >&2; exit 2; }

# the job: one shell starting seven compilations and waiting for them
job="cd '$OUT' &&"
for f in profile output views symbols coverage cmd_diff stream; do
	job="$job gcc -O2 -g -c -I'$SRC' -I'$SRC/include' '$SRC/analyze/$f.c' -o '$OUT/$f.o' &"
done
job="$job wait"

echo "# profiling the job: 7 x gcc -O2 -g -c (analyze/*.c), $(nproc) CPUs" >&2
rm -rf "$OUT/sonde"
"$BUILD/sonde" run -o "$OUT/sonde" -- sh -c "$job" 2>"$OUT/run.err" ||
	{ cat "$OUT/run.err" >&2; exit 1; }
nstreams=$(ls "$OUT"/sonde/*.sonde | wc -l)
nsamples=$(SONDE_CACHE=off "$BUILD/sonde" report --addresses "$OUT/sonde" 2>/dev/null |
	awk '/^samples:/ {print $2; exit}')

# time LABEL CMD...: the fastest of RUNS runs ("wall cpu"); PRE (a command) before each
best() {
	local label=$1; shift
	rm -f "$OUT/t"
	for _ in $(seq "$RUNS"); do
		[ -n "${PRE:-}" ] && eval "$PRE"
		"$BUILD/bench/bin/runcpu" "$OUT/t" "$@" >/dev/null 2>&1
	done
	sort -k2 -g "$OUT/t" | head -n 1 | awk -v l="$label" '{ printf "%s %.3f %.3f\n", l, $2, $1 }'
}
cache="$OUT/cache"
{
	PRE="rm -rf '$cache'" SONDE_CACHE=$cache best cold "$BUILD/sonde" report "$OUT/sonde"
	SONDE_CACHE=$cache "$BUILD/sonde" report "$OUT/sonde" >/dev/null 2>&1
	SONDE_CACHE=$cache best warm "$BUILD/sonde" report "$OUT/sonde"
	SONDE_CACHE=off best addresses "$BUILD/sonde" report --addresses "$OUT/sonde"
	SONDE_CACHE=off best nocache "$BUILD/sonde" report "$OUT/sonde"
} >"$OUT/rows"

perf_ok=0
if command -v perf >/dev/null &&
   perf record -q -e cpu-clock -F 1000 -g -o "$OUT/perf.data" -- sh -c "$job" >/dev/null 2>&1; then
	perf_ok=1
	psamples=$(perf script -i "$OUT/perf.data" -F tid 2>/dev/null | wc -l)
	perf report -i "$OUT/perf.data" --stdio >/dev/null 2>&1 # fills perf's caches
	best perf perf report -i "$OUT/perf.data" --stdio >>"$OUT/rows"
fi

echo
echo "# sonde report of the job: $nstreams streams, $nsamples samples; fastest of $RUNS"
printf '%-44s %8s %8s %10s\n' setup wall_s cpu_s vs_perf
pw=$(awk '$1 == "perf" {print $2}' "$OUT/rows")
row() { # KEY LABEL
	awk -v k="$1" -v l="$2" -v pw="${pw:-0}" '$1 == k {
		r = pw > 0 ? sprintf("%.2fx", $2 / pw) : "-"
		printf "%-44s %8.3f %8.3f %10s\n", l, $2, $3, r }' "$OUT/rows"
}
row cold "sonde report, cold symbol cache"
row warm "sonde report, warm symbol cache (2nd report)"
row nocache "sonde report, SONDE_CACHE=off"
row addresses "sonde report --addresses"
if [ "$perf_ok" = 1 ]; then
	row perf "perf report --stdio ($psamples samples, -F 1000 -g)"
else
	echo "perf report                                  skipped (perf record does not work here)"
fi
echo "# goal: cold within 2x of perf report, warm near-instant"
