/*
 * view_group.c: --group-by KEY[,KEY...], one row per distinct combination of the keys'
 * values (built-in keys and annotation attributes, sd_grouper: profile/group.c), with the
 * metric, its share and the --stats columns; called by the dispatcher. Input is the loaded
 * profile's sample rows (struct sd_crow, never one per sample); output is deterministic
 * (sorted with a total order), its columns in docs/REPORT.md, printed in text, csv and
 * json through the table printer. Runs in the CLI's only thread.
 */
#include "analyze/views/views.h"

#include <stdlib.h>
#include <string.h>

/* ---- group-by ---------------------------------------------------------------------- */

struct group { char *key; size_t klen; double v; uint32_t id; /* before sorting */ };

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	double vx = x->v, vy = y->v;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return sd_natcmp_keys(x->key, x->klen, y->key, y->klen);
}

/* The grouped rows of --group-by, sorted, and what printing them needs. */
struct grouped {
	struct group *groups;
	size_t ngroups, n; /* n: printed (--top) */
	double all;        /* the metric's total */
	const char *metric;
	char mbuf[64];
	struct sd_stats *st; /* --stats: columns after the usual ones */
};

/* Every row's metric summed per combination of key values, into g->groups. */
static int group_rows(struct grouped *g, const struct sd_profile *p,
		      const struct sd_report_opts *o, struct sd_grouper *keys)
{
	struct sd_strmap map = { 0 };
	size_t capgroups = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		struct { const char *p; size_t n; } b;
		uint32_t id;
		if (sd_grouper_key(keys, r, &b.p, &b.n))
			goto out;
		if (!sd_strmap_get(&map, b.p, b.n, &id)) {
			if (g->ngroups == capgroups) {
				size_t cap = capgroups ? capgroups * 2 : 64;
				struct group *ng = realloc(g->groups, cap * sizeof(*ng));
				if (!ng)
					goto out;
				g->groups = ng;
				capgroups = cap;
			}
			id = (uint32_t)g->ngroups;
			if (sd_strmap_put(&map, b.p, b.n, id) || !(g->groups[id].key = malloc(b.n)))
				goto out;
			memcpy(g->groups[id].key, b.p, b.n);
			g->groups[id].klen = b.n;
			g->groups[id].v = 0;
			g->groups[id].id = id;
			g->ngroups++;
		}
		g->groups[id].v += sd_metric_row(o, r);
		if (g->st && sd_stats_add(g->st, id, r, sd_metric_row(o, r)))
			goto out;
	}
	err = 0;
out:
	sd_strmap_fini(&map);
	return err;
}

/* --group-by rank of an MPI job: each rank's wall, MPI and compute time (wall - MPI),
 * exact, as --view mpi has them (the CCA split beside the samples). */
static const struct sd_col mpi_cols[] = {
	{ .name = "wall_ms", .width = 11, .gap = "  " },
	{ .name = "mpi_ms", .width = 11, .gap = " " },
	{ .name = "compute_ms", .width = 11, .gap = " " },
};

static void mpi_cells(struct sd_table *t, const struct sd_mpi_rank *r, size_t n, const char *key)
{
	char *end;
	long long k = strtoll(key, &end, 10);
	for (size_t i = 0; *key && !*end && i < n; i++)
		if (r[i].rank == k) {
			sd_table_ms(t, r[i].wall_ns);
			sd_table_ms(t, r[i].mpi_ns);
			sd_table_ms(t, sd_mpi_compute_ns(&r[i]));
			return;
		}
	for (size_t c = 0; c < 3; c++)
		sd_table_null(t);
}

/* One table for the three formats: the key columns (JSON: the "values" array), the
 * metric, its share, the --stats columns and, by rank alone in an MPI job, each rank's
 * wall, MPI and compute time. Text shows the thread key as "TID (NAME)" (the grouper
 * built the keys for o->format). */
static int print_group(FILE *out, const struct grouped *g, const struct sd_profile *p,
		       const struct sd_report_opts *o)
{
	size_t nc = o->ngroup, nr = 0;
	struct sd_mpi_rank *ranks = NULL;
	if (o->ngroup == 1 && !strcmp(o->group_by[0], "rank") && sd_mpi_ranks(p, &ranks, &nr))
		return -ENOMEM;
	if (nr && ranks[0].rank < 0) /* no stream has a rank */
		nr = 0;
	struct sd_col *cols = calloc(nc + 5 + SD_STATS_NCOLS, sizeof(*cols));
	struct sd_table *t = NULL;
	int err = -ENOMEM;

	if (!cols)
		return -ENOMEM;
	for (size_t k = 0; k < o->ngroup; k++)
		cols[k] = (struct sd_col){ .name = o->group_by[k], .left = 1, .group = "values" };
	cols[nc++] = (struct sd_col){ .name = g->metric, .width = 10 };
	cols[nc++] = (struct sd_col){ .name = "percent", .width = 8, .gap = " " };
	for (size_t i = 0; g->st && i < SD_STATS_NCOLS; i++)
		cols[nc++] = sd_stats_cols[i];
	for (size_t i = 0; nr && i < 3; i++)
		cols[nc++] = mpi_cols[i];
	if (!(t = sd_table_new(o, cols, nc)))
		goto out;
	for (size_t i = 0; i < g->n; i++) {
		const char *v = g->groups[i].key;
		for (size_t k = 0; k < o->ngroup; k++, v += strlen(v) + 1)
			sd_table_str(t, v);
		sd_table_metric(t, g->groups[i].v);
		sd_table_pct(t, sd_pct(g->groups[i].v, g->all));
		if (g->st)
			sd_stats_cells(t, g->st, o, g->groups[i].id);
		if (nr)
			mpi_cells(t, ranks, nr, g->groups[i].key);
	}
	if (o->format == SD_FMT_JSON) {
		sd_json_head(out, p, o, sd_metric_name(o));
		fputs(",\"group_by\":[", out);
		for (size_t k = 0; k < o->ngroup; k++) {
			if (k)
				putc(',', out);
			sd_json_str(out, o->group_by[k], strlen(o->group_by[k]));
		}
		fputs("],", out);
		if (g->st)
			sd_stats_json_key(out, g->st);
	}
	err = sd_table_print_view(out, t, "rows", 1);
out:
	sd_table_free(t);
	free(cols);
	free(ranks);
	return err;
}

int sd_out_group(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct grouped g = { .all = sd_metric_total(p, o) };
	struct sd_grouper *keys = sd_grouper_new(p, o->group_by, o->ngroup,
						 o->format == SD_FMT_TEXT);
	int err = -ENOMEM;

	if (!keys || (o->stats && !(g.st = sd_stats_new(p, o->stats))) ||
	    group_rows(&g, p, o, keys))
		goto out;
	if (g.ngroups > 1)
		qsort(g.groups, g.ngroups, sizeof(*g.groups), group_cmp);
	g.n = o->top && o->top < g.ngroups ? o->top : g.ngroups;
	g.metric = o->counter ? o->counter : o->weight
		 ? sd_metric_col(o, "weight", g.mbuf, sizeof(g.mbuf)) : sd_metric_name(o);
	err = print_group(out, &g, p, o);
	if (!err && o->counter)
		sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : NULL, p);
out:
	for (size_t i = 0; i < g.ngroups; i++)
		free(g.groups[i].key);
	free(g.groups);
	sd_grouper_free(keys);
	sd_stats_free(g.st);
	return err;
}
