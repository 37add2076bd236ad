/* fault_wl.c - the program the fault tests (tests/fault/run.sh) profile.
 *
 * Usage: fault_wl [THREADS [ROUNDS]]
 *
 * Makes the very calls the fault shim fails in sonde (open, openat, write,
 * mmap, malloc, calloc, realloc, timer_create, syscall) from the program
 * itself, and a dlopen/dlclose (libm: sonde scans the loader's list), and prints what each returned, so that a test sees at once if a
 * fault meant for sonde reached the program. Its threads do a fixed amount
 * of arithmetic each (ROUNDS), so that stdout is the same in every run;
 * with WL_CPU=1 each thread also prints "cpu NAME cpu_ns N user_ns N"
 * (tests/fixtures/workloads/wl_cpu.h), the CPU time it used, for the test to compare
 * against samples (those lines vary and are not compared).
 *
 * WL_UNTIL=FILE: before its fixed work, the main thread burns CPU until FILE
 * exists (the shim's log, written when a fault fires; at most 60 s), so a
 * fault set for a later call of sonde's surely happens while the program
 * runs, whatever the machine's speed. It changes no output.
 *
 * Every line goes out with write(2) on descriptor 1, not through stdio.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/fixtures/workloads/wl_cpu.h"

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void out(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = (int)sizeof buf - 1;
	for (int off = 0; n > 0 && off < n;) {
		ssize_t w = write(1, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			char e[96];
			int k = snprintf(e, sizeof e, "fault_wl: write to stdout: %s\n", strerror(errno));
			(void)!write(2, e, (size_t)k);
			exit(3);
		}
		off += (int)w;
	}
}

static unsigned long long work(unsigned long long seed, long rounds)
{
	unsigned long long x = seed;
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
	return x;
}

struct job {
	int id;
	long rounds;
	unsigned long long sum;
};

static void *thread_main(void *p)
{
	struct job *j = p;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", j->id);
	pthread_setname_np(pthread_self(), name);
	/* Allocations and a mapping of the thread's own, checked. */
	size_t len = 1u << 20;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long *v = malloc(4096 * sizeof *v);
	if (m == MAP_FAILED || !v) {
		j->sum = 0;
		return NULL;
	}
	j->sum = work((unsigned long long)j->id + 1, j->rounds);
	memset(m, (int)(j->sum & 0xff), len);
	for (int i = 0; i < 4096; i++)
		v[i] = j->sum + (unsigned long long)i;
	j->sum ^= v[4095] ^ (unsigned long long)m[len - 1];
	free(v);
	munmap(m, len);
	if (wl_cpu_wanted()) {
		struct wl_cpu c = wl_cpu_now();
		out("cpu %s cpu_ns %lld user_ns %lld\n", name, c.cpu_ns, c.user_ns);
	}
	return NULL;
}

/* The program's own calls of everything the shim can fail. */
static void own_calls(void)
{
	char path[] = "fault_wl.XXXXXX";
	int fd = mkstemp(path);
	out("mkstemp %s\n", fd >= 0 ? "ok" : strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = open(path, O_WRONLY | O_TRUNC);
	out("open %s\n", fd >= 0 ? "ok" : strerror(errno));
	int dfd = openat(AT_FDCWD, path, O_RDONLY);
	out("openat %s\n", dfd >= 0 ? "ok" : strerror(errno));
	if (dfd >= 0)
		close(dfd);
	char block[4096];
	memset(block, 'x', sizeof block);
	ssize_t w = fd >= 0 ? write(fd, block, sizeof block) : -1;
	out("write %zd%s%s\n", w, w < 0 ? " " : "", w < 0 ? strerror(errno) : "");
	if (fd >= 0)
		close(fd);
	unlink(path);
	void *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	out("mmap %s\n", m != MAP_FAILED ? "ok" : strerror(errno));
	if (m != MAP_FAILED)
		munmap(m, 65536);
	int allocs = 0;
	for (int i = 0; i < 1000; i++) {
		void *a = malloc((size_t)(i % 97) + 1);
		void *c = calloc(4, (size_t)(i % 13) + 1);
		void *r = a ? realloc(a, (size_t)(i % 101) + 200) : NULL;
		allocs += (a != NULL) + (c != NULL) + (r != NULL);
		free(r ? r : a);
		free(c);
	}
	out("allocations %d of 3000\n", allocs);
	timer_t tm;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_NONE;
	int t = timer_create(CLOCK_MONOTONIC, &sev, &tm);
	out("timer_create %s\n", t == 0 ? "ok" : strerror(errno));
	if (t == 0)
		timer_delete(tm);
	long pid = syscall(SYS_getpid);
	out("syscall %s\n", pid == (long)getpid() ? "ok" : strerror(errno));
	/* A library loaded and unloaded: sonde scans the loader's list at each. */
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	double (*cos_)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
	out("dlopen %s\n", cos_ && cos_(0.0) == 1.0 ? "ok" : "failed");
	if (h)
		dlclose(h);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	long rounds = argc > 2 ? atol(argv[2]) : 20000;
	if (nthreads < 0 || nthreads > 64 || rounds < 0) {
		fprintf(stderr, "usage: fault_wl [THREADS(0..64) [ROUNDS]]\n");
		return 2;
	}
	const char *until = getenv("WL_UNTIL");
	if (until && *until) {
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			wl_burn(0.005);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (!exists(until) && now.tv_sec - t0.tv_sec < 60);
	}
	own_calls();
	struct job jobs[64];
	pthread_t th[64];
	int started = 0;
	for (int i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){i, rounds, 0};
		int e = pthread_create(&th[i], NULL, thread_main, &jobs[i]);
		if (e) {
			out("pthread_create %d: %s\n", i, strerror(e));
			break;
		}
		started++;
	}
	unsigned long long main_sum = work(99, rounds);
	unsigned long long sum = main_sum;
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		sum ^= jobs[i].sum * (unsigned long long)(i + 3);
	}
	own_calls();
	if (wl_cpu_wanted()) {
		struct wl_cpu c = wl_cpu_now();
		out("cpu main cpu_ns %lld user_ns %lld\n", c.cpu_ns, c.user_ns);
	}
	out("threads %d checksum %016llx\n", started, sum);
	return 0;
}
