/*
 * output.c: the dispatcher of `sonde report` (sd_output: the header lines, then one
 * view) and the views of functions, threads, sources, counters and streams, in text,
 * folded, csv and json. The context views (group-by, tree, regions) are in views.c,
 * the others in view_*.c and coverage.c; what they all print through is in emit.c.
 * The rows of the flat, threads, sources, counters and streams views are tables
 * (table.c): each column is declared once, for text, csv and json.
 *
 * Column names and shapes are documented in docs/REPORT.md and checked by
 * tests/analyze; a change here changes both. Output is deterministic: every list is
 * sorted with a total order before it is printed. JSON output is always valid JSON:
 * strings are escaped and invalid UTF-8 bytes become U+FFFD.
 */
#define _GNU_SOURCE /* sigabbrev_np */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Formats a table column appears in: text only, or CSV and JSON only. */
enum { TXT = SD_IN_TEXT, DATA = SD_IN_CSV | SD_IN_JSON };

/* ---- flat profile ---------------------------------------------------------------- */

struct frow { const struct sd_func *f; double self, total; uint32_t id; /* function */ };

static int frow_cmp(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	int c = strcmp(x->f->display, y->f->display);
	return c ? c : strcmp(x->f->module, y->f->module);
}


/* Self and total (inclusive; a function counted once per path) per function. */
static int flat_rows(const struct sd_profile *p, const struct sd_report_opts *o,
		     struct frow **out, size_t *nout)
{
	size_t nf = sd_sym_nfuncs(p->sym), n = p->nnodes, nrows = 0;
	double *self = calloc(nf + 1, sizeof(double)), *total = calloc(nf + 1, sizeof(double));
	double *sub = calloc(n, sizeof(double));
	uint32_t *first = malloc(n * sizeof(uint32_t)), *next = malloc(n * sizeof(uint32_t));
	uint32_t *onpath = calloc(nf + 1, sizeof(uint32_t));
	uint64_t *stack = malloc(2 * n * sizeof(uint64_t));
	struct frow *rows = NULL;
	double *nv = sd_node_values(p, o);
	int err = -ENOMEM;

	if (!self || !total || !sub || !first || !next || !onpath || !stack || !nv)
		goto out;
	memset(first, 0xff, n * sizeof(uint32_t));
	for (size_t i = n; i-- > 1;) {
		const struct sd_cnode *c = &p->nodes[i];
		sub[i] += nv[i];
		self[c->func] += nv[i];
		sub[c->parent] += sub[i];
		next[i] = first[c->parent];
		first[c->parent] = (uint32_t)i;
	}
	/* depth-first walk; an entry with bit 63 set marks leaving that node */
	size_t sp = 0;
	for (uint32_t c = first[0]; c != UINT32_MAX; c = next[c])
		stack[sp++] = c;
	while (sp) {
		uint64_t e = stack[--sp];
		uint32_t i = (uint32_t)e, f = p->nodes[i].func;
		if (e >> 63) {
			onpath[f]--;
			continue;
		}
		if (!onpath[f]++)
			total[f] += sub[i];
		stack[sp++] = e | 1ULL << 63;
		for (uint32_t c = first[i]; c != UINT32_MAX; c = next[c])
			stack[sp++] = c;
	}
	rows = malloc((nf + 1) * sizeof(*rows));
	if (!rows)
		goto out;
	for (size_t f = 0; f < nf; f++)
		if (total[f] > 0 || self[f] > 0)
			rows[nrows++] = (struct frow){ sd_sym_func(p->sym, (uint32_t)f), self[f], total[f],
							(uint32_t)f };
	qsort(rows, nrows, sizeof(*rows), frow_cmp);
	*out = rows;
	*nout = nrows;
	rows = NULL;
	err = 0;
out:
	free(self), free(total), free(sub), free(first), free(next), free(onpath), free(stack);
	free(rows);
	free(nv);
	return err;
}

