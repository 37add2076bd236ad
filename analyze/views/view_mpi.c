/*
 * view_mpi.c: `sonde report --view mpi`, compute against communication per rank (the
 * split of the CCA study): for each rank, the wall time of its process under sonde, the
 * exact time in MPI calls (the regions of attribute `mpi` that sonde run's MPI wrapper
 * records, docs/ENV.md "MPI programs"), and the rest, compute: wall - MPI.
 *
 * A rank's wall time is the span of its streams that hold MPI calls (each from the
 * process's start under sonde to its last record), its MPI time the inclusive time of
 * its outermost `mpi` regions in every thread. Ranks as for `--stats rank`: a stream
 * without a rank beside ranked ones (the launcher) is in none; without ranks, each
 * process is a row. Rows in rank order; text ends with the ranks that compute least and
 * most. Runs in the CLI's only thread, after loading and filtering.
 */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/* Is context node c an outermost `mpi` level (no `mpi` above it)? */
static int outer_mpi(const struct sd_profile *p, uint32_t mpi_attr, uint32_t c)
{
	if (!c || p->ctx[c].attr != mpi_attr)
		return 0;
	for (uint32_t x = p->ctx[c].parent; x; x = p->ctx[x].parent)
		if (p->ctx[x].attr == mpi_attr)
			return 0;
	return 1;
}

/* The row of stream st's unit, made if new: its index, -1 for a launcher among ranks,
 * -2 on ENOMEM. Called once per stream (sd_mpi_ranks keeps the answer). */
static long row_of(const struct sd_profile *p, struct sd_mpi_rank **rows, size_t *n,
		   int ranked, uint32_t st)
{
	const struct sd_stream_info *si = &p->sinfo[st];
	if (ranked && si->rank < 0)
		return -1;
	for (size_t i = 0; i < *n; i++)
		if (ranked ? (*rows)[i].rank == si->rank
			   : (*rows)[i].pid == si->pid && !strcmp((*rows)[i].host, si->host))
			return (long)i;
	struct sd_mpi_rank *nr = realloc(*rows, (*n + 1) * sizeof(**rows));
	if (!nr)
		return -2;
	*rows = nr;
	nr[*n] = (struct sd_mpi_rank){ ranked ? si->rank : -1, si->pid, si->host, 0, 0, 0 };
	return (long)(*n)++;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct sd_mpi_rank *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct sd_col mpi_cols[] = {
	{ .name = "rank", .width = 6 },
	{ .name = "host", .left = 1, .gap = "  " },
	{ .name = "pid", .width = 8, .gap = " " },
	{ .name = "wall_ms", .width = 12, .gap = " " },
	{ .name = "mpi_ms", .width = 12, .gap = " " },
	{ .name = "compute_ms", .width = 12, .gap = " " },
	{ .name = "mpi_pct", .text = "mpi%", .width = 7, .gap = " " },
	{ .name = "calls", .width = 9, .gap = " " },
};

static int print_rows(FILE *out, const struct sd_report_opts *o, const struct sd_mpi_rank *rows,
		      size_t n)
{
	struct sd_table *t = sd_table_new(o, mpi_cols, sizeof mpi_cols / sizeof mpi_cols[0]);
	if (!t)
		return -ENOMEM;
	size_t lo = 0, hi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sd_mpi_rank *r = &rows[i];
		uint64_t comp = sd_mpi_compute_ns(r);
		if (r->rank >= 0)
			sd_table_num(t, "%" PRId64, r->rank);
		else
			sd_table_str(t, "(none)");
		sd_table_str(t, r->host);
		sd_table_u64(t, r->pid);
		sd_table_num(t, "%.3f", (double)r->wall_ns / 1e6);
		sd_table_num(t, "%.3f", (double)r->mpi_ns / 1e6);
		sd_table_num(t, "%.3f", (double)comp / 1e6);
		sd_table_num(t, "%.1f", r->wall_ns ? 100.0 * (double)r->mpi_ns / (double)r->wall_ns : 0);
		sd_table_u64(t, r->calls);
		lo = comp < sd_mpi_compute_ns(&rows[lo]) ? i : lo;
		hi = comp > sd_mpi_compute_ns(&rows[hi]) ? i : hi;
	}
	int err = sd_table_print_view(out, t, "ranks", 0);
	sd_table_free(t);
	if (!err && n > 1 && o->format == SD_FMT_TEXT)
		fprintf(out, "compute: least in %s %" PRId64 ", most in %s %" PRId64 " (wall - MPI)\n",
			rows[lo].rank >= 0 ? "rank" : "pid",
			rows[lo].rank >= 0 ? rows[lo].rank : (int64_t)rows[lo].pid,
			rows[hi].rank >= 0 ? "rank" : "pid",
			rows[hi].rank >= 0 ? rows[hi].rank : (int64_t)rows[hi].pid);
	return err;
}

int sd_mpi_ranks(const struct sd_profile *p, struct sd_mpi_rank **out, size_t *nout)
{
	struct sd_mpi_rank *rows = NULL;
	size_t n = 0;
	int ranked = 0;
	uint32_t mpi_attr;

	*out = NULL;
	*nout = 0;
	if (!sd_strmap_get(&p->attr_map, "mpi", 3, &mpi_attr))
		return 0;
	/* per stream: its row + 2 (1: a launcher among ranks; 0: not seen yet) */
	long *at = calloc(p->nsinfo + 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsinfo; i++)
		ranked |= p->sinfo[i].rank >= 0;
	for (size_t i = 0; i < p->nregions; i++) {
		const struct sd_region_row *g = &p->regions[i];
		if (g->stream >= p->nsinfo || !outer_mpi(p, mpi_attr, g->ctx))
			continue;
		if (!at[g->stream]) { /* the stream's first MPI call: its span counts once */
			long r = row_of(p, &rows, &n, ranked, g->stream);
			if (r == -2) {
				free(at);
				free(rows);
				return -ENOMEM;
			}
			at[g->stream] = r + 2;
			if (r >= 0)
				rows[r].wall_ns += p->sinfo[g->stream].last_ns;
		}
		if (at[g->stream] < 2)
			continue;
		rows[at[g->stream] - 2].mpi_ns += g->incl_ns;
		rows[at[g->stream] - 2].calls += g->calls;
	}
	free(at);
	if (n > 1)
		qsort(rows, n, sizeof(*rows), rank_cmp);
	*out = rows;
	*nout = n;
	return 0;
}

int sd_out_mpi(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_mpi_rank *rows;
	size_t n;
	int err = sd_mpi_ranks(p, &rows, &n);
	if (err)
		return err;
	if (!n)
		return sd_error(SD_EXIT_OK, "report: --view mpi: no MPI call in the streams (run the "
				"program with sonde run, which times MPI calls when it is linked with "
				"MPI or started by a launcher: docs/ENV.md, MPI programs)");
	err = print_rows(out, o, rows, n);
	free(rows);
	return err;
}
