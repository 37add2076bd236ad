/* onstack.c - handlers installed with SA_ONSTACK by a program that has or has
 * not set an alternate signal stack (tests/e2e/round3.sh, case onstack; issue
 * 19 item 1). Without sigaltstack, the kernel runs such a handler on the
 * thread's own stack; sonde's alternate stack must never become the
 * program's.
 *
 *   onstack big       an SA_ONSTACK handler that uses 200 KiB of stack, with
 *                     no alternate stack set: runs on the main stack, "ok"
 *   onstack overflow  an SA_ONSTACK SIGSEGV handler (exit 42) and unbounded
 *                     recursion, no alternate stack: the kernel cannot run
 *                     the handler on the overflowed stack and kills the
 *                     program by SIGSEGV
 *   onstack later     the handler is installed first, sigaltstack is set
 *                     afterwards: the handler runs on that stack; a thread
 *                     begun before (and sampled since) and one begun after,
 *                     without one of their own, run it on their own stacks
 *
 * Each also prints what sigaction reports back (SA_ONSTACK kept).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uintptr_t where;
static char *alt;
static size_t alt_size = 256 * 1024;

static void big_handler(int sig)
{
	(void)sig;
	volatile char buf[200 * 1024];
	for (size_t i = 0; i < sizeof buf; i += 512)
		buf[i] = (char)i;
	where = (uintptr_t)&buf[sizeof buf - 1];
}

static void where_handler(int sig)
{
	(void)sig;
	volatile char c = 0;
	where = (uintptr_t)&c;
}

static void segv_handler(int sig)
{
	(void)sig;
	_exit(42);
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0) {
		perror("sigaction");
		exit(1);
	}
	struct sigaction back;
	sigaction(sig, NULL, &back);
	printf("sigaction reports SA_ONSTACK: %s\n", back.sa_flags & SA_ONSTACK ? "yes" : "no");
}

static int on_alt(void)
{
	return where >= (uintptr_t)alt && where < (uintptr_t)alt + alt_size;
}

static volatile int depth_sink;

static volatile int forever = 1;

NOINLINE static int recurse(int n)
{
	volatile char pad[256];
	pad[0] = (char)n;
	depth_sink = pad[0];
	return forever ? recurse(n + 1) + pad[0] : 0;
}

static volatile int go;
static volatile double spin_sink;

/* Begun before the program's first sigaltstack; computes for 50 ms of CPU
 * once it is set, then takes the signal. */
static void *early_thread(void *arg)
{
	(void)arg;
	while (!go)
		;
	/* in user mode (the clock read is a system call: between reads, a
	 * loop of arithmetic), where sonde's samples come */
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 200000; i++)
			spin_sink += i * 0.5;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000000L);
	volatile char c;
	uintptr_t here = (uintptr_t)&c;
	raise(SIGUSR2);
	printf("thread begun before, without its own alternate stack: handler on %s\n",
	       !on_alt() && where < here && here - where < 64 * 1024 ? "its stack" : "another stack");
	return NULL;
}

static void *other_thread(void *arg)
{
	(void)arg;
	volatile char c;
	uintptr_t here = (uintptr_t)&c;
	raise(SIGUSR2);
	/* on this thread's own stack: within a few pages of this frame */
	printf("thread without its own alternate stack: handler on %s\n",
	       !on_alt() && where < here && here - where < 64 * 1024 ? "its stack" : "another stack");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "big";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "big")) {
		install(SIGUSR1, big_handler);
		raise(SIGUSR1);
		printf("ok\n");
		return 0;
	}
	if (!strcmp(mode, "overflow")) {
		install(SIGSEGV, segv_handler);
		return recurse(0);
	}
	if (!strcmp(mode, "later")) {
		install(SIGUSR2, where_handler);
		pthread_t early;
		pthread_create(&early, NULL, early_thread, NULL);
		alt = malloc(alt_size);
		stack_t ss = {.ss_sp = alt, .ss_size = alt_size};
		if (sigaltstack(&ss, NULL) != 0) {
			perror("sigaltstack");
			return 1;
		}
		raise(SIGUSR2);
		printf("main thread: handler on %s\n", on_alt() ? "its alternate stack" : "another stack");
		go = 1;
		pthread_join(early, NULL);
		pthread_t th;
		pthread_create(&th, NULL, other_thread, NULL);
		pthread_join(th, NULL);
		return 0;
	}
	fprintf(stderr, "usage: onstack big|overflow|later\n");
	return 2;
}
