/*
 * view_stats.c: `sonde report --stats KEY` (KEY thread, process or rank): for each row of
 * the flat view (per function: its self) or of the --group-by view, the spread of the
 * row's metric across the units of the run: min, mean, max and population standard
 * deviation, and n, the number of units (TAU's view of a parallel run: is the work
 * balanced?). Called by view_flat.c (flat view) and view_group.c (group-by view), which add
 * each sample row's metric to the view row it counts in and print these cells after
 * their usual columns.
 *
 * Units: a thread is a (pid, tid) of the threads view (threads without samples count);
 * a process is a pid; a rank is a HEADER `rank`. When some stream has a rank, a stream
 * without one (the MPI launcher, a helper the job ran) is in no unit: its samples are
 * left out of the spread; when none has, each process is a unit, keyed by its pid. Every
 * unit of the loaded streams counts, with 0 where the row has no samples, so n is the
 * same for every row and mean = row total / n. --where and --source keep every unit (a
 * thread with no sample left is a 0). min_at and max_at name the unit of the row's
 * smallest and largest value (the first in the order the units were loaded on a tie):
 * its rank, pid, or pid/tid.
 *
 * Memory: one cell per (view row, unit) that has samples, not per sample. Runs in the
 * CLI's only thread, after loading and filtering.
 */
#include "analyze/views/views.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sd_stats_names[] = { "", "thread", "process", "rank", NULL };

struct cell { uint32_t next, unit; double v; }; /* next: index + 1 of the row's next cell */

struct sd_stats {
	int key;
	int ranked;               /* --stats rank and some stream has a rank */
	struct sd_strmap units;   /* unit key (16 bytes) -> unit index */
	size_t nunits;
	uint64_t (*keys)[2];      /* per unit: its key (unit_key), for min_at and max_at */
	size_t capkeys;
	unsigned char *seen;      /* per unit: scratch of sd_stats_spread */
	struct sd_u64map cellmap; /* row << 32 | unit -> cell index */
	struct cell *cells; size_t ncells, capcells;
	uint32_t *head; size_t caphead; /* per row: index + 1 of its first cell, 0: none */
};

/* The 16-byte key of the unit of (pid, tid, rank, host). */
static void unit_key(int key, uint64_t pid, uint64_t tid, int64_t rank, uint32_t host,
		     uint64_t k[2])
{
	if (key == SD_STATS_THREAD)
		k[0] = pid, k[1] = tid;
	else if (key == SD_STATS_RANK && rank >= 0)
		k[0] = 1, k[1] = (uint64_t)rank;
	else
		k[0] = 2 + (uint64_t)host, k[1] = pid; /* a process, or a stream without a rank */
}

/* Index of a unit, registered if new: >= 0, -ENOMEM, or NO_UNIT (a stream without a
 * rank among ranked ones). */
#define NO_UNIT (-1000)
static long unit_of(struct sd_stats *s, uint64_t pid, uint64_t tid, int64_t rank,
		    uint32_t host)
{
	uint64_t k[2];
	uint32_t u;

	if (s->ranked && rank < 0)
		return NO_UNIT;
	unit_key(s->key, pid, tid, rank, host, k);
	if (sd_strmap_get(&s->units, k, sizeof(k), &u))
		return u;
	if (sd_grow(&s->keys, &s->capkeys, s->nunits + 1, sizeof(*s->keys)) ||
	    sd_strmap_put(&s->units, k, sizeof(k), (uint32_t)s->nunits))
		return -ENOMEM;
	memcpy(s->keys[s->nunits], k, sizeof(k));
	return (long)s->nunits++;
}

struct sd_stats *sd_stats_new(const struct sd_profile *p, int key)
{
	struct sd_stats *s = calloc(1, sizeof(*s));

	assert(key == SD_STATS_THREAD || key == SD_STATS_PROCESS || key == SD_STATS_RANK);
	if (!s)
		return NULL;
	s->key = key;
	for (size_t i = 0; key == SD_STATS_RANK && i < p->nprocs; i++)
		s->ranked |= p->procs[i].rank >= 0;
	if (key == SD_STATS_THREAD) {
		for (size_t i = 0; i < p->nthreads; i++)
			if (unit_of(s, p->threads[i].pid, p->threads[i].tid, -1, 0) < 0)
				goto fail;
	} else {
		for (size_t i = 0; i < p->nprocs; i++) {
			long u = unit_of(s, p->procs[i].pid, 0, p->procs[i].rank, p->procs[i].host);
			if (u < 0 && u != NO_UNIT)
				goto fail;
		}
	}
	if (!(s->seen = calloc(s->nunits + 1, 1)))
		goto fail;
	return s;
fail:
	sd_stats_free(s);
	return NULL;
}

