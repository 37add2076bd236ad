#!/bin/bash
# startup.sh - what sonde costs per process and per thread, beside perf record.
#
# usage: bench/startup.sh BUILD_DIR
#   BUILD_DIR holds libsonde.so, sonde, bench/bin/runcpu and bench_threads (a full build).
# env: N=100       processes per loop (/bin/true); N/5 for the Python one-liner
#      RUNS=5      timed runs per cell (the median is printed), after one warm-up
#      THREADS=5000 threads for the thread churn
#      OUT=DIR     keep everything there (default: a new mktemp -d)
#      PARTS="procs threads"  which halves to run
#
# Every cell runs the same job plain, under the floor (libbench_floor.so,
# bench/floor_preload.c, preloaded into every process: the least an in-process
# signal sampler does, one perf_event task clock at 1 ms to an empty handler),
# under `sonde run` (the runtime preloaded into the shell and everything it
# starts) and under `perf record -g` (which follows children), each through
# bench/runcpu: CPU = user + sys of the whole
# process tree (perf's own work included), wall = elapsed. It prints, per job:
#   cpu_s / wall_s   medians over RUNS
#   +cpu/proc        (CPU - plain CPU) / processes started, in ms
#   +wall/proc       (wall - plain wall) / processes started, in ms
#   wall_x           wall / plain wall
#   streams          files sonde wrote (one run), against the processes started
# Jobs: N/5 x /bin/true started one by one by an unprofiled bash (solo: the cost of
# one process that asks for nothing, start to exit); N x /bin/true from a
# profiled bash loop (true); N/5 x `python3 -c ...` from a bash loop;
# `make -j2` of a generated project of 19 C files (gcc -O2 -c, then a link).
# Threads: bench_threads churn (create and join THREADS empty threads, its own
# CPU per thread), plain, sonde, sonde with SONDE_COUNTERS=none and perf, in
# interleaved rounds (+us/thread: the median of each round's difference to that
# round's plain run); and
# the kernel's floors measured in the same run (bench_threads floor: opening,
# enabling and closing one perf_event task clock in a fresh thread, the least a
# per-thread CPU-time sampler must do; and the creator floor: what the
# creating thread's own 1 ms task clock adds per create and join, on a VM
# where its timer is reprogrammed at each switch); x_floor = the added cost /
# floor; +us-creator = the added cost less the creator floor.
set -u
B=$(cd "${1:?usage: bench/startup.sh BUILD_DIR}" && pwd)
for f in libsonde.so sonde bench/bin/runcpu bench/bin/bench_threads bench/bin/libbench_floor.so; do
	[ -e "$B/$f" ] || { echo "startup.sh: $B/$f missing (build everything first)" >&2; exit 2; }
done
N=${N:-100} RUNS=${RUNS:-5} THREADS=${THREADS:-5000} PARTS=${PARTS:-procs threads}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sonde-startup.XXXXXX")}
mkdir -p "$OUT" && cd "$OUT" || exit 2
HAVE_PERF=1
perf record -q -o perf.probe -- /bin/true >/dev/null 2>&1 || HAVE_PERF=0
[ $HAVE_PERF = 1 ] || echo "note: perf record is not usable here; its column is skipped"

# A small project: 19 C files of some real work for the compiler.
mkdir -p proj && cd proj
for i in $(seq 1 19); do
	cat >"f$i.c" <<C
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct rec$i { int k; double v[8]; char name[32]; };
static int cmp$i(const void *a, const void *b)
{ const struct rec$i *x = a, *y = b; return (x->k > y->k) - (x->k < y->k); }
double work$i(int n)
{
	struct rec$i *r = calloc((size_t)n, sizeof *r);
	double s = 0;
	for (int j = 0; j < n; j++) {
		r[j].k = (j * 7919 + $i) % n;
		for (int m = 0; m < 8; m++) r[j].v[m] = (double)(j + m) / (m + 1);
		snprintf(r[j].name, sizeof r[j].name, "r%d-%d", $i, j);
	}
	qsort(r, (size_t)n, sizeof *r, cmp$i);
	for (int j = 0; j < n; j++) s += r[j].v[j % 8] + (double)strlen(r[j].name);
	free(r);
	return s;
}
C
done
{
	echo '#include <stdio.h>'
	for i in $(seq 1 19); do echo "double work$i(int);"; done
	echo 'int main(void) { double s = 0;'
	for i in $(seq 1 19); do echo "s += work$i(1000);"; done
	echo 'printf("%f\n", s); return 0; }'
} >main.c
cat >Makefile <<'M'
OBJS = $(patsubst %.c,%.o,$(wildcard *.c))
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c
	$(CC) -O2 -g -c $< -o $@
