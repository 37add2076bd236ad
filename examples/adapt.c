/* adapt.c - a program that asks sonde how long its own code took, and adapts.
 *
 * Each iteration transposes-and-sums an N x N matrix, a step with two
 * implementations: "rows" walks the matrix row by row, "blocks" in 64 x 64
 * tiles. Which is faster depends on the machine, the size and the compiler.
 * During the first TRIALS iterations the program alternates the two, each
 * inside `sonde_begin("impl", NAME)` / `sonde_end("impl")`; then it asks sonde
 * (sonde_query, thread scope) for each implementation's shortest call so far (the
 * cost when nothing else disturbs it: on a busy machine a preemption can make one
 * call of the faster implementation slower than the mean of the other) and keeps
 * the faster one for the remaining iterations. Without sonde (or without
 * SONDE_REGIONS=on) the query says SONDE_UNAVAILABLE and it keeps "rows".
 *
 *   SONDE_REGIONS=on sonde run -- build/adapt
 *   adapt: rows 2.210 ms (5 calls), blocks 0.934 ms (5 calls): keeping blocks
 *
 * usage: adapt [-n N] [-i ITERS] [-t TRIALS] [-s rows|blocks]
 *   -s NAME  make that implementation deliberately slower (it runs its step 4
 *            times), to see the choice follow the measurement.
 * Output: the choice line, then "checksum X" (the same whichever is chosen).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/sonde.h"

static int n = 768;
static double *a, *b;

static void step_rows(void)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			b[(size_t)j * n + i] = a[(size_t)i * n + j] + 1.0;
}

static void step_blocks(void)
{
	for (int ii = 0; ii < n; ii += 64)
		for (int jj = 0; jj < n; jj += 64)
			for (int i = ii; i < ii + 64 && i < n; i++)
				for (int j = jj; j < jj + 64 && j < n; j++)
					b[(size_t)j * n + i] = a[(size_t)i * n + j] + 1.0;
}

struct impl { const char *name; void (*step)(void); int repeat; };

static void run(const struct impl *m)
{
	sonde_begin("impl", m->name);
	for (int r = 0; r < m->repeat; r++)
		m->step();
	sonde_end("impl");
	double *t = a; /* the output is the next input */
	a = b;
	b = t;
}

int main(int argc, char **argv)
{
	int iters = 40, trials = 10, opt;
	const char *slow = NULL;
	while ((opt = getopt(argc, argv, "n:i:t:s:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'i': iters = atoi(optarg); break;
		case 't': trials = atoi(optarg); break;
		case 's': slow = optarg; break;
		default:
			fprintf(stderr, "usage: adapt [-n N] [-i ITERS] [-t TRIALS] [-s rows|blocks]\n");
			return 2;
		}
	}
	if (n < 1 || iters < 0 || trials < 2 || trials > iters) {
		fprintf(stderr, "adapt: need N >= 1 and 2 <= TRIALS <= ITERS\n");
		return 2;
	}
	struct impl impls[2] = { { "rows", step_rows, 1 }, { "blocks", step_blocks, 1 } };
	for (int k = 0; k < 2; k++)
		if (slow && !strcmp(slow, impls[k].name))
			impls[k].repeat = 4;
	a = malloc((size_t)n * n * sizeof *a);
	b = malloc((size_t)n * n * sizeof *b);
	if (!a || !b)
		return 1;
	for (size_t i = 0; i < (size_t)n * n; i++)
		a[i] = (double)(i % 1000), b[i] = 0; /* both touched: no page faults in a trial */

	int it = 0;
	for (; it < trials; it++)
		run(&impls[it % 2]);

	/* Ask sonde what each took so far, in this thread. */
	struct sonde_region_stats s[2];
	int ok = 1;
	for (int k = 0; k < 2; k++)
		ok &= sonde_query("impl", impls[k].name, SONDE_THREAD, &s[k]) == SONDE_OK;
	const struct impl *keep = &impls[0];
	if (ok) {
		keep = s[1].min_ns < s[0].min_ns ? &impls[1] : &impls[0];
		printf("adapt: rows %.3f ms (%llu calls), blocks %.3f ms (%llu calls): keeping %s\n",
		       s[0].min_ns / 1e6, (unsigned long long)s[0].calls, s[1].min_ns / 1e6,
		       (unsigned long long)s[1].calls, keep->name);
	} else {
		printf("adapt: no measurement (sonde not loaded, or SONDE_REGIONS not on): keeping %s\n",
		       keep->name);
	}
	for (; it < iters; it++)
		run(keep);

	double sum = 0;
	for (size_t i = 0; i < (size_t)n * n; i++)
		sum += a[i];
	printf("checksum %.0f\n", sum);
	free(a);
	free(b);
	return 0;
}
