/* source_table.c - how the runtime runs each kind of sampling source: one
 * row per kind (enum sd_source_kind), beside its description in
 * source_kinds.c, and the walkers that run each mechanism's hooks.
 *
 * cpu-time and wall-time are one mechanism, the per-thread clocks of
 * sources.c (a perf_event task clock, else a POSIX CPU-time timer: the
 * fallback is how a clocked source runs, struct sd_source.use_timer, not a
 * row of its own); PAPI is papi.c's. The rows' data fields are read in
 * signal context (handler.c: read-only, initialised at load); the hooks and
 * walkers run in ordinary context: the constructor, a thread's start and
 * end, fork and exec (runtime.c, tasks.c), each as its caller says.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>

#include "sampler/sampler.h"

static const char *clock_mechanism(const struct sd_source *s)
{
	return s->use_timer ? "posix-timer:thread-cputime" : "perf_event:task-clock";
}

static const char *papi_mechanism(const struct sd_source *s)
{
	(void)s;
	return "papi:overflow";
}

/* PAPI's set belongs to the calling thread (tid is its own). */
static int papi_open(struct sd_thread *t, pid_t tid)
{
	(void)tid;
	return sd_papi_thread_open(t);
}

#define CLOCK_HOOKS                                                                        \
	.mechanism = clock_mechanism, .probe = sd_sources_probe,                           \
	.probe_release = sd_sources_probe_release, .thread_open = sd_sources_open,         \
	.thread_close = sd_sources_close, .rt_signal = -1, .clocked = 1, .timed = 1

const struct sd_source_ops sd_source_ops[SD_SRC_NKINDS] = {
	[SD_SRC_CPU] = {.desc = &sd_source_kinds[SD_SRC_CPU], CLOCK_HOOKS, .cpu_clock = 1},
	[SD_SRC_WALL] = {.desc = &sd_source_kinds[SD_SRC_WALL], CLOCK_HOOKS, .off_cpu = 1},
	[SD_SRC_PAPI] = {
		.desc = &sd_source_kinds[SD_SRC_PAPI],
		.own_thread = 1,
		.rt_signal = 2, /* PAPI's own overflow signal, SIGRTMIN+2 */
		.mechanism = papi_mechanism,
		.probe = sd_papi_probe,
		.thread_open = papi_open,
		.thread_stop = sd_papi_thread_close,
		.thread_account = sd_papi_thread_account,
		.fork_child = sd_papi_fork_child,
		.exec_prepare = sd_papi_exec_prepare,
	},
};

/* Has a row before k the same hook in field?
 * Each mechanism's hook then runs once. */
#define HOOK_SEEN(k, field)                                                                \
	({                                                                                 \
		int seen_ = 0;                                                             \
		for (unsigned j_ = 0; j_ < (k); j_++)                                      \
			seen_ |= sd_source_ops[j_].field == sd_source_ops[k].field;        \
		seen_;                                                                     \
	})

#define FOR_EACH_HOOK(k, field)                                                            \
	for (unsigned k = 0; k < SD_SRC_NKINDS; k++)                                       \
		if (sd_source_ops[k].field && !HOOK_SEEN(k, field))

void sd_source_probe_all(struct sd_config *cfg)
{
	FOR_EACH_HOOK(k, probe)
		sd_source_ops[k].probe(cfg);
}

void sd_source_probe_release_all(void)
{
	FOR_EACH_HOOK(k, probe_release)
		sd_source_ops[k].probe_release();
}

int sd_source_thread_open_all(struct sd_thread *t, pid_t tid, int self)
{
	int err = 0;
	for (int clocks = 0; clocks < 2; clocks++)
		FOR_EACH_HOOK(k, thread_open) {
			const struct sd_source_ops *o = &sd_source_ops[k];
			if (o->clocked != clocks || (o->own_thread && !self))
				continue;
			int e = o->thread_open(t, tid);
			if (clocks && e)
				err = e;
		}
	return err;
}

void sd_source_thread_stop_all(struct sd_thread *t)
{
	FOR_EACH_HOOK(k, thread_stop)
		sd_source_ops[k].thread_stop(t);
}

void sd_source_thread_close_all(struct sd_thread *t)
{
	FOR_EACH_HOOK(k, thread_close)
		sd_source_ops[k].thread_close(t);
}

void sd_source_thread_account_all(struct sd_thread *t)
{
	FOR_EACH_HOOK(k, thread_account)
		sd_source_ops[k].thread_account(t);
}

void sd_source_fork_child_all(void)
{
	FOR_EACH_HOOK(k, fork_child)
		sd_source_ops[k].fork_child();
}

void sd_source_exec_prepare_all(struct sd_thread *t, int stop)
{
	FOR_EACH_HOOK(k, exec_prepare)
		sd_source_ops[k].exec_prepare(t, stop);
}

void sd_source_header_info(const struct sd_config *c, unsigned i, struct sd_source_info *in,
			   char *mech, size_t mech_len)
{
	const struct sd_source *s = &c->sources[i];
	const struct sd_source_ops *o = sd_source_ops_of(s);
	const char *off = o->off_cpu ? "+off-cpu" : "";
	in->name = o->desc->by_event ? s->event : o->desc->name;
	in->spec = s->spec;
	in->unit = o->desc->unit;
	if ((int)i == sd_rt.derived_src)
		snprintf(mech, mech_len, "derived:%s%s", c->sources[sd_rt.primary_src].spec, off);
	else
		snprintf(mech, mech_len, "%s%s", o->mechanism(s), off);
	in->mechanism = mech;
	in->fallback_reason = s->use_timer ? s->fallback_reason : NULL;
	in->period_ns = s->period_ns;
	in->signo = o->rt_signal >= 0 ? SIGRTMIN + o->rt_signal : c->signo;
}