/* Header lines of the text report: one per counter and per unavailable counter. */
static void counter_lines(FILE *out, const struct sd_profile *p)
{
	for (size_t i = 0; i < p->ncounters; i++) {
		const struct sd_counter_row *c = &p->counters[i];
		fputs("counter ", out);
		sd_text_put(out, c->name); /* names from the streams: escaped */
		fprintf(out, ": %" PRIu64 " total", c->total);
		if (p->cpu_ns > 0)
			fprintf(out, ", %.1f per CPU-second", (double)c->total / (p->cpu_ns / 1e9));
		fputs(" (", out);
		sd_text_put(out, c->source);
		fputs(")\n", out);
	}
	for (size_t i = 0; i < p->nunavail; i++) {
		fputs("counter ", out);
		sd_text_put(out, p->unavail[i].name);
		fputs(": unavailable (", out);
		sd_text_put(out, p->unavail[i].reason);
		fputs(")\n", out);
	}
}

size_t sd_incomplete(const struct sd_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nsinfo; i++)
		n += !p->sinfo[i].end;
	return n;
}

/* The drops of one kind (regions: reasons "region_*"), of `asked` (recorded + dropped). */
static void drops_line(FILE *out, const struct sd_profile *p, int regions, uint64_t dropped,
		       uint64_t asked)
{
	int ring = 0, first = 1;

	fprintf(out, "sonde: warning: %" PRIu64 " of %" PRIu64 " %s dropped (%.2f%%:", dropped,
		asked, regions ? "region events" : "samples", sd_pct((double)dropped, (double)asked));
	for (size_t i = 0; i < p->ndrop; i++) {
		const char *r = p->drop_names[i];
		if (!p->drop_counts[i] || !strncmp(r, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1) != (regions != 0))
			continue;
		fprintf(out, "%s %s %" PRIu64, first ? "" : ",", r, p->drop_counts[i]);
		first = 0;
		ring |= !strcmp(r, regions ? "region_ring_full" : "ring_full");
	}
	if (regions)
		fputs("; the regions view misses them", out);
	if (ring)
		fputs(regions ? "; region_ring_full: raise SONDE_BUFFER_KB" : "; ring_full: raise SONDE_BUFFER_KB", out);
	fputs(")\n", out);
}

/* Does the view count samples as equals (the default metric, in a view whose numbers
 * are sample counts)? */
static int counts_samples(const struct sd_report_opts *o)
{
	if (!o || o->weight || o->counter || o->format == SD_FMT_TRACE) /* trace: time */
		return 0;
	switch (o->view) {
	case SD_VIEW_FLAT: case SD_VIEW_TREE: case SD_VIEW_GROUP: case SD_VIEW_CALLERS:
	case SD_VIEW_CALLEES: case SD_VIEW_THREADS:
		return 1;
	default:
		return 0;
	}
}

/* A count that adds samples of sources with different periods adds unlike things (a
 * cpu-time sample at 1 ms stands for a tenth of a wall-time sample at 10 ms): said once,
 * with the sources, and what to count instead. */
static void mixed_periods_line(FILE *out, const struct sd_profile *p)
{
	const struct sd_source_row *first = NULL;
	int mixed = 0, units = 0;
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->samples)
			continue;
		if (!first)
			first = s;
		else if (s->period != first->period || strcmp(s->unit, first->unit))
			mixed = 1, units |= strcmp(s->unit, first->unit) != 0;
	}
	if (!mixed)
		return;
	fputs("sonde: warning: samples of sources with different periods are counted alike (", out);
	int sep = 0;
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->samples)
			continue;
		fputs(sep ? ", " : "", out);
		sd_text_put(out, s->spec);
		sep = 1;
	}
	fprintf(out, ") (%s)\n",
		units ? "count one source with --source NAME" :
			"use --metric time to weigh each by its period, or --source NAME");
}

/* Samples whose stack was cut at max_depth (their paths under [truncated]): how many,
 * where, and the knob (unless it is at its maximum already). */
