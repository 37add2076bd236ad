/*
 * view_imbalance.c: `sonde report --view imbalance`, load imbalance at a glance: each
 * region path (exact inclusive time: SONDE_REGIONS, and every MPI call under sonde run's
 * MPI wrapper) and each function (self, in the report's metric) across the ranks of the
 * run, with min, mean and max over the ranks, the imbalance (max - mean) / max in
 * percent, and the ranks of the min and the max: which rank is slowest, and where.
 *
 * Units are those of `--stats rank` (view_stats.c): each rank, a stream without one
 * beside ranked ones (the launcher) in none; without ranks, each process. Rows: the
 * regions first, then the functions, each sorted by what the imbalance costs, max - mean
 * (the time the other units wait for the slowest, on average), then by name; --top N
 * keeps the first N of each. Runs in the CLI's only thread, after loading and filtering.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One row: a region path (merged context node) or a function, by its stats row id. */
struct irow { uint32_t id; int region; char *name; struct sd_spread sp; };

/* The stats rows: functions by function id, region paths after them by context id. The
 * unit of a region row is its stream's process (its rank). 0 or -ENOMEM. */
static int fill(struct sd_stats *s, struct sd_profile *p, const struct sd_report_opts *o,
		uint32_t nfuncs)
{
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		if (sd_stats_add(s, p->nodes[r->cnode].func, r, sd_metric_row(o, r)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->nregions; i++) {
		const struct sd_region_row *g = &p->regions[i];
		const struct sd_stream_info *si = g->stream < p->nsinfo ? &p->sinfo[g->stream] : NULL;
		long host = sd_profile_value(p, si && si->host ? si->host : "?"); /* interned */
		struct sd_crow unit = { .pid = g->pid, .tid = g->tid, .rank = si ? si->rank : -1,
					.host = host < 0 ? 0 : (uint32_t)host };
		if (host < 0 || (g->calls && sd_stats_add(s, nfuncs + g->ctx, &unit,
							  (double)g->incl_ns)))
			return -ENOMEM;
	}
	return 0;
}

/* Regions first; then the larger max - mean; then the name. */
static int irow_cmp(const void *a, const void *b)
{
	const struct irow *x = a, *y = b;
	if (x->region != y->region)
		return x->region ? -1 : 1;
	double dx = x->sp.max - x->sp.mean, dy = y->sp.max - y->sp.mean;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The rows of every region path and function with a value in some unit. */
static int collect(const struct sd_stats *s, const struct sd_profile *p, uint32_t nfuncs,
		   struct irow **out, size_t *n)
{
	size_t cap = (size_t)nfuncs + p->nctx + 1;
	struct irow *rows = calloc(cap, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	*out = rows;
	*n = 0;
	for (size_t id = 0; id < cap - 1; id++) {
		struct sd_spread sp = sd_stats_spread(s, (uint32_t)id);
		if (sp.max <= 0)
			continue;
		struct irow *r = &rows[(*n)++];
		r->id = (uint32_t)id;
		r->region = id >= nfuncs;
		r->sp = sp;
		r->name = r->region ? sd_ctx_path(p, (uint32_t)(id - nfuncs), NULL)
				    : strdup(sd_sym_func(p->sym, (uint32_t)id)->display);
		if (!r->name)
			return -ENOMEM;
	}
	return 0;
}

static const struct sd_col imb_cols[] = {
	{ .name = "kind", .left = 1 },
	{ .name = "unit", .left = 1 },
	{ .name = "min", .width = 10 },
	{ .name = "mean", .width = 12, .gap = " " },
	{ .name = "max", .width = 10, .gap = " " },
	{ .name = "imbalance_pct", .text = "imbalance", .width = 9, .gap = " " },
	{ .name = "min_at", .width = 6, .gap = " " },
	{ .name = "max_at", .width = 6, .gap = " " },
	{ .name = "n", .width = 4, .gap = " " },
	{ .name = "name", .left = 1, .gap = "  " },
};

static void row_cells(struct sd_table *t, const struct sd_stats *s,
		      const struct sd_report_opts *o, const struct irow *r)
{
	char at[48];
	sd_table_str(t, r->region ? "region" : "function");
	sd_table_str(t, r->region ? "ms" : sd_metric_name(o));
	if (r->region) {
		sd_table_num(t, "%.3f", r->sp.min / 1e6);
		sd_table_num(t, "%.3f", r->sp.mean / 1e6);
		sd_table_num(t, "%.3f", r->sp.max / 1e6);
	} else {
		sd_table_metric(t, r->sp.min);
		sd_table_num(t, "%.3f", r->sp.mean / (o->weight && !o->counter && !o->weight_unit ? 1e6 : 1));
		sd_table_metric(t, r->sp.max);
	}
	sd_table_num(t, "%.1f", r->sp.max > 0 ? 100 * (r->sp.max - r->sp.mean) / r->sp.max : 0);
	sd_stats_unit_name(s, r->sp.min_at, at, sizeof at);
	sd_table_str(t, at);
	sd_stats_unit_name(s, r->sp.max_at, at, sizeof at);
	sd_table_str(t, at);
	sd_table_u64(t, sd_stats_nunits(s));
	sd_table_str(t, r->name);
}

static int print_rows(FILE *out, const struct sd_stats *s, const struct sd_report_opts *o,
		      const struct irow *rows, size_t n)
{
	struct sd_table *t = sd_table_new(o, imb_cols, sizeof imb_cols / sizeof imb_cols[0]);
	if (!t)
		return -ENOMEM;
	size_t shown[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++)
		if (!o->top || shown[rows[i].region]++ < o->top)
			row_cells(t, s, o, &rows[i]);
	int err = sd_table_print_view(out, t, "imbalance", 0);
	sd_table_free(t);
	return err;
}

int sd_out_imbalance(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	uint32_t nfuncs = (uint32_t)sd_sym_nfuncs(p->sym);
	struct sd_stats *s = sd_stats_new(p, SD_STATS_RANK);
	struct irow *rows = NULL;
	size_t n = 0;
	int err = -ENOMEM;

	if (!s || fill(s, p, o, nfuncs) || collect(s, p, nfuncs, &rows, &n))
		goto out;
	qsort(rows, n, sizeof(*rows), irow_cmp);
	err = print_rows(out, s, o, rows, n);
out:
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].name);
	free(rows);
	sd_stats_free(s);
	return err;
}
