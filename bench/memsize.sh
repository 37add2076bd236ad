#!/bin/bash
# memsize.sh - what sonde adds to the size of the process it profiles:
# virtual (VmSize) and resident (VmRSS) memory, per process and per thread,
# beside perf record.
#
# usage: bench/memsize.sh BUILD_DIR
#   BUILD_DIR holds libsonde.so and bench/bin/bench_memsize (bench/memsize.c).
# env: RUNS=3            runs per cell (the median is printed)
#      THREADS="1 16 64" thread counts for the per-thread slopes
#      LIB=PATH          the libsonde.so to measure (default BUILD_DIR's; an
#                        older build's, to compare)
#      OUT=DIR           keep everything there (default: a new mktemp -d)
#
# Each cell runs bench_memsize, which reads its own /proc/self/status 0.3 s
# after its threads are up (idle: waiting at a barrier; busy: after 0.1 s of
# CPU each, so that they were sampled), plain, under sonde (LD_PRELOAD, its
# defaults: cpu-time@1ms, 512 KiB rings, libunwind) and under
# `perf record -g` (cpu-clock at 1 kHz). perf is a process of its own: the
# program's figures are its plain ones, and perf's own VmSize and VmRSS are
# read at the same moment (the program reads its parent's status): the rows
# "perf(self)".
#
#   per process   bench_memsize idle 0: a single-threaded program that does
#                 nothing; VmSize, VmRSS, and + = the difference to plain (KiB)
#   per thread    VmSize at each thread count, and the least-squares slopes
#                 of VmSize and VmRSS over the counts (KiB per thread), idle
#                 and busy threads; + = the slope less plain's: what each
#                 thread costs
#   RLIMIT_AS     64 busy threads under prlimit --as=1 GiB: what sonde added
#                 (+VmSize), against its share, RLIMIT_AS/64, and its
#                 libraries (docs/ENV.md, "What sonde takes from the
#                 program's limits", Address space); what sonde and the
#                 program said ("failed": the program's pthread_create did)
# Sizes are not timings: one run is enough for VmSize (it is the same every
# run); VmRSS varies by a few pages.
set -u
B=$(cd "${1:?usage: bench/memsize.sh BUILD_DIR}" && pwd)
LIB=${LIB:-$B/libsonde.so}
P=$B/bench/bin/bench_memsize
for f in "$LIB" "$P"; do
	[ -e "$f" ] || { echo "memsize.sh: $f missing (build everything first)" >&2; exit 2; }
done
RUNS=${RUNS:-3} THREADS=${THREADS:-1 16 64}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sonde-memsize.XXXXXX")}
mkdir -p "$OUT" && cd "$OUT" || exit 2
HAVE_PERF=1
perf record -q -o perf.probe -- /bin/true >/dev/null 2>&1 || HAVE_PERF=0
[ $HAVE_PERF = 1 ] || echo "note: perf record is not usable here; its rows are skipped"
PROFS="plain sonde"
[ $HAVE_PERF = 1 ] && PROFS="$PROFS perf"

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# one PROF MODE N [PREFIX...]: one run; its status lines on stdout, what
# sonde said appended to said.PROF.MODE.N
one() {
	local prof=$1 mode=$2 n=$3
	shift 3
	rm -rf s.out p.data
	case $prof in
	plain) "$@" "$P" "$mode" "$n" ;;
	sonde) "$@" env LD_PRELOAD="$LIB" SONDE_OUTPUT="$OUT/s.out" "$P" "$mode" "$n" \
		2>>"said.$prof.$mode.$n" ;;
	perf) "$@" env MEMSIZE_PARENT=1 perf record -q -e cpu-clock -F 1000 -g -o p.data -- \
		"$P" "$mode" "$n" 2>/dev/null ;;
	esac
}

