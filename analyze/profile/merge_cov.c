/*
 * merge_cov.c: the coverage account of a stream being merged (docs/REPORT.md,
 * "Coverage"), for merge.c: one struct sd_cov_row per thread the stream defined, after
 * its thread rows exist: the kernel's CPU time (at the thread's end, else at its last
 * flush), what the cpu-time samples stand for, the drops by coverage gap, kernel time,
 * time not sampled, and the remainder, unexplained or put down to context switches;
 * and the stream's part of the totals that the coverage view makes when it prints them
 * (report/coverage.c). Runs in the thread that merges streams.
 */
#include "analyze/profile/profile_int.h"

#include <stdlib.h>
#include <string.h>

/* The stream's part of the account's totals: with or without a cpu-time source (cs), its
 * spec, and the process-wide drops (thread 0's: they are only in the total). 0 or -ENOMEM. */
static int cov_stream(struct sd_coverage *cv, const struct sstate *st,
		      const struct ssource *cs, double period)
{
	uint64_t drops[SD_COV_NDROP];

	if (!cs) {
		cv->streams_nocpu++;
		return 0;
	}
	cv->streams_cpu++;
	cv->streams_mixed += st->nsources > 1;
	if (!cv->spec) {
		if (!(cv->spec = strdup(cs->spec)))
			return -ENOMEM;
	} else if (strcmp(cv->spec, cs->spec)) {
		cv->specs_differ = 1;
	}
	sd_decode_thread_drops(st, 0, drops); /* process-wide drops: only in the total */
	for (int k = 0; k < SD_COV_NDROP; k++)
		cv->procwide_ns[k] += (double)drops[k] * period;
	return 0;
}

/* Each thread's context switches (counters of the group context-switches), by the
 * stream's thread index: a fresh array, NULL on ENOMEM. */
static double *thread_switches(const struct sd_profile *p, const struct sstate *st)
{
	double *sw = calloc(st->nthreads, sizeof(*sw));
	if (!sw)
		return NULL;
	for (size_t k = 0; k < st->nctrs; k++) {
		const char *group = p->counters[st->ctrs[k].gid].group; /* moved there */
		if (!group || strcmp(group, "context-switches"))
			continue;
		for (size_t i = 0; i < st->naggs; i++)
			if (st->aggs[i].thread < st->nthreads)
				sw[st->aggs[i].thread] += (double)st->aggcnt[i * st->nctrs + k];
		for (size_t i = 1; i < st->nthreads; i++)
			if (st->threads[i].endcnt)
				sw[i] += (double)st->threads[i].endcnt[k];
	}
	return sw;
}

/* Row c's CPU time and samples, from thread i of st, and the thread's drops into drops. */
static void cov_cpu(struct sd_cov_row *c, const struct sstate *st, size_t i,
		    uint64_t drops[SD_COV_NDROP])
{
	const struct sthread *t = &st->threads[i];

	/* the kernel's CPU time: at the thread's end, else at the last flush */
	c->sampled_ns = t->cov_sampled;
	sd_decode_thread_drops(st, i, drops);
	if (t->end_cpu) {
		c->cpu_from = SD_COV_END;
		c->cpu_ns = (double)t->end_cpu_ns;
		c->split = t->split;
		c->user_ns = (double)t->user_ns;
		c->sys_ns = (double)t->sys_ns;
	} else if (t->has_flush) {
		/* the account runs up to that record: samples and drops as they were */
		c->cpu_from = SD_COV_FLUSH;
		c->cpu_ns = (double)t->flush_cpu_ns;
		c->sampled_ns = t->snap_sampled;
		c->after_ns = t->cov_sampled - t->snap_sampled;
		memcpy(drops, t->snap_drops, SD_COV_NDROP * sizeof(*drops));
	}
	if (t->un_clone_vm) {
		/* a CLONE_VM child process: its whole CPU time, never sampled */
		c->cpu_from = SD_COV_END;
		c->cpu_ns = (double)t->un_clone_vm;
		c->split = 0;
	}
}

/* Row c's gaps, from its CPU time and thread t's drops (cpu-time period), and what is
 * left unexplained; sw: the thread's context switches. */
