/*
 * view_regions.c: `sonde report --view regions`, exact region timing (REGION_STATS of
 * SONDE_REGIONS=on, or REGION traces replayed), called by sd_output().
 *
 * A row is a path of context levels (attr=value/attr=value, outermost first), with
 * --by-thread one per thread. --group-by ATTR[,ATTR...] keeps only those attributes'
 * levels of each path: every other level is folded away, its exclusive time belonging
 * to the nearest enclosing kept level (a level with no kept level above it is in no
 * row), so `--group-by region` is one row per region over all iterations. A row's calls,
 * inclusive time, min, max, sum of squares (mean and population stddev) and counter
 * deltas are those of its kept levels; its exclusive time is theirs plus that of the
 * levels folded into them. --where was applied while loading; rows sort by path with
 * numbers in values as numbers (iteration=2 before iteration=10). The text ends with
 * what the numbers miss: ends forced by sonde (calls open at the end of a stream among
 * them), calls left out because their events were dropped, and region events dropped.
 */
#include "analyze/views/views.h"
#include "common/common.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rrow { struct sd_region_row r; char *path; double sumsq; };

static int rrow_cmp(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	int c = sd_natcmp(x->path, y->path);

	if (c)
		return c;
	if (x->r.pid != y->r.pid)
		return x->r.pid < y->r.pid ? -1 : 1;
	return (x->r.tid > y->r.tid) - (x->r.tid < y->r.tid);
}

/* What --group-by keeps: kept[attr] for each attribute id (all when no attribute is
 * given), and the keys of the process each row is from (rank, host, process), in the
 * order given: they lead the row's path (rank=2/mpi=MPI_Send). */
enum skey { SK_RANK, SK_HOST, SK_PROCESS };
static const char *const skey_names[] = { "rank", "host", "process", NULL };
struct levels {
	unsigned char *kept;
	char **path; /* per merged context node, lazily */
	int skeys[8];
	size_t nskeys;
};

/* Says that --group-by NAME is no attribute of the streams, listing those there are: the
 * line is made first, then said once. 0 or -ENOMEM. */
static int no_such_attr(const struct sd_profile *p, const char *name)
{
	char *list = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < p->nattr_names; i++)
		fprintf(m, "%s %s", i ? "," : "", p->attr_names[i]);
	if (fclose(m)) {
		free(list);
		return -ENOMEM;
	}
	sd_msg("sonde: report: --group-by %s: no such attribute in the streams (regions keep "
	       "levels of annotation attributes:%s)", name, p->nattr_names ? list : " none");
	free(list);
	return 0;
}

static int levels_init(struct levels *lv, const struct sd_profile *p,
		       const struct sd_report_opts *o)
{
	lv->kept = calloc(p->nattr_names + 1, 1);
	lv->path = calloc(p->nctx + 1, sizeof(*lv->path));
	if (!lv->kept || !lv->path)
		return -ENOMEM;
	size_t nattrs = o->ngroup;
	for (size_t k = 0; k < o->ngroup; k++)
		for (int i = 0; skey_names[i]; i++)
			if (!strcmp(o->group_by[k], skey_names[i]) &&
			    lv->nskeys < sizeof lv->skeys / sizeof lv->skeys[0]) {
				lv->skeys[lv->nskeys++] = i;
				nattrs--;
			}
	for (size_t a = 0; a < p->nattr_names; a++)
		lv->kept[a] = !nattrs;
	for (size_t k = 0; k < o->ngroup; k++) {
		uint32_t a;
		int stream_key = 0;
		for (int i = 0; skey_names[i]; i++)
			stream_key |= !strcmp(o->group_by[k], skey_names[i]);
		if (stream_key)
			continue;
		if (sd_strmap_get(&p->attr_map, o->group_by[k], strlen(o->group_by[k]), &a)) {
			lv->kept[a] = 1;
			continue;
		}
		if (no_such_attr(p, o->group_by[k]))
			return -ENOMEM;
	}
	return 0;
}

static void levels_fini(struct levels *lv, const struct sd_profile *p)
{
	for (size_t i = 0; lv->path && i < p->nctx; i++)
		free(lv->path[i]);
	free(lv->path);
	free(lv->kept);
}

/* The nearest kept level at or above context node c (0: none). */
static uint32_t kept_node(const struct sd_profile *p, const struct levels *lv, uint32_t c)
{
	while (c && !lv->kept[p->ctx[c].attr])
		c = p->ctx[c].parent;
	return c;
}