static void truncated_line(FILE *out, const struct sd_profile *p)
{
	fprintf(out, "sonde: warning: %" PRIu64 " of %" PRIu64 " samples truncated",
		p->trunc_samples, p->samples);
	if (p->trunc_depth_lo && p->trunc_depth_lo != p->trunc_depth_hi)
		fprintf(out, " at %" PRIu64 "-%" PRIu64 " frames", p->trunc_depth_lo,
			p->trunc_depth_hi);
	else if (p->trunc_depth_lo)
		fprintf(out, " at %" PRIu64 " frames", p->trunc_depth_lo);
	fprintf(out, " (%.2f%%: their outermost frames are missing, under [truncated]; ",
		sd_pct((double)p->trunc_samples, (double)p->samples));
	if (p->trunc_depth_lo >= SD_MAX_DEPTH_MAX)
		fprintf(out, "SONDE_MAX_DEPTH is at its maximum, %u)\n", SD_MAX_DEPTH_MAX);
	else
		fprintf(out, "raise SONDE_MAX_DEPTH, up to %u)\n", SD_MAX_DEPTH_MAX);
}

/* The source a sample view shows when the streams hold several (sd_cli_resolve):
 * which, of what, and how to choose another. */
static void picked_source_line(FILE *out, const struct sd_profile *p)
{
	const char *other = NULL;
	size_t n = 0;
	if (!p->picked_source)
		return;
	fprintf(out, "sonde: note: showing source %s only: the streams hold several sources (",
		p->picked_source);
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= !strcmp(p->sources[j].name, s->name);
		if (dup)
			continue;
		fprintf(out, "%s%s", n++ ? ", " : "", s->name);
		if (!other && strcmp(s->name, p->picked_source))
			other = s->name;
	}
	fprintf(out, "), whose clocks are never added (show another with --source %s)\n",
		other ? other : p->picked_source);
}

/* Sources whose period the sampler raised (docs/ENV.md, "Throttling"): their samples
 * stand for several periods each, and every view counts them by their weight. */
static void throttled_lines(FILE *out, const struct sd_profile *p)
{
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->throttled_threads)
			continue;
		fprintf(out, "sonde: note: %s was throttled: its period was raised on %" PRIu64
			" of %" PRIu64 " threads, up to %" PRIu64 " times (each sample counts the "
			"periods it stands for, its weight; --metric samples counts samples)\n",
			s->spec, s->throttled_threads, s->sampled_threads, s->max_multiple);
	}
}

/* Every note, one line each, on out. */
static void notes_lines(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	for (size_t i = 0; i < p->nsinfo; i++) {
		const struct sd_stream_info *si = &p->sinfo[i];
		if (!si->end) {
			fprintf(out, "sonde: %s: incomplete stream: no END record (the process ended "
				"without an exit sonde saw, such as SIGKILL or a raw exit_group system "
				"call, or is still running; samples after its last flush are lost)\n",
				si->file);
		} else if (!strcmp(si->end, "signal")) {
			const char *abbrev = si->signal && si->signal < 128 ?
					     sigabbrev_np((int)si->signal) : NULL;
			fprintf(out, "sonde: %s: process %" PRIu64 " was killed by ", si->file, si->pid);
			if (!si->signal)
				fputs("a signal", out);
			else if (abbrev)
				fprintf(out, "signal %" PRIu64 " (SIG%s)", si->signal, abbrev);
			else
				fprintf(out, "signal %" PRIu64, si->signal);
			fputs(" (the profile covers its run up to the signal)\n", out);
		}
	}
	/* samples: shown above 1 % of those asked for; region events: any */
	uint64_t asked = p->samples_read + p->dropped;
	if (p->dropped && p->dropped * 100 > asked)
		drops_line(out, p, 0, p->dropped, asked);
	if (p->dropped_regions)
		drops_line(out, p, 1, p->dropped_regions, p->region_records + p->dropped_regions);
	if (p->trunc_samples)
		truncated_line(out, p);
	picked_source_line(out, p);
	throttled_lines(out, p);
	if (counts_samples(o))
		mixed_periods_line(out, p);
}

