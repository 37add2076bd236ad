/* prog.c - a C program annotated for Caliper (its C API and the CALI_MARK_* macros,
 * cali_decl.h), linked against a libcaliper: run by tests/e2e/caliper.sh with the
 * stand-in libcaliper (stub.c), under `sonde run --caliper` and without it.
 *
 * usage: prog [-i N] [-u MS] [-m]
 * N iterations (default 12) of a C loop (CALI_MARK_LOOP_BEGIN "mainloop", iterations
 * through its id), each a phase "solve" holding a byname string "kind" (every third
 * iteration "heavy", with three times the work) holding a set-twice integer "stage"
 * (1 then 2), and, in stage 2, the region "smooth" opened in smooth_step(); MS ms of
 * CPU a unit of work (default 2). A global attribute app=prog. -m: misuse after the
 * loop (ending regions and phases that are not open, misnesting), then one region
 * "after".
 *
 * It prints what it did, for the test to check sonde's report against: "calls LEVEL
 * N" for every level it opened, and "wall LEVEL around_ns A inside_ns I" for the timed
 * ones, summed: A from before the begin call to after the end call returned, I from
 * after the begin returned to before the end was called. sonde's inclusive time of a
 * level lies between the two.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cali_decl.h"

#define NOINLINE __attribute__((noinline))

struct timed {
	const char *name;
	unsigned long long around_ns, inside_ns, t0, t1;
	int calls;
};
static struct timed t_solve = { .name = "phase=solve" }, t_smooth = { .name = "region=smooth" },
		    t_heavy = { .name = "kind=heavy" }, t_light = { .name = "kind=light" };

static unsigned long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* before the begin call; after it returned; before the end call; after it returned */
static void t_before(struct timed *t) { t->t0 = mono_ns(); }
static void t_in(struct timed *t) { t->t1 = mono_ns(); }
static void t_out(struct timed *t) { t->inside_ns += mono_ns() - t->t1; }
static void t_after(struct timed *t)
{
	t->around_ns += mono_ns() - t->t0;
	t->calls++;
}

static double unit_ms = 2;
static volatile double sink;

NOINLINE static void work(double units)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	double end = ts.tv_sec + ts.tv_nsec * 1e-9 + units * unit_ms * 1e-3, now = 0;
	while (now < end) {
		for (int k = 0; k < 2000; k++)
			sink = sink * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec + ts.tv_nsec * 1e-9;
	}
}

NOINLINE static void smooth_step(void)
{
	t_before(&t_smooth);
	CALI_MARK_BEGIN("smooth");
	t_in(&t_smooth);
	work(1);
	t_out(&t_smooth);
	CALI_MARK_END("smooth");
	t_after(&t_smooth);
}

NOINLINE static void solve(int i)
{
	struct timed *k = i % 3 ? &t_light : &t_heavy;
	t_before(k);
	cali_begin_string_byname("kind", i % 3 ? "light" : "heavy");
	t_in(k);
	cali_set_int_byname("stage", 1);
	work(i % 3 ? 1 : 3);
	cali_set_int_byname("stage", 2);
	smooth_step();
	cali_end_byname("stage");
	t_out(k);
	cali_end_byname("kind");
	t_after(k);
}

NOINLINE static void misuse(void)
{
	cali_end_region("never");       /* not open */
	cali_end_phase("ghost");        /* no phase open */
	cali_begin_region("a");
	cali_begin_region("b");
	cali_end_region("a");           /* misnested: b is innermost */
	cali_end_region("b");
	cali_begin_region("after");
	work(1);
	cali_end_region("after");
	printf("calls region=after 1\n");
}

int main(int argc, char **argv)
{
	int n = 12, opt, bad = 0;
	while ((opt = getopt(argc, argv, "i:u:m")) != -1) {
		if (opt == 'i')
			n = atoi(optarg);
		else if (opt == 'u')
			unit_ms = atof(optarg);
		else if (opt == 'm')
			bad = 1;
	}
	cali_set_global_string_byname("app", "prog");
	CALI_MARK_LOOP_BEGIN(mainloop, "mainloop");
	for (int i = 0; i < n; i++) {
		CALI_MARK_ITERATION_BEGIN(mainloop, i);
		t_before(&t_solve);
		CALI_MARK_PHASE_BEGIN("solve");
		t_in(&t_solve);
		solve(i);
		t_out(&t_solve);
		CALI_MARK_PHASE_END("solve");
		t_after(&t_solve);
		CALI_MARK_ITERATION_END(mainloop);
	}
	CALI_MARK_LOOP_END(mainloop);
	if (bad)
		misuse();
	printf("calls loop=mainloop 1\ncalls iteration#mainloop %d\ncalls stage=1 %d\n"
	       "calls stage=2 %d\n", n, n, n);
	struct timed *all[] = { &t_solve, &t_smooth, &t_heavy, &t_light };
	for (int k = 0; k < 4; k++)
		printf("calls %s %d\nwall %s around_ns %llu inside_ns %llu\n", all[k]->name,
		       all[k]->calls, all[k]->name, all[k]->around_ns, all[k]->inside_ns);
	return 0;
}
