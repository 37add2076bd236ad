/* query.c - the query API of include/sonde.h against what the program measures
 * itself (tests/api/query.sh runs it three ways).
 *
 * The main thread runs region "step" 20 times (each a few ms of CPU in burn()),
 * timing each call with its own clock_gettime(CLOCK_MONOTONIC) around the
 * begin and end; a second thread runs it 10 times. Then it asks sonde:
 *   thread scope, main thread: calls, total and mean inclusive time, stddev,
 *     against its own measurements (the test compares them: calls exact,
 *     times within 1 %);
 *   process scope: calls of both threads (30);
 *   a value never opened: SONDE_NONE;
 *   the attribute form (sonde_query("phase", "work", ...)) of an enclosing level;
 *   the profile so far: its top function (burn, exported with -rdynamic);
 *   a flush: the stream file exists and is not empty before the program ends.
 * Without sonde (or without SONDE_REGIONS=on for regions) every query says
 * SONDE_UNAVAILABLE and the program runs the same.
 *
 * Output: "key value" lines, parsed by query.sh.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "include/sonde.h"

static double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

volatile uint64_t sink;

/* Exported (the program is linked with -rdynamic) so that dladdr names it. */
__attribute__((noinline)) void burn(long n)
{
	uint64_t x = 1;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink += x;
}

struct own { int calls; double total_ns, sumsq; };

static void steps(int n, struct own *o)
{
	sonde_begin("phase", "work");
	for (int i = 0; i < n; i++) {
		double t0 = mono_ns();
		sonde_region_begin("step");
		burn(2000000 + 200000 * (i % 5)); /* unequal calls: a stddev to find */
		sonde_region_end("step");
		double d = mono_ns() - t0;
		o->calls++;
		o->total_ns += d;
		o->sumsq += d * d;
	}
	sonde_end("phase");
}

static void *worker(void *arg)
{
	struct own o = { 0 };
	(void)arg;
	steps(10, &o);
	return NULL;
}

static const char *res(int r)
{
	return r == SONDE_OK ? "ok" : r == SONDE_NONE ? "none" : r == SONDE_UNAVAILABLE ? "unavailable"
										      : "?";
}

int main(void)
{
	struct own o = { 0 };
	steps(20, &o);
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);

	double mean = o.total_ns / o.calls;
	double var = o.sumsq / o.calls - mean * mean;
	printf("own_calls %d\nown_total_ns %.0f\nown_mean_ns %.0f\nown_stddev_ns %.0f\n", o.calls,
	       o.total_ns, mean, var > 0 ? __builtin_sqrt(var) : 0);

	struct sonde_region_stats s;
	int r = sonde_query_region("step", SONDE_THREAD, &s);
	printf("thread %s\n", res(r));
	if (r == SONDE_OK)
		printf("thread_calls %llu\nthread_total_ns %.0f\nthread_mean_ns %.0f\n"
		       "thread_stddev_ns %.0f\nthread_min_ns %.0f\nthread_max_ns %.0f\n",
		       (unsigned long long)s.calls, s.incl_ns, s.mean_ns, s.stddev_ns, s.min_ns,
		       s.max_ns);
	r = sonde_query_region("step", SONDE_PROCESS, &s);
	printf("process %s\n", res(r));
	if (r == SONDE_OK)
		printf("process_calls %llu\n", (unsigned long long)s.calls);
	r = sonde_query_region("never", SONDE_PROCESS, &s);
	printf("never %s\n", res(r));
	r = sonde_query("phase", "work", SONDE_THREAD, &s);
	printf("phase %s\n", res(r));
	if (r == SONDE_OK)
		printf("phase_calls %llu\nphase_excl_ns %.0f\n", (unsigned long long)s.calls, s.excl_ns);

	struct sonde_func top[3];
	int n = sonde_profile_top(top, 3);
	if (n < 0)
		printf("top unavailable\n");
	else
		printf("top %d %s %llu\n", n, n ? top[0].name : "-",
		       (unsigned long long)(n ? top[0].samples : 0));

	r = sonde_flush();
	printf("flush %s\n", res(r));
	const char *dir = getenv("SONDE_OUTPUT");
	long bytes = 0;
	DIR *d = dir ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (strstr(e->d_name, ".sonde") && stat(path, &st) == 0)
			bytes += st.st_size;
	}
	if (d)
		closedir(d);
	printf("flushed_bytes %ld\n", bytes);
	return 0;
}
