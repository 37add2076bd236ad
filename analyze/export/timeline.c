/*
 * export/timeline.c: what the exporters of the timeline's event list share (export.h):
 * the run's clock, the samples in time order, a call node's path and a sample's metric.
 * Called by speedscope.c, trace.c and the html page's region timeline; the
 * list itself is filled by timeline.c while loading. Runs in the CLI's only thread.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyze/export/export.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t sd_tl_run_start(const struct sd_profile *p)
{
	uint64_t run0 = UINT64_MAX;
	for (size_t i = 0; i < p->nsinfo; i++)
		if (p->sinfo[i].has_clock && p->sinfo[i].origin_ns < run0)
			run0 = p->sinfo[i].origin_ns;
	return run0 == UINT64_MAX ? 0 : run0;
}

uint64_t sd_tl_time(const struct sd_profile *p, uint64_t run0, uint32_t stream, uint64_t t)
{
	const struct sd_stream_info *si = &p->sinfo[stream];
	return (si->has_clock ? si->origin_ns - run0 : 0) + t;
}

struct order_ctx { const struct sd_timeline *tl; const uint32_t *key; const uint64_t *time; };

static int order_cmp(const void *a, const void *b, void *arg)
{
	const struct order_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	uint32_t ki = c->key ? c->key[i] : c->tl->samples[i].thread;
	uint32_t kj = c->key ? c->key[j] : c->tl->samples[j].thread;
	if (ki != kj)
		return ki < kj ? -1 : 1;
	if (c->time[i] != c->time[j])
		return c->time[i] < c->time[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

int sd_tl_order(const struct sd_profile *p, const uint32_t *key, size_t **out)
{
	const struct sd_timeline *tl = sd_timeline_of(p);
	size_t *idx = malloc((tl->nsamples + 1) * sizeof(*idx));
	uint64_t *time = malloc((tl->nsamples + 1) * sizeof(*time));
	uint64_t run0 = sd_tl_run_start(p);

	if (!idx || !time) {
		free(idx);
		free(time);
		return -ENOMEM;
	}
	for (size_t i = 0; i < tl->nsamples; i++) {
		idx[i] = i;
		time[i] = sd_tl_time(p, run0, p->rows[tl->samples[i].row].stream, tl->samples[i].t);
	}
	struct order_ctx c = { tl, key, time };
	qsort_r(idx, tl->nsamples, sizeof(*idx), order_cmp, &c);
	free(time);
	*out = idx;
	return 0;
}

long sd_tl_path(const struct sd_profile *p, uint32_t cnode, uint32_t **path, size_t *cap)
{
	size_t n = 0;
	for (uint32_t c = cnode; c; c = p->nodes[c].parent) {
		if (sd_grow(path, cap, n + 1, sizeof(**path)))
			return -ENOMEM;
		(*path)[n++] = p->nodes[c].func;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t x = (*path)[i];
		(*path)[i] = (*path)[n - 1 - i];
		(*path)[n - 1 - i] = x;
	}
	return (long)n;
}

double sd_tl_value(const struct sd_profile *p, const struct sd_report_opts *o,
		   const struct sd_tl_sample *s)
{
	const struct sd_timeline *tl = sd_timeline_of(p);
	if (o->ncids) {
		const struct sd_crow *r = &p->rows[s->row];
		double v = 0;
		for (size_t k = 0; k < o->ncids; k++)
			v += s->end ? (double)sd_crow_count(r, o->cids[k])
			   : s->cnt != SIZE_MAX && o->cids[k] < s->ncnt
			   ? (double)tl->counts[s->cnt + o->cids[k]] : 0;
		return v;
	}
	if (s->end)
		return 0; /* no sample */
	if (o->weight)
		return s->weight;
	if (o->samples)
		return 1;
	uint64_t period = p->sources[p->rows[s->row].source].period; /* periods: its weight */
	return period ? (double)llround(s->weight / (double)period) : 1;
}

void sd_tl_put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