char *sd_ctx_path(const struct sd_profile *p, uint32_t c, const unsigned char *kept)
{
	size_t len = 0;
	for (uint32_t x = c; x; x = p->ctx[x].parent)
		if (!kept || kept[p->ctx[x].attr])
			len += strlen(p->attr_names[p->ctx[x].attr]) +
			       strlen(p->value_strs[p->ctx[x].value]) + 2;
	char *s = malloc(len + 1), *q;
	if (!s)
		return NULL;
	q = s + len;
	*q = 0;
	for (uint32_t x = c; x; x = p->ctx[x].parent) {
		if (kept && !kept[p->ctx[x].attr])
			continue;
		const char *a = p->attr_names[p->ctx[x].attr], *v = p->value_strs[p->ctx[x].value];
		size_t la = strlen(a), lvv = strlen(v);
		if (q != s + len)
			*--q = '/';
		q -= lvv;
		memcpy(q, v, lvv);
		*--q = '=';
		q -= la;
		memcpy(q, a, la);
	}
	memmove(s, q, strlen(q) + 1);
	return s;
}

/* "attr=value/..." of the kept levels of c's path (c itself kept), made once per node. */
static const char *kept_path(const struct sd_profile *p, struct levels *lv, uint32_t c)
{
	return lv->path[c] ? lv->path[c] : (lv->path[c] = sd_ctx_path(p, c, lv->kept));
}

/* The row of (path[, thread]), made empty if new: its index, or -1 on ENOMEM. */
static long row_of(struct sd_strmap *map, struct rrow *rows, size_t *n, const char *path,
		   const struct sd_region_row *g, int bt, size_t nc)
{
	size_t pl = strlen(path);
	char *key = malloc(pl + 2 * sizeof(uint64_t));
	uint32_t k;
	if (!key)
		return -1;
	uint64_t ids[2] = { bt ? g->pid : 0, bt ? g->tid : 0 };
	memcpy(key, ids, sizeof(ids));
	memcpy(key + sizeof(ids), path, pl);
	int found = sd_strmap_get(map, key, pl + sizeof(ids), &k);
	if (!found) {
		k = (uint32_t)*n;
		struct rrow *r = &rows[k];
		memset(r, 0, sizeof(*r));
		r->r = *g; /* pid, tid, tname, stream */
		r->r.calls = r->r.incl_ns = r->r.excl_ns = r->r.max_ns = r->r.forced = 0;
		r->r.sent = r->r.recv = 0;
		r->r.open_end = r->r.left_out = 0;
		r->r.min_ns = UINT64_MAX;
		r->r.counts = nc ? calloc(nc, sizeof(uint64_t)) : NULL;
		r->r.ncounts = (uint32_t)nc;
		if ((nc && !r->r.counts) || !(r->path = strdup(path)) ||
		    sd_strmap_put(map, key, pl + sizeof(ids), k)) {
			free(r->r.counts);
			free(r->path);
			free(key);
			return -1;
		}
		(*n)++;
	}
	free(key);
	return k;
}

/* path led by the keys of the process of stream `st` (lv->skeys) into *buf (grown):
 * "rank=2/host=node1/PATH". The path itself when there are none; NULL on ENOMEM. */
static const char *keyed_path(const struct sd_profile *p, const struct levels *lv,
			      uint32_t st, const char *path, char **buf, size_t *cap)
{
	if (!lv->nskeys)
		return path;
	const struct sd_stream_info *si = st < p->nsinfo ? &p->sinfo[st] : NULL;
	size_t need = strlen(path) + 1;
	char num[32];
	const char *val[8];
	for (size_t k = 0; k < lv->nskeys; k++) {
		val[k] = "(none)";
		if (lv->skeys[k] == SK_RANK && si && si->rank >= 0) {
			snprintf(num, sizeof num, "%" PRId64, si->rank);
			val[k] = num; /* one rank key at most is useful; the last one wins */
		} else if (lv->skeys[k] == SK_HOST && si && si->host) {
			val[k] = si->host;
		} else if (lv->skeys[k] == SK_PROCESS && si && si->label) {
			val[k] = si->label;
		}
		need += strlen(skey_names[lv->skeys[k]]) + strlen(val[k]) + 2;
	}
	if (need > *cap) {
		char *b = realloc(*buf, need);
		if (!b)
			return NULL;
		*buf = b;
		*cap = need;
	}
	size_t at = 0;
	for (size_t k = 0; k < lv->nskeys; k++)
		at += (size_t)sprintf(*buf + at, "%s=%s/", skey_names[lv->skeys[k]], val[k]);
	strcpy(*buf + at, path);
	return *buf;
}

