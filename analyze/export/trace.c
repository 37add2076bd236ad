/*
 * export/trace.c: `sonde report --format trace`, the run as a Chrome JSON trace (the
 * Trace Event Format, object form) for Perfetto, chrome://tracing and speedscope,
 * written from the timeline (profile/timeline.c) by the dispatcher (output.c) in the CLI's thread.
 *
 * Tracks: one process per pid (`M` process_name: the process view's label NAME[PID])
 * and one thread per (pid, tid) (`M` thread_name), in the order they were read.
 * ts are µs after the run's start (the earliest HEADER clock) with 3 decimals, so
 * exactly the stream's nanoseconds; displayTimeUnit is "ns".
 *
 * - Sampled stacks: each sample of a thread stands for the time before it, back to
 *   the thread's previous sample (or its start), or, for sources counting ns when that
 *   is over twice weight x period, weight x period only (idle time stays empty); a
 *   frame that stays the same over consecutive, contiguous samples is one slice. The slices are `X` events that nest
 *   by construction (a stack of open frames per thread: a sample closes the frames
 *   below the common prefix of its path and the open one, and opens the rest), written
 *   in the order they opened, so a parent comes before its children of the same ts.
 * - Regions (REGION records, SONDE_REGIONS=trace): `X` events on a track of their own
 *   per thread (tid + SD_TL_REGION_TID, named "NAME regions"), since region boundaries
 *   do not fall on sample boundaries and X events of one track must nest. Named
 *   "attr=value"; a region ended by a misnested end or by the end of its stream has
 *   args {"forced":true}.
 * - Counters: per thread and counter, a `C` track "COUNTER (tid N)" whose value from a
 *   sample to the next sample with counters is the next one's delta (what the counter
 *   advanced over that interval), then the THREAD_END deltas up to the thread's end,
 *   then 0; a zero is written only where the value drops to zero. So the values of a
 *   counter's tracks add up to its total in --view counters.
 */
#include "analyze/export/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SD_TL_REGION_TID 1000000000ull

struct slice { uint32_t func; uint64_t start, end; };

struct tr {
	FILE *out;
	const struct sd_profile *p;
	uint64_t run0;
	uint32_t *path; size_t cappath;
	struct slice *slices; size_t nslices, capslices;
	size_t *open; size_t nopen, capopen; /* indices into slices */
	uint64_t cur_end;
	size_t nevents;
};

static void put_head(struct tr *t, const char *ph, const char *name, uint64_t pid,
		     uint64_t tid)
{
	fprintf(t->out, "%s{\"ph\":\"%s\",\"name\":", t->nevents++ ? ",\n" : "", ph);
	sd_json_str(t->out, name, strlen(name));
	fprintf(t->out, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, pid, tid);
}

static void put_meta(struct tr *t, const char *what, uint64_t pid, uint64_t tid,
		     const char *name)
{
	put_head(t, "M", what, pid, tid);
	fputs(",\"args\":{\"name\":", t->out);
	sd_json_str(t->out, name, strlen(name));
	fputs("}}", t->out);
}

static void put_x(struct tr *t, const char *name, const char *cat, uint64_t pid,
		  uint64_t tid, uint64_t start, uint64_t end, const char *args)
{
	put_head(t, "X", name, pid, tid);
	fprintf(t->out, ",\"cat\":\"%s\",\"ts\":", cat);
	sd_tl_put_us(t->out, start);
	fputs(",\"dur\":", t->out);
	sd_tl_put_us(t->out, end - start);
	fprintf(t->out, "%s}", args);
}

/* Close the open frames deeper than `keep` at time `at`. */
static void close_to(struct tr *t, size_t keep, uint64_t at)
{
	while (t->nopen > keep)
		t->slices[t->open[--t->nopen]].end = at;
}

/* One sample drawn over [start, end): frames kept, closed and opened. */
static int draw(struct tr *t, const uint32_t *path, size_t n, uint64_t start, uint64_t end)
{
	size_t l = 0;
	if (t->nopen && start != t->cur_end)
		close_to(t, 0, t->cur_end); /* a gap: nothing stays open over it */
	while (l < t->nopen && l < n && t->slices[t->open[l]].func == path[l])
		l++;
	close_to(t, l, start);
	for (; l < n; l++) {
		if (sd_grow(&t->slices, &t->capslices, t->nslices + 1, sizeof(*t->slices)) ||
		    sd_grow(&t->open, &t->capopen, t->nopen + 1, sizeof(*t->open)))
			return -ENOMEM;
		t->slices[t->nslices] = (struct slice){ path[l], start, end };
		t->open[t->nopen++] = t->nslices++;
	}
	t->cur_end = end;
	return 0;
}