clean:
	rm -f *.o prog
M
cd ..

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run_cell NAME PROFILER CMD...: RUNS timed runs (plus a warm-up) into NAME.PROFILER.t
run_cell() {
	local name=$1 prof=$2; shift 2
	rm -f "$name.$prof.t"
	for r in $(seq 0 "$RUNS"); do
		rm -rf "$name.$prof.out" "$name.$prof.data"
		[ "$name" = make ] && make -s -C proj clean >/dev/null
		if [ "$name" = solo ]; then # one process at a time, the launcher not profiled
			case $prof in
			plain) "$B/bench/bin/runcpu" "$name.$prof.t" bash -c "for i in \$(seq $NS); do /bin/true; done" ;;
			floor) "$B/bench/bin/runcpu" "$name.$prof.t" bash -c "for i in \$(seq $NS); do \
				LD_PRELOAD='$B/bench/bin/libbench_floor.so' /bin/true; done" ;;
			sonde) "$B/bench/bin/runcpu" "$name.$prof.t" bash -c "for i in \$(seq $NS); do \
				LD_PRELOAD='$B/libsonde.so' SONDE_OUTPUT='$OUT/$name.$prof.out' /bin/true; done" ;;
			perf) "$B/bench/bin/runcpu" "$name.$prof.t" bash -c "for i in \$(seq $NS); do \
				perf record -q -e cpu-clock -F 1000 -g -o '$OUT/$name.$prof.data' -- /bin/true; \
				done" >/dev/null 2>&1 ;;
			esac
			[ "$r" = 0 ] && rm -f "$name.$prof.t"
			continue
		fi
		case $prof in
		plain) "$B/bench/bin/runcpu" "$name.$prof.t" "$@" >/dev/null 2>&1 ;;
		floor) LD_PRELOAD="$B/bench/bin/libbench_floor.so" "$B/bench/bin/runcpu" "$name.$prof.t" "$@" >/dev/null 2>&1 ;;
		sonde) "$B/bench/bin/runcpu" "$name.$prof.t" "$B/sonde" run -o "$name.$prof.out" -- "$@" >/dev/null 2>&1 ;;
		perf) "$B/bench/bin/runcpu" "$name.$prof.t" perf record -q -e cpu-clock -F 1000 -g \
			-o "$name.$prof.data" -- "$@" >/dev/null 2>&1 ;;
		esac
		[ "$r" = 0 ] && rm -f "$name.$prof.t" # the warm-up is not counted
	done
}

cell() { # NAME PROCS CMD...
	local name=$1 procs=$2; shift 2
	local profs="plain floor sonde"
	[ $HAVE_PERF = 1 ] && profs="$profs perf"
	for p in $profs; do run_cell "$name" "$p" "$@"; done
	local pc pw
	pc=$(awk '{print $1}' "$name.plain.t" | median)
	pw=$(awk '{print $2}' "$name.plain.t" | median)
	for p in $profs; do
		local c w streams="-"
		c=$(awk '{print $1}' "$name.$p.t" | median)
		w=$(awk '{print $2}' "$name.$p.t" | median)
		[ "$p" = sonde ] && streams=$(find "$name.sonde.out" -name '*.sonde' | wc -l)
		awk -v n="$name" -v p="$p" -v c="$c" -v w="$w" -v pc="$pc" -v pw="$pw" \
			-v k="$procs" -v s="$streams" 'BEGIN {
			printf "%-8s %-6s %8.3f %8.3f %12.3f %12.3f %8.3f %9s/%d\n", n, p, c, w,
				(c - pc) / k * 1000, (w - pw) / k * 1000, w / pw, s, k }'
	done
}

