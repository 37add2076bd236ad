/* lifecycle.c - a program that exercises one process or thread lifecycle
 * event per mode, for the runtime tests (tests/e2e/lifecycle.sh). Each mode
 * burns CPU in functions of known names so that the test can find them in
 * the profile, and prints a line the test checks, so that a change in the
 * program's behaviour under sonde is seen.
 *
 * With WL_CPU=1 in the environment, each named work function also prints
 * "cpu NAME cpu_ns N user_ns N", the CPU time it took (tests/workloads/wl_cpu.h):
 * tests expect samples from that, not from the seconds asked for.
 *
 * usage: lifecycle MODE [ARG]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns `sec` seconds of this thread's CPU time (in `name`). */
static void burn(double sec, const char *name)
{
	struct wl_cpu start = wl_cpu_now();
	wl_burn(sec);
	if (wl_cpu_wanted())
		wl_cpu_print(name, start);
}

NOINLINE static void parent_work(double s) { burn(s, "parent_work"); }
NOINLINE static void child_work(double s) { burn(s, "child_work"); }
NOINLINE static void before_exec(double s) { burn(s, "before_exec"); }
NOINLINE static void after_exec_fail(double s) { burn(s, "after_exec_fail"); }
NOINLINE static void spin_work(double s) { burn(s, "spin_work"); }
NOINLINE static void thread_work(double s) { burn(s, "thread_work"); }
NOINLINE static void after_close_work(double s) { burn(s, "after_close_work"); }
NOINLINE static void masked_work(double s) { burn(s, "masked_work"); }
NOINLINE static void heavy_work(double s) { burn(s, "heavy_work"); }
NOINLINE static void light_work(double s) { burn(s, "light_work"); }

NOINLINE static void sleeper(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *exit_thread(void *arg)
{
	(void)arg;
	thread_work(0.2);
	printf("thread exits the process\n");
	fflush(stdout);
	exit(3);
}

static void *masked_thread(void *arg)
{
	(void)arg;
	masked_work(0.3);
	return NULL;
}

static void atexit_handler(void)
{
	printf("atexit ran\n");
}

static volatile sig_atomic_t prof_ticks;
static void on_sigprof(int sig)
{
	(void)sig;
	prof_ticks++;
}

/* Spins until killed, printing its monotonic clock every 20 ms. */
NOINLINE static void forever(void)
{
	for (;;) {
		spin_work(0.02);
		printf("alive %llu\n", (unsigned long long)mono_ns());
		fflush(stdout);
	}
}

static int closefds(const char *path, int use_closefrom)
{
	spin_work(0.1);
	if (use_closefrom)
		closefrom(3);
	else
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	char line[64];
	for (int i = 0; i < 200; i++) {
		int n = snprintf(line, sizeof line, "line %d\n", i);
		if (write(fd, line, (size_t)n) != n)
			return 1;
		after_close_work(0.002);
	}
	close(fd);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char got[64];
	for (int i = 0; i < 200; i++) {
		snprintf(line, sizeof line, "line %d\n", i);
		if (!fgets(got, sizeof got, f) || strcmp(got, line) != 0) {
			printf("file corrupt at line %d\n", i);
			return 1;
		}
	}
	if (fgets(got, sizeof got, f)) {
		printf("file has extra data\n");
		return 1;
	}
	fclose(f);
	printf("file ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "spin")) {
		spin_work(argc > 2 ? atof(argv[2]) : 0.5);
		printf("done\n");
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		parent_work(0.2);
		pid_t p = fork();
		if (p == 0) {
			child_work(0.3);
			printf("child done\n");
			return 0;
		}
		int st;
		waitpid(p, &st, 0);
		parent_work(0.1);
		printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		before_exec(0.2);
		fflush(stdout);
		execl("/proc/self/exe", "lifecycle", "spin", "0.2", (char *)NULL);
		return 1;
	}
	if (!strcmp(mode, "exec-fail")) {
		before_exec(0.1);
		execl("/nonexistent/program", "x", (char *)NULL);
		printf("exec failed: %s\n", strerror(errno));
		after_exec_fail(0.2);
		return 0;
	}
	if (!strcmp(mode, "thread-exit")) {
		pthread_t t;
		pthread_create(&t, NULL, exit_thread, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(mode, "_exit")) {
		atexit(atexit_handler);
		spin_work(0.2);
		printf("calling _exit\n");
		_exit(5);
	}
	if (!strcmp(mode, "exit_group") || !strcmp(mode, "rawexit")) {
		/* exit_group through libc's syscall(), or by the instruction
		 * itself (as a static runtime or a JIT may): nothing of libc's
		 * exit path runs */
		atexit(atexit_handler);
		spin_work(0.3);
		printf("calling exit_group\n");
		fflush(stdout);
		if (!strcmp(mode, "exit_group"))
			syscall(SYS_exit_group, 6);
#if defined(__x86_64__)
		__asm__ volatile("syscall" : : "a"((long)SYS_exit_group), "D"(6L) : "rcx", "r11", "memory");
#endif
		syscall(SYS_exit_group, 6);
	}
	if (!strcmp(mode, "forever"))
		forever();
	if (!strcmp(mode, "closefds"))
		return closefds(argc > 2 ? argv[2] : "/tmp/lifecycle.out", 0);
	if (!strcmp(mode, "closefrom"))
		return closefds(argc > 2 ? argv[2] : "/tmp/lifecycle.out", 1);
	if (!strcmp(mode, "sigprof")) {
		signal(SIGPROF, on_sigprof);
		struct itimerval it = {{0, 10000}, {0, 10000}};
		setitimer(ITIMER_PROF, &it, NULL);
		spin_work(0.5);
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_PROF, &off, NULL);
		printf("sigprof %s\n", prof_ticks >= 10 ? "ok" : "missing");
		return 0;
	}
	if (!strcmp(mode, "masked")) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		pthread_t t;
		pthread_create(&t, NULL, masked_thread, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_join(t, NULL);
		printf("masked done\n");
		return 0;
	}
	if (!strcmp(mode, "phased")) { /* 75/25 in time order: a throttled period weighs later samples */
		heavy_work(0.45);
		light_work(0.15);
		printf("phased done\n");
		return 0;
	}
	if (!strcmp(mode, "wall")) {
		sleeper(0.4);
		spin_work(0.4);
		printf("wall done\n");
		return 0;
	}
	fprintf(stderr, "usage: lifecycle spin|fork|exec|exec-fail|thread-exit|_exit|exit_group|rawexit|forever|"
			"closefds|closefrom|sigprof|masked|phased|wall [ARG]\n");
	return 2;
}
