/* hostile.c - programs that are hard on a profiler, one per mode, for
 * tests/e2e/hostile.sh. Each mode prints what the program observed (never
 * timings or counts that vary between runs, unless the test asks for them on
 * stderr), so that the test can compare a plain run with a profiled one line
 * by line: any difference is a change sonde made to the program.
 *
 * usage: hostile MODE [ARG]
 *   loop SEC         burn SEC seconds of CPU in one thread
 *   smallstack       threads with PTHREAD_STACK_MIN stacks that burn CPU
 *   altstack         the program's own small sigaltstack and SA_ONSTACK handler
 *   rtsig            handlers on SIGRTMIN..SIGRTMAX; raise/kill/sigqueue/tgkill
 *                    each real-time signal and report what arrived
 *   rtdefault        SIGRTMIN+4 left at its default action, then raised
 *   blocking         nanosleep, poll, select, epoll_wait, clock_nanosleep,
 *                    sem_timedwait, sigtimedwait, usleep: report EINTRs
 *   sigblock SEC     burn SEC with every signal blocked, then unblock and burn
 *                    a little more (the queued samples must not be charged to
 *                    the unblocking call)
 *   rawblock SEC     the same with raw rt_sigprocmask system calls
 *   blockthread SEC  a thread that blocks every signal, burns SEC and exits
 *   dlloop N LIB     dlopen/dlclose LIB N times
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* The CPU time this process used, and the calling thread's own (the thread
 * a one-thread mode samples; the process figure also holds sonde's writer
 * thread), for the test's expectations (stderr). */
static void report_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "cpu_ms %.0f\n",
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3);
	fprintf(stderr, "thread_cpu_ms %.0f\n", cpu_now() * 1e3);
}

NOINLINE static void loop_work(double s) { wl_burn(s); }

static int mode_loop(double s)
{
	loop_work(s);
	printf("loop done\n");
	report_cpu();
	return 0;
}

/* ---- small stacks ------------------------------------------------------ */

NOINLINE static void small_work(double s) { wl_burn(s); }

/* Recurses until about `leave` bytes of the thread's stack are left, then
 * burns CPU there: a valid program that uses its small stack nearly fully. */
NOINLINE static void small_deep(double s, size_t leave, uintptr_t lo)
{
	volatile char pad[256];
	pad[0] = 1;
	if ((uintptr_t)pad > lo + leave + 512)
		small_deep(s, leave, lo);
	else
		small_work(s);
	pad[1] = pad[0];
}

static void *small_thread(void *arg)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &lo, &size);
		pthread_attr_destroy(&a);
	}
	small_deep(*(double *)arg, 3072, (uintptr_t)lo);
	return NULL;
}

static int mode_smallstack(void)
{
	double s = 0.1;
	/* The program's own lazily bound calls are bound here, where there is
	 * stack for the loader: the threads below leave it 3 KiB. */
	small_work(0.001);
	for (int round = 0; round < 4; round++) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
		pthread_t th;
		int err = pthread_create(&th, &a, small_thread, &s);
		pthread_attr_destroy(&a);
		if (err) {
			printf("pthread_create: %s\n", strerror(err));
			return 1;
		}
		pthread_join(th, NULL);
	}
	printf("smallstack done\n");
	report_cpu();
	return 0;
}

/* ---- the program's own alternate stack ---------------------------------- */

static volatile sig_atomic_t on_alt;
static char *alt_lo;
static size_t alt_size;

static void usr1_handler(int sig)
{
	(void)sig;
	char here;
	on_alt = &here >= alt_lo && &here < alt_lo + alt_size;
}

NOINLINE static void alt_work(double s) { wl_burn(s); }

