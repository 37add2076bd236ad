/* asroom.c - a program that takes the address space it is allowed
 * (tests/e2e/round3.sh, cases asblocks and asthreads; issue 19 item 4,
 * RLIMIT_AS). Run plain and profiled under `prlimit --as=N`: sonde may take
 * no more of the room than its documented reserve (docs/ENV.md, Address
 * space).
 *
 *   asroom blocks KB mmap|malloc   spins 0.1 s (sampled), then takes blocks of
 *                                  KB KiB (mmap, or malloc), touching every
 *                                  page, until one fails; prints "blocks N",
 *                                  gives them back, spins 0.05 s, exits 0
 *   asroom threads N               N threads spin 20 ms each and meet main at
 *                                  a barrier; prints "threads N"; a failed
 *                                  pthread_create prints "pthread_create I:
 *                                  ERROR" and exits 3 (it never waits at a
 *                                  barrier that cannot fill)
 *   asroom maxthreads STACK_KB     idle threads with STACK_KB KiB stacks until
 *                                  pthread_create fails; prints "maxthreads N",
 *                                  then lets them end and joins them
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

static void spin(double s)
{
	double end = now_s() + s;
	while (now_s() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

static int blocks(size_t kb, int use_malloc)
{
	size_t bytes = kb * 1024, cap = 1024, n = 0;
	void **v = calloc(cap, sizeof *v);
	if (!v)
		return 2;
	spin(0.1);
	for (;;) {
		if (n == cap) {
			void **nv = realloc(v, 2 * cap * sizeof *v);
			if (!nv)
				break;
			v = nv, cap *= 2;
		}
		void *p;
		if (use_malloc) {
			p = malloc(bytes);
		} else {
			p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				p = NULL;
		}
		if (!p)
			break;
		for (size_t off = 0; off < bytes; off += 4096)
			((volatile char *)p)[off] = 1;
		v[n++] = p;
	}
	printf("blocks %zu\n", n);
	fflush(stdout);
	for (size_t i = 0; i < n; i++)
		if (use_malloc)
			free(v[i]);
		else
			munmap(v[i], bytes);
	free(v);
	spin(0.05);
	return 0;
}

static pthread_barrier_t barrier;

static void *spinner(void *unused)
{
	(void)unused;
	spin(0.02);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static int threads(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 2;
	pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&t[i], NULL, spinner, NULL);
		if (err) {
			printf("pthread_create %d: %s\n", i, strerror(err));
			fflush(stdout);
			exit(3);
		}
	}
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %d\n", n);
	return 0;
}

static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go;

static void *idler(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&go_lock);
	while (!go)
		pthread_cond_wait(&go_cond, &go_lock);
	pthread_mutex_unlock(&go_lock);
	return NULL;
}

static int maxthreads(size_t stack_kb)
{
	size_t cap = 1 << 16;
	pthread_t *t = calloc(cap, sizeof *t);
	if (!t)
		return 2;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, stack_kb * 1024);
	size_t n = 0;
	while (n < cap && pthread_create(&t[n], &a, idler, NULL) == 0)
		n++;
	printf("maxthreads %zu\n", n);
	fflush(stdout);
	pthread_mutex_lock(&go_lock);
	go = 1;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&go_lock);
	for (size_t i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "blocks"))
		return blocks(strtoul(argv[2], NULL, 10), !strcmp(argv[3], "malloc"));
	if (argc >= 3 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "maxthreads"))
		return maxthreads(strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: asroom blocks KB mmap|malloc | threads N | maxthreads STACK_KB\n");
	return 2;
}
