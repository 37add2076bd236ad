/* children.c - child processes that are hard to see, for tests/e2e/children.sh
 * (issue 19 item 8). Each mode prints the pids involved and what became of
 * each child, so that the test compares the report with the program's own
 * account, never with a timing.
 *
 *   kill N     forks N children one after the other; each burns CPU in
 *              child_spin until the parent, after 30 to 50 ms, kills it with
 *              SIGKILL and reaps it: "child PID killed 9"
 *   chroot DIR burns 0.15 s of CPU (parent_work), then forks a child that
 *              chroot()s into DIR, burns 0.2 s of CPU (jailed_work) and exits
 *              0: "child PID exit 0"
 *
 * Both print "parent PID" first. With WL_CPU=1 the work functions print their
 * CPU time (tests/workloads/wl_cpu.h).
 *
 * usage: children kill N | children chroot DIR
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE static void child_spin(void)
{
	for (;;)
		for (unsigned long i = 0; i < 1000000; i++)
			sink += i * i;
}

static void burn(double sec, const char *name)
{
	struct wl_cpu start = wl_cpu_now();
	wl_burn(sec);
	if (wl_cpu_wanted())
		wl_cpu_print(name, start);
}

NOINLINE static void parent_work(double s) { burn(s, "parent_work"); }
NOINLINE static void jailed_work(double s) { burn(s, "jailed_work"); }

static void report(pid_t pid, int st)
{
	if (WIFSIGNALED(st))
		printf("child %d killed %d\n", (int)pid, WTERMSIG(st));
	else if (WIFEXITED(st))
		printf("child %d exit %d\n", (int)pid, WEXITSTATUS(st));
	else
		printf("child %d status %#x\n", (int)pid, st);
	fflush(stdout);
}

static int kill_children(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			child_spin();
		struct timespec ts = {0, (30 + (long)(i * 20 / (n > 1 ? n - 1 : 1))) * 1000000L};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;
		if (waitpid(pid, &st, 0) != pid) {
			perror("waitpid");
			return 1;
		}
		report(pid, st);
	}
	return 0;
}

static int jailed_child(const char *dir)
{
	parent_work(0.15);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		if (chroot(dir) != 0 || chdir("/") != 0) {
			perror("chroot");
			_exit(2);
		}
		jailed_work(0.2);
		fflush(stdout);
		exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	report(pid, st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: children kill N | children chroot DIR\n");
		return 2;
	}
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "kill"))
		return kill_children(atoi(argv[2]));
	if (!strcmp(argv[1], "chroot"))
		return jailed_child(argv[2]);
	fprintf(stderr, "children: unknown mode '%s'\n", argv[1]);
	return 2;
}
