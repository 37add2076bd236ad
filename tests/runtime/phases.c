/* phases.c - an annotated program with a known split of CPU work by phase and
 * iteration, for the annotation tests (tests/e2e/annotate.sh).
 *
 * Each iteration (sonde_set_int("iteration", i)) runs phase "solve" for 7
 * work units, "exchange" for 2 and "checkpoint" for 1 (identical work per
 * unit), so samples split 70/20/10 % by phase and evenly by iteration. Phases
 * are opened by name; inside "solve", a nested region "smooth" takes half of
 * solve's units. With -t N, N threads each do the same; a process-scope
 * attribute "run" set by the main thread then appears in every thread's
 * samples. With -m, deliberate misuse follows the work (tests check the
 * messages). Output is the same with or without sonde.
 *
 * With -d N, it then sets N distinct values of attribute "uid" (a unique id
 * per step, the case that would grow the context tree without bound) and
 * prints its peak resident memory.
 *
 * With -I, iterations are not annotated (phases repeat in one context).
 * With -x, a thread opens region "left-open" and ends without closing it.
 * With -s K, each iteration also has a phase "sleep" of K short nanosleeps
 * (K voluntary context switches).
 *
 * With -S FACTOR, solve does FACTOR times its work (a phase made slower).
 *
 * With -E, the run is followed by an exec of /bin/true (regions open then: none).
 *
 * With -F, the (single-threaded) run is followed by a fork without exec: the
 * child runs the iterations once more and exits; the parent waits for it and
 * prints "child status N".
 *
 * With WL_CPU=1 in the environment, every thread that works prints
 * "cpu THREAD cpu_ns N user_ns N" when done (tests/workloads/wl_cpu.h): the
 * CPU time it used, which tests expect samples from, then one such line per
 * phase, "cpu phase=NAME ...", its CPU time in that phase.
 *
 * usage: phases [-i ITERS] [-u UNIT_MS] [-t THREADS] [-m] [-d N] [-I] [-x] [-s K] [-S FACTOR] [-F] [-E]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/sonde.h"
#include "tests/workloads/wl_cpu.h"

#define NOINLINE __attribute__((noinline))

static int iters = 10;
static double solve_scale = 1.0;
static int no_iteration;
static int sleeps;
static double unit_ms = 2.0;
static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Iterations between two reads of the thread's CPU clock, a system call:
 * grown until a stretch takes 50 to 100 us, so that the clock's cost stays
 * near 1 % of the work on any machine (at a fixed 2000 iterations it was 5 to
 * 25 %, a share of system time that changed from machine to machine and from
 * run to run, and with it the user-mode time that samples count). */
static __thread unsigned chunk = 2000;

