/* regionends.c - regions whose end the stream may not see, for
 * tests/e2e/regionends.sh: each mode prints what the program itself measured
 * on CLOCK_MONOTONIC, the ground truth the test holds sonde's figures to.
 * Output is the same with or without sonde.
 *
 * -o STEPS -u UNIT_MS: region "run" opens, then STEPS steps (0: until killed),
 *   each a value phase=step of UNIT_MS ms of sleep followed by UNIT_MS / 4 ms of
 *   sleep outside it (run's own time). After each step it prints
 *   "step K end_ns N" (N: ns since run began, at the end of step K) and
 *   flushes stdout, so a test that kills it knows how far it got. Run is
 *   never closed when STEPS is 0.
 *
 * -t BATCHES -n TINY: BATCHES regions "batch", each holding TINY regions
 *   "tiny" that do nothing. The clock is read just before each begin and just
 *   after each end, so each printed figure bounds the region's real duration
 *   from above: "tiny calls N max_ns N", "batch calls N max_ns N sum_ns N".
 *
 * usage: regionends -o STEPS [-u UNIT_MS] | -t BATCHES [-n TINY]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "include/sonde.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void open_run(long steps, double unit_ms)
{
	uint64_t t0 = now_ns();
	sonde_region_begin("run");
	for (long k = 1; steps == 0 || k <= steps; k++) {
		sonde_begin("phase", "step");
		sleep_ms(unit_ms);
		sonde_end("phase");
		printf("step %ld end_ns %llu\n", k, (unsigned long long)(now_ns() - t0));
		fflush(stdout);
		sleep_ms(unit_ms / 4);
	}
	sonde_region_end("run");
}

static void tiny(long batches, long n)
{
	uint64_t tmax = 0, bmax = 0, bsum = 0;
	for (long b = 0; b < batches; b++) {
		uint64_t b0 = now_ns();
		sonde_region_begin("batch");
		for (long i = 0; i < n; i++) {
			uint64_t a = now_ns();
			sonde_region_begin("tiny");
			sonde_region_end("tiny");
			uint64_t d = now_ns() - a;
			if (d > tmax)
				tmax = d;
		}
		sonde_region_end("batch");
		uint64_t d = now_ns() - b0;
		bsum += d;
		if (d > bmax)
			bmax = d;
	}
	printf("tiny calls %ld max_ns %llu\n", batches * n, (unsigned long long)tmax);
	printf("batch calls %ld max_ns %llu sum_ns %llu\n", batches, (unsigned long long)bmax,
	       (unsigned long long)bsum);
}

int main(int argc, char **argv)
{
	long steps = -1, batches = -1, n = 100;
	double unit_ms = 20;
	int c;

	while ((c = getopt(argc, argv, "o:u:t:n:")) != -1) {
		switch (c) {
		case 'o': steps = atol(optarg); break;
		case 'u': unit_ms = atof(optarg); break;
		case 't': batches = atol(optarg); break;
		case 'n': n = atol(optarg); break;
		default: goto usage;
		}
	}
	if (steps >= 0)
		open_run(steps, unit_ms);
	else if (batches >= 0)
		tiny(batches, n);
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: regionends -o STEPS [-u UNIT_MS] | -t BATCHES [-n TINY]\n");
	return 2;
}