case " $PARTS " in *" procs "*)
printf "%-8s %-6s %8s %8s %12s %12s %8s %12s\n" job prof cpu_s wall_s "+cpu/proc_ms" \
	"+wall/proc_ms" wall_x streams
# NS = N/5 x /bin/true, each started by an unprofiled bash: the cost of one
# process (perf record takes about a second per process here, hence fewer)
NS=$(( N / 5 > 2 ? N / 5 : 2 ))
cell solo "$NS" /bin/true
# processes started: bash + N children (+ the seq); bash is profiled, so each
# fork-then-exec child pays sonde's fork handling too
cell true $((N + 2)) bash -c "for i in \$(seq $N); do /bin/true; done"
NP=$((N / 5))
PY=$(command -v /usr/bin/python3 || command -v python3)
cell python $((NP + 2)) bash -c "for i in \$(seq $NP); do $PY -c 'print(sum(range(1000)))' >/dev/null; done"
# make: make itself, one sh + cc + cc1 + as per object, the link (cc, collect2, ld)
cell make 82 make -s -j2 -C proj
echo
;; esac
case " $PARTS " in *" threads "*)
printf "%-16s %12s %12s %10s %12s\n" threads us/thread +us/thread x_floor +us-creator
"$B/bench/bin/bench_threads" floor "$THREADS" >floor.txt
floor=$(awk '$1 == "floor_clock_us" {print $2}' floor.txt)
creator=$(awk '$1 == "floor_creator_us" {print $2}' floor.txt)
# interleaved rounds; each profiler's added cost is the median over the rounds
# of (its run - that round's plain run)
: >thr.plain; : >thr.sonde; : >thr.sonde-noctr; : >thr.perf
for r in $(seq 1 "$RUNS"); do
	"$B/bench/bin/bench_threads" churn "$THREADS" | awk '{print $2}' >>thr.plain
	LD_PRELOAD="$B/libsonde.so" SONDE_OUTPUT="$OUT/thr.out" "$B/bench/bin/bench_threads" churn "$THREADS" |
		awk '{print $2}' >>thr.sonde
	LD_PRELOAD="$B/libsonde.so" SONDE_OUTPUT="$OUT/thr.out" SONDE_COUNTERS=none \
		"$B/bench/bin/bench_threads" churn "$THREADS" | awk '{print $2}' >>thr.sonde-noctr
	if [ $HAVE_PERF = 1 ]; then
		perf record -q -e cpu-clock -F 1000 -g -o thr.data -- "$B/bench/bin/bench_threads" churn "$THREADS" \
			2>/dev/null | awk '{print $2}' >>thr.perf
	fi
done
tp=$(median <thr.plain)
for p in plain sonde sonde-noctr perf; do
	[ -s "thr.$p" ] || continue
	v=$(median <"thr.$p")
	d=$(paste "thr.$p" thr.plain | awk '{print $1 - $2}' | median)
	awk -v p="$p" -v v="$v" -v d="$d" -v f="$floor" -v c="$creator" 'BEGIN {
		printf "%-16s %12.2f %12.2f %10.2f %12.2f\n", p, v, d, d / f, p == "plain" ? 0 : d - c }'
done
echo "floor (perf_event task clock open+enable+close per fresh thread): $floor us"
echo "creator floor (the creating thread's own 1 ms task clock, per create+join): $creator us"
echo "+us-creator: the added cost less the creator floor, which any sampler of the"
echo "  creating thread's CPU time pays here (perf too): the per-thread set-up and tear-down"
;; esac
echo "kept in $OUT"
