/* blocker.c - makes a known number of kernel events, for the counter tests
 * (tests/e2e/counters.sh).
 *
 *   blocker sleeps K      K short nanosleeps in a worker thread: K voluntary
 *                         context switches of that thread
 *   blocker pingpong K    two threads bounce a byte through pipes K times:
 *                         about K voluntary switches each
 *   blocker pages N       touches N fresh pages: N minor faults
 *   blocker split N       two threads at once: one touches N fresh pages in
 *                         fault_pages, the other computes and sleeps (1 ms
 *                         each, ~300 times) in compute_sleep; each prints its
 *                         own minor faults and voluntary switches (getrusage
 *                         RUSAGE_THREAD) as "thread NAME minflt N nvcsw N"
 *
 * Prints what it did and its own getrusage view of the worker, so a test can
 * compare the profile with both.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static long k;
static int ping[2], pong[2];
static long nvcsw;

NOINLINE static void do_sleeps(void)
{
	for (long i = 0; i < k; i++) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
}

static void *sleeper(void *arg)
{
	(void)arg;
	struct rusage a, b;
	getrusage(RUSAGE_THREAD, &a);
	do_sleeps();
	getrusage(RUSAGE_THREAD, &b);
	nvcsw = b.ru_nvcsw - a.ru_nvcsw;
	return NULL;
}

NOINLINE static void bounce(int in, int out, int first)
{
	char c = 'x';
	for (long i = 0; i < k; i++) {
		if (first && write(out, &c, 1) != 1)
			exit(1);
		if (read(in, &c, 1) != 1)
			exit(1);
		if (!first && write(out, &c, 1) != 1)
			exit(1);
	}
}

static void *partner(void *arg)
{
	(void)arg;
	bounce(ping[0], pong[1], 0);
	return NULL;
}

NOINLINE static long touch_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * page] = (char)i;
	munmap(p, (size_t)(n * page));
	return 0;
}

NOINLINE static void fault_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * page] = (char)i;
	munmap(p, (size_t)(n * page));
}

static volatile double sink;

NOINLINE static void compute_sleep(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		struct timespec t0, t;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		double x = 0;
		do {
			for (int i = 0; i < 1000; i++)
				x += i * 0.5;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000L);
		sink = x;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static void say_usage(const char *name, struct rusage *a)
{
	struct rusage b;
	getrusage(RUSAGE_THREAD, &b);
	printf("thread %s minflt %ld nvcsw %ld\n", name, b.ru_minflt - a->ru_minflt,
	       b.ru_nvcsw - a->ru_nvcsw);
}

static void *faulter(void *arg)
{
	(void)arg;
	struct rusage a;
	getrusage(RUSAGE_THREAD, &a);
	fault_pages(k);
	say_usage("fault_pages", &a);
	return NULL;
}

static void *computer(void *arg)
{
	(void)arg;
	struct rusage a;
	getrusage(RUSAGE_THREAD, &a);
	compute_sleep(300);
	say_usage("compute_sleep", &a);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: blocker sleeps|pingpong|pages|split N\n");
		return 2;
	}
	k = atol(argv[2]);
	pthread_t t;
	if (!strcmp(argv[1], "sleeps")) {
		pthread_create(&t, NULL, sleeper, NULL);
		pthread_join(t, NULL);
		printf("sleeps %ld (worker saw %ld voluntary switches)\n", k, nvcsw);
	} else if (!strcmp(argv[1], "pingpong")) {
		if (pipe(ping) || pipe(pong))
			return 1;
		pthread_create(&t, NULL, partner, NULL);
		bounce(pong[0], ping[1], 1);
		pthread_join(t, NULL);
		printf("pingpong %ld\n", k);
	} else if (!strcmp(argv[1], "split")) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		pthread_t u;
		pthread_create(&t, NULL, faulter, NULL);
		pthread_create(&u, NULL, computer, NULL);
		pthread_join(t, NULL);
		pthread_join(u, NULL);
	} else if (!strcmp(argv[1], "pages")) {
		long s = touch_pages(k);
		printf("pages %ld (%s)\n", k, s < 0 ? "mmap failed" : "touched");
	} else {
		fprintf(stderr, "usage: blocker sleeps|pingpong|pages|split N\n");
		return 2;
	}
	return 0;
}
