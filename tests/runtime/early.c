/* early.c - a library whose constructor starts a thread, so that when it is
 * loaded before libsonde's constructor runs, the thread is alive before
 * sonde starts (tests/e2e/lifecycle.sh: such threads are sampled too).
 * The program that links it (early_main.c) joins the thread. With WL_CPU=1,
 * the thread prints the CPU time early_work took (tests/workloads/wl_cpu.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "include/sonde.h"
#include "tests/workloads/wl_cpu.h"

pthread_t early_thread;
static volatile unsigned long long early_sink;

__attribute__((noinline)) static void early_work(void)
{
	struct timespec ts;
	double end;
	struct wl_cpu start = wl_cpu_now();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec + ts.tv_nsec * 1e-9 + 0.4;
	unsigned long long x = 1;
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec * 1e-9 < end);
	early_sink = x;
	if (wl_cpu_wanted())
		wl_cpu_print("early_work", start);
}

static void *early_main(void *arg)
{
	(void)arg;
	struct timespec pause = {0, 10000000};
	/* Let the process finish starting: when sonde is loaded, until it runs
	 * (on a loaded machine that can take longer than any fixed pause), so
	 * that all of early_work is sampled; the thread is alive before sonde
	 * starts all the same. Bounded: 10 s. */
	nanosleep(&pause, NULL);
	for (int i = 0; i < 1000 && sonde_rt_active && !sonde_active(); i++)
		nanosleep(&pause, NULL);
	early_work();
	return NULL;
}

__attribute__((constructor)) static void early_start(void)
{
	pthread_create(&early_thread, NULL, early_main, NULL);
}