void sd_notes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	enum sd_format fmt = o->format;
	if (fmt == SD_FMT_TEXT) {
		notes_lines(out, p, o);
		return;
	}
	notes_lines(stderr, p, o);
	if (fmt != SD_FMT_JSON)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		notes_lines(m, p, o);
		fclose(m);
	}
	fprintf(out, "\"incomplete_streams\":%zu,\"warnings\":[", sd_incomplete(p));
	for (char *q = buf, *nl; q && *q; q = nl + 1) {
		nl = strchr(q, '\n');
		if (!nl)
			break;
		if (q != buf)
			putc(',', out);
		sd_json_str(out, q, (size_t)(nl - q));
	}
	fputs("],\"throttled\":[", out);
	for (size_t i = 0, n = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->throttled_threads)
			continue;
		fputs(n++ ? ",{\"source\":" : "{\"source\":", out);
		sd_json_str(out, s->spec, strlen(s->spec));
		fprintf(out, ",\"threads\":%" PRIu64 ",\"of_threads\":%" PRIu64
			",\"max_multiple\":%" PRIu64 "}", s->throttled_threads, s->sampled_threads,
			s->max_multiple);
	}
	fputs("],", out);
	if (p->picked_source) {
		fputs("\"source_shown\":", out);
		sd_json_str(out, p->picked_source, strlen(p->picked_source));
		putc(',', out);
	}
	free(buf);
}

/* What the flat view's printers share: its rows (after --min-percent and --top), the
 * metric's total and the --stats columns. */
struct flat {
	struct frow *rows;
	size_t n;
	double all;
	struct sd_stats *st; /* --stats: columns after the usual ones */
};

/* The text header above the rows: totals, sources, counters, notes, coverage. */
static void flat_head_text(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
			   double all)
{
	fprintf(out, "samples: %" PRIu64, p->samples);
	if (!o->counter && !o->weight && !o->samples && all != (double)p->samples)
		fprintf(out, " (%.0f periods)", all); /* weighted samples: what the rows count */
	else if (o->counter)
		fprintf(out, " (%s: %.0f)", o->counter, all);
	else if (o->weight && o->weight_unit)
		fprintf(out, " (%.0f %s)", p->weight, o->weight_unit);
	else if (o->weight)
		fprintf(out, " (%.3f ms)", p->weight / 1e6);
	fprintf(out, "  streams: %" PRIu64 "  processes: %zu", p->streams,
		p->npids + p->children_nostream);
	if (p->children_nostream) /* children their parent recorded, without a stream */
		fprintf(out, " (%zu without a stream: --view processes)", p->children_nostream);
	fprintf(out, "  threads: %zu\n", p->nthreads);
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		fputs("source ", out);
		sd_text_put(out, s->name);
		if (p->picked_source && strcmp(s->name, p->picked_source)) /* the note says */
			fputs(": not shown (", out);
		else
			fprintf(out, ": %" PRIu64 " samples (", s->samples);
		sd_text_put(out, s->spec);
		fprintf(out, ", period %" PRIu64 " ", s->period);
		sd_text_put(out, s->unit);
		fputs(", ", out);
		sd_text_put(out, s->mechanism);
		fputs(")\n", out);
	}
	counter_lines(out, p);
	sd_notes(out, p, o);
	sd_cov_block(out, p);
	putc('\n', out);
}

static void flat_head_json(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
			   const struct flat *f)
{
	sd_json_head(out, p, o, sd_metric_name(o));
	if (o->counter)
		fprintf(out, ",\"metric_total\":%.0f", f->all);
	fprintf(out, ",\"streams\":%" PRIu64 ",\"processes\":%zu,\"processes_without_stream\":%zu,"
		"\"threads\":%zu,\"dropped\":%" PRIu64 ",\"dropped_region_events\":%" PRIu64 ",",
		p->streams, p->npids + p->children_nostream, p->children_nostream, p->nthreads,
		p->dropped, p->dropped_regions);
	if (f->st)
		sd_stats_json_key(out, f->st);
}

