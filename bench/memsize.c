/* memsize.c - a process whose size is measured with N threads up
 * (bench/memsize.sh).
 *
 * usage: bench_memsize idle|busy N
 *   starts N threads; idle ones wait at a barrier at once, busy ones spin
 *   for 0.1 s of CPU first (so that a sampler samples them); when all are
 *   at the barrier (and main, busy too, has spun as long), waits 0.3 s (a
 *   profiler's own threads have done their first rounds), prints one line
 *       self vmsize_kb V vmrss_kb R
 *   from /proc/self/status, and, when MEMSIZE_PARENT=1, the same for its
 *   parent (under `perf record`, perf's own process) as "parent ...". Then
 *   lets the threads end and joins them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t barrier;
static int busy;
static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void spin(void)
{
	double end = cpu_s() + 0.1;
	while (cpu_s() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

static void *worker(void *unused)
{
	(void)unused;
	if (busy)
		spin();
	pthread_barrier_wait(&barrier); /* all up (and spun) */
	pthread_barrier_wait(&barrier); /* measured */
	return NULL;
}

static void status(const char *who, pid_t pid)
{
	char path[64], line[256];
	long size = -1, rss = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "VmSize: %ld", &size);
		sscanf(line, "VmRSS: %ld", &rss);
	}
	fclose(f);
	printf("%s vmsize_kb %ld vmrss_kb %ld\n", who, size, rss);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "idle") && strcmp(argv[1], "busy"))) {
		fprintf(stderr, "usage: bench_memsize idle|busy N\n");
		return 2;
	}
	busy = !strcmp(argv[1], "busy");
	int n = atoi(argv[2]);
	pthread_t *t = calloc((size_t)n + 1, sizeof *t);
	pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "bench_memsize: pthread_create %d failed\n", i);
			return 1;
		}
	if (busy)
		spin();
	pthread_barrier_wait(&barrier);
	usleep(300000); /* a profiler's steady state: its writer has ticked and flushed */
	status("self", getpid());
	const char *p = getenv("MEMSIZE_PARENT");
	if (p && !strcmp(p, "1"))
		status("parent", getppid());
	fflush(stdout);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