static int mode_altstack(void)
{
	alt_size = MINSIGSTKSZ > 8192 ? MINSIGSTKSZ : 8192;
	alt_lo = malloc(alt_size);
	stack_t ss = {.ss_sp = alt_lo, .ss_size = alt_size, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = usr1_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	alt_work(0.3);
	raise(SIGUSR1);
	stack_t cur;
	sigaltstack(NULL, &cur);
	printf("handler on the program's stack: %s\n", on_alt ? "yes" : "no");
	printf("sigaltstack is the program's: %s\n",
	       cur.ss_sp == alt_lo && cur.ss_size == alt_size ? "yes" : "no");
	report_cpu();
	return 0;
}

/* ---- real-time signals --------------------------------------------------- */

#define NRT 33
static volatile sig_atomic_t rt_count[NRT];
static volatile sig_atomic_t rt_code[NRT];
static volatile sig_atomic_t rt_value[NRT];

static void rt_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int i = sig - SIGRTMIN;
	if (i < 0 || i >= NRT)
		return;
	rt_count[i]++;
	rt_code[i] = si->si_code;
	rt_value[i] = si->si_code == SI_QUEUE ? si->si_value.sival_int : -1;
}

static const char *code_name(int c)
{
	switch (c) {
	case SI_USER: return "SI_USER";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TKILL: return "SI_TKILL";
	default: return "other";
	}
}

NOINLINE static void rt_work(double s) { wl_burn(s); }

static int mode_rtsig(void)
{
	int n = SIGRTMAX - SIGRTMIN + 1;
	if (n > NRT)
		n = NRT;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = rt_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < n; i++)
		if (sigaction(SIGRTMIN + i, &sa, NULL) != 0)
			printf("sigaction(SIGRTMIN+%d): %s\n", i, strerror(errno));
	/* Every handler reads back as the program's. */
	int same = 0;
	for (int i = 0; i < n; i++) {
		struct sigaction old;
		sigaction(SIGRTMIN + i, NULL, &old);
		same += old.sa_sigaction == rt_handler;
	}
	printf("handlers read back: %d of %d\n", same, n);
	rt_work(0.2);
	for (int i = 0; i < n; i++) {
		int sig = SIGRTMIN + i;
		raise(sig);
		kill(getpid(), sig);
		union sigval v = {.sival_int = 1000 + i};
		sigqueue(getpid(), sig, v);
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	}
	rt_work(0.2);
	for (int i = 0; i < n; i++)
		printf("SIGRTMIN+%d: %d received, last %s value %d\n", i, (int)rt_count[i],
		       code_name(rt_code[i]), (int)rt_value[i]);
	report_cpu();
	return 0;
}

static volatile sig_atomic_t io_count;
static void rt_count_io(int sig)
{
	(void)sig;
	io_count++;
}

static int mode_rtdefault(void)
{
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		rt_work(0.1);
		raise(SIGRTMIN + 4);
		rt_work(0.05);
		_exit(0);
	}
	int st = 0;
	waitpid(c, &st, 0);
	if (WIFSIGNALED(st))
		printf("child killed by SIGRTMIN+%d\n", WTERMSIG(st) - SIGRTMIN);
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	/* And ignored: nothing happens. */
	signal(SIGRTMIN + 4, SIG_IGN);
	raise(SIGRTMIN + 4);
	printf("ignored SIGRTMIN+4 survived\n");
	/* SIGIO at its default action kills, sonde or not. */
	fflush(stdout);
	c = fork();
	if (c == 0) {
		rt_work(0.05);
		kill(getpid(), SIGIO);
		rt_work(0.05);
		_exit(0);
	}
	waitpid(c, &st, 0);
	printf("SIGIO child: %s %d\n", WIFSIGNALED(st) ? "killed by" : "exited",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	/* And a handler of the program's gets it. */
	signal(SIGIO, (void (*)(int))rt_count_io);
	raise(SIGIO);
	kill(getpid(), SIGIO);
	printf("SIGIO handler ran %d times\n", (int)io_count);
	return 0;
}

/* ---- a handler on every signal ------------------------------------------- */

static volatile sig_atomic_t all_count[65];