# cell PROF MODE N [PREFIX...]: "size rss psize prss" (medians over RUNS;
# psize, prss: perf's own process, 0 for the others), kept in
# cell.PROF.MODE.N and measured once
cell() {
	local f="cell${KEY:-}.$1.$2.$3"
	if [ ! -s "$f" ]; then
		: >"$f.t"
		for r in $(seq 1 "$RUNS"); do
			one "$@" | awk '$1 == "self" { s = $3; m = $5 } $1 == "parent" { ps = $3; pm = $5 }
				END { print s, m, ps + 0, pm + 0 }' >>"$f.t"
		done
		local out="" k
		for k in 1 2 3 4; do
			out="$out $(awk -v k=$k '{ print $k }' "$f.t" | median)"
		done
		echo $out >"$f"
	fi
	cat "$f"
}

row() { printf "%-12s %10s %10s %10s %10s\n" "$@"; }

echo "per process: bench_memsize idle 0 (KiB; + = less plain)"
row prof VmSize VmRSS +VmSize +VmRSS
read -r ps pr _ _ <<<"$(cell plain idle 0)"
for prof in $PROFS; do
	read -r s r qs qr <<<"$(cell "$prof" idle 0)"
	row "$prof" "$s" "$r" $((s - ps)) $((r - pr))
	[ "$prof" = perf ] && row "perf(self)" "$qs" "$qr" - -
done
echo

# slope "X..." "Y...": least squares of Y over X
slope() {
	awk -v xs="$1" -v ys="$2" 'BEGIN { n = split(xs, x, " "); split(ys, y, " ");
		for (i = 1; i <= n; i++) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i] }
		d = n * sxx - sx * sx; printf "%.0f", d ? (n * sxy - sx * sy) / d : 0 }'
}

echo "per thread: VmSize at $THREADS threads, slopes (KiB per thread; + = less plain's slope)"
printf "%-6s %-12s" mode prof
for n in $THREADS; do printf "%11s" "VmSize@$n"; done
printf " %10s %10s %10s %10s\n" VmSize/thr VmRSS/thr +VmSize +VmRSS
for mode in idle busy; do
	rows="$PROFS"
	[ $HAVE_PERF = 1 ] && rows="$rows perf(self)"
	for prof in $rows; do
		sizes="" rsss=""
		for n in $THREADS; do
			if [ "$prof" = "perf(self)" ]; then
				read -r _ _ s r <<<"$(cell perf "$mode" "$n")"
			else
				read -r s r _ _ <<<"$(cell "$prof" "$mode" "$n")"
			fi
			sizes="$sizes $s" rsss="$rsss $r"
		done
		ss=$(slope "$THREADS" "$sizes") sr=$(slope "$THREADS" "$rsss")
		[ "$prof" = plain ] && { pss=$ss psr=$sr; }
		d1=- d2=-
		[ "$prof" = "perf(self)" ] || { d1=$((ss - pss)) d2=$((sr - psr)); }
		printf "%-6s %-12s" "$mode" "$prof"
		for s in $sizes; do printf "%11s" "$s"; done
		printf " %10s %10s %10s %10s\n" "$ss" "$sr" "$d1" "$d2"
	done
done
echo

if command -v prlimit >/dev/null; then
	G=$((1 << 30))
	echo "RLIMIT_AS 1 GiB, 64 busy threads (KiB): sonde's share is RLIMIT_AS/64 = $((G / 64 / 1024))," \
		"beside its libraries (about 500)"
	row prof VmSize VmRSS +VmSize +VmRSS
	read -r ps pr _ _ <<<"$(KEY=.as cell plain busy 64 prlimit --as=$G)"
	row plain "$ps" "$pr" 0 0
	rm -f said.sonde.busy.64
	read -r s r _ _ <<<"$(KEY=.as cell sonde busy 64 prlimit --as=$G)"
	if [ "$s" = 0 ]; then
		row sonde failed - - -
	else
		row sonde "$s" "$r" $((s - ps)) $((r - pr))
	fi
	sed 's/thread [0-9]* (\([^)]*\))/thread N (\1)/' said.sonde.busy.64 | sort -u | sed 's/^/  said: /'
	echo
fi
echo "kept in $OUT"
