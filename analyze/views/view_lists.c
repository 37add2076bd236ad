/*
 * view_lists.c: the views of the profile's own lists, one table each (table.c): --view
 * threads, sources, counters and streams, in text, csv and json. Called by the dispatcher
 * (output.c). Column names and shapes are documented in docs/REPORT.md and checked by
 * tests/cli; every list is sorted with a total order. Runs in the CLI's only thread.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Formats a table column appears in: text only, or CSV and JSON only. */
enum { TXT = SD_IN_TEXT, DATA = SD_IN_CSV | SD_IN_JSON };

/* ---- threads, sources, counters and streams views ---------------------------------- */

static int thread_cmp(const void *a, const void *b)
{
	const struct sd_thread_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The text of these views keeps its printf layout: fixed-width columns (a wider cell
 * shifts its row), one space apart, and "  " before the last. */
#define FIXED(n, w) .name = n, .width = w, .fixed = 1, .gap = " "

/* The rows as the whole view; frees t. */
static int print_table(FILE *out, struct sd_table *t, const char *key, int opened)
{
	int err = sd_table_print_view(out, t, key, opened);
	sd_table_free(t);
	return err;
}

/* Most samples first; equal counts in the view's order (qsort_r: ctx is the rows). */
static int top_cmp(const void *a, const void *b, void *ctx)
{
	const struct sd_thread_row *top_rows = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (top_rows[x].periods != top_rows[y].periods)
		return top_rows[x].periods > top_rows[y].periods ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Flags of the `top` threads of p with the most samples (malloc'ed; NULL on ENOMEM). */
static uint8_t *top_threads(const struct sd_profile *p, size_t top)
{
	uint32_t *idx = malloc(p->nthreads * sizeof(*idx));
	uint8_t *keep = calloc(p->nthreads, 1);
	if (!idx || !keep) {
		free(idx);
		free(keep);
		return NULL;
	}
	for (size_t i = 0; i < p->nthreads; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, p->nthreads, sizeof(*idx), top_cmp, p->threads);
	for (size_t k = 0; k < top; k++)
		keep[idx[k]] = 1;
	free(idx);
	return keep;
}

int sd_out_threads(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	static const struct sd_col cols[] = {
		{ FIXED("pid", 10) }, { FIXED("tid", 10) }, { .name = "name", .in = DATA },
		{ FIXED("samples", 10) }, { FIXED("periods", 10) },
		{ FIXED("first_ns", 12), .text = "first_ms" },
		{ FIXED("last_ns", 12), .text = "last_ms" },
		{ .name = "name", .in = TXT, .left = 1 },
	};
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));
	uint8_t *keep = NULL; /* --top N: the N threads with the most samples */

	if (p->nthreads > 1)
		qsort(p->threads, p->nthreads, sizeof(*p->threads), thread_cmp);
	if (t && o->top && o->top < p->nthreads && !(keep = top_threads(p, o->top))) {
		sd_table_free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; t && i < p->nthreads; i++) {
		const struct sd_thread_row *r = &p->threads[i];
		if (keep && !keep[i])
			continue;
		sd_table_u64(t, r->pid);
		sd_table_u64(t, r->tid);
		sd_table_str(t, r->name);
		sd_table_u64(t, r->samples);
		sd_table_u64(t, r->periods);
		if (r->samples) {
			sd_table_u64(t, r->first_ns);
			sd_table_text(t, 0, "%.3f", r->first_ns / 1e6);
			sd_table_u64(t, r->last_ns);
			sd_table_text(t, 0, "%.3f", r->last_ns / 1e6);
		} else {
			sd_table_null(t);
			sd_table_null(t);
		}
		sd_table_str(t, r->name);
	}
	free(keep);
	return t ? print_table(out, t, "threads", 0) : -ENOMEM;
}

int sd_out_sources(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	static const struct sd_col cols[] = {
		{ .name = "source", .left = 1, .width = 12, .fixed = 1 },
		{ .name = "spec", .in = DATA }, { FIXED("samples", 10) }, { FIXED("weight", 16) },
		{ FIXED("period", 12) }, { FIXED("unit", 4) }, { .name = "mechanism", .left = 1 },
	};
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));

	for (size_t i = 0; t && i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		sd_table_str(t, s->name);
		sd_table_str(t, s->spec);
		sd_table_u64(t, s->samples);
		sd_table_num(t, "%.0f", s->weight);
		sd_table_u64(t, s->period);
		sd_table_str(t, s->unit);
		sd_table_str(t, s->mechanism);
	}
	return t ? print_table(out, t, "sources", 0) : -ENOMEM;
}