static void all_handler(int sig)
{
	if (sig > 0 && sig < 65)
		all_count[sig]++;
}

NOINLINE static void all_work(double s) { wl_burn(s); }

/* Installs one handler on every signal that can be caught (SIGRTMIN+4,
 * sonde's, SIGIO and SIGTERM included), works, sends itself a few of them,
 * and reports which arrived. */
static int mode_allsig(void)
{
	int set = 0;
	for (int sig = 1; sig < 65; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33)
			continue; /* uncatchable, or glibc's own */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = all_handler;
		sa.sa_flags = SA_RESTART;
		set += sigaction(sig, &sa, NULL) == 0;
	}
	printf("handlers installed: %d\n", set);
	all_work(0.3);
	int sent[] = {SIGUSR1, SIGTERM, SIGIO, SIGPROF, SIGALRM, SIGCHLD, SIGINT, SIGHUP,
		      SIGRTMIN, SIGRTMIN + 4, SIGRTMAX};
	for (unsigned i = 0; i < sizeof sent / sizeof sent[0]; i++)
		raise(sent[i]);
	all_work(0.1);
	for (unsigned i = 0; i < sizeof sent / sizeof sent[0]; i++)
		printf("signal %d: %d\n", sent[i], (int)all_count[sent[i]]);
	int others = 0;
	for (int sig = 1; sig < 65; sig++)
		others += all_count[sig];
	printf("all handlers ran %d times\n", others);
	report_cpu();
	return 0;
}

/* ---- blocking calls ---------------------------------------------------- */

static double blocked_total, raw_total; /* seconds, both threads */
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(const char *what, int r, double t0, double want)
{
	double took = mono_now() - t0;
	pthread_mutex_lock(&total_lock);
	if (!strcmp(what, "raw nanosleep"))
		raw_total += took;
	else
		blocked_total += took;
	pthread_mutex_unlock(&total_lock);
	printf("%s: %s, %s\n", what, r < 0 && errno == EINTR ? "EINTR" : "ok",
	       took >= want * 0.95 ? "full time" : "returned early");
}

