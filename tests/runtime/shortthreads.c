/* shortthreads.c - short-lived threads against the same work in main
 * (tests/e2e/shortthreads.sh, issue 18 item 1).
 *
 *   shortthreads serial N MS    N threads, one after the other (each
 *                               created, then joined), each burning MS ms of
 *                               its CPU in short_work; then main burns the
 *                               same total in main_work
 *   shortthreads together N MS  N threads alive together (they start at a
 *                               barrier), each burning MS ms in short_work
 *
 * Prints the ground truth from the kernel's exact per-thread CPU clocks
 * (CLOCK_THREAD_CPUTIME_ID; getrusage's user time is tick-based and reads
 * near zero for a thread of a few ms): "cpu short_work cpu_ns N" summed
 * over the threads, "cpu main_work cpu_ns N", "threads N", and the
 * process's "rusage user_ns N sys_ns N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/workloads/wl_cpu.h"

static double burn_s;
static _Atomic long long short_ns;
static pthread_barrier_t bar;
static int together;

static long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void short_work(double s)
{
	wl_burn(s);
}

__attribute__((noinline)) static void main_work(double s)
{
	wl_burn(s);
}

static void *thread_main(void *arg)
{
	(void)arg;
	if (together)
		pthread_barrier_wait(&bar);
	short_work(burn_s);
	/* the whole thread's CPU: what a profiler of this thread must account */
	atomic_fetch_add(&short_ns, thread_cpu_ns());
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "serial") && strcmp(argv[1], "together"))) {
		fprintf(stderr, "usage: shortthreads serial|together N MS\n");
		return 2;
	}
	int n = atoi(argv[2]);
	burn_s = atof(argv[3]) / 1000.0;
	together = !strcmp(argv[1], "together");
	pthread_t *th = calloc((size_t)n, sizeof *th);
	if (together)
		pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&th[i], NULL, thread_main, NULL) != 0) {
			fprintf(stderr, "pthread_create failed at %d\n", i);
			return 1;
		}
		if (!together)
			pthread_join(th[i], NULL);
	}
	if (together)
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	printf("threads %d\n", n);
	printf("cpu short_work cpu_ns %lld\n", (long long)atomic_load(&short_ns));
	if (!together) {
		long long t0 = thread_cpu_ns();
		main_work(burn_s * n);
		printf("cpu main_work cpu_ns %lld\n", thread_cpu_ns() - t0);
	}
	/* The process's user and system time (the kernel's tick-based split of
	 * its exact total): the reference for coverage of user time. */
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("rusage user_ns %lld sys_ns %lld\n",
	       (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
	       (long long)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL);
	free(th);
	return 0;
}
