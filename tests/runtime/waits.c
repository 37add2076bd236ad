/* waits.c - a thread that computes, then waits in each of the ways a program
 * blocks without any of the calls sonde wraps by name (issue 18 item 2): a
 * mutex another thread holds, a condition variable, a barrier, a reader-writer
 * lock, a raw futex wait and a raw nanosleep through syscall(), each about
 * WAIT_MS (argument 1, default 300). Another thread makes each wait end.
 * It computes first, after a 60 ms sleep through an inline `syscall`
 * instruction (invisible to sonde, before any sample: that time belongs
 * under compute, not at the thread's root). Then it reads /dev/zero in large
 * blocks for about WAIT_MS, mostly kernel
 * time (issue 18 item 4), and prints `read_zero.sys MS` and `read_zero.user
 * MS`, its system and user time (getrusage RUSAGE_THREAD).
 *
 * Prints one line per phase, `NAME WALL_MS`, from CLOCK_MONOTONIC around the
 * call, so a test can compare sonde's wall-time per function with the
 * program's own clock. Each wait is in a function of its own (noinline) that
 * the report must show with its time.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static long wait_ms = 300;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t bar;
static int cond_ready;
static atomic_int fword;
static atomic_int step; /* the phase the helper is to serve next */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static volatile double sink;

/* A sleep sonde cannot see (an inline `syscall` instruction, not libc's):
 * off-CPU time before the thread's first sample, with no stack known yet. */
static void raw_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	long ret;
	register long r10 __asm__("r10") = 0;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L), "d"(0L), "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
}

NOINLINE static void compute(void)
{
	raw_sleep_ms(60);
	double t0 = now_ms(), x = 0;
	while (now_ms() - t0 < 125)
		for (int i = 0; i < 20000; i++)
			x += i * 0.5;
	sink = x;
}

NOINLINE static void wait_mutex(void)
{
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
}

NOINLINE static void wait_cond(void)
{
	pthread_mutex_lock(&cmu);
	while (!cond_ready)
		pthread_cond_wait(&cv, &cmu);
	pthread_mutex_unlock(&cmu);
}

NOINLINE static void wait_barrier(void)
{
	pthread_barrier_wait(&bar);
}

NOINLINE static void wait_rwlock(void)
{
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
}

NOINLINE static void wait_futex(void)
{
	while (atomic_load(&fword) == 0)
		syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

NOINLINE static void wait_raw_sleep(void)
{
	struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
	syscall(SYS_nanosleep, &ts, NULL);
}

static double sys_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double user_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3;
}

static double read_zero_sys, read_zero_user;

NOINLINE static void read_zero(void)
{
	static char buf[1 << 20];
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		exit(1);
	double s0 = sys_ms(), u0 = user_ms(), t0 = now_ms();
	while (now_ms() - t0 < wait_ms)
		if (read(fd, buf, sizeof buf) <= 0)
			exit(1);
	read_zero_sys = sys_ms() - s0;
	read_zero_user = user_ms() - u0;
	close(fd);
}

/* The helper: holds each resource for wait_ms once the main thread is about
 * to wait on it, then lets it go. */
static void *helper(void *arg)
{
	(void)arg;
	while (atomic_load(&step) != 1)
		sleep_ms(1);
	pthread_mutex_lock(&mu);
	atomic_store(&step, 2);
	sleep_ms(wait_ms);
	pthread_mutex_unlock(&mu);

	while (atomic_load(&step) != 3)
		sleep_ms(1);
	sleep_ms(wait_ms);
	pthread_mutex_lock(&cmu);
	cond_ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cmu);

	while (atomic_load(&step) != 4)
		sleep_ms(1);
	sleep_ms(wait_ms);
	pthread_barrier_wait(&bar);

	while (atomic_load(&step) != 5)
		sleep_ms(1);
	pthread_rwlock_rdlock(&rw);
	atomic_store(&step, 6);
	sleep_ms(wait_ms);
	pthread_rwlock_unlock(&rw);

	while (atomic_load(&step) != 7)
		sleep_ms(1);
	sleep_ms(wait_ms);
	atomic_store(&fword, 1);
	syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

#define PHASE(name, call)                                                      \
	do {                                                                   \
		double t0_ = now_ms();                                         \
		call;                                                          \
		printf("%s %.3f\n", name, now_ms() - t0_);                     \
	} while (0)

int main(int argc, char **argv)
{
	if (argc > 1)
		wait_ms = atol(argv[1]);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_t h;
	if (pthread_create(&h, NULL, helper, NULL) != 0)
		return 1;
	PHASE("compute", compute());
	atomic_store(&step, 1);
	while (atomic_load(&step) != 2)
		sleep_ms(1);
	PHASE("wait_mutex", wait_mutex());
	atomic_store(&step, 3);
	PHASE("wait_cond", wait_cond());
	atomic_store(&step, 4);
	PHASE("wait_barrier", wait_barrier());
	atomic_store(&step, 5);
	while (atomic_load(&step) != 6)
		sleep_ms(1);
	PHASE("wait_rwlock", wait_rwlock());
	atomic_store(&step, 7);
	PHASE("wait_futex", wait_futex());
	PHASE("wait_raw_sleep", wait_raw_sleep());
	pthread_join(h, NULL);
	PHASE("read_zero", read_zero());
	printf("read_zero.sys %.3f\n", read_zero_sys);
	printf("read_zero.user %.3f\n", read_zero_user);
	return 0;
}
