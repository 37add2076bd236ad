/* fdroom.c - how many descriptors the program can still open: N threads
 * (idle, all alive), then /dev/null opened until the kernel says no; prints
 * "threads N fds K" and the error. Run plain and profiled under the same
 * RLIMIT_NOFILE (tests/e2e/round3.sh, nofile): sonde may keep only its
 * documented reserve (docs/ENV.md, "Descriptors").
 *
 * usage: fdroom [NTHREADS] [BUSY_SECONDS]   threads compute BUSY_SECONDS of
 * CPU each before the count (so they are sampled), default 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define MAXT 1024

static pthread_barrier_t started, counted;
static double busy;

static void *worker(void *unused)
{
	(void)unused;
	if (busy > 0)
		wl_burn(busy);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&counted);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	busy = argc > 2 ? atof(argv[2]) : 0;
	if (n < 0 || n > MAXT)
		return 2;
	static pthread_t th[MAXT];
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	pthread_barrier_init(&counted, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
			printf("pthread_create failed at %d\n", i);
			return 1;
		}
	if (busy > 0)
		wl_burn(busy);
	pthread_barrier_wait(&started);
	int k = 0, fd;
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		k++;
	printf("threads %d fds %d (%s)\n", n, k, strerror(errno));
	fflush(stdout);
	pthread_barrier_wait(&counted);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