/* The region rows of the profile summed into rows[0..*n) by kept path (and thread). */
static int region_rows(const struct sd_profile *p, const struct sd_report_opts *o,
		       struct levels *lv, size_t nc, struct rrow *rows, size_t *n)
{
	struct sd_strmap map = { 0 };
	int err = -ENOMEM;
	char *kbuf = NULL;
	size_t kcap = 0;

	*n = 0;
	for (size_t i = 0; i < p->nregions; i++) {
		const struct sd_region_row *g = &p->regions[i];
		uint32_t kc = kept_node(p, lv, g->ctx);
		const char *path;
		long k;
		if (!kc)
			continue; /* above every kept level */
		if (!(path = kept_path(p, lv, kc)) ||
		    !(path = keyed_path(p, lv, g->stream, path, &kbuf, &kcap)) ||
		    (k = row_of(&map, rows, n, path, g, o->by_thread, nc)) < 0)
			goto out;
		struct rrow *r = &rows[k];
		r->r.excl_ns += g->excl_ns;
		if (kc != g->ctx)
			continue; /* a folded level: its own time only */
		for (size_t c = 0; c < g->ncounts && c < nc; c++)
			r->r.counts[c] += g->counts[c];
		r->r.calls += g->calls;
		r->r.incl_ns += g->incl_ns;
		r->r.forced += g->forced;
		r->r.sent += g->sent;
		r->r.recv += g->recv;
		r->r.open_end += g->open_end;
		r->r.left_out += g->left_out;
		r->sumsq += g->sumsq;
		if (g->calls && g->min_ns < r->r.min_ns)
			r->r.min_ns = g->min_ns;
		if (g->max_ns > r->r.max_ns)
			r->r.max_ns = g->max_ns;
	}
	err = 0;
out:
	free(kbuf);
	sd_strmap_fini(&map);
	return err;
}

/* A cell of nanoseconds as milliseconds with 3 decimals, rounded to the nearest
 * microsecond with integer arithmetic (exact, whatever the size). */
static void ms_cell(struct sd_table *t, uint64_t ns)
{
	uint64_t us = ns / 1000 + (ns % 1000 >= 500);

	sd_table_num(t, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}


/* The columns, the first 3 with --by-thread only: the thread is "TID (NAME)" in text,
 * its TID in CSV, pid and TID in JSON. The counters' columns follow. */
enum { R_BT = 3, R_NCOLS = 12 };
static const struct sd_col region_cols[R_NCOLS] = {
	{ .name = "thread", .in = SD_IN_TEXT, .left = 1 },
	{ .name = "pid", .in = SD_IN_JSON },
	{ .name = "thread", .in = SD_IN_CSV | SD_IN_JSON },
	{ .name = "path", .left = 1 },
	{ .name = "calls", .width = 8, .gap = " " },
	{ .name = "incl_ms", .width = 12, .gap = " " },
	{ .name = "excl_ms", .width = 12, .gap = " " },
	{ .name = "min_ms", .width = 12, .gap = " " },
	{ .name = "mean_ms", .width = 12, .gap = " " },
	{ .name = "stddev_ms", .width = 12, .gap = " " },
	{ .name = "max_ms", .width = 12, .gap = " " },
	{ .name = "forced", .width = 7, .gap = " " },
};

/* The bytes MPI calls moved, after forced when a region has any. */
static const struct sd_col traffic_cols[2] = {
	{ .name = "bytes_sent", .width = 12, .gap = " " },
	{ .name = "bytes_recv", .width = 12, .gap = " " },
};

static void row_cells(struct sd_table *t, const struct sd_report_opts *o, const struct rrow *row,
		      int tx, size_t nc)
{
	const struct sd_region_row *r = &row->r;
	char tbuf[600];
	if (o->by_thread) {
		snprintf(tbuf, sizeof(tbuf), "%" PRIu64 " (%s)", r->tid, r->tname);
		sd_table_str(t, tbuf);
		sd_table_u64(t, r->pid);
		sd_table_u64(t, r->tid);
	}
	sd_table_str(t, row->path);
	sd_table_u64(t, r->calls);
	ms_cell(t, r->incl_ns);
	ms_cell(t, r->excl_ns);
	ms_cell(t, r->calls ? r->min_ns : 0);
	ms_cell(t, r->calls ? r->incl_ns / r->calls : 0);
	ms_cell(t, (uint64_t)llround(sd_stddev(r->calls, (double)r->incl_ns, row->sumsq)));
	ms_cell(t, r->max_ns);
	sd_table_u64(t, r->forced);
	if (tx) {
		sd_table_u64(t, r->sent);
		sd_table_u64(t, r->recv);
	}
	for (size_t c = 0; c < nc; c++)
		sd_table_u64(t, r->counts[c]);
}

/* What the rows miss, after them in text and as keys of the JSON object: the forced
 * ends (the calls open at the end of a stream among them) and the calls left out. */
static void region_notes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
			 const uint64_t tot[3])
{
	uint64_t forced = tot[0], open = tot[1], lost = tot[2];
	if (o->format == SD_FMT_JSON) {
		fprintf(out, "\"forced\":%" PRIu64 ",\"open_at_end\":%" PRIu64 ",\"left_out\":%"
			PRIu64 ",\"dropped_region_events\":%" PRIu64 ",", forced, open, lost,
			p->dropped_regions);
		return;
	}
	if (o->format != SD_FMT_TEXT)
		return;
	if (forced > open)
		fprintf(out, "forced: %" PRIu64 " call%s ended by sonde (open when its thread ended, "
			"or closed by a misnested end; timed up to that point)\n", forced - open,
			forced - open == 1 ? "" : "s");
	if (open)
		fprintf(out, "open: %" PRIu64 " call%s still open at the end of the stream (the "
			"process was killed or is still running), timed up to its last timestamp "
			"and counted in forced\n", open, open == 1 ? "" : "s");
	if (lost)
		fprintf(out, "left out: %" PRIu64 " call%s whose begin or end was dropped, or that "
			"ran inside such a call (in no row; raise SONDE_BUFFER_KB, or use "
			"SONDE_REGIONS=on)\n", lost, lost == 1 ? "" : "s");
	if (p->dropped_regions)
		fprintf(out, "dropped: %" PRIu64 " region event%s lost to a full ring (the rows "
			"miss them; raise SONDE_BUFFER_KB, or use SONDE_REGIONS=on)\n",
			p->dropped_regions, p->dropped_regions == 1 ? "" : "s");
}

