/* nproc.c - makes processes (or threads) until the kernel refuses one, for
 * tests/e2e/round3.sh, case nproc (issue 19 item 4, RLIMIT_NPROC): under
 * `prlimit --nproc=N` every child holds its slot, blocked on a pipe, until
 * fork fails with EAGAIN; then the program prints how many it made, releases
 * them and reaps them. sonde's writer threads once took a slot each (82
 * children instead of 147 under a limit of 150).
 *
 *   nproc fork BURN_MS     children; after the release the first and the
 *                          last one made each burn BURN_MS of CPU time
 *                          before they exit (their pids on stderr:
 *                          "nproc: burners PID PID")
 *   nproc threads          threads instead of children
 *
 * stdout: "children N" / "threads N", then "reaped N" / "joined N". Exit 0,
 * or 2 when the first failure is not EAGAIN (said on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_KIDS 20000

static int fds[2];
static volatile int *made; /* shared with the children: how many were made */

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

static void __attribute__((noinline)) burn(double s)
{
	double t0 = cpu_s();
	while (cpu_s() - t0 < s)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7u;
}

/* Blocks until the program releases it (EOF on the pipe). */
static void hold(void)
{
	char c;
	while (read(fds[0], &c, 1) < 0 && errno == EINTR)
		;
}

static void *held(void *a)
{
	hold();
	return a;
}

static pid_t kids[MAX_KIDS];
static pthread_t ths[MAX_KIDS];

int main(int argc, char **argv)
{
	int threads = argc > 1 && !strcmp(argv[1], "threads");
	double burn_s = argc > 2 ? atof(argv[2]) / 1000.0 : 0;
	made = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pipe(fds) != 0 || made == MAP_FAILED) {
		perror("nproc: pipe or mmap");
		return 2;
	}
	int n = 0, err = 0;
	while (n < MAX_KIDS) {
		if (threads) {
			err = pthread_create(&ths[n], NULL, held, NULL);
			if (err)
				break;
			n++;
			continue;
		}
		fflush(NULL);
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			close(fds[1]);
			hold();
			/* the first one made, and the last */
			if (n == 0 || n == *made - 1)
				burn(burn_s);
			exit(0);
		}
		kids[n++] = p;
	}
	if (err && err != EAGAIN) {
		fprintf(stderr, "nproc: stopped after %d by %s, not EAGAIN\n", n, strerror(err));
		return 2;
	}
	printf("%s %d\n", threads ? "threads" : "children", n);
	fflush(stdout);
	if (!threads && n > 0)
		fprintf(stderr, "nproc: burners %d %d\n", (int)kids[0], (int)kids[n - 1]);
	*made = n;
	close(fds[1]); /* the release: after the count is in place */
	int done = 0;
	for (int i = 0; i < n; i++) {
		if (threads)
			done += pthread_join(ths[i], NULL) == 0;
		else
			done += waitpid(kids[i], NULL, 0) == kids[i];
	}
	printf("%s %d\n", threads ? "joined" : "reaped", done);
	return 0;
}