/* The start of the interval sample e stands for, ending at `now`; prev: the thread's
 * previous sample (or start). Back to prev, unless that is over twice the time the
 * sample stands for (weight x period, sources counting ns): then the thread was idle
 * (blocked, or not sampled) before it, and the interval is that time only. The timer's
 * jitter (a 1 ms period's samples come 0.9 to 1.1 ms apart) leaves no gaps. */
static uint64_t span_start(const struct tr *t, const struct sd_tl_sample *e, uint64_t prev,
			   uint64_t now)
{
	const struct sd_crow *r = &t->p->rows[e->row];
	if (prev >= now)
		return now;
	if (!strcmp(t->p->sources[r->source].unit, "ns") && e->weight >= 1 &&
	    (double)(now - prev) > 2 * e->weight)
		return now - (uint64_t)e->weight;
	return prev;
}

static void put_c(struct tr *t, const char *name, uint64_t pid, uint64_t tid, uint64_t ts,
		  uint64_t v)
{
	put_head(t, "C", name, pid, tid);
	fputs(",\"cat\":\"counter\",\"ts\":", t->out);
	sd_tl_put_us(t->out, ts);
	fprintf(t->out, ",\"args\":{\"delta\":%" PRIu64 "}}", v);
}

/* The counter tracks of one thread's samples idx[0..n): a value per interval, a zero
 * only where the value drops to zero (the track is a step function: repeating a zero
 * changes nothing, and most intervals of most counters are zeros). */
static void put_counters(struct tr *t, const size_t *idx, size_t n, uint64_t pid,
			 uint64_t tid, uint64_t t0, uint64_t t_end)
{
	const struct sd_profile *p = t->p;
	const struct sd_timeline *tl = sd_timeline_of(p);
	for (size_t k = 0; k < p->ncounters; k++) {
		char name[300];
		uint64_t prev = t0, v, last = 0; /* the value shown since prev */
		snprintf(name, sizeof(name), "%s (tid %" PRIu64 ")", p->counters[k].name, tid);
		for (size_t i = 0; i < n; i++) {
			const struct sd_tl_sample *e = &tl->samples[idx[i]];
			uint64_t now = sd_tl_time(p, t->run0, p->rows[e->row].stream, e->t);
			if (e->end)
				v = sd_crow_count(&p->rows[e->row], k);
			else if (e->cnt != SIZE_MAX && k < e->ncnt)
				v = tl->counts[e->cnt + k];
			else
				continue; /* no deltas: the next sample's cover this interval too */
			if (v || last)
				put_c(t, name, pid, tid, prev < now ? prev : now, v);
			last = v;
			prev = now > prev ? now : prev;
		}
		if (last) /* the track ends at the thread's end (or its last sample) */
			put_c(t, name, pid, tid, t_end > prev ? t_end : prev, 0);
	}
}

/* One thread: its samples idx[0..n) in time order as slices, then its counters. */
static int put_thread(struct tr *t, uint32_t th, const size_t *idx, size_t n)
{
	const struct sd_profile *p = t->p;
	const struct sd_timeline *tl = sd_timeline_of(p);
	const struct sd_thread_row *row = &p->threads[th];
	const struct sd_tl_thread *tt = &tl->threads[th];
	uint64_t t0 = UINT64_MAX, t_end = 0, prev;

	if (tt->known) {
		t0 = sd_tl_time(p, t->run0, tt->stream, tt->t0);
		t_end = sd_tl_time(p, t->run0, tt->stream, tt->t_end);
	}
	prev = t0;
	t->nslices = t->nopen = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sd_tl_sample *e = &tl->samples[idx[i]];
		uint64_t now = sd_tl_time(p, t->run0, p->rows[e->row].stream, e->t);
		if (e->end)
			continue;
		uint64_t start = span_start(t, e, prev == UINT64_MAX ? now : prev, now);
		prev = now;
		if (start >= now)
			continue; /* at the time of the previous sample: nothing to draw */
		long np = sd_tl_path(p, p->rows[e->row].cnode, &t->path, &t->cappath);
		if (np < 0 || draw(t, t->path, (size_t)np, start, now))
			return -ENOMEM;
	}
	close_to(t, 0, t->cur_end);
	for (size_t i = 0; i < t->nslices; i++) {
		const struct slice *s = &t->slices[i];
		put_x(t, sd_sym_func(p->sym, s->func)->display, "sample", row->pid, row->tid,
		      s->start, s->end, "");
	}
	if (t0 == UINT64_MAX)
		t0 = n ? sd_tl_time(p, t->run0, p->rows[tl->samples[idx[0]].row].stream,
				    tl->samples[idx[0]].t) : 0;
	put_counters(t, idx, n, row->pid, row->tid, t0, t_end);
	return 0;
}