static void cov_gaps(struct sd_cov_row *c, const struct sthread *t,
		     const uint64_t drops[SD_COV_NDROP], double period, double sw)
{
	double gaps = 0;
	uint64_t ndrops = 0;
	for (int k = 0; k < SD_COV_NDROP; k++) {
		c->drops_ns[k] = (double)drops[k] * period;
		gaps += c->drops_ns[k];
		ndrops += drops[k];
	}
	if (!c->computed || c->cpu_from == SD_COV_UNKNOWN)
		return;
	/* The kernel's user/sys split divides the exact CPU time by its tick
	 * samples (getrusage): a thread of a few hundred ms on a loaded machine
	 * was seen with all of it as sys while its user-mode samples stood for
	 * 95 ms. A split that gives less user time than the samples show (by
	 * more than a fifth and 5 periods) is not used. */
	if (c->split && c->sampled_ns > c->user_ns + 0.2 * c->cpu_ns + 5 * period) {
		c->split = 0;
		c->split_rejected = 1;
	}
	/* cpu-time samples user mode only (docs/ENV.md): kernel mode is a known gap */
	if (c->split)
		/* less the system time already inside accounted samples (taken
		 * from the thread's CPU clock, user and system alike) */
		c->kernel_ns = c->cpu_ns > 0 && t->cov_accounted < c->cpu_ns
				       ? c->sys_ns * (1 - t->cov_accounted / c->cpu_ns) : 0;
	gaps += c->kernel_ns;
	if (c->sampled_ns == 0 && ndrops == 0 && c->cpu_ns > gaps)
		c->not_sampled_ns = c->cpu_ns - gaps;
	else /* the part the runtime knows it missed (UNSAMPLED) */
		c->not_sampled_ns = (double)(t->un_fd_closed + t->un_not_sampled);
	c->unexplained_ns = c->cpu_ns - c->sampled_ns - gaps - c->not_sampled_ns;
	/* The kernel splits a thread's CPU time into user and sys by what its
	 * scheduler ticks (250 Hz) find: the kernel work around a context
	 * switch is rarely under a tick and is counted as user time. Samples
	 * find it in kernel mode (perf's user-mode samples agree). Up to a
	 * bound per switch, the rest is that, named; beyond it, unexplained. */
	c->switches = sw;
	if (c->split && c->unexplained_ns > 0 && sw > 0) {
		double most = sw * SD_COV_SWITCH_KERNEL_NS;
		c->as_user_ns = c->unexplained_ns < most ? c->unexplained_ns : most;
		c->unexplained_ns -= c->as_user_ns;
	}
}

int sd_merge_coverage(struct sd_profile *p, struct sstate *st)
{
	struct sd_coverage *cv = &p->cov;
	const struct ssource *cs = st->cpu_src >= 0 ? &st->sources[st->cpu_src] : NULL;
	double period = cs ? (double)cs->period : 0;
	uint64_t drops[SD_COV_NDROP];

	if (cov_stream(cv, st, cs, period))
		return -ENOMEM;
	double *sw = thread_switches(p, st);
	if (!sw)
		return -ENOMEM;
	for (size_t i = 1; i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		if (!t->defined)
			continue;
		if (sd_grow(&cv->rows, &cv->cap, cv->n + 1, sizeof(*cv->rows))) {
			free(sw);
			return -ENOMEM;
		}
		struct sd_cov_row *c = &cv->rows[cv->n++];
		const struct sd_thread_row *tr = &p->threads[t->row];
		memset(c, 0, sizeof(*c));
		c->pid = tr->pid;
		c->tid = tr->tid;
		c->name = tr->name;
		c->threads = 1;
		c->computed = cs != NULL;
		st->nthreads_def++;
		cov_cpu(c, st, i, drops);
		if (c->cpu_from != SD_COV_UNKNOWN) { /* the process's CPU time (processes view) */
			st->cpu_ns += c->cpu_ns;
			st->cpu_threads++;
			st->cpu_flush += c->cpu_from == SD_COV_FLUSH;
		}
		cov_gaps(c, t, drops, period, sw[i]);
	}
	free(sw);
	return 0;
}
