/* threads - thread start and end cost (bench/startup.sh).
 *
 * usage: bench_threads churn N   creates and joins N empty threads, one at a
 *                                time, and prints "cpu_us_per_thread X" (its
 *                                own CPU time from getrusage over the loop)
 *        bench_threads floor N   the kernel's part of what a profiler must do
 *                                per thread, measured the same way in N fresh
 *                                threads: "floor_clock_us X" (open, enable and
 *                                close one perf_event task clock, as sonde's
 *                                cpu-time source does), "floor_group_us Y"
 *                                (that plus a two-event counter group) and
 *                                "floor_creator_us Z": what the creating
 *                                thread's own task clock (1 ms period, as a
 *                                CPU-time sampler keeps on it) adds to each
 *                                create and join, new threads unsampled. On a
 *                                VM the clock's timer is reprogrammed at every
 *                                switch of the creator (it blocks in join).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int mode; /* 0 empty, 1 task clock, 2 task clock + counter group */

static int open_ev(unsigned config, uint64_t period, int group, int exclude_kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = period;
	a.disabled = group < 0;
	a.exclude_kernel = (unsigned)exclude_kernel;
	if (!period)
		a.read_format = PERF_FORMAT_GROUP;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static void *body(void *arg)
{
	int fd[3] = {-1, -1, -1};
	if (mode >= 1) {
		fd[0] = open_ev(PERF_COUNT_SW_TASK_CLOCK, 1000000, -1, 1);
		ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0);
	}
	if (mode >= 2) {
		fd[1] = open_ev(PERF_COUNT_SW_CONTEXT_SWITCHES, 0, -1, 0);
		fd[2] = open_ev(PERF_COUNT_SW_PAGE_FAULTS, 0, fd[1], 0);
		ioctl(fd[1], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	}
	for (int i = 2; i >= 0; i--)
		if (fd[i] >= 0)
			close(fd[i]);
	return arg;
}

static double cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double churn(int n)
{
	double t0 = cpu_us();
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, body, NULL) != 0) {
			perror("pthread_create");
			exit(1);
		}
		pthread_join(t, NULL);
	}
	return (cpu_us() - t0) / n;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: bench_threads churn|floor N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	if (!strcmp(argv[1], "churn")) {
		printf("cpu_us_per_thread %.2f\n", churn(n));
		return 0;
	}
	/* Events of each kind stay open meanwhile on this thread, as a profiled
	 * program's first thread keeps them: no open or close here is the
	 * process's first or last (which would make the kernel patch code). */
	mode = 2;
	body(NULL);
	int keep[3] = {open_ev(PERF_COUNT_SW_TASK_CLOCK, 1000000, -1, 1),
		       open_ev(PERF_COUNT_SW_CONTEXT_SWITCHES, 0, -1, 0),
		       open_ev(PERF_COUNT_SW_PAGE_FAULTS, 0, -1, 0)};
	if (keep[0] < 0) {
		printf("floor_clock_us nan\nfloor_group_us nan\nfloor_creator_us nan\n");
		return 0;
	}
	/* The creator's clock: enabled at 1 ms, no owner (never signals). */
	int creator = open_ev(PERF_COUNT_SW_TASK_CLOCK, 1000000, -1, 1);
	double base = 0, clock = 0, group = 0, ctor = 0;
	for (int round = 0; round < 3; round++) { /* interleaved against drift */
		mode = 0, base += churn(n / 3 + 1);
		mode = 1, clock += churn(n / 3 + 1);
		mode = 2, group += churn(n / 3 + 1);
		if (creator >= 0) {
			ioctl(creator, PERF_EVENT_IOC_ENABLE, 0);
			mode = 0, ctor += churn(n / 3 + 1);
			ioctl(creator, PERF_EVENT_IOC_DISABLE, 0);
		}
	}
	printf("floor_clock_us %.2f\nfloor_group_us %.2f\nfloor_creator_us %.2f\n",
	       (clock - base) / 3, keep[1] >= 0 ? (group - base) / 3 : 0.0 / 0.0,
	       creator >= 0 ? (ctor - base) / 3 : 0.0 / 0.0);
	return 0;
}