NOINLINE static void blocking_calls(void)
{
	double t0 = mono_now();
	struct timespec ts = {0, 300000000};
	int r = nanosleep(&ts, NULL);
	check("nanosleep", r, t0, 0.3);

	t0 = mono_now();
	r = poll(NULL, 0, 200);
	check("poll", r, t0, 0.2);

	t0 = mono_now();
	struct timeval tv = {0, 150000};
	r = select(0, NULL, NULL, NULL, &tv);
	check("select", r, t0, 0.15);

	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev;
	t0 = mono_now();
	r = epoll_wait(ep, &ev, 1, 150);
	check("epoll_wait", r, t0, 0.15);
	close(ep);

	t0 = mono_now();
	ts.tv_sec = 0;
	ts.tv_nsec = 150000000;
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	if (r) {
		errno = r;
		r = -1;
	}
	check("clock_nanosleep", r, t0, 0.15);

	sem_t sem;
	sem_init(&sem, 0, 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 150000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	t0 = mono_now();
	r = sem_timedwait(&sem, &dl);
	if (r < 0 && errno == ETIMEDOUT)
		r = 0;
	check("sem_timedwait", r, t0, 0.15);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ts.tv_sec = 0;
	ts.tv_nsec = 150000000;
	t0 = mono_now();
	r = sigtimedwait(&set, NULL, &ts);
	if (r < 0 && errno == EAGAIN)
		r = 0;
	check("sigtimedwait", r, t0, 0.15);

	t0 = mono_now();
	r = usleep(150000);
	check("usleep", r, t0, 0.15);

	t0 = mono_now();
	r = (int)syscall(SYS_nanosleep, &(struct timespec){0, 150000000}, NULL);
	check("raw nanosleep", r, t0, 0.15);
}

static double thread_elapsed;

static void *blocking_thread(void *arg)
{
	(void)arg;
	double t0 = mono_now();
	blocking_calls();
	thread_elapsed = mono_now() - t0;
	return NULL;
}

NOINLINE static void block_work(double s) { wl_burn(s); }

static int mode_blocking(void)
{
	double start = mono_now();
	block_work(0.1);
	blocking_calls();
	/* And in a second thread, while the first burns CPU. */
	pthread_t th;
	pthread_create(&th, NULL, blocking_thread, NULL);
	block_work(0.3);
	double t0 = mono_now();
	pthread_join(th, NULL);
	double joined = mono_now() - t0;
	fprintf(stderr, "blocked_ms %.0f raw_ms %.0f join_ms %.0f elapsed_ms %.0f\n",
		blocked_total * 1e3, raw_total * 1e3, joined * 1e3,
		(mono_now() - start + thread_elapsed) * 1e3);
	report_cpu();
	return 0;
}

/* ---- signals blocked by the program -------------------------------------- */

NOINLINE static void blocked_work(double s) { wl_burn(s); }
NOINLINE static void unblocked_work(double s) { wl_burn(s); }

/* raw: block and unblock with the system call itself, as a runtime of
 * another language might, unseen by any libc wrapper. */
static int mode_sigblock(double s, int raw)
{
	sigset_t all, old;
	sigfillset(&all);
	if (raw)
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	else
		sigprocmask(SIG_BLOCK, &all, &old);
	double c0 = cpu_now();
	blocked_work(s);
	double blocked = cpu_now() - c0;
	if (raw)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	else
		sigprocmask(SIG_SETMASK, &old, NULL);
	unblocked_work(s / 2);
	printf("sigblock done\n");
	fprintf(stderr, "blocked_cpu_ms %.0f\n", blocked * 1e3);
	report_cpu();
	return 0;
}

static void *blockthread_fn(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	double c0 = cpu_now();
	blocked_work(*(double *)arg);
	fprintf(stderr, "blocked_cpu_ms %.0f\n", (cpu_now() - c0) * 1e3);
	return NULL;
}

static int mode_blockthread(double s)
{
	pthread_t th;
	pthread_create(&th, NULL, blockthread_fn, &s);
	pthread_join(th, NULL);
	unblocked_work(s / 4);
	printf("blockthread done\n");
	report_cpu();
	return 0;
}

/* ---- dlopen churn --------------------------------------------------------- */

static int mode_dlloop(int n, const char *lib)
{
	int ok = 0;
	for (int i = 0; i < n; i++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		ok += dlsym(h, "plug_leaf") != NULL;
		dlclose(h);
	}
	printf("dlloop %d of %d\n", ok, n);
	report_cpu();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *m = argc > 1 ? argv[1] : "";
	double arg = argc > 2 ? atof(argv[2]) : 0.5;
	if (!strcmp(m, "loop"))
		return mode_loop(arg);
	if (!strcmp(m, "smallstack"))
		return mode_smallstack();
	if (!strcmp(m, "altstack"))
		return mode_altstack();
	if (!strcmp(m, "rtsig"))
		return mode_rtsig();
	if (!strcmp(m, "rtdefault"))
		return mode_rtdefault();
	if (!strcmp(m, "allsig"))
		return mode_allsig();
	if (!strcmp(m, "blocking"))
		return mode_blocking();
	if (!strcmp(m, "sigblock"))
		return mode_sigblock(arg, 0);
	if (!strcmp(m, "rawblock"))
		return mode_sigblock(arg, 1);
	if (!strcmp(m, "blockthread"))
		return mode_blockthread(arg);
	if (!strcmp(m, "dlloop") && argc > 3)
		return mode_dlloop(atoi(argv[2]), argv[3]);
	fprintf(stderr, "usage: hostile loop|smallstack|altstack|rtsig|rtdefault|blocking|"
			"sigblock|blockthread|dlloop N LIB\n");
	return 2;
}