/* Names: each pid once (its first stream's label), each thread and its region track. */
static void put_names(struct tr *t)
{
	const struct sd_profile *p = t->p;
	for (size_t i = 0; i < p->nsinfo; i++) {
		size_t j;
		for (j = 0; j < i && p->sinfo[j].pid != p->sinfo[i].pid; j++)
			;
		if (j == i)
			put_meta(t, "process_name", p->sinfo[i].pid, 0, p->sinfo[i].label);
	}
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct sd_thread_row *r = &p->threads[i];
		char name[300];
		put_meta(t, "thread_name", r->pid, r->tid, r->name[0] ? r->name : "?");
		put_head(t, "M", "thread_sort_index", r->pid, r->tid);
		fprintf(t->out, ",\"args\":{\"sort_index\":%zu}}", 2 * i);
		snprintf(name, sizeof(name), "%s regions", r->name[0] ? r->name : "?");
		for (size_t k = 0; k < sd_timeline_of(p)->nregions; k++)
			if (sd_timeline_of(p)->regions[k].thread == i) {
				put_meta(t, "thread_name", r->pid, r->tid + SD_TL_REGION_TID, name);
				put_head(t, "M", "thread_sort_index", r->pid, r->tid + SD_TL_REGION_TID);
				fprintf(t->out, ",\"args\":{\"sort_index\":%zu}}", 2 * i + 1);
				break;
			}
	}
}

static int region_cmp(const void *a, const void *b)
{
	const struct sd_tl_region *x = *(const struct sd_tl_region *const *)a;
	const struct sd_tl_region *y = *(const struct sd_tl_region *const *)b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Region calls, each thread's in begin order (outer before inner). */
static int put_regions(struct tr *t)
{
	const struct sd_profile *p = t->p;
	const struct sd_timeline *tl = sd_timeline_of(p);
	const struct sd_tl_region **v = malloc((tl->nregions + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < tl->nregions; i++)
		v[i] = &tl->regions[i];
	qsort(v, tl->nregions, sizeof(*v), region_cmp);
	for (size_t i = 0; i < tl->nregions; i++) {
		const struct sd_tl_region *g = v[i];
		const struct sd_thread_row *r = &p->threads[g->thread];
		const struct sd_ctxnode *c = &p->ctx[g->ctx];
		const struct sd_tl_thread *tt = &tl->threads[g->thread];
		char name[600];
		snprintf(name, sizeof(name), "%s=%s", p->attr_names[c->attr], p->value_strs[c->value]);
		put_x(t, name, "region", r->pid, r->tid + SD_TL_REGION_TID,
		      sd_tl_time(p, t->run0, tt->stream, g->begin),
		      sd_tl_time(p, t->run0, tt->stream, g->end),
		      g->forced ? ",\"args\":{\"forced\":true}" : "");
	}
	free(v);
	return 0;
}

int sd_tl_trace(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct tr t = { .out = out, .p = p, .run0 = sd_tl_run_start(p) };
	size_t *idx = NULL, n = sd_timeline_of(p)->nsamples;
	int err = -ENOMEM;

	(void)o;
	if (sd_tl_order(p, NULL, &idx))
		return -ENOMEM;
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"sonde report "
		"--format trace\",\"run_start_monotonic_ns\":%" PRIu64 ",\"ts\":\"microseconds "
		"after run_start_monotonic_ns\"},\"traceEvents\":[\n", t.run0);
	put_names(&t);
	for (size_t i = 0, j; i < n; i = j) {
		uint32_t th = sd_timeline_of(p)->samples[idx[i]].thread;
		for (j = i; j < n && sd_timeline_of(p)->samples[idx[j]].thread == th; j++)
			;
		if (put_thread(&t, th, idx + i, j - i))
			goto out;
	}
	if (put_regions(&t))
		goto out;
	fputs("\n]}\n", out);
	err = 0;
out:
	free(idx);
	free(t.path);
	free(t.slices);
	free(t.open);
	return err;
}
