/* single.c - what a single-threaded program sees of its own tasks, for
 * tests/e2e/round3.sh case single (issue 19 item 7).
 *
 * CPython 3.12 counts the process's tasks (/proc/self/stat, field 20) after
 * os.fork() and warns that a multi-threaded process forked when there is
 * more than one. This program prints that count where such a check happens:
 * at start, after SECONDS of CPU in a call chain DEPTH frames deep (enough
 * samples, and bytes, to fill a small ring many times), in the parent just
 * after a fork and in the child, and after a thread of its own was made and
 * joined (waiting up to 3 s for the count to be 1: sonde's writer thread,
 * started with the program's, leaves a flush period after it; the wait is
 * said on stderr), again around a fork. Without sonde every count is 1.
 *
 *   single [SECONDS [DEPTH]]     default 1.0 s, depth 60
 *
 * stdout: "WHERE tasks N" lines, then "cpu single_burn cpu_ns N user_ns M"
 * (tests/workloads/wl_cpu.h) for the burn. Exit status 0, 1 if a fork or the
 * thread failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

/* /proc/self/stat field 20, read as CPython reads it. */
static int tasks(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

static void say(const char *where)
{
	printf("%s tasks %d\n", where, tasks());
	fflush(stdout);
}

__attribute__((noinline)) static void single_burn(int depth, double s)
{
	if (depth > 1) {
		single_burn(depth - 1, s);
		__asm__ volatile("" ::: "memory"); /* not a tail call */
		return;
	}
	wl_burn(s);
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* fork; the child says its count and leaves; the parent says its own after
 * the fork (where CPython checks), then reaps. 0 on success. */
static int fork_and_say(const char *parent, const char *child)
{
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		say(child);
		_exit(0);
	}
	int n = tasks(); /* where CPython counts; said after the child's line */
	int st = 0;
	int bad = waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	printf("%s tasks %d\n", parent, n);
	fflush(stdout);
	return bad;
}

int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 1.0;
	int depth = argc > 2 ? atoi(argv[2]) : 60;
	int bad = 0;
	say("start");
	struct wl_cpu c0 = wl_cpu_now();
	single_burn(depth, s);
	wl_cpu_print("single_burn", c0);
	say("after burn");
	bad |= fork_and_say("parent after fork", "child after fork");
	pthread_t th;
	if (pthread_create(&th, NULL, thread_fn, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	/* sonde's writer thread, started with this one, leaves a flush period
	 * after it ended: wait for one task (at most 3 s), and say how long */
	struct timespec t0, t1, tick = {0, 10 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 300 && tasks() != 1; i++)
		nanosleep(&tick, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "single: one task again after %.0f ms\n",
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	say("after thread");
	bad |= fork_and_say("parent after thread and fork", "child after thread and fork");
	say("end");
	return bad;
}
