/* annotate.c (bench_annotate) - the cost of one annotation begin+end pair.
 *
 * Run by bench/annotate.sh in three setups (sonde not loaded; preloaded with
 * sampling on; preloaded with SONDE_REGIONS=on); runnable by hand too. It is
 * a benchmark: it prints figures and never fails on time.
 *
 * For each kind of pair it times PAIRS pairs in one loop with CLOCK_MONOTONIC,
 * REPS times, and prints the median, min and max in ns per pair:
 *   empty    the loop alone (an empty asm statement per pair): the floor
 *   handle   sonde_attr_begin_int(h, v); sonde_attr_end(h);    (the hot-loop form)
 *   name     sonde_begin("bench.name", "v"); sonde_end("bench.name");
 *   region   sonde_region_begin("bench"); sonde_region_end("bench");
 * Values cycle through 256 integers (v = i & 255), as a loop's iterations
 * would after a while: the steady state with the value already in the
 * context tree, not the capped path of a new value per pair. Each pair is
 * separated by an empty asm statement with a memory clobber, so that the
 * compiler keeps one begin+end per iteration and cannot hoist the "is sonde
 * loaded" test out of the loop; what is measured is what an annotated loop
 * in a program pays.
 *
 * usage: bench_annotate [PAIRS [REPS]]     default 10000000 and 7
 * Output: one line of setup, then "KIND median_ns min_ns max_ns" per kind.
 * Exit 0, or 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "include/sonde.h"

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static NOINLINE void loop_empty(long n)
{
	for (long i = 0; i < n; i++)
		BARRIER();
}

static NOINLINE void loop_handle(sonde_attr_t h, long n)
{
	for (long i = 0; i < n; i++) {
		sonde_attr_begin_int(h, (int64_t)(i & 255));
		sonde_attr_end(h);
		BARRIER();
	}
}

static NOINLINE void loop_name(long n)
{
	for (long i = 0; i < n; i++) {
		sonde_begin("bench.name", "v");
		sonde_end("bench.name");
		BARRIER();
	}
}

static NOINLINE void loop_region(long n)
{
	for (long i = 0; i < n; i++) {
		sonde_region_begin("bench");
		sonde_region_end("bench");
		BARRIER();
	}
}

enum kind { EMPTY, HANDLE, NAME, REGION, NKINDS };
static const char *const kind_names[NKINDS] = {"empty", "handle", "name", "region"};

static void run(enum kind k, sonde_attr_t h, long n)
{
	switch (k) {
	case EMPTY: loop_empty(n); break;
	case HANDLE: loop_handle(h, n); break;
	case NAME: loop_name(n); break;
	case REGION: loop_region(n); break;
	case NKINDS: break;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static long parse_long(const char *s, long def)
{
	if (!s)
		return def;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	return (end == s || *end || v < 1) ? -1 : v;
}

int main(int argc, char **argv)
{
	long pairs = parse_long(argc > 1 ? argv[1] : NULL, 10000000);
	long reps = parse_long(argc > 2 ? argv[2] : NULL, 7);
	if (argc > 3 || pairs < 1 || reps < 1 || reps > 101) {
		fprintf(stderr, "usage: bench_annotate [PAIRS [REPS]]   (REPS <= 101)\n");
		return 2;
	}
	/* Setup: is the runtime there, does it implement the annotation calls? */
	const char *rt = !sonde_rt_active ? "not loaded"
			 : !sonde_rt_attr_create ? "loaded, no annotation entry points"
			 : sonde_active() ? "loaded, active" : "loaded, inactive";
	sonde_attr_t h = sonde_attr_create("bench.handle", SONDE_INT, SONDE_THREAD);
	printf("bench_annotate: %ld pairs x %ld repetitions; runtime %s; handle %s\n", pairs,
	       reps, rt, h ? "valid" : "null");

	double t[101];
	for (int k = 0; k < NKINDS; k++) {
		run((enum kind)k, h, pairs / 10 + 1); /* warm-up: caches, first nodes */
		for (long r = 0; r < reps; r++) {
			double t0 = now_ns();
			run((enum kind)k, h, pairs);
			t[r] = (now_ns() - t0) / (double)pairs;
		}
		qsort(t, (size_t)reps, sizeof t[0], cmp_double);
		printf("%-7s %8.2f %8.2f %8.2f\n", kind_names[k], t[reps / 2], t[0], t[reps - 1]);
	}
	return 0;
}