/* One row per counter (merged by name), then one per unavailable counter. */
int sd_out_counters(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	static const struct sd_col cols[] = {
		{ .name = "counter", .left = 1 }, { .name = "group", .in = DATA },
		{ .name = "status", .left = 1, .width = 11, .fixed = 1, .gap = " " },
		{ .name = "source", .in = DATA }, { FIXED("total", 12) }, { FIXED("per_cpu_s", 12) },
		{ FIXED("streams", 7) }, { .name = "source", .in = TXT, .left = 1 },
		{ .name = "reason", .in = DATA },
	};
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));

	for (size_t i = 0; t && i < p->ncounters + p->nunavail; i++) {
		const struct sd_counter_row *c = i < p->ncounters ? &p->counters[i] : NULL;
		const struct sd_counter_unavail *u = c ? NULL : &p->unavail[i - p->ncounters];
		sd_table_str(t, c ? c->name : u->name);
		sd_table_str(t, c ? c->group : u->name);
		sd_table_str(t, c ? "available" : "unavailable");
		c ? sd_table_str(t, c->source) : sd_table_null(t);
		c ? sd_table_u64(t, c->total) : sd_table_null(t);
		if (c && p->cpu_ns > 0)
			sd_table_num(t, "%.1f", (double)c->total / (p->cpu_ns / 1e9));
		else
			sd_table_null(t);
		sd_table_u64(t, c ? c->streams : u->streams);
		sd_table_str(t, c ? c->source : u->reason); /* text: the source, or (reason) */
		if (!c)
			sd_table_text(t, 0, "(%s)", u->reason);
		c ? sd_table_null(t) : sd_table_str(t, u->reason);
	}
	int err = t ? print_table(out, t, "counters", 0) : -ENOMEM;
	sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : NULL, p);
	return err;
}

/* One row per stream: whether it ended (END reason) and what it dropped. The caller
 * opens the JSON object (the notes and coverage come first). */
int sd_out_streams(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	static const struct sd_col cols[] = {
		{ .name = "file", .left = 1 }, { FIXED("pid", 10) }, { FIXED("rank", 6) },
		{ .name = "host", .in = DATA },
		{ .name = "end", .left = 1, .width = 8, .fixed = 1, .gap = " " },
		{ FIXED("signal", 6) }, { .name = "truncated", .in = DATA }, { FIXED("samples", 10) },
		{ FIXED("samples_dropped", 10), .text = "s_dropped" },
		{ FIXED("region_events", 10), .text = "regions" },
		{ FIXED("region_events_dropped", 10), .text = "r_dropped" },
		{ .name = "host", .in = TXT, .left = 1 },
	};
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));
	int json = o->format == SD_FMT_JSON;

	for (size_t i = 0; t && i < p->nsinfo; i++) {
		const struct sd_stream_info *si = &p->sinfo[i];
		sd_table_str(t, si->file);
		sd_table_u64(t, si->pid);
		si->rank >= 0 ? sd_table_num(t, "%" PRId64, si->rank) : sd_table_null(t);
		sd_table_str(t, si->host);
		if (si->end || !json) /* text and csv: "none" */
			sd_table_str(t, si->end ? si->end : "none");
		else
			sd_table_null(t);
		si->signal ? sd_table_u64(t, si->signal) : sd_table_null(t);
		sd_table_num(t, "%s", !json ? (si->truncated ? "1" : "0")
					    : si->truncated ? "true" : "false");
		sd_table_u64(t, si->samples);
		sd_table_u64(t, si->samples_dropped);
		sd_table_u64(t, si->regions);
		sd_table_u64(t, si->regions_dropped);
		sd_table_str(t, si->host);
	}
	return t ? print_table(out, t, "streams", 1) : -ENOMEM;
}

