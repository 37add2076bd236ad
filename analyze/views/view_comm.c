/*
 * view_comm.c: `sonde report --view comm`, the communication matrix of an MPI job: the
 * point-to-point messages (and their bytes) each world rank sent to each other one, from
 * the MESSAGES records that libsonde_mpi.so's send wrappers fill (docs/FORMAT.md). A row
 * is the sender, a column the receiver; a message counts when its send call returned
 * (MPI_Send, its S/B/R and non-blocking forms, MPI_Sendrecv, MPI_Sendrecv_replace).
 * Collectives are not in it (their bytes are in --view regions).
 *
 * text: the matrix of bytes for jobs of up to 16 ranks (cells in B, KiB, MiB, GiB), else
 * the pairs by bytes, largest first; csv and json: every pair (src, dst, messages, bytes)
 * in rank order; --top N: the N largest pairs, largest first. --where rank=/host=/process= keep the senders'
 * streams; other filters do not apply to messages. Runs after loading and filtering.
 */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MATRIX_MAX 16 /* ranks shown as a matrix in text */

static int pair_cmp(const void *a, const void *b)
{
	const struct sd_comm_pair *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

static int bytes_cmp(const void *a, const void *b)
{
	const struct sd_comm_pair *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return pair_cmp(a, b);
}

int sd_comm_pairs(const struct sd_profile *p, struct sd_comm_pair **out, size_t *nout)
{
	struct sd_comm_pair *v = malloc((p->nmsgs + 1) * sizeof(*v));
	size_t n = 0;
	*out = NULL;
	*nout = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nmsgs; i++)
		v[i] = (struct sd_comm_pair){ p->msgs[i].src, p->msgs[i].dst, p->msgs[i].msgs,
					      p->msgs[i].bytes };
	qsort(v, p->nmsgs, sizeof(*v), pair_cmp);
	for (size_t i = 0; i < p->nmsgs; i++) { /* one rank's several streams: summed */
		if (n && v[n - 1].src == v[i].src && v[n - 1].dst == v[i].dst) {
			v[n - 1].msgs += v[i].msgs;
			v[n - 1].bytes += v[i].bytes;
		} else {
			v[n++] = v[i];
		}
	}
	*out = v;
	*nout = n;
	return 0;
}

/* bytes as "12.3 MiB" (exact below 1 KiB) */
static void human(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = -1;
	if (b < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", b);
		return;
	}
	while (v >= 1024 && u < 3)
		v /= 1024, u++;
	snprintf(buf, len, "%.1f %s", v, unit[u]);
}

static int print_matrix(FILE *out, const struct sd_report_opts *o, const struct sd_comm_pair *v,
			size_t n, uint32_t world)
{
	struct sd_col *cols = calloc(world + 2, sizeof(*cols));
	char(*names)[16] = calloc(world, sizeof(*names));
	uint64_t *row = calloc(world, sizeof(*row));
	struct sd_table *t = NULL;
	int err = -ENOMEM;
	char cell[32];
	if (!cols || !names || !row)
		goto out;
	cols[0] = (struct sd_col){ .name = "from\\to", .width = 7 };
	for (uint32_t d = 0; d < world; d++) {
		snprintf(names[d], sizeof names[d], "%" PRIu32, d);
		cols[1 + d] = (struct sd_col){ .name = names[d], .width = 10, .gap = " " };
	}
	cols[1 + world] = (struct sd_col){ .name = "sent", .width = 11, .gap = "  " };
	if (!(t = sd_table_new(o, cols, world + 2)))
		goto out;
	size_t i = 0;
	for (uint32_t s = 0; s < world; s++) {
		uint64_t sum = 0;
		memset(row, 0, world * sizeof(*row));
		for (; i < n && v[i].src == s; i++)
			row[v[i].dst] = v[i].bytes, sum += v[i].bytes;
		sd_table_u64(t, s);
		for (uint32_t d = 0; d < world; d++) {
			if (row[d])
				human(cell, sizeof cell, row[d]);
			sd_table_str(t, row[d] ? cell : ".");
		}
		human(cell, sizeof cell, sum);
		sd_table_str(t, cell);
	}
	err = sd_table_print_view(out, t, "matrix", 0);
out:
	sd_table_free(t);
	free(cols);
	free(names);
	free(row);
	return err;
}

static const struct sd_col pair_cols[] = {
	{ .name = "src", .width = 6 },
	{ .name = "dst", .width = 6, .gap = " " },
	{ .name = "messages", .width = 10, .gap = " " },
	{ .name = "bytes", .width = 14, .gap = " " },
	{ .name = "mean_bytes", .width = 12, .gap = " " },
};

static int print_pairs(FILE *out, const struct sd_report_opts *o, const struct sd_comm_pair *v,
		       size_t n)
{
	struct sd_table *t = sd_table_new(o, pair_cols, sizeof pair_cols / sizeof pair_cols[0]);
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		sd_table_u64(t, v[i].src);
		sd_table_u64(t, v[i].dst);
		sd_table_u64(t, v[i].msgs);
		sd_table_u64(t, v[i].bytes);
		sd_table_u64(t, v[i].msgs ? v[i].bytes / v[i].msgs : 0);
	}
	int err = sd_table_print_view(out, t, "pairs", 0);
	sd_table_free(t);
	return err;
}

/* text: the job's totals and its busiest pair, under the table */
static void summary(FILE *out, const struct sd_comm_pair *v, size_t n, uint32_t world)
{
	uint64_t msgs = 0, bytes = 0;
	size_t top = 0;
	char a[32], b[32];
	for (size_t i = 0; i < n; i++) {
		msgs += v[i].msgs, bytes += v[i].bytes;
		top = v[i].bytes > v[top].bytes ? i : top;
	}
	human(a, sizeof a, bytes);
	human(b, sizeof b, v[top].bytes);
	fprintf(out, "%" PRIu64 " messages, %s (%" PRIu64 " bytes) between %zu pairs of %" PRIu32
		" ranks; most: rank %" PRIu32 " to rank %" PRIu32 ", %s in %" PRIu64 " messages\n",
		msgs, a, bytes, n, world, v[top].src, v[top].dst, b, v[top].msgs);
}

int sd_out_comm(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_comm_pair *v;
	size_t n;
	int err = sd_comm_pairs(p, &v, &n);
	if (err)
		return err;
	if (!n) {
		free(v);
		return sd_error(SD_EXIT_OK, "report: --view comm: no MPI message in the streams "
				"(point-to-point sends of programs run with sonde run, which times MPI "
				"calls when linked with MPI: docs/ENV.md, MPI programs)");
	}
	uint32_t world = p->msg_world;
	size_t shown = o->top && o->top < n ? o->top : n;
	if (o->format == SD_FMT_TEXT && world <= MATRIX_MAX) {
		err = print_matrix(out, o, v, n, world);
	} else {
		if (o->format == SD_FMT_TEXT || shown < n) /* the largest first */
			qsort(v, n, sizeof(*v), bytes_cmp);
		err = print_pairs(out, o, v, shown);
	}
	if (!err && o->format == SD_FMT_TEXT)
		summary(out, v, n, world);
	free(v);
	return err;
}
