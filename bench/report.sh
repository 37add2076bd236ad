#!/bin/bash
# report.sh - how fast `sonde report` aggregates, and what it needs, beside peers.
#
# usage: bench/report.sh BUILD_DIR
# env:   SAMPLES=50000000  samples in the big stream
#        OUT=DIR           keep the streams there (default: a new mktemp -d; removed)
#        PEERS=1           also time perf report and google-pprof on profiles of the
#                          same workload (skipped with a note when missing)
#
# A real stream of wl_split (cpu-time@100us) is replayed (bench/replay) into one
# stream of SAMPLES samples and into two streams of SAMPLES/2. Printed: wall and CPU
# time of `sonde report` (flat view), samples per second, per core, peak RSS, and the
# speed-up of --jobs 2 over --jobs 1 on the two streams. A benchmark: it prints
# figures, it never fails on time.
set -u
BUILD=$(cd "${1:?usage: bench/report.sh BUILD_DIR}" && pwd)
N=${SAMPLES:-50000000}
PEERS=${PEERS:-1}
KEEP=${OUT:+1}
OUT=${OUT:-$(mktemp -d /tmp/sonde-report.XXXXXX)}
mkdir -p "$OUT"
[ -n "$KEEP" ] || trap 'rm -rf "$OUT"' EXIT
for f in libsonde.so sonde tests/bin/wl_split bench/bin/replay bench/bin/runcpu; do
	[ -x "$BUILD/$f" ] || [ -f "$BUILD/$f" ] || { echo "report.sh: $BUILD/$f missing" >&2; exit 2; }
done

echo "# recording wl_split at 10 kHz" >&2
rm -rf "$OUT/real"
LD_PRELOAD="$BUILD/libsonde.so" SONDE_SAMPLE=cpu-time@100us SONDE_OUTPUT="$OUT/real" "$BUILD/tests/bin/wl_split" 0.5 >/dev/null
real=$(ls "$OUT"/real/*.sonde | head -n 1)
echo "# replaying to $N samples" >&2
mkdir -p "$OUT/one" "$OUT/two"
"$BUILD/bench/bin/replay" "$real" "$OUT/one/big.sonde" "$N" >&2
"$BUILD/bench/bin/replay" "$real" "$OUT/two/a.sonde" $((N / 2)) >&2
"$BUILD/bench/bin/replay" "$real" "$OUT/two/b.sonde" $((N / 2)) >&2

# run LABEL ARGS...: time `sonde report ARGS` (3 runs, the fastest), print a row
row() {
	local label=$1; shift
	rm -f "$OUT/t"
	for _ in 1 2 3; do "$BUILD/bench/bin/runcpu" "$OUT/t" "$BUILD/sonde" report "$@" >"$OUT/r.out" 2>&1; done
	sort -k2 -g "$OUT/t" | head -n 1 | awk -v l="$label" -v n="$N" '{
		printf "%-28s %8.2f %8.2f %10.2f %12.2f %10.0f\n", l, $2, $1, n / $2 / 1e6, n / $1 / 1e6, $4 / 1024 }'
}
echo
echo "# sonde report on $N samples ($(du -m "$OUT/one/big.sonde" | cut -f1) MB), $(nproc) CPUs; fastest of 3"
printf '%-28s %8s %8s %10s %12s %10s\n' setup wall_s cpu_s Msamp/s Msamp/s/core peak_MB
row "one stream, --jobs 1" --jobs 1 "$OUT/one"
row "two streams, --jobs 1" --jobs 1 "$OUT/two"
row "two streams, --jobs 2" --jobs 2 "$OUT/two"
row "one stream, csv, --jobs 1" --jobs 1 --format csv "$OUT/one"
distinct=$("$BUILD/sonde" dump "$real" | grep -c '"kind":"FRAME"')
echo "# distinct call-path nodes: $distinct (memory follows them, not the samples)"
echo "# target: >= 10 M samples/s per core; --jobs 2 near 2x on two streams"

[ "$PEERS" = 1 ] || exit 0
echo
echo "# peers on profiles of the same workload (wl_split 0.5), seconds per 1 M samples"
if command -v perf >/dev/null && perf record -q -e cpu-clock -F 10000 -g -o "$OUT/perf.data" "$BUILD/tests/bin/wl_split" 0.5 >/dev/null 2>&1; then
	n=$(perf script -i "$OUT/perf.data" -F tid 2>/dev/null | wc -l)
	rm -f "$OUT/t"
	"$BUILD/bench/bin/runcpu" "$OUT/t" perf report -i "$OUT/perf.data" --stdio >/dev/null 2>&1
	awk -v n="$n" '{printf "perf report        %8d samples  %8.2f s  %8.2f s per 1M samples\n", n, $2, $2 * 1e6 / n}' "$OUT/t"
else
	echo "perf report        skipped (perf record does not work here)"
fi
GPERF=${GPERF_LIB:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
if [ -e "$GPERF" ] && command -v google-pprof >/dev/null; then
	LD_PRELOAD="$GPERF" CPUPROFILE="$OUT/g.prof" CPUPROFILE_FREQUENCY=10000 "$BUILD/tests/bin/wl_split" 0.5 >/dev/null 2>&1
	rm -f "$OUT/t"
	"$BUILD/bench/bin/runcpu" "$OUT/t" google-pprof --text "$BUILD/tests/bin/wl_split" "$OUT/g.prof" >"$OUT/g.txt" 2>/dev/null
	n=$(awk '/^Total:/ {print $2}' "$OUT/g.txt")
	awk -v n="${n:-0}" '{printf "google-pprof       %8d samples  %8.2f s  (aggregated at record time: cost follows distinct stacks)\n", n, $2}' "$OUT/t"
else
	echo "google-pprof       skipped (gperftools not installed)"
fi
