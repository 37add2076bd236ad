/* tailcount.c - a two-thread program whose counter events happen where no sample sees
 * them, for tests/e2e/tailcount.sh (issue 9: counts add up).
 *
 *   tailcount K N SPIN_MS
 *
 * The worker thread touches N fresh pages and then blocks K times (short nanosleeps):
 * about N minor faults and K voluntary context switches, almost no CPU time, so with a
 * long sampling period it is never sampled and everything it did reaches the stream
 * only through its THREAD_END deltas. The main thread spins SPIN_MS ms of CPU (sampled).
 * Prints what the program itself measured with getrusage: the worker's own numbers
 * (RUSAGE_THREAD, from its first to its last instruction) and the process's
 * (RUSAGE_SELF, at the end of main), one line:
 *   tid=T worker_cs=C worker_minflt=F self_cs=C self_minflt=F
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long k, n;
static long w_cs, w_minflt, w_tid;

static void *worker(void *arg)
{
	struct rusage a, b;
	long page = sysconf(_SC_PAGESIZE);

	(void)arg;
	w_tid = gettid();
	getrusage(RUSAGE_THREAD, &a);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * page] = (char)i;
	munmap(p, (size_t)(n * page));
	for (long i = 0; i < k; i++) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	getrusage(RUSAGE_THREAD, &b);
	w_cs = (b.ru_nvcsw - a.ru_nvcsw) + (b.ru_nivcsw - a.ru_nivcsw);
	w_minflt = b.ru_minflt - a.ru_minflt;
	return NULL;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct rusage self;
	volatile double x = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: tailcount K N SPIN_MS\n");
		return 2;
	}
	k = atol(argv[1]);
	n = atol(argv[2]);
	double spin = atof(argv[3]), t0 = cpu_ms();
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	while (cpu_ms() - t0 < spin)
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
	pthread_join(t, NULL);
	getrusage(RUSAGE_SELF, &self);
	printf("tid=%ld worker_cs=%ld worker_minflt=%ld self_cs=%ld self_minflt=%ld\n", w_tid,
	       w_cs, w_minflt, self.ru_nvcsw + self.ru_nivcsw, self.ru_minflt);
	return 0;
}
