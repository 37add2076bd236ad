/* vdsoloop.c - a program that spends its time in the vDSO: clock_gettime in a
 * loop for SECONDS of CPU time (tests/e2e/report.sh: vDSO frames are named). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec t, c0, c;
	unsigned long n = 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	do {
		for (int i = 0; i < 100000; i++)
			clock_gettime(CLOCK_MONOTONIC, &t);
		n += 100000;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	} while ((double)(c.tv_sec - c0.tv_sec) + (double)(c.tv_nsec - c0.tv_nsec) * 1e-9 < secs);
	printf("calls %lu\n", n);
	return 0;
}
