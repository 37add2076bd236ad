/* rawfds.c - a program that closes every descriptor from 3 up with the raw
 * close_range system call (sonde's close/close_range/closefrom wrappers never
 * see it), then keeps computing and opening descriptors: files it writes and
 * reads back, and pipes holding bytes it reads back later. Used by
 * tests/e2e/rawfds.sh under a low RLIMIT_NOFILE, so that the numbers sonde's
 * descriptors had are reused by the program's own files and pipes: any read
 * or write sonde made on a stale number would show as a wrong file content,
 * a wrong file offset or missing pipe bytes.
 *
 * A second thread computes across the close.
 *
 * usage: rawfds syscall|asm|pending DIR [N]   (N files and N pipes, interleaved)
 *   syscall  close_range through libc's syscall(SYS_close_range, 3, ~0U, 0)
 *   asm      the same through an inline `syscall` instruction
 *   pending  as asm, while the second thread holds every signal blocked
 *            (raw rt_sigprocmask): the signals its old sampling descriptor
 *            queued are delivered after the close, naming a number that is
 *            closed or the program's own file now
 * Prints what it checked; exit 0 when every check held, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))
#define MAXF 256


NOINLINE static void before_close(double s) { wl_burn(s); }
NOINLINE static void after_close(double s) { wl_burn(s); }
NOINLINE static void thread_before(double s) { wl_burn(s); }
NOINLINE static void thread_after(double s) { wl_burn(s); }

static long raw4(long nr, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* A second thread: its sampling descriptors are closed too. */
static _Atomic int closed, block_signals;
static void *worker(void *unused)
{
	(void)unused;
	thread_before(0.2);
	uint64_t all = ~0ull, old = 0;
	if (block_signals)
		raw4(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8);
	while (!atomic_load(&closed))
		;
	if (block_signals) {
		/* Computing with signals held, long enough for the writer to
		 * find the descriptors gone and re-arm, then let them in. */
		thread_before(0.1);
		raw4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
	}
	thread_after(0.4);
	return NULL;
}

static long raw_close_range(int use_asm)
{
	if (!use_asm)
		return syscall(SYS_close_range, 3u, ~0u, 0u);
	return raw4(SYS_close_range, 3, (long)~0u, 0, 0);
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "asm") &&
			 strcmp(argv[1], "pending"))) {
		fprintf(stderr, "usage: rawfds syscall|asm|pending DIR [NFILES]\n");
		return 2;
	}
	block_signals = !strcmp(argv[1], "pending");
	const char *dir = argv[2];
	int nfiles = argc > 3 ? atoi(argv[3]) : 40;
	if (nfiles < 1 || nfiles > MAXF)
		nfiles = 40;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	before_close(0.3);
	if (raw_close_range(strcmp(argv[1], "syscall") != 0) != 0) {
		printf("close_range failed\n");
		return 1;
	}
	atomic_store(&closed, 1);
	/* Right away: take the lowest numbers again, as a program would. */
	int fds[MAXF], pipes[MAXF][2];
	char path[4096], line[64];
	for (int i = 0; i < nfiles; i++) {
		snprintf(path, sizeof path, "%s/f%d", dir, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fds[i] < 0) {
			printf("open %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (pipe(pipes[i]) != 0) {
			printf("pipe: %s\n", strerror(errno));
			return 1;
		}
	}
	/* Compute while writing to everything, a line at a time. */
	const int rounds = 50;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nfiles; i++) {
			int n = snprintf(line, sizeof line, "file %d line %d\n", i, r);
			if (write(fds[i], line, (size_t)n) != n) {
				printf("write: %s\n", strerror(errno));
				return 1;
			}
		}
		for (int i = 0; i < nfiles; i++)
			if (write(pipes[i][1], "p", 1) != 1) {
				printf("pipe write: %s\n", strerror(errno));
				return 1;
			}
		after_close(0.01);
	}
	/* Every file holds exactly what was written, and its offset is where
	 * the writes left it. */
	int bad = 0;
	for (int i = 0; i < nfiles; i++) {
		off_t end = lseek(fds[i], 0, SEEK_CUR), want = 0;
		char got[64];
		for (int r = 0; r < rounds; r++) {
			int n = snprintf(line, sizeof line, "file %d line %d\n", i, r);
			if (pread(fds[i], got, (size_t)n, want) != n || memcmp(got, line, (size_t)n))
				bad++;
			want += n;
		}
		if (end != want || pread(fds[i], got, 1, want) != 0)
			bad++;
		close(fds[i]);
	}
	printf("%d files %s\n", nfiles, bad ? "CHANGED" : "ok");
	/* Every pipe still holds one byte per round. */
	int lost = 0;
	for (int i = 0; i < nfiles; i++) {
		close(pipes[i][1]);
		char buf[4 * 50];
		ssize_t got = 0, n;
		while ((n = read(pipes[i][0], buf, sizeof buf)) > 0)
			got += n;
		lost += got != rounds;
		if (got != rounds)
			fprintf(stderr, "pipe %d (fds %d %d): %zd bytes of %d\n", i, pipes[i][0],
				pipes[i][1], got, rounds);
		close(pipes[i][0]);
	}
	printf("%d pipes %s\n", nfiles, lost ? "LOST BYTES" : "ok");
	pthread_join(th, NULL);
	return bad || lost;
}