/* `units` units of CPU time, measured on this thread's clock. */
NOINLINE static void work(double units)
{
	if (units * unit_ms <= 0)
		return; /* -u 0: the annotations alone */
	double now = cpu_now(), end = now + units * unit_ms * 1e-3;
	uint64_t x = 1;
	while (now < end) {
		for (unsigned i = 0; i < chunk; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		double t = cpu_now();
		if (t - now < 50e-6 && chunk < (1u << 24))
			chunk *= 2;
		now = t;
	}
	sink += x;
}

/* With WL_CPU=1: CPU time per phase of this thread, printed when it ends. */
static __thread struct wl_cpu phase_cpu[4];
static const char *const phase_names[4] = {"solve", "exchange", "checkpoint", "sleep"};

static void phase_done(int k, struct wl_cpu from)
{
	struct wl_cpu now = wl_cpu_now();
	phase_cpu[k].cpu_ns += now.cpu_ns - from.cpu_ns;
	phase_cpu[k].user_ns += now.user_ns - from.user_ns;
}

/* With WL_CPU=1: the elapsed time of this thread's solve phases and smooth
 * regions, as the program itself sees it (the region timing's reference):
 * around the begin and end calls (outer) and between them (inner). sonde's
 * own time for a region lies between the two whatever the load: a thread
 * preempted inside sonde_region_begin or _end widens only the outer one. */
static __thread uint64_t solve_wall_ns, smooth_wall_ns, solve_in_ns, smooth_in_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

NOINLINE static void solve(void)
{
	work(3.5 * solve_scale);
	uint64_t t0 = mono_ns();
	sonde_region_begin("smooth");
	uint64_t t1 = mono_ns();
	work(3.5 * solve_scale);
	smooth_in_ns += mono_ns() - t1;
	sonde_region_end("smooth");
	smooth_wall_ns += mono_ns() - t0;
}

NOINLINE static void exchange(void) { work(2); }
NOINLINE static void checkpoint(void) { work(1); }

static void *run(void *arg)
{
	long worker = (long)arg;
	if (worker > 0)
		sonde_begin_int("worker", worker); /* thread scope: this thread's only */
	sonde_attr_t it = sonde_attr_create("iteration", SONDE_INT, SONDE_THREAD);
	for (int i = 0; i < iters; i++) {
		if (!no_iteration)
			sonde_attr_set_int(it, i);
		struct wl_cpu t0 = wl_cpu_now();
		uint64_t w0 = mono_ns();
		sonde_begin("phase", "solve");
		uint64_t w1 = mono_ns();
		solve();
		solve_in_ns += mono_ns() - w1;
		sonde_end("phase");
		solve_wall_ns += mono_ns() - w0;
		phase_done(0, t0);
		t0 = wl_cpu_now();
		sonde_begin("phase", "exchange");
		exchange();
		sonde_end("phase");
		phase_done(1, t0);
		t0 = wl_cpu_now();
		sonde_begin("phase", "checkpoint");
		checkpoint();
		sonde_end("phase");
		phase_done(2, t0);
		if (sleeps) {
			t0 = wl_cpu_now();
			sonde_begin("phase", "sleep");
			for (int k = 0; k < sleeps; k++) {
				struct timespec ts = {0, 50000};
				nanosleep(&ts, NULL);
			}
			sonde_end("phase");
			phase_done(3, t0);
		}
	}
	if (!no_iteration)
		sonde_attr_end(it);
	if (worker > 0)
		sonde_end("worker");
	if (wl_cpu_wanted()) {
		char name[32];
		snprintf(name, sizeof name, "worker-%ld", worker);
		wl_cpu_print(name, (struct wl_cpu){0, 0});
		for (int k = 0; k < 4; k++)
			printf("cpu phase=%s cpu_ns %lld user_ns %lld\n", phase_names[k],
			       phase_cpu[k].cpu_ns, phase_cpu[k].user_ns);
		printf("wall %s solve_ns %llu smooth_ns %llu solve_in_ns %llu smooth_in_ns %llu\n", name,
		       (unsigned long long)solve_wall_ns, (unsigned long long)smooth_wall_ns,
		       (unsigned long long)solve_in_ns, (unsigned long long)smooth_in_ns);
		fflush(stdout);
	}
	return NULL;
}

static void *leave_open(void *arg)
{
	(void)arg;
	sonde_region_begin("left-open");
	work(2);
	return NULL; /* the region is still open when the thread ends */
}

static void misuse(void)
{
	sonde_region_begin("solve");
	sonde_region_begin("halo");
	sonde_region_end("solve");   /* innermost is halo */
	sonde_region_end("halo");
	sonde_end("phase");          /* nothing open */
	sonde_begin("phase", "outer");
	sonde_begin("level", "2");
	sonde_end("phase");          /* innermost is level */
	sonde_end("level");
	char big[400];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	sonde_begin("phase", big);   /* truncated */
	sonde_end("phase");
	sonde_begin("phase", "after");
	work(2);                     /* annotations still work after misuse */
	sonde_end("phase");
}

int main(int argc, char **argv)
{
	int threads = 0, mis = 0, opt;
	long distinct = 0;
	int left_open = 0, forks = 0, execs = 0;
	while ((opt = getopt(argc, argv, "i:u:t:md:Ixs:S:FE")) != -1) {
		switch (opt) {
		case 'i': iters = atoi(optarg); break;
		case 'u': unit_ms = atof(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'm': mis = 1; break;
		case 'd': distinct = atol(optarg); break;
		case 'I': no_iteration = 1; break;
		case 'x': left_open = 1; break;
		case 's': sleeps = atoi(optarg); break;
		case 'S': solve_scale = atof(optarg); break;
		case 'F': forks = 1; break;
		case 'E': execs = 1; break;
		default:
			fprintf(stderr, "usage: phases [-i ITERS] [-u UNIT_MS] [-t THREADS] [-m] [-d N] [-I] [-x] [-s K] [-S FACTOR] [-F] [-E]\n");
			return 2;
		}
	}
	if (threads > 0) {
		sonde_attr_t runattr = sonde_attr_create("run", SONDE_STRING, SONDE_PROCESS);
		sonde_attr_begin_str(runattr, "main-run");
		pthread_t th[64];
		if (threads > 64)
			threads = 64;
		for (int i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, run, (void *)(long)(i + 1));
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		sonde_attr_end(runattr);
	} else {
		run(NULL);
	}
	if (forks) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			run(NULL);
			exit(0);
		}
		int status = -1;
		waitpid(child, &status, 0);
		printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (mis)
		misuse();
	if (left_open) {
		pthread_t th;
		pthread_create(&th, NULL, leave_open, NULL);
		pthread_join(th, NULL);
	}
	if (distinct > 0) {
		for (long i = 0; i < distinct; i++)
			sonde_set_int("uid", i);
		sonde_end("uid");
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("maxrss_kb %ld\n", ru.ru_maxrss);
	}
	printf("phases: %d iterations, %d threads, done\n", iters, threads);
	if (execs) {
		fflush(stdout);
		execl("/bin/true", "true", (char *)NULL);
		perror("phases: exec /bin/true");
		return 1;
	}
	return 0;
}
