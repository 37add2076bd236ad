/* scaling.c - regions whose time grows with a parameter by a known law, for
 * the model view's tests (tests/e2e/model.sh).
 *
 * For each size n of a list and each of R repetitions, with the parameter
 * annotated above the regions (sonde_set_int("n", n)), it runs three regions
 * whose work is a register-only loop of exactly
 *   lin    192 * n               steps     (time ~ n)
 *   nlogn  12 * n * log2(n)      steps     (time ~ n log n)
 *   quad   n * n / 64            steps     (time ~ n^2)
 * (lin and nlogn from about 0.1 ms, quad from 5 us, all up to 3-5 ms: shorter
 * than a time slice, so that beside other busy tasks some of a size's calls
 * still run whole and their shortest is the work's own; calls of 20-70 ms
 * were each cut by the scheduler on a loaded machine and bent the laws to
 * n^(5/4) and n^(7/3)), and, with -N,
 * a fourth, "noisy", whose work is
 * 64 * n steps plus, in a pseudo-random quarter of the calls, 4000 * n extra
 * (time ~ n, with noise that no model explains well: how many of a size's
 * calls have the extra varies, and with it their mean; uniform noise of 0 to
 * 2000 * n averaged out over 9 calls and fitted "good" now and then).
 * With -2, the sizes are pairs (n, m), m from 256 to 4096 by doubling, and a
 * region "grid" does n * m / 16 steps (10 us to 5 ms), annotated with both (sonde_set_int("m", m)).
 *
 * usage: scaling [-r R] [-N] [-2]     default R = 5
 * Output: "checksum X" (independent of sonde).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "include/sonde.h"

static volatile uint64_t sink;

__attribute__((noinline)) static void steps(uint64_t k)
{
	uint64_t x = sink | 1;
	for (uint64_t i = 0; i < k; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static unsigned log2u(uint64_t n)
{
	unsigned l = 0;
	while (n >>= 1)
		l++;
	return l;
}

int main(int argc, char **argv)
{
	int reps = 5, noisy = 0, two = 0, opt;
	while ((opt = getopt(argc, argv, "r:N2")) != -1) {
		switch (opt) {
		case 'r': reps = atoi(optarg); break;
		case 'N': noisy = 1; break;
		case '2': two = 1; break;
		default:
			fprintf(stderr, "usage: scaling [-r R] [-N] [-2]\n");
			return 2;
		}
	}
	static const uint64_t sizes[] = { 512, 1024, 2048, 4096, 8192, 16384 };
	uint64_t rnd = 12345;
	for (int r = 0; r < reps; r++)
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
			uint64_t n = sizes[s];
			sonde_set_int("n", (int64_t)n);
			if (two) {
				for (uint64_t m = 256; m <= 4096; m *= 2) {
					sonde_set_int("m", (int64_t)m);
					sonde_region_begin("grid");
					steps(n * m / 16);
					sonde_region_end("grid");
				}
				sonde_end("m");
				continue;
			}
			sonde_region_begin("lin");
			steps(192 * n);
			sonde_region_end("lin");
			sonde_region_begin("nlogn");
			steps(12 * n * log2u(n));
			sonde_region_end("nlogn");
			sonde_region_begin("quad");
			steps(n * n / 64);
			sonde_region_end("quad");
			if (noisy) {
				rnd = rnd * 6364136223846793005ull + 1;
				sonde_region_begin("noisy");
				steps(64 * n + ((rnd >> 33) % 4 == 0 ? 4000 * n : 0));
				sonde_region_end("noisy");
			}
		}
	sonde_end("n");
	printf("checksum %llu\n", (unsigned long long)(sink & 0xffff));
	return 0;
}