static int print_regions(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
			 const struct rrow *rows, size_t n, size_t shown, size_t nc)
{
	struct sd_col *cols = calloc(R_NCOLS + 2 + nc, sizeof(*cols));
	size_t skip = o->by_thread ? 0 : R_BT, ncols = R_NCOLS;
	struct sd_table *t = NULL;
	uint64_t tot[3] = { 0 }; /* forced, open at the end, left out */
	int err = -ENOMEM, tx = 0;

	if (!cols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tx |= rows[i].r.sent || rows[i].r.recv;
	memcpy(cols, region_cols, sizeof(region_cols));
	if (tx) {
		memcpy(cols + ncols, traffic_cols, sizeof(traffic_cols));
		ncols += 2;
	}
	for (size_t c = 0; c < nc; c++)
		cols[ncols++] = (struct sd_col){ .name = p->counters[c].name, .width = 8 };
	if (!(t = sd_table_new(o, cols + skip, ncols - skip)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		tot[0] += rows[i].r.forced;
		tot[1] += rows[i].r.open_end;
		tot[2] += rows[i].r.left_out;
	}
	for (size_t i = 0; i < shown; i++)
		row_cells(t, o, &rows[i], tx, nc);
	if (o->format == SD_FMT_JSON) {
		sd_json_open(out, o);
		region_notes(out, p, o, tot);
	}
	err = sd_table_print_view(out, t, "regions", 1);
	if (o->format == SD_FMT_TEXT)
		region_notes(out, p, o, tot);
out:
	sd_table_free(t);
	free(cols);
	return err;
}

int sd_out_regions(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct rrow *rows = calloc(p->nregions + 1, sizeof(*rows));
	struct levels lv = { 0 };
	size_t n = 0;
	/* counter columns when the region records carried counts */
	size_t nc = p->region_counts ? p->ncounters : 0;
	int err = -ENOMEM;

	if (!rows || levels_init(&lv, p, o) || region_rows(p, o, &lv, nc, rows, &n))
		goto out;
	if (n > 1)
		qsort(rows, n, sizeof(*rows), rrow_cmp);
	err = print_regions(out, p, o, rows, n, o->top && o->top < n ? o->top : n, nc);
out:
	for (size_t i = 0; rows && i < n; i++) {
		free(rows[i].path);
		free(rows[i].r.counts);
	}
	free(rows);
	levels_fini(&lv, p);
	return err;
}
