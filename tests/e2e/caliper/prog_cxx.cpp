/* prog_cxx.cpp - a C++ program annotated with Caliper's C++ macros
 * (CALI_CXX_MARK_FUNCTION, _SCOPE, _LOOP_BEGIN/_ITERATION/_END; cali_decl.h), linked
 * against a libcaliper: run by tests/e2e/caliper.sh (case cxx) with the stand-in
 * libcaliper, under `sonde run --caliper` and without it.
 *
 * usage: prog_cxx [-i N] [-u MS]
 * A loop "outer" of N iterations (default 10), each a scope "compute" (a unit of MS ms
 * of CPU, default 2) around a call of smooth(), a marked function (one more unit).
 * Prints "calls LEVEL N" for each level it opened and "wall LEVEL around_ns A
 * inside_ns I" for compute and smooth, as prog.c does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cali_decl.h"

#define NOINLINE __attribute__((noinline))

static unsigned long long mono_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static double unit_ms = 2;
static volatile double sink;
/* [0] compute, [1] smooth: around and inside, ns */
static unsigned long long around[2], inside[2], t_in[2];

NOINLINE static void work(double units)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	double end = ts.tv_sec + ts.tv_nsec * 1e-9 + units * unit_ms * 1e-3, now = 0;
	while (now < end) {
		for (int k = 0; k < 2000; k++)
			sink = sink * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec + ts.tv_nsec * 1e-9;
	}
}

/* The marked function's body, timed inside the annotation: its own frame. */
NOINLINE static void smooth_body()
{
	t_in[1] = mono_ns();
	work(1);
	inside[1] += mono_ns() - t_in[1];
}

NOINLINE void smooth()
{
	CALI_CXX_MARK_FUNCTION;
	smooth_body();
}

NOINLINE static void compute()
{
	CALI_CXX_MARK_SCOPE("compute");
	t_in[0] = mono_ns();
	work(1);
	unsigned long long t0 = mono_ns();
	smooth();
	around[1] += mono_ns() - t0;
	inside[0] += mono_ns() - t_in[0];
}

int main(int argc, char **argv)
{
	int n = 10, opt;
	while ((opt = getopt(argc, argv, "i:u:")) != -1) {
		if (opt == 'i')
			n = atoi(optarg);
		else if (opt == 'u')
			unit_ms = atof(optarg);
	}
	CALI_CXX_MARK_LOOP_BEGIN(outer, "outer");
	for (int i = 0; i < n; i++) {
		CALI_CXX_MARK_LOOP_ITERATION(outer, i);
		unsigned long long t0 = mono_ns();
		compute();
		around[0] += mono_ns() - t0;
	}
	CALI_CXX_MARK_LOOP_END(outer);
	printf("calls loop=outer 1\ncalls iteration#outer %d\n", n);
	printf("calls region=compute %d\ncalls region=smooth %d\n", n, n);
	printf("wall region=compute around_ns %llu inside_ns %llu\n", around[0], inside[0]);
	printf("wall region=smooth around_ns %llu inside_ns %llu\n", around[1], inside[1]);
	return 0;
}