int sd_stats_add(struct sd_stats *s, uint32_t row, const struct sd_crow *r, double v)
{
	long u = unit_of(s, r->pid, r->tid, r->rank, r->host); /* registered by sd_stats_new */
	uint32_t c;

	if (u == NO_UNIT)
		return 0;
	if (u < 0 || (size_t)u >= s->nunits)
		return -ENOMEM;
	uint64_t k = (uint64_t)row << 32 | (uint64_t)u;
	if (sd_u64map_get(&s->cellmap, k, &c)) {
		s->cells[c].v += v;
		return 0;
	}
	if (row >= s->caphead) {
		size_t cap = s->caphead ? s->caphead : 64;
		while (cap <= row)
			cap *= 2;
		uint32_t *nh = realloc(s->head, cap * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		memset(nh + s->caphead, 0, (cap - s->caphead) * sizeof(*nh));
		s->head = nh;
		s->caphead = cap;
	}
	if (s->ncells == s->capcells) {
		size_t cap = s->capcells ? s->capcells * 2 : 256;
		struct cell *nc = realloc(s->cells, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		s->cells = nc;
		s->capcells = cap;
	}
	c = (uint32_t)s->ncells;
	if (sd_u64map_put(&s->cellmap, k, c))
		return -ENOMEM;
	s->cells[c] = (struct cell){ s->head[row], (uint32_t)u, v };
	s->head[row] = c + 1;
	s->ncells++;
	return 0;
}

struct sd_stats *sd_stats_flat(const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_stats *s = sd_stats_new(p, o->stats);

	for (size_t i = 0; s && i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		if (sd_stats_add(s, p->nodes[r->cnode].func, r, sd_metric_row(o, r))) {
			sd_stats_free(s);
			return NULL;
		}
	}
	return s;
}

void sd_stats_free(struct sd_stats *s)
{
	if (!s)
		return;
	sd_strmap_fini(&s->units);
	sd_u64map_fini(&s->cellmap);
	free(s->keys);
	free(s->seen);
	free(s->cells);
	free(s->head);
	free(s);
}


static size_t cell_unit(const struct sd_stats *s, uint32_t c)
{
	return s->cells[c - 1].unit;
}

/* The first unit (in load order) with no sample in the row, or nunits: none. */
static size_t first_zero_unit(const struct sd_stats *s, uint32_t row)
{
	memset(s->seen, 0, s->nunits);
	for (uint32_t c = row < s->caphead ? s->head[row] : 0; c; c = s->cells[c - 1].next)
		s->seen[cell_unit(s, c)] = 1;
	size_t u = 0;
	while (u < s->nunits && s->seen[u])
		u++;
	return u;
}

/* The row's values in its m units with samples, and 0 in the other n - m. */
struct sd_spread sd_stats_spread(const struct sd_stats *s, uint32_t row)
{
	struct sd_spread st = { 0, 0, 0, 0, 0, 0 };
	double n = (double)s->nunits, sum = 0, ss = 0;
	size_t m = 0;

	if (!s->nunits)
		return st;
	for (uint32_t c = row < s->caphead ? s->head[row] : 0; c; c = s->cells[c - 1].next) {
		double v = s->cells[c - 1].v;
		size_t u = cell_unit(s, c);
		if (!m || v < st.min || (v == st.min && u < st.min_at))
			st.min = v, st.min_at = u;
		if (!m || v > st.max || (v == st.max && u < st.max_at))
			st.max = v, st.max_at = u;
		sum += v;
		m++;
	}
	if (m < s->nunits) { /* units without samples in this row are zeros */
		size_t z = m ? first_zero_unit(s, row) : 0; /* no value at all: every unit 0 */
		if (st.min > 0 || (st.min == 0 && z < st.min_at) || !m)
			st.min = 0, st.min_at = z;
		if (st.max < 0 || (st.max == 0 && z < st.max_at) || !m)
			st.max = 0, st.max_at = z;
	}
	st.mean = sum / n;
	/* two passes: the squares of deviations from the mean, not sum x^2 - n mean^2 */
	for (uint32_t c = row < s->caphead ? s->head[row] : 0; c; c = s->cells[c - 1].next) {
		double d = s->cells[c - 1].v - st.mean;
		ss += d * d;
	}
	ss += (double)(s->nunits - m) * st.mean * st.mean;
	st.sd = sqrt(ss / n);
	return st;
}

void sd_stats_json_key(FILE *out, const struct sd_stats *s)
{
	fprintf(out, "\"stats\":\"%s\",", sd_stats_names[s->key]);
}

const struct sd_col sd_stats_cols[SD_STATS_NCOLS] = {
	{ .name = "min", .width = 10 }, { .name = "mean", .width = 12, .gap = " " },
	{ .name = "max", .width = 10, .gap = " " }, { .name = "stddev", .width = 12, .gap = " " },
	{ .name = "n", .width = 6, .gap = " " }, { .name = "min_at", .width = 8, .gap = " " },
	{ .name = "max_at", .width = 8, .gap = " " },
};

/* A unit's name, as --where and --group-by spell it: the rank, the pid, or pid/tid. */
void sd_stats_unit_name(const struct sd_stats *s, size_t u, char *buf, size_t len)
{
	if (u >= s->nunits)
		snprintf(buf, len, "-");
	else if (s->key == SD_STATS_THREAD)
		snprintf(buf, len, "%" PRIu64 "/%" PRIu64, s->keys[u][0], s->keys[u][1]);
	else
		snprintf(buf, len, "%" PRIu64, s->keys[u][1]);
}

void sd_stats_cells(struct sd_table *t, const struct sd_stats *s,
		    const struct sd_report_opts *o, uint32_t row)
{
	struct sd_spread st = sd_stats_spread(s, row);
	double div = o->weight && !o->counter && !o->weight_unit ? 1e6 : 1;

	sd_table_metric(t, st.min);
	sd_table_num(t, "%.3f", st.mean / div);
	sd_table_metric(t, st.max);
	sd_table_num(t, "%.3f", st.sd / div);
	sd_table_u64(t, s->nunits);
	char name[48];
	sd_stats_unit_name(s, st.min_at, name, sizeof name);
	sd_table_str(t, name);
	sd_stats_unit_name(s, st.max_at, name, sizeof name);
	sd_table_str(t, name);
}

size_t sd_stats_nunits(const struct sd_stats *s)
{
	return s->nunits;
}
