/*
 * sym_inline.c: a real program for the symbol tests (test_symbols.sh), run under the
 * preloaded runtime. Almost all of its CPU time is spent in sym_kernel, a function that
 * is always inlined into sym_driver (compiled -O2 -g): its samples' addresses are in
 * sym_driver's code, and only DWARF's inlined-subroutine scopes name sym_kernel.
 * usage: sym_inline [SECONDS]   (CPU seconds to spin, default 0.4)
 */
#include <stdlib.h>
#include <time.h>

static volatile double sink;

static inline __attribute__((always_inline)) double sym_kernel(double x, long n)
{
	/* one line, so that all of the loop's instructions are at it */
	for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.5; /* SYM_KERNEL_LINE */
	return x;
}

__attribute__((noinline)) double sym_driver(long n)
{
	double r = sym_kernel(sink, n); /* SYM_CALL_LINE */
	return r;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.4, end = cpu_s() + secs;

	while (cpu_s() < end)
		sink = sym_driver(200000);
	return 0;
}