/* The rows: text puts the function last (after the numbers), csv and json first. */
static int flat_print(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		      const struct flat *f)
{
	char b1[64], b2[64];
	struct sd_col cols[7 + SD_STATS_NCOLS] = {
		{ .name = "function", .in = DATA },
		{ .name = sd_metric_col(o, "self", b1, 64), .width = 10 },
		{ .name = "self_pct", .text = "self%", .width = 7, .gap = " " },
		{ .name = sd_metric_col(o, "total", b2, 64), .width = 10, .gap = " " },
		{ .name = "total_pct", .text = "total%", .width = 7, .gap = " " },
		{ .name = "function", .in = TXT, .left = 1, .width = 8 },
		{ .name = "module", .in = DATA },
	};
	size_t nc = 7;
	int err = -ENOMEM;

	if (f->st)
		for (size_t i = 0; i < SD_STATS_NCOLS; i++)
			cols[nc++] = sd_stats_cols[i];
	struct sd_table *t = sd_table_new(o, cols, nc);
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		const struct frow *r = &f->rows[i];
		sd_table_str(t, r->f->display);
		sd_table_metric(t, r->self);
		sd_table_pct(t, sd_pct(r->self, f->all));
		sd_table_metric(t, r->total);
		sd_table_pct(t, sd_pct(r->total, f->all));
		sd_table_str(t, r->f->display);
		sd_table_str(t, r->f->module);
		if (f->st)
			sd_stats_cells(t, f->st, o, r->id);
	}
	if (o->format == SD_FMT_TEXT)
		flat_head_text(out, p, o, f->all);
	else if (o->format == SD_FMT_JSON)
		flat_head_json(out, p, o, f);
	err = sd_table_print_view(out, t, "rows", 1);
	sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : stderr, p);
	sd_table_free(t);
	return err;
}

static int out_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct flat f = { .all = sd_metric_total(p, o) };

	if (flat_rows(p, o, &f.rows, &f.n))
		return -ENOMEM;
	if (o->stats && !(f.st = sd_stats_flat(p, o))) {
		free(f.rows);
		return -ENOMEM;
	}
	if (o->min_percent_given) { /* --min-percent: rows whose total is below P % go */
		size_t k = 0;
		for (size_t i = 0; i < f.n; i++)
			if (sd_pct(f.rows[i].total, f.all) >= o->min_percent)
				f.rows[k++] = f.rows[i];
		f.n = k;
	}
	if (o->top && o->top < f.n)
		f.n = o->top;
	int err = flat_print(out, p, o, &f);
	free(f.rows);
	sd_stats_free(f.st);
	return err;
}

/* ---- folded stacks ----------------------------------------------------------------- */

struct folded_nodes { const struct sd_profile *p; const double *nv; };

static uint32_t node_parent(const void *ctx, uint32_t i)
{
	return ((const struct folded_nodes *)ctx)->p->nodes[i].parent;
}

static const char *node_name(const void *ctx, uint32_t i)
{
	const struct sd_profile *p = ((const struct folded_nodes *)ctx)->p;
	return sd_sym_func(p->sym, p->nodes[i].func)->display;
}

static double node_value(const void *ctx, uint32_t i)
{
	return ((const struct folded_nodes *)ctx)->nv[i];
}

static int out_folded(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	double *nv = sd_node_values(p, o);
	if (!nv)
		return -ENOMEM;
	struct folded_nodes f = { p, nv };
	struct sd_folded_tree t = { (uint32_t)p->nnodes, o->top, &f, node_parent, node_name,
				    node_value };
	int err = sd_folded_print(out, &t);
	if (!err)
		sd_nocounters_warning(stderr, p);
	free(nv);
	return err;
}

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

static const struct sd_thread_row *top_rows;

/* Most samples first; equal counts in the view's order. */
static int top_cmp(const void *a, const void *b)
{
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
	top_rows = p->threads;
	qsort(idx, p->nthreads, sizeof(*idx), top_cmp);
	for (size_t k = 0; k < top; k++)
		keep[idx[k]] = 1;
	free(idx);
	return keep;
}

