/*
 * view_flat.c: the flat view of `sonde report` (the default: one row per function, self
 * and total, in text, csv and json, its text header above the rows) and its folded form
 * (one line per call path). Called by the dispatcher (output.c); the rows are a table
 * (table.c). Column names and shapes are documented in docs/REPORT.md and checked by
 * tests/cli. Output is deterministic: rows are sorted with a total order. Runs in the
 * CLI's only thread.
 */
#include "analyze/views/views.h"

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
	fprintf(out, "  streams: %" PRIu64, p->streams);
	if (p->unreadable) /* each said above, with why */
		fprintf(out, " (%" PRIu64 " more unreadable, left out)", p->unreadable);
	fprintf(out, "  processes: %zu", p->npids + p->children_nostream);
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
	if (!o->quiet)
		sd_cov_block(out, p);
	putc('\n', out);
}

static void flat_head_json(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
			   const struct flat *f)
{
	sd_json_head(out, p, o, sd_metric_name(o));
	if (o->counter)
		fprintf(out, ",\"metric_total\":%.0f", f->all);
	fprintf(out, ",\"streams\":%" PRIu64 ",\"unreadable_streams\":%" PRIu64 ",\"processes\":%zu,"
		"\"processes_without_stream\":%zu,\"threads\":%zu,\"dropped\":%" PRIu64
		",\"dropped_region_events\":%" PRIu64 ",", p->streams, p->unreadable,
		p->npids + p->children_nostream, p->children_nostream, p->nthreads, p->dropped,
		p->dropped_regions);
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
	sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : NULL, p);
	sd_table_free(t);
	return err;
}

int sd_out_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
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

int sd_out_folded(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	double *nv = sd_node_values(p, o);
	if (!nv)
		return -ENOMEM;
	struct folded_nodes f = { p, nv };
	struct sd_folded_tree t = { (uint32_t)p->nnodes, o->top, &f, node_parent, node_name,
				    node_value };
	int err = sd_folded_print(out, &t);
	if (!err)
		sd_nocounters_warning(NULL, p);
	free(nv);
	return err;
}