static int out_threads(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
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

static int out_sources(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
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
static int out_counters(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
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
	sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : stderr, p);
	return err;
}

/* One row per stream: whether it ended (END reason) and what it dropped. The caller
 * opens the JSON object (the notes and coverage come first). */
static int out_streams(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
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

int sd_pprof_said(const char *path, int err)
{
	if (err == 0) /* a failure was said by the writer (outfile.c) */
		printf("sonde: pprof profile written to %s (go tool pprof -top %s)\n", path, path);
	return err == -ENOMEM || err == 0 ? err : -EIO;
}

int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (sd_sym_finish(p->sym))
		return -ENOMEM;
	/* the notes come before the rows: the flat view puts them under its header lines;
	 * json gets them as keys of its object, first */
	if (o->format == SD_FMT_PPROF && o->view == SD_VIEW_FLAT)
		return sd_pprof_said(o->output, sd_out_pprof(o->output, p));
	if (o->format == SD_FMT_PPROF) /* --view tree: views.c */
		return sd_output_view(out, p, o);
	if (o->format == SD_FMT_HTML)
		return sd_out_html(out, p, o);
	if (sd_format_timeline(o->format)) /* timeline.c: the notes, then the file */
		return sd_out_timeline(out, p, o);
	if (o->view == SD_VIEW_STREAMS) {
		if (o->format == SD_FMT_JSON)
			putc('{', out);
		sd_notes(out, p, o);
		if (o->format == SD_FMT_JSON)
			sd_cov_json(out, p, 0);
		else if (o->format == SD_FMT_TEXT)
			sd_cov_block(out, p);
		return out_streams(out, p, o);
	}
	if (o->format == SD_FMT_JSON) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			return -ENOMEM;
		int r = sd_output_view(m, p, o);
		if (fclose(m) || r) {
			free(buf);
			return r ? r : -ENOMEM;
		}
		/* every view's json is one object: the notes go in as its first keys */
		putc('{', out);
		sd_notes(out, p, o);
		sd_cov_json(out, p, o->view == SD_VIEW_COVERAGE);
		if (len && buf[0] == '{')
			fwrite(buf + 1, 1, len - 1, out);
		free(buf);
		return 0;
	}
	if (!(o->view == SD_VIEW_FLAT && o->format == SD_FMT_TEXT))
		sd_notes(out, p, o);
	/* every text report states the coverage account in its header (the flat view
	 * under its header lines); --view coverage is the whole account */
	if (o->format == SD_FMT_TEXT && o->view != SD_VIEW_FLAT && o->view != SD_VIEW_COVERAGE)
		sd_cov_block(out, p);
	return sd_output_view(out, p, o);
}

int sd_output_view(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (o->format == SD_FMT_SVG) /* the flat or tree view's flame graph (export_svg.c) */
		return sd_out_svg(out, p, o);
	if (o->view == SD_VIEW_THREADS)
		return out_threads(out, p, o);
	if (o->view == SD_VIEW_SOURCES)
		return out_sources(out, p, o);
	if (o->view == SD_VIEW_COUNTERS)
		return out_counters(out, p, o);
	if (o->view == SD_VIEW_COVERAGE)
		return sd_out_coverage(out, p, o);
	if (o->view == SD_VIEW_PROCESSES)
		return sd_out_processes(out, p, o);
	if (o->view == SD_VIEW_GROUP)
		return sd_out_group(out, p, o);
	if (o->view == SD_VIEW_TREE)
		return sd_out_tree(out, p, o);
	if (o->view == SD_VIEW_REGIONS)
		return sd_out_regions(out, p, o);
	if (o->view == SD_VIEW_MODEL)
		return sd_out_model(out, p, o);
	if (o->view == SD_VIEW_CALLERS || o->view == SD_VIEW_CALLEES)
		return sd_out_callers(out, p, o);
	if (o->format == SD_FMT_FOLDED)
		return out_folded(out, p, o);
	return out_flat(out, p, o);
}
