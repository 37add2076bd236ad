/*
 * decode.c: one stream's records into its struct sstate (profile_int.h), for profile.c:
 * the HEADER checked key by key, then one function per record kind (rec_*), each
 * checking its fields' types and the ids they name before anything is kept. SAMPLE, the
 * hot path, is called directly rather than through the kind table so that it inlines.
 * Nothing here touches the merged profile except the symbolizer's module registration
 * at merge time; see the top of profile.c for what is kept and why.
 */
#define _GNU_SOURCE /* memmem */
#include "analyze/profile/profile_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void sd_sstate_fini(struct sstate *st)
{
	free(st->name), free(st->command);
	free(st->nodes);
	for (size_t i = 0; i < st->nmods; i++) {
		free(st->modpath ? st->modpath[i] : NULL);
		free(st->modbid ? st->modbid[i] : NULL);
	}
	free(st->modpath);
	free(st->modbid);
	free(st->modbidlen);
	free(st->mods);
	for (size_t i = 0; i < st->nthreads; i++) {
		free(st->threads[i].name);
		for (size_t k = 0; k < st->threads[i].nopen; k++)
			free(st->threads[i].open[k].cnt);
		free(st->threads[i].open);
		free(st->threads[i].lastcnt);
		free(st->threads[i].endcnt);
	}
	free(st->threads);
	for (size_t i = 0; i < st->nattrs; i++)
		free(st->attrs[i].name);
	free(st->attrs);
	for (size_t i = 0; i < st->nctxs; i++)
		free(st->ctxs[i].value);
	free(st->ctxs);
	free(st->aggs);
	free(st->aggtab);
	for (size_t i = 0; i < st->nregs; i++)
		free(st->regs[i].cnt);
	free(st->regs);
	sd_u64map_fini(&st->regmap);
	for (size_t i = 0; i < st->nctrs; i++) {
		struct scounter *c = &st->ctrs[i];
		free(c->name), free(c->group), free(c->unit), free(c->source);
	}
	free(st->ctrs);
	for (size_t i = 0; i < st->nun; i++)
		free(st->unames[i]), free(st->ureasons[i]);
	free(st->unames);
	free(st->ureasons);
	free(st->aggcnt);
	free(st->exe);
	free(st->cwd);
	free(st->end_reason);
	for (size_t i = 0; i <= st->nsources && st->sources; i++) {
		struct ssource *s = &st->sources[i];
		free(s->name), free(s->spec), free(s->unit), free(s->mechanism);
	}
	free(st->sources);
	free(st->host);
	free(st->children);
	sd_u64map_fini(&st->childmap);
	sd_strmap_fini(&st->drops);
	for (size_t i = 0; i < st->ndrops; i++)
		free(st->dropr[i]);
	free(st->dropr);
	free(st->dropv);
	free(st->dropt);
	sd_obs_stream_free(st);
}

static char *strdup_or(const msgpack_object *o, const char *dflt)
{
	char *s = sd_obj_strdup(o);
	return s ? s : strdup(dflt);
}

/* Is key `k` of map m, when present, of type `ty` (POSITIVE_INTEGER, STR, MAP, ARRAY)? */
static int key_ok(const msgpack_object *m, const char *k, msgpack_object_type ty)
{
	const msgpack_object *v = sd_map_get(m, k);
	return !v || v->type == ty;
}

static const char *type_name(msgpack_object_type ty)
{
	return ty == MSGPACK_OBJECT_POSITIVE_INTEGER ? "an unsigned integer"
	     : ty == MSGPACK_OBJECT_STR ? "a string" : ty == MSGPACK_OBJECT_MAP ? "a map"
	     : "an array";
}

/* The keys of the maps of a HEADER (docs/FORMAT.md) and their types; a key that is
 * present with another type makes the stream corrupt. Unknown keys are ignored. */
struct keyty { const char *key; msgpack_object_type ty; };
#define U MSGPACK_OBJECT_POSITIVE_INTEGER
#define S MSGPACK_OBJECT_STR
#define M MSGPACK_OBJECT_MAP
#define A MSGPACK_OBJECT_ARRAY
static const struct keyty info_keys[] = {
	{ "pid", U }, { "ppid", U }, { "host", S }, { "exe", S }, { "argv", A }, { "clock", M },
	{ "sources", A }, { "unwind", S }, { "max_depth", U }, { "rank", U }, { "fork_of", U },
	{ "seq", U }, { "sonde", S }, { "counters", A }, { "counters_unavailable", A },
	{ "ring_bytes", U }, { NULL, U } };
static const struct keyty source_keys[] = {
	{ "name", S }, { "spec", S }, { "unit", S }, { "period", U }, { "mechanism", S },
	{ "signal", U }, { "fallback_reason", S }, { NULL, U } };
static const struct keyty counter_keys[] = {
	{ "name", S }, { "group", S }, { "unit", S }, { "source", S }, { NULL, U } };
static const struct keyty unavail_keys[] = { { "name", S }, { "reason", S }, { NULL, U } };
static const struct keyty clock_keys[] = {
	{ "monotonic_ns", U }, { "realtime_ns", U }, { NULL, U } };
static const struct keyty stats_keys[] = {
	{ "samples", U }, { "dropped", U }, { "threads", U }, { "frames", U }, { "bytes", U },
	{ "signal", U }, { NULL, U } };
#undef U
#undef S
#undef M
#undef A

/* NULL if map m's keys of table kt have their types, else why not (in buf). */
static const char *check_keys(const msgpack_object *m, const struct keyty *kt,
			      const char *what, char *buf, size_t len)
{
	for (; kt->key; kt++)
		if (!key_ok(m, kt->key, kt->ty)) {
			snprintf(buf, len, "%s `%s` is not %s", what, kt->key, type_name(kt->ty));
			return buf;
		}
	return NULL;
}

/* NULL if `key` of info, when present, is an array of maps whose keys have their types. */
static const char *check_maps(const msgpack_object *info, const char *key,
			      const struct keyty *kt, char *buf, size_t len)
{
	const msgpack_object *a = sd_map_get(info, key);
	char what[64];

	for (uint32_t i = 0; a && i < a->via.array.size; i++) {
		const msgpack_object *m = &a->via.array.ptr[i];
		snprintf(what, sizeof(what), "HEADER %s[%u]", key, (unsigned)i);
		if (m->type != MSGPACK_OBJECT_MAP) {
			snprintf(buf, len, "%s is not a map", what);
			return buf;
		}
		if (check_keys(m, kt, what, buf, len))
			return buf;
	}
	return NULL;
}

/* NULL if the HEADER's info map is well typed (docs/FORMAT.md, HEADER), else why not. */
static const char *check_header(const struct sd_record *r, char *buf, size_t len)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const msgpack_object *argv;

	if (!info || info->type != MSGPACK_OBJECT_MAP)
		return "HEADER info is not a map";
	if (check_keys(info, info_keys, "HEADER", buf, len) ||
	    check_maps(info, "sources", source_keys, buf, len) ||
	    check_maps(info, "counters", counter_keys, buf, len) ||
	    check_maps(info, "counters_unavailable", unavail_keys, buf, len))
		return buf;
	if (sd_map_get(info, "clock") &&
	    check_keys(sd_map_get(info, "clock"), clock_keys, "HEADER clock", buf, len))
		return buf;
	if ((argv = sd_map_get(info, "argv")))
		for (uint32_t i = 0; i < argv->via.array.size; i++)
			if (argv->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
				return "HEADER `argv` holds a value that is not a string";
	return NULL;
}

/* A copy of p[0..len) as a C string (p may be NULL when len is 0). NULL on ENOMEM. */
static char *dupn(const char *p, size_t len)
{
	char *d = malloc(len + 1);
	if (d) {
		if (len)
			memcpy(d, p, len);
		d[len] = 0;
	}
	return d;
}

/* The process name of a HEADER (docs/REPORT.md, "Processes"): the basename of argv[0],
 * else of exe, else "?"; control characters become '?' (it labels text tables). */
static char *process_name(const msgpack_object *argv, const msgpack_object *exe)
{
	const msgpack_object *o = argv && argv->via.array.size ? &argv->via.array.ptr[0] : NULL;
	const char *p = NULL;
	size_t len = 0;

	for (int k = 0; k < 2 && !len; k++, o = exe) {
		if (!o || o->type != MSGPACK_OBJECT_STR)
			continue;
		p = o->via.str.ptr;
		len = o->via.str.size;
		while (len && p[len - 1] == '/')
			len--;
		for (size_t i = len; i-- > 0;)
			if (p[i] == '/') {
				p += i + 1;
				len -= i + 1;
				break;
			}
	}
	char *n = len ? dupn(p, len) : strdup("?");
	for (char *c = n; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return n;
}

/* argv joined with spaces (NULL without argv). */
static char *join_argv(const msgpack_object *argv)
{
	size_t len = 1;

	if (!argv)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++)
		len += argv->via.array.ptr[i].via.str.size + 1;
	char *j = malloc(len), *q = j;
	if (!j)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++) {
		const msgpack_object_str *a = &argv->via.array.ptr[i].via.str;
		if (i)
			*q++ = ' ';
		if (a->size)
			memcpy(q, a->ptr, a->size);
		q += a->size;
	}
	*q = 0;
	return j;
}

/* The stream's HEADER into st: 0, or SD_ERR_CORRUPT with s->err_off and s->err_why
 * set, or -ENOMEM. (The records after it: sd_profile_parse.) */
static int decode_header(struct sstate *st, const struct sd_record *r, struct sd_stream *strm)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const char *bad = check_header(r, strm->why_buf, sizeof(strm->why_buf));

	if (bad) {
		strm->err_off = r->offset;
		strm->err_why = bad;
		return SD_ERR_CORRUPT;
	}
	const msgpack_object *srcs = sd_map_get(info, "sources");
	size_t n = srcs && srcs->type == MSGPACK_OBJECT_ARRAY ? srcs->via.array.size : 0;

	sd_obj_u64(sd_map_get(info, "pid"), &st->pid);
	st->host = strdup_or(sd_map_get(info, "host"), "?");
	st->exe = strdup_or(sd_map_get(info, "exe"), "[unknown module]");
	if (!st->host || !st->exe)
		return -ENOMEM;
	st->cwd = sd_obj_strdup(sd_map_get(info, "cwd")); /* NULL: none (or no memory) */
	const msgpack_object *argv = sd_map_get(info, "argv");
	st->has_exe = sd_map_get(info, "exe") != NULL;
	st->has_ppid = sd_obj_u64(sd_map_get(info, "ppid"), &st->ppid) == 0;
	st->has_clock = sd_obj_u64(sd_map_get(sd_map_get(info, "clock"), "monotonic_ns"),
				   &st->origin_ns) == 0;
	if (!(st->name = process_name(argv, sd_map_get(info, "exe"))) ||
	    (argv && !(st->command = join_argv(argv))))
		return -ENOMEM;
	if (sd_obj_u64(sd_map_get(info, "max_depth"), &st->max_depth))
		st->max_depth = 0; /* unknown */
	uint64_t rank;
	st->rank = sd_obj_u64(sd_map_get(info, "rank"), &rank) == 0 && rank <= INT64_MAX
		   ? (int64_t)rank : -1;
	st->sources = calloc(n + 1, sizeof(*st->sources));
	if (!st->sources)
		return -ENOMEM;
	st->nsources = n;
	for (size_t i = 0; i <= n; i++) {
		const msgpack_object *m = i < n ? &srcs->via.array.ptr[i] : NULL;
		struct ssource *s = &st->sources[i];
		s->name = strdup_or(sd_map_get(m, "name"), i < n ? "?" : "[unknown source]");
		s->spec = strdup_or(sd_map_get(m, "spec"), "?");
		s->unit = strdup_or(sd_map_get(m, "unit"), "ns");
		s->mechanism = strdup_or(sd_map_get(m, "mechanism"), "?");
		sd_obj_u64(sd_map_get(m, "period"), &s->period);
		if (!s->name || !s->spec || !s->unit || !s->mechanism)
			return -ENOMEM;
	}
	st->cpu_src = -1; /* coverage: the first cpu-time source in ns */
	for (size_t i = 0; i < n && st->cpu_src < 0; i++)
		if (!strcmp(st->sources[i].name, "cpu-time") && !strcmp(st->sources[i].unit, "ns"))
			st->cpu_src = (long)i;
	/* counters and unavailable counters; entries that are not maps get "?" names */
	const msgpack_object *ctrs = sd_map_get(info, "counters");
	n = ctrs && ctrs->type == MSGPACK_OBJECT_ARRAY ? ctrs->via.array.size : 0;
	if (n && !(st->ctrs = calloc(n, sizeof(*st->ctrs))))
		return -ENOMEM;
	st->nctrs = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &ctrs->via.array.ptr[i];
		struct scounter *c = &st->ctrs[i];
		c->name = strdup_or(sd_map_get(m, "name"), "?");
		c->group = strdup_or(sd_map_get(m, "group"), c->name ? c->name : "?");
		c->unit = strdup_or(sd_map_get(m, "unit"), "count");
		c->source = strdup_or(sd_map_get(m, "source"), "?");
		if (!c->name || !c->group || !c->unit || !c->source)
			return -ENOMEM;
	}
	const msgpack_object *un = sd_map_get(info, "counters_unavailable");
	n = un && un->type == MSGPACK_OBJECT_ARRAY ? un->via.array.size : 0;
	if (n && (!(st->unames = calloc(n, sizeof(char *))) ||
		  !(st->ureasons = calloc(n, sizeof(char *)))))
		return -ENOMEM;
	st->nun = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &un->via.array.ptr[i];
		st->unames[i] = strdup_or(sd_map_get(m, "name"), "?");
		st->ureasons[i] = strdup_or(sd_map_get(m, "reason"), "no reason given");
		if (!st->unames[i] || !st->ureasons[i])
			return -ENOMEM;
	}
	/* thread slot 0: samples of threads never announced */
	st->threads = calloc(1, sizeof(*st->threads));
	if (!st->threads)
		return -ENOMEM;
	st->nthreads = 1;
	st->nodes = calloc(1, sizeof(*st->nodes));
	if (!st->nodes || sd_grow(&st->attrs, &st->capattrs, 1, sizeof(*st->attrs)) ||
	    sd_grow(&st->ctxs, &st->capctxs, 1, sizeof(*st->ctxs)))
		return -ENOMEM;
	st->nnodes = 1;
	st->nattrs = 1;
	st->nctxs = 1;
	return 0;
}

/* A definition of id `id` in a table of n entries (slot 0 reserved): 1..n redefine,
 * n+1..n appends; anything else is corrupt. Returns the index or -1. */
static long def_index(uint64_t id, size_t n)
{
	return id >= 1 && id <= n ? (long)id : -1;
}

/* Count one sample under its key (see struct sagg), with its counter deltas (a checked
 * array of nctrs unsigned integers, or NULL) or nocnt = 1 when flag 8 says unreadable. */
/* The per-key table: the hot lookup of every SAMPLE, so the key lives in the slot
 * (no pointer to chase) and the hash is a few multiplications. */

static uint64_t agg_hash(const uint32_t *k)
{
	uint64_t h = ((uint64_t)k[0] << 32 | k[1]) * 0x9E3779B97F4A7C15ull;
	h ^= ((uint64_t)k[2] << 32 | k[3]) * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)k[4] * 0x165667B19E3779F9ull;
	return h ^ (h >> 29);
}

static struct aggslot *agg_find(struct aggslot *tab, size_t cap, const uint32_t *k)
{
	size_t i = agg_hash(k) & (cap - 1);
	while (tab[i].idx1 && memcmp(tab[i].k, k, sizeof tab[i].k))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int agg_grow(struct sstate *st)
{
	size_t cap = st->aggcap ? st->aggcap * 2 : 1024;
	struct aggslot *tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < st->aggcap; i++)
		if (st->aggtab[i].idx1)
			*agg_find(tab, cap, st->aggtab[i].k) = st->aggtab[i];
	free(st->aggtab);
	st->aggtab = tab;
	st->aggcap = cap;
	return 0;
}

static int agg_add(struct sstate *st, uint32_t key[5], double w, uint64_t weight,
		   uint64_t signalled_w, uint64_t now, const msgpack_object *deltas, int nocnt)
{
	uint32_t idx;

	const struct sagg *last = st->have_last ? &st->aggs[st->last_agg] : NULL;
	if (last && last->thread == key[0] &&
	    (last->source | (last->trunc ? SD_AGG_TRUNC : 0)) == key[1] && last->ctx == key[2] &&
	    last->pctx == key[3] && last->node == key[4]) {
		idx = st->last_agg;
	} else {
		if ((st->naggs + 1) * 2 > st->aggcap && agg_grow(st))
			return -ENOMEM;
		struct aggslot *slot = agg_find(st->aggtab, st->aggcap, key);
		if (slot->idx1) {
			idx = slot->idx1 - 1;
			goto found;
		}
		if (st->naggs >= UINT32_MAX - 1 ||
		    sd_grow(&st->aggs, &st->capaggs, st->naggs + 1, sizeof(*st->aggs)) ||
		    (st->nctrs && sd_grow(&st->aggcnt, &st->capaggcnt, (st->naggs + 1) * st->nctrs,
				       sizeof(*st->aggcnt))))
			return -ENOMEM;
		idx = (uint32_t)st->naggs;
		memcpy(slot->k, key, sizeof slot->k);
		slot->idx1 = idx + 1;
		struct sagg *a = &st->aggs[st->naggs++];
		a->thread = key[0], a->source = key[1] & ~SD_AGG_TRUNC, a->ctx = key[2];
		a->pctx = key[3], a->node = key[4], a->trunc = (key[1] & SD_AGG_TRUNC) != 0;
		a->first = now;
	}
found:;
	struct sagg *a = &st->aggs[idx];
	a->samples++;
	a->weight += w;
	a->periods += weight;
	if (signalled_w > a->maxw)
		a->maxw = signalled_w;
	a->last = now;
	a->nocnt += nocnt != 0;
	for (uint32_t k = 0; deltas && k < deltas->via.array.size; k++)
		st->aggcnt[(size_t)idx * st->nctrs + k] += deltas->via.array.ptr[k].via.u64;
	st->last_agg = idx;
	st->have_last = 1;
	return 0;
}

/* The timing of (thread ti, context node), made empty if new. NULL on ENOMEM. */
static struct sreg *reg_of(struct sstate *st, uint32_t ti, uint32_t node)
{
	uint64_t key = (uint64_t)ti << 32 | node;
	uint32_t idx;

	if (!sd_u64map_get(&st->regmap, key, &idx)) {
		if (st->nregs >= UINT32_MAX - 1 ||
		    sd_grow(&st->regs, &st->capregs, st->nregs + 1, sizeof(*st->regs)))
			return NULL;
		idx = (uint32_t)st->nregs;
		if (sd_u64map_put(&st->regmap, key, idx))
			return NULL;
		struct sreg *g = &st->regs[st->nregs++];
		memset(g, 0, sizeof(*g));
		g->thread = ti;
		g->node = node;
		g->min = UINT64_MAX;
	}
	return &st->regs[idx];
}

/* One call of g of `dur` ns added to its timing. */
static void reg_call(struct sreg *g, uint64_t dur)
{
	g->calls++;
	g->sumsq += (double)dur * (double)dur;
	g->incl += dur;
	if (dur < g->min)
		g->min = dur;
	if (dur > g->max)
		g->max = dur;
}

/* Close the innermost open region of thread ti at time `end`, with the thread's counter
 * totals `cnt` at that time (nctrs values, or NULL if unknown); how: 0 ended, 1 forced,
 * 2 open at the end of the stream. One whose events may be lost (sopen.lost) is left
 * out of the timing and counted; its time still counts as its parent's children's. */
static int region_close(struct sstate *st, uint32_t ti, uint64_t end, int how,
			const uint64_t *cnt)
{
	struct sthread *t = &st->threads[ti];
	struct sopen o = t->open[--t->nopen];
	uint64_t dur = end > o.t ? end - o.t : 0;
	struct sreg *g = reg_of(st, ti, o.node);
	if (!g) {
		free(o.cnt);
		return -ENOMEM;
	}
	if (t->nopen)
		t->open[t->nopen - 1].child_ns += dur;
	if (o.lost) {
		g->left_out++;
		free(o.cnt);
		return 0;
	}
	reg_call(g, dur);
	g->excl += dur > o.child_ns ? dur - o.child_ns : 0;
	g->forced += how != 0;
	g->open_end += how == 2;
	if (o.cnt && cnt) {
		if (!g->cnt && !(g->cnt = calloc(st->nctrs, sizeof(*g->cnt)))) {
			free(o.cnt);
			return -ENOMEM;
		}
		for (size_t k = 0; k < st->nctrs; k++)
			g->cnt[k] += cnt[k] > o.cnt[k] ? cnt[k] - o.cnt[k] : 0;
	}
	free(o.cnt);
	return 0;
}

/* Is context node a an ancestor of node n (or n itself)? */
static int ctx_within(const struct sstate *st, uint32_t a, uint32_t n)
{
	for (; n; n = st->ctxs[n].parent)
		if (n == a)
			return 1;
	return a == 0;
}

/* A call of thread ti left out without being open (its begin was lost). */
static int left_out(struct sstate *st, uint32_t ti, uint32_t node)
{
	struct sreg *g = reg_of(st, ti, node);
	if (!g)
		return -ENOMEM;
	g->left_out++;
	return 0;
}

/* Replay one REGION event of a defined thread and context node; `counts` is its checked
 * counts array (nctrs unsigned integers) or NULL. A node is a path: a begin of N says
 * the thread was in N's parent, an end of N that it was in N. Where the open regions
 * disagree, events were lost (a full ring; the runtime also says so, event 3): the
 * regions whose begin or end is missing, and those open across the loss, are left out
 * (counted, sreg.left_out), never paired with another call's event. */
static int region_event(struct sstate *st, uint32_t ti, uint64_t t, uint32_t node, uint64_t ev,
			const msgpack_object *counts)
{
	struct sthread *th = &st->threads[ti];
	uint64_t *cnt = NULL;
	int err;

	if (t > th->last_t)
		th->last_t = t;
	if (ev == SD_REGION_LOST) { /* events lost just before: no open region is sure */
		for (size_t i = 0; i < th->nopen; i++)
			th->open[i].lost = 1;
		return 0;
	}
	if (counts && st->nctrs) {
		if (!th->lastcnt && !(th->lastcnt = calloc(st->nctrs, sizeof(*th->lastcnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			th->lastcnt[k] = counts->via.array.ptr[k].via.u64;
		cnt = th->lastcnt;
	}
	if (ev == SD_REGION_BEGIN) {
		uint32_t parent = st->ctxs[node].parent;
		/* open regions not around N: their ends were lost */
		while (th->nopen && !ctx_within(st, th->open[th->nopen - 1].node, parent)) {
			th->open[th->nopen - 1].lost = 1;
			if ((err = region_close(st, ti, t, 1, cnt)))
				return err;
		}
		uint64_t *copy = NULL;
		if (sd_grow(&th->open, &th->capopen, th->nopen + 1, sizeof(*th->open)))
			return -ENOMEM;
		if (cnt) {
			if (!(copy = malloc(st->nctrs * sizeof(*copy))))
				return -ENOMEM;
			memcpy(copy, cnt, st->nctrs * sizeof(*copy));
		}
		const struct sopen *up = th->nopen ? &th->open[th->nopen - 1] : NULL;
		/* inside a region whose begin was lost (or a left-out one): left out too */
		int lost = (up ? up->node : 0) != parent || (up && up->lost);
		th->open[th->nopen++] = (struct sopen){ node, t, 0, copy, lost };
		return 0;
	}
	size_t k = th->nopen;
	while (k && th->open[k - 1].node != node)
		k--;
	if (!k) { /* not open: its begin was lost; so were the ends of those inside it */
		while (th->nopen && ctx_within(st, node, th->open[th->nopen - 1].node)) {
			th->open[th->nopen - 1].lost = 1;
			if ((err = region_close(st, ti, t, 1, cnt)))
				return err;
		}
		return left_out(st, ti, node);
	}
	while (th->nopen > k) /* misnested: inner regions end with it, forced */
		if ((err = region_close(st, ti, t, 1, cnt)))
			return err;
	return region_close(st, ti, t, ev == SD_REGION_FORCED_END, cnt);
}

/* The call of g still open at the end of the stream (REGION_OPEN), closed at `end`. */
static void stats_close_open(struct sreg *g, uint64_t end)
{
	reg_call(g, end > g->open_t ? end - g->open_t : 0);
	g->forced++;
	g->open_end++;
}

/* Did thread ti drop region events (DROPS reasons "region_*")? */
static int region_drops(const struct sstate *st, size_t ti)
{
	for (size_t i = 0; i < st->ndrops; i++)
		if (st->dropt[i] == ti && st->dropv[i] &&
		    !strncmp(st->dropr[i], SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1))
			return 1;
	return 0;
}

/* Regions still open at the end of the stream: those of a thread that ended closed at
 * its end (forced), the others at the stream's last timestamp (forced, open_end); left
 * out when their thread dropped region events (their end may be one of them: no later
 * event says it was not). */
static int decode_end(struct sstate *st)
{
	uint64_t end = st->max_t;
	for (size_t i = 1; i < st->nthreads; i++) {
		struct sthread *th = &st->threads[i];
		if (th->nopen && region_drops(st, i))
			for (size_t k = 0; k < th->nopen; k++)
				th->open[k].lost = 1;
		while (th->nopen) {
			int err = region_close(st, (uint32_t)i, th->ended || end < th->last_t ?
					       th->last_t : end, th->ended ? 1 : 2, th->lastcnt);
			if (err)
				return err;
		}
	}
	int any = 0;
	for (size_t i = 0; i < st->nregs; i++)
		if (st->regs[i].open) {
			stats_close_open(&st->regs[i], end);
			any = 1;
		}
	if (!any)
		return 0;
	/* excl = incl - the children's incl, for the nodes that had a call open: the
	 * children's totals hold their calls inside the open one, which the runtime had
	 * not yet taken from its exclusive time */
	for (size_t i = 0; i < st->nregs; i++) {
		struct sreg *g = &st->regs[i];
		if (!g->open)
			continue;
		uint64_t child = 0;
		for (size_t j = 0; j < st->nregs; j++)
			if (st->regs[j].thread == g->thread &&
			    st->ctxs[st->regs[j].node].parent == g->node)
				child += st->regs[j].incl;
		g->excl = g->incl > child ? g->incl - child : 0;
	}
	for (size_t i = 0; i < st->nregs; i++)
		st->regs[i].open = 0;
	return 0;
}

/* A CONTEXT value as a string: str as is, integers in decimal, floats as %.15g. */
static char *value_str(const msgpack_object *o)
{
	char buf[64];

	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		return dupn(o->via.str.ptr, o->via.str.size);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->via.u64);
		return strdup(buf);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		snprintf(buf, sizeof(buf), "%lld", (long long)o->via.i64);
		return strdup(buf);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		snprintf(buf, sizeof(buf), "%.15g", o->via.f64);
		return strdup(buf);
	default:
		return NULL;
	}
}

/* NULL if o is an array of n unsigned integers, else why it is corrupt. */
static const char *check_counts(const msgpack_object *o, size_t n, const char *what)
{
	int i = !strcmp(what, "SAMPLE deltas") ? 0 : !strcmp(what, "REGION counts") ? 1 : 2;
	static const char *const why[3][3] = {
		{ "SAMPLE deltas is not an array",
		  "SAMPLE deltas does not have one value per header counter",
		  "SAMPLE deltas holds a value that is not an unsigned integer" },
		{ "REGION counts is not an array",
		  "REGION counts does not have one value per header counter",
		  "REGION counts holds a value that is not an unsigned integer" },
		{ "THREAD_END deltas is not an array",
		  "THREAD_END deltas does not have one value per header counter",
		  "THREAD_END deltas holds a value that is not an unsigned integer" },
	};
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return why[i][0];
	if (o->via.array.size != n && !(i == 2 && o->via.array.size == 0)) /* THREAD_END: none */
		return why[i][1];
	for (uint32_t k = 0; k < o->via.array.size; k++)
		if (o->via.array.ptr[k].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return why[i][2];
	return NULL;
}

static const char generic[] = "a field is missing or has the wrong type";

/* Which field of a record of known kind is missing or of the wrong type (docs/FORMAT.md's
 * layouts; u: unsigned integer, s: string, m: map; "?": any), in buf; the generic
 * reason when each listed field is fine. Optional fields count only when present. */
static const char *field_why(const struct sd_record *r, char *buf, size_t len)
{
	static const char *const layout[SD_K_LAST + 1][SD_F_MAX - 1] = {
		[SD_K_MODULE] = { "module:u", "t:u", "path:s" },
		[SD_K_THREAD] = { "thread:u", "tid:u", "t:u" },
		[SD_K_THREAD_END] = { "thread:u" },
		[SD_K_FRAME] = { "node:u", "parent:u", "module:u", "addr:u" },
		[SD_K_SAMPLE] = { "thread:u", "dt:u", "source:u", "node:u", "weight:u", "+flags:u",
				  "+context:u", "+pcontext:u" },
		[SD_K_DROPS] = { "thread:u", "counts:m" },
		[SD_K_ATTRIBUTE] = { "attr:u", "name:s", "type:s", "scope:s" },
		[SD_K_CONTEXT] = { "node:u", "parent:u", "attr:u", "value:?" },
		[SD_K_REGION] = { "thread:u", "t:u", "node:u", "event:u" },
		[SD_K_THREAD_CPU] = { "thread:u", "t:u", "cpu_ns:u" },
		[SD_K_UNSAMPLED] = { "thread:u", "t:u", "reason:s", "cpu_ns:u" },
		[SD_K_REGION_STATS] = { "thread:u", "t:u", "node:u", "calls:u", "incl_ns:u",
					"excl_ns:u", "min_ns:u", "max_ns:u", "sumsq_ns2:f",
					"forced:u", "site:u" },
		[SD_K_REGION_OPEN] = { "thread:u", "t:u", "node:u", "begin_t:u" },
		[SD_K_CHILD] = { "t:u", "pid:u", "event:s", "+value:u" },
	};
	static const char *const kinds[SD_K_LAST + 1] = SD_KIND_NAMES;

	if (r->kind == SD_K_UNSAMPLED || r->kind > SD_K_LAST) /* the generic reason, as ever */
		return generic;
	for (uint32_t i = 0; i < SD_F_MAX - 1 && layout[r->kind][i]; i++) {
		const char *f = layout[r->kind][i];
		int opt = f[0] == '+';
		size_t nl = strcspn(f + opt, ":");
		char ty = f[opt + nl + 1];
		const msgpack_object *o = i + 1 < r->n ? &r->v[i + 1] : NULL;
		if (!o && opt)
			break;
		if (o && (ty == '?' || (ty == 'u' && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) ||
			  (ty == 's' && o->type == MSGPACK_OBJECT_STR) ||
			  (ty == 'f' && (o->type == MSGPACK_OBJECT_FLOAT64 ||
					 o->type == MSGPACK_OBJECT_FLOAT32 ||
					 o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)) ||
			  (ty == 'm' && o->type == MSGPACK_OBJECT_MAP)))
			continue;
		snprintf(buf, len, "%s %.*s is %s", kinds[r->kind], (int)nl, f + opt,
			 !o ? "missing" : ty == 'u' ? "not an unsigned integer"
			 : ty == 's' ? "not a string" : ty == 'f' ? "not a number" : "not a map");
		return buf;
	}
	return generic;
}

/* NULL if THREAD_END's cpu map o is well typed, else why not. */
static const char *check_cpu(const msgpack_object *o, struct sd_stream *s)
{
	static const struct keyty cpu_keys[] = {
		{ "cpu_ns", MSGPACK_OBJECT_POSITIVE_INTEGER }, { "user_ns", MSGPACK_OBJECT_POSITIVE_INTEGER },
		{ "sys_ns", MSGPACK_OBJECT_POSITIVE_INTEGER }, { NULL, MSGPACK_OBJECT_POSITIVE_INTEGER } };
	if (o->type != MSGPACK_OBJECT_MAP)
		return "THREAD_END cpu is not a map";
	return check_keys(o, cpu_keys, "THREAD_END cpu", s->why_buf, sizeof(s->why_buf));
}

/* ---- coverage gaps: the sample drop reasons (docs/FORMAT.md DROPS) ----------------- */

const char *const sd_cov_drop_names[SD_COV_NDROP] = {
	"ring_full", "busy", "in_dl", "no_thread", "stopped", "fd_stolen", "stack", "throttled",
	"queue_overflow", "signals_blocked", "other_drops",
};

/* -1 for drops that are not cpu-time samples: region events, and the
 * overflows of a PAPI source that were counted but never signalled. */
static int cov_drop_index(const char *reason)
{
	static const char *const names[] = SD_DROP_NAMES;
	if (!strncmp(reason, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1) ||
	    !strcmp(reason, names[SD_DROP_SIGNAL_LOST]))
		return -1;
	for (int k = 0; k < SD_COV_NDROP - 1; k++)
		if (!strcmp(reason, sd_cov_drop_names[k]))
			return k;
	return SD_COV_NDROP - 1;
}

/* Thread thr's sample drops so far, by coverage gap (sd_cov_drop_names). */
void sd_decode_thread_drops(const struct sstate *st, uint64_t thr, uint64_t out[SD_COV_NDROP])
{
	memset(out, 0, SD_COV_NDROP * sizeof(*out));
	for (size_t i = 0; i < st->ndrops; i++) {
		int k = st->dropt[i] == thr ? cov_drop_index(st->dropr[i]) : -1;
		if (k >= 0)
			out[k] += st->dropv[i];
	}
}

/* One decoder per record kind (docs/FORMAT.md, format/format.h). Each reads
 * its fields by name, checks them and the ids they name, and updates the
 * stream's state. Returns 0, -ENOMEM, or REC_BAD with *why set (the generic
 * reason: field_why() then names the missing or mistyped field). */
#define REC_BAD 1

struct rec_ctx {
	struct sd_profile *p;
	struct sstate *st;
	const struct sd_record *r;
	struct sd_stream *s;
	const char *why;
};

/* A thread id the records before this one defined, for kind `what`. */
static int known_thread(struct rec_ctx *c, uint64_t thread, const char *why)
{
	if (thread == 0 || thread >= c->st->nthreads) {
		c->why = why;
		return 0;
	}
	return 1;
}

static int rec_module(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id;
	const char *str;
	uint32_t len;
	long i;
	const msgpack_object *bid = r->n > SD_F_MODULE_BUILD_ID ? &r->v[SD_F_MODULE_BUILD_ID] : NULL;
	if (sd_rec_u64(r, SD_F_MODULE_ID, &id) || sd_rec_str(r, SD_F_MODULE_PATH, &str, &len) ||
	    !bid || (bid->type != MSGPACK_OBJECT_BIN && bid->type != MSGPACK_OBJECT_NIL))
		return REC_BAD;
	c->why = "MODULE id out of order";
	if ((i = def_index(id, st->nmods + 1)) < 0)
		return REC_BAD;
	/* Registered with the symbolizer when the stream is merged: parsing
	 * may run in a worker thread (--jobs), the symbolizer is shared. */
	/* an empty path is the main program's (docs/FORMAT.md, MODULE) */
	char *path = len ? dupn(str, len) : strdup(st->exe[0] ? st->exe : "[unknown module]");
	if (!path)
		return -ENOMEM;
	if ((size_t)i > st->nmods) {
		size_t n = (size_t)i;
		int *nm = realloc(st->mods, n * sizeof(*nm));
		if (nm)
			st->mods = nm;
		char **np = realloc(st->modpath, n * sizeof(*np));
		if (np)
			st->modpath = np;
		uint8_t **nb = realloc(st->modbid, n * sizeof(*nb));
		if (nb)
			st->modbid = nb;
		size_t *nl = realloc(st->modbidlen, n * sizeof(*nl));
		if (nl)
			st->modbidlen = nl;
		if (!nm || !np || !nb || !nl) {
			free(path);
			return -ENOMEM;
		}
		st->modpath[n - 1] = NULL;
		st->modbid[n - 1] = NULL;
		st->modbidlen[n - 1] = 0;
		st->nmods = n;
	}
	free(st->modpath[i - 1]);
	free(st->modbid[i - 1]);
	st->modpath[i - 1] = path;
	st->modbid[i - 1] = NULL;
	st->modbidlen[i - 1] = 0;
	if (bid->type == MSGPACK_OBJECT_BIN && bid->via.bin.size) {
		st->modbid[i - 1] = malloc(bid->via.bin.size);
		if (!st->modbid[i - 1])
			return -ENOMEM;
		memcpy(st->modbid[i - 1], bid->via.bin.ptr, bid->via.bin.size);
		st->modbidlen[i - 1] = bid->via.bin.size;
	}
	st->mods[i - 1] = -2;
	return 0;
}

static int rec_thread(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id, tid, t0;
	long i;
	if (sd_rec_u64(r, SD_F_THREAD_ID, &id) || sd_rec_u64(r, SD_F_THREAD_TID, &tid) ||
	    sd_rec_u64(r, SD_F_THREAD_T, &t0))
		return REC_BAD;
	c->why = "THREAD id out of order";
	if ((i = def_index(id, st->nthreads)) < 0 || id >= UINT32_MAX)
		return REC_BAD;
	if ((size_t)i == st->nthreads) {
		struct sthread *nt = realloc(st->threads, (st->nthreads + 1) * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		st->threads = nt;
		memset(&nt[st->nthreads++], 0, sizeof(*nt));
	}
	struct sthread *t = &st->threads[i];
	free(t->name);
	t->name = strdup_or(r->n > SD_F_THREAD_NAME ? &r->v[SD_F_THREAD_NAME] : NULL, "");
	if (!t->name)
		return -ENOMEM;
	t->tid = tid;
	t->t = t->now = t0;
	if (t0 > t->last_t)
		t->last_t = t0;
	t->defined = 1;
	return 0;
}

static int rec_thread_end(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id, v;
	const msgpack_object *deltas =
		r->n > SD_F_THREAD_END_DELTAS ? &r->v[SD_F_THREAD_END_DELTAS] : NULL;
	const msgpack_object *cpu = r->n > SD_F_THREAD_END_CPU ? &r->v[SD_F_THREAD_END_CPU] : NULL;
	if (sd_rec_u64(r, SD_F_THREAD_END_ID, &id))
		return REC_BAD;
	if (deltas && (c->why = check_counts(deltas, st->nctrs, "THREAD_END deltas")))
		return REC_BAD;
	if (cpu && (c->why = check_cpu(cpu, c->s)))
		return REC_BAD;
	if (!known_thread(c, id, "THREAD_END names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *t = &st->threads[id];
	if (cpu && !sd_obj_u64(sd_map_get(cpu, "cpu_ns"), &v)) {
		t->end_cpu = 1;
		t->end_cpu_ns = v;
		t->split = !sd_obj_u64(sd_map_get(cpu, "user_ns"), &t->user_ns) &&
			   !sd_obj_u64(sd_map_get(cpu, "sys_ns"), &t->sys_ns);
	}
	if (deltas && st->nctrs && deltas->via.array.size) { /* its thread's, after its last sample */
		if (!t->endcnt && !(t->endcnt = calloc(st->nctrs, sizeof(*t->endcnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			t->endcnt[k] += deltas->via.array.ptr[k].via.u64;
	}
	if (!sd_rec_u64(r, SD_F_THREAD_END_T, &v) && v > t->last_t)
		t->last_t = v;
	t->ended = 1;
	if (r->n > SD_F_THREAD_END_NAME && r->v[SD_F_THREAD_END_NAME].type == MSGPACK_OBJECT_STR) {
		char *n = sd_obj_strdup(&r->v[SD_F_THREAD_END_NAME]);
		if (!n)
			return -ENOMEM;
		free(t->name);
		t->name = n;
	}
	return 0;
}

static int rec_frame(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t node, parent, module, addr;
	long i;
	if (sd_rec_u64(r, SD_F_FRAME_NODE, &node) || sd_rec_u64(r, SD_F_FRAME_PARENT, &parent) ||
	    sd_rec_u64(r, SD_F_FRAME_MODULE, &module) || sd_rec_u64(r, SD_F_FRAME_ADDR, &addr))
		return REC_BAD;
	c->why = "FRAME node id out of order";
	if ((i = def_index(node, st->nnodes)) < 0 || node >= UINT32_MAX)
		return REC_BAD;
	c->why = "FRAME parent is not an earlier node";
	if (parent >= node)
		return REC_BAD;
	if ((size_t)i == st->nnodes) {
		size_t cap = st->nnodes; /* capacity kept as a power of two >= nnodes */
		if ((st->nnodes & (st->nnodes - 1)) == 0) {
			struct snode *nn = realloc(st->nodes, cap * 2 * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			st->nodes = nn;
		}
		memset(&st->nodes[st->nnodes++], 0, sizeof(*st->nodes));
	}
	struct snode *n = &st->nodes[i]; /* a redefinition keeps the counts */
	n->parent = (uint32_t)parent;
	n->mod = module > INT64_MAX ? INT64_MAX : (int64_t)module;
	n->addr = addr;
	return 0;
}

/* The hot path of every report: one SAMPLE. The reason is stored only on a
 * failure (a store per check costs ~8 % of a report's time). */
static inline int rec_sample(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, dt, source, node, weight, fl = 0, cx = 0, pcx = 0;
	const msgpack_object *dl = r->n > SD_F_SAMPLE_DELTAS ? &r->v[SD_F_SAMPLE_DELTAS] : NULL;
	const char *why;
	if (sd_rec_u64(r, SD_F_SAMPLE_THREAD, &thread) || sd_rec_u64(r, SD_F_SAMPLE_DT, &dt) ||
	    sd_rec_u64(r, SD_F_SAMPLE_SOURCE, &source) || sd_rec_u64(r, SD_F_SAMPLE_NODE, &node) ||
	    sd_rec_u64(r, SD_F_SAMPLE_WEIGHT, &weight) ||
	    (r->n > SD_F_SAMPLE_FLAGS && sd_rec_u64(r, SD_F_SAMPLE_FLAGS, &fl)) ||
	    (r->n > SD_F_SAMPLE_CONTEXT && sd_rec_u64(r, SD_F_SAMPLE_CONTEXT, &cx)) ||
	    (r->n > SD_F_SAMPLE_PCONTEXT && sd_rec_u64(r, SD_F_SAMPLE_PCONTEXT, &pcx)))
		return REC_BAD; /* c->why: generic, field_why names the field */
	if (dl && (why = check_counts(dl, st->nctrs, "SAMPLE deltas")))
		goto bad;
	why = "SAMPLE has both deltas and flag 8, counters unreadable";
	if (dl && (fl & SD_FLAG_NO_COUNTERS))
		goto bad;
	/* what a SAMPLE names is defined before it (docs/FORMAT.md) */
	why = "SAMPLE names a thread that no THREAD record defined before it";
	if (thread == 0 || thread >= st->nthreads)
		goto bad;
	why = "SAMPLE names a source that the HEADER does not list";
	if (source >= st->nsources)
		goto bad;
	why = "SAMPLE names a FRAME node that no FRAME record defined before it";
	if (node >= st->nnodes)
		goto bad;
	why = "SAMPLE names a CONTEXT node that no CONTEXT record defined before it";
	if (cx >= st->nctxs || pcx >= st->nctxs)
		goto bad;
	st->nsamples_all++;
	struct ssource *src = &st->sources[source];
	struct sthread *t = &st->threads[thread];
	t->now += dt; /* time advances even for samples filtered out below */
	/* coverage (no filter applies): signalled samples and the time accounted
	 * from the thread's own clock while it kept the signal blocked */
	if ((long)source == st->cpu_src) {
		t->cov_sampled += (double)weight * (double)src->period;
		if (fl & SD_FLAG_ACCOUNTED) /* from the thread's clock: user and system time */
			t->cov_accounted += (double)weight * (double)src->period;
	}
	if (t->now > t->last_t)
		t->last_t = t->now;
	if (c->p->only_source && strcmp(src->name, c->p->only_source))
		return 0;
	/* a stack cut at max_depth is a key of its own: its path goes under [truncated] */
	uint32_t key[5] = { (uint32_t)thread,
			    (uint32_t)source | ((fl & SD_FLAG_TRUNCATED) && node ? SD_AGG_TRUNC : 0),
			    (uint32_t)cx, (uint32_t)pcx, (uint32_t)node };
	double w = (double)weight * (double)src->period;
	int err = agg_add(st, key, w, weight, fl & SD_FLAG_ACCOUNTED ? 0 : weight, t->now, dl,
			  (fl & SD_FLAG_NO_COUNTERS) != 0);
	if (st->obs_samples && !err) /* e.g. --format speedscope|trace: each sample in time */
		err = sd_obs_sample(st, t->now, st->last_agg, w, dl);
	return err;
bad:
	c->why = why;
	return REC_BAD;
}

/* A NOTE: the runtime's lines that say it throttled a source (docs/ENV.md,
 * "Throttling": "sonde: SPEC: sampling takes too large a part of each period here,
 * throttled: ...", "thread TID: SPEC was throttled to a period N times longer") mark
 * the source, so the report can say its period was raised. Other notes count nothing. */
static int rec_note(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const char *text;
	uint32_t len;
	if (sd_rec_str(c->r, SD_F_NOTE_TEXT, &text, &len))
		return 0; /* a note is prose: one of another shape is no error */
	for (size_t i = 0; i < st->nsources && i < 64; i++) {
		const char *spec = st->sources[i].spec;
		size_t sl = spec ? strlen(spec) : 0;
		if (!sl || !memmem(text, len, "throttled", 9))
			continue;
		for (const char *q = text; (q = memmem(q, len - (size_t)(q - text), spec, sl));
		     q += sl) {
			const char *after = q + sl;
			size_t rest = len - (size_t)(after - text);
			if ((rest >= 2 && !memcmp(after, ": ", 2) && q >= text + 7 &&
			     !memcmp(q - 7, "sonde: ", 7)) ||
			    (rest >= 15 && !memcmp(after, " was throttled", 14))) {
				st->throttled |= 1ull << i;
				break;
			}
		}
	}
	return 0;
}

static int rec_attribute(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id;
	const char *name, *ty, *sc;
	uint32_t len, tl, sl;
	long i;
	if (sd_rec_u64(r, SD_F_ATTRIBUTE_ID, &id) || sd_rec_str(r, SD_F_ATTRIBUTE_NAME, &name, &len) ||
	    sd_rec_str(r, SD_F_ATTRIBUTE_TYPE, &ty, &tl) ||
	    sd_rec_str(r, SD_F_ATTRIBUTE_SCOPE, &sc, &sl))
		return REC_BAD;
	c->why = "ATTRIBUTE id out of order";
	if ((i = def_index(id, st->nattrs)) < 0 || id >= UINT32_MAX)
		return REC_BAD;
	if ((size_t)i == st->nattrs) {
		if (sd_grow(&st->attrs, &st->capattrs, st->nattrs + 1, sizeof(*st->attrs)))
			return -ENOMEM;
		st->nattrs++;
	}
	struct sattr *at = &st->attrs[i];
	free(at->name);
	if (!(at->name = dupn(name, len)))
		return -ENOMEM;
	return 0;
}

static int rec_context(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t node, parent, attr;
	long i;
	if (sd_rec_u64(r, SD_F_CONTEXT_NODE, &node) || sd_rec_u64(r, SD_F_CONTEXT_PARENT, &parent) ||
	    sd_rec_u64(r, SD_F_CONTEXT_ATTR, &attr) || r->n <= SD_F_CONTEXT_VALUE)
		return REC_BAD;
	c->why = "CONTEXT node id out of order";
	if ((i = def_index(node, st->nctxs)) < 0 || node >= UINT32_MAX)
		return REC_BAD;
	c->why = "CONTEXT parent is not an earlier node";
	if (parent >= node)
		return REC_BAD;
	c->why = "CONTEXT attribute is not defined";
	if (attr == 0 || attr >= st->nattrs)
		return REC_BAD;
	c->why = "CONTEXT value is not a string or a number";
	const msgpack_object *value = &r->v[SD_F_CONTEXT_VALUE];
	char *v = value_str(value);
	if (!v) {
		if (value->type != MSGPACK_OBJECT_STR && value->type != MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    value->type != MSGPACK_OBJECT_NEGATIVE_INTEGER &&
		    value->type != MSGPACK_OBJECT_FLOAT32 && value->type != MSGPACK_OBJECT_FLOAT64)
			return REC_BAD;
		return -ENOMEM;
	}
	if ((size_t)i == st->nctxs) {
		if (sd_grow(&st->ctxs, &st->capctxs, st->nctxs + 1, sizeof(*st->ctxs))) {
			free(v);
			return -ENOMEM;
		}
		st->nctxs++;
	}
	uint64_t site = 0;
	if (r->n > SD_F_CONTEXT_SITE &&
	    (sd_rec_u64(r, SD_F_CONTEXT_SITE, &site) || site >= st->nnodes)) {
		free(v);
		c->why = "CONTEXT site is not a FRAME node defined before it";
		return REC_BAD;
	}
	struct sctx *x = &st->ctxs[i];
	free(x->value);
	x->value = v;
	x->parent = (uint32_t)parent;
	x->attr = (uint32_t)attr;
	x->site = (uint32_t)site;
	return 0;
}

static int rec_region(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, event;
	const msgpack_object *cn = r->n > SD_F_REGION_COUNTS ? &r->v[SD_F_REGION_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_REGION_THREAD, &thread) || sd_rec_u64(r, SD_F_REGION_T, &t) ||
	    sd_rec_u64(r, SD_F_REGION_NODE, &node) || sd_rec_u64(r, SD_F_REGION_EVENT, &event))
		return REC_BAD;
	if (cn && (c->why = check_counts(cn, st->nctrs, "REGION counts")))
		return REC_BAD;
	if (!known_thread(c, thread, "REGION names a thread that no THREAD record defined before it"))
		return REC_BAD;
	c->why = "REGION names a CONTEXT node that no CONTEXT record defined before it";
	if (node == 0 || node >= st->nctxs)
		return REC_BAD;
	st->nregion_records++;
	st->nregion_counts += cn != NULL;
	if (event > SD_REGION_LOST)
		return 0; /* an event of a later format: ignored */
	if (st->nobs && event != SD_REGION_LOST) {
		int err = sd_obs_region(st, (uint32_t)thread, t, (uint32_t)node, (uint32_t)event);
		if (err)
			return err;
	}
	return region_event(st, (uint32_t)thread, t, (uint32_t)node, event, cn);
}

/* REGION_STATS: a thread's cumulative timing of one context node (SONDE_REGIONS=on); the
 * last record of a (thread, node) holds the totals. */
static int rec_region_stats(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, calls, incl, excl, mn, mx, forced, site;
	const msgpack_object *cn = r->n > SD_F_RSTATS_COUNTS ? &r->v[SD_F_RSTATS_COUNTS] : NULL;
	double sumsq;
	if (sd_rec_u64(r, SD_F_RSTATS_THREAD, &thread) || sd_rec_u64(r, SD_F_RSTATS_T, &t) ||
	    sd_rec_u64(r, SD_F_RSTATS_NODE, &node) || sd_rec_u64(r, SD_F_RSTATS_CALLS, &calls) ||
	    sd_rec_u64(r, SD_F_RSTATS_INCL, &incl) || sd_rec_u64(r, SD_F_RSTATS_EXCL, &excl) ||
	    sd_rec_u64(r, SD_F_RSTATS_MIN, &mn) || sd_rec_u64(r, SD_F_RSTATS_MAX, &mx) ||
	    sd_rec_f64(r, SD_F_RSTATS_SUMSQ, &sumsq) ||
	    sd_rec_u64(r, SD_F_RSTATS_FORCED, &forced) || sd_rec_u64(r, SD_F_RSTATS_SITE, &site))
		return REC_BAD;
	if (cn && (c->why = check_counts(cn, st->nctrs, "REGION_STATS counts")))
		return REC_BAD;
	if (!known_thread(c, thread, "REGION_STATS names a thread that no THREAD record defined "
			  "before it"))
		return REC_BAD;
	c->why = "REGION_STATS names a CONTEXT node that no CONTEXT record defined before it";
	if (node == 0 || node >= st->nctxs)
		return REC_BAD;
	c->why = "REGION_STATS times do not add up (min > max, or excl > incl)";
	if ((calls && mn > mx) || excl > incl || !(sumsq >= 0))
		return REC_BAD;
	struct sreg *g = reg_of(st, (uint32_t)thread, (uint32_t)node);
	if (!g)
		return -ENOMEM;
	g->calls = calls, g->incl = incl, g->excl = excl, g->forced = forced, g->sumsq = sumsq;
	g->open = 0; /* a later REGION_OPEN says if a call is open again */
	g->min = calls ? mn : UINT64_MAX, g->max = mx;
	if (cn) {
		if (!g->cnt && !(g->cnt = calloc(st->nctrs, sizeof(*g->cnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			g->cnt[k] = cn->via.array.ptr[k].via.u64;
	}
	st->nregion_stats++;
	st->nregion_counts += cn != NULL;
	st->threads[thread].last_t = t > st->threads[thread].last_t ? t : st->threads[thread].last_t;
	return 0;
}

/* REGION_OPEN: a call of (thread, node) open when its totals were read (SONDE_REGIONS=on);
 * a later REGION_STATS of the same (thread, node) closed it. */
static int rec_region_open(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, begin;
	if (sd_rec_u64(r, SD_F_ROPEN_THREAD, &thread) || sd_rec_u64(r, SD_F_ROPEN_T, &t) ||
	    sd_rec_u64(r, SD_F_ROPEN_NODE, &node) || sd_rec_u64(r, SD_F_ROPEN_BEGIN, &begin))
		return REC_BAD;
	if (!known_thread(c, thread, "REGION_OPEN names a thread that no THREAD record defined "
			  "before it"))
		return REC_BAD;
	c->why = "REGION_OPEN names a CONTEXT node that no CONTEXT record defined before it";
	if (node == 0 || node >= st->nctxs)
		return REC_BAD;
	c->why = "REGION_OPEN begins after it was written (begin_t > t)";
	if (begin > t)
		return REC_BAD;
	struct sreg *g = reg_of(st, (uint32_t)thread, (uint32_t)node);
	if (!g)
		return -ENOMEM;
	g->open = 1;
	g->open_t = begin;
	return 0;
}

/* A CHILD: a child process the program started (fork, spawn) or reaped (exit, signal).
 * Events of one pid meet in one entry; a start after an end is a new child (the pid
 * was reused). An event of a later format counts as a start of an unknown kind. */
static int rec_child(struct rec_ctx *c)
{
	static const char *const names[SD_CHILD_NEVENTS] = SD_CHILD_NAMES;
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t t, pid, value = 0;
	const char *ev;
	uint32_t len;
	if (sd_rec_u64(r, SD_F_CHILD_T, &t) || sd_rec_u64(r, SD_F_CHILD_PID, &pid) ||
	    sd_rec_str(r, SD_F_CHILD_EVENT, &ev, &len) ||
	    (r->n > SD_F_CHILD_VALUE && sd_rec_u64(r, SD_F_CHILD_VALUE, &value)))
		return REC_BAD;
	int e = -1;
	for (int i = 0; i < SD_CHILD_NEVENTS; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], ev, len))
			e = i;
	int is_end = e == SD_CHILD_EXIT || e == SD_CHILD_SIGNAL;
	uint32_t k;
	struct schild *ch = NULL;
	if (sd_u64map_get(&st->childmap, pid, &k)) {
		ch = &st->children[k];
		if (is_end ? ch->end >= 0 : ch->has_start) /* the pid again: another child */
			ch = NULL;
	}
	if (!ch) {
		if (sd_grow(&st->children, &st->capchildren, st->nchildren + 1,
			    sizeof(*st->children)) ||
		    sd_u64map_put(&st->childmap, pid, (uint32_t)st->nchildren))
			return -ENOMEM;
		ch = &st->children[st->nchildren++];
		*ch = (struct schild){ .pid = pid, .how = -1, .end = -1 };
	}
	if (is_end) {
		ch->end = e;
		ch->end_t = t;
		ch->value = value;
	} else {
		ch->has_start = 1;
		ch->how = e;
		ch->t = t;
	}
	return 0;
}

static int rec_thread_cpu(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_THREAD_CPU_THREAD, &thread) || sd_rec_u64(r, SD_F_THREAD_CPU_T, &t) ||
	    sd_rec_u64(r, SD_F_THREAD_CPU_NS, &cpu_ns))
		return REC_BAD;
	if (!known_thread(c, thread, "THREAD_CPU names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	th->has_flush = 1;
	th->flush_cpu_ns = cpu_ns;
	th->snap_sampled = th->cov_sampled;
	sd_decode_thread_drops(st, thread, th->snap_drops);
	return 0;
}

static int rec_unsampled(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_UNSAMPLED_THREAD, &thread) || sd_rec_u64(r, SD_F_UNSAMPLED_T, &t) ||
	    r->n <= SD_F_UNSAMPLED_NS || r->v[SD_F_UNSAMPLED_REASON].type != MSGPACK_OBJECT_STR ||
	    sd_rec_u64(r, SD_F_UNSAMPLED_NS, &cpu_ns))
		return REC_BAD;
	if (!known_thread(c, thread, "UNSAMPLED names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	const msgpack_object_str *rs = &r->v[SD_F_UNSAMPLED_REASON].via.str;
	static const char *const reasons[SD_UNSAMPLED_NREASONS] = SD_UNSAMPLED_NAMES;
	uint64_t *un[SD_UNSAMPLED_NREASONS] = {
		[SD_UNSAMPLED_FD_CLOSED] = &th->un_fd_closed,
		[SD_UNSAMPLED_NOT_SAMPLED] = &th->un_not_sampled,
		[SD_UNSAMPLED_CLONE_VM] = &th->un_clone_vm };
	for (unsigned k = 0; k < SD_UNSAMPLED_NREASONS; k++)
		if (rs->size == strlen(reasons[k]) && !memcmp(rs->ptr, reasons[k], rs->size))
			*un[k] = cpu_ns;
	return 0; /* a reason of a later sonde: not counted */
}

/* Thread `thread`'s cumulative count for drop reason `reason`. */
static int drop_set(struct sstate *st, uint64_t thread, const msgpack_object *reason,
		    uint64_t count)
{
	uint32_t idx;
	char key[600];
	int kl = snprintf(key, sizeof(key), "%llu:%.*s", (unsigned long long)thread,
			  (int)(reason->via.str.size > 500 ? 500 : reason->via.str.size),
			  reason->via.str.ptr);
	if (!sd_strmap_get(&st->drops, key, (size_t)kl, &idx)) {
		idx = (uint32_t)st->ndrops;
		if (sd_strmap_put(&st->drops, key, (size_t)kl, idx))
			return -ENOMEM;
		uint64_t *nv = realloc(st->dropv, (st->ndrops + 1) * sizeof(*nv));
		if (nv)
			st->dropv = nv;
		uint64_t *nt = realloc(st->dropt, (st->ndrops + 1) * sizeof(*nt));
		if (nt)
			st->dropt = nt;
		if (!nt)
			return -ENOMEM;
		nt[idx] = thread;
		char **nr = realloc(st->dropr, (st->ndrops + 1) * sizeof(*nr));
		if (nr)
			st->dropr = nr;
		if (!nv || !nr || !(nr[idx] = sd_obj_strdup(reason)))
			return -ENOMEM;
		st->ndrops++;
	}
	st->dropv[idx] = count;
	return 0;
}

static int rec_drops(struct rec_ctx *c)
{
	const struct sd_record *r = c->r;
	uint64_t thread, count;
	const msgpack_object *m = r->n > SD_F_DROPS_COUNTS ? &r->v[SD_F_DROPS_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_DROPS_THREAD, &thread) || !m || m->type != MSGPACK_OBJECT_MAP)
		return REC_BAD;
	for (uint32_t k = 0; k < m->via.map.size; k++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[k];
		c->why = "DROPS counts is not a map of reason names to unsigned integers";
		if (kv->key.type != MSGPACK_OBJECT_STR || sd_obj_u64(&kv->val, &count))
			return REC_BAD;
		int err = drop_set(c->st, thread, &kv->key, count);
		if (err)
			return err;
	}
	return 0;
}

static int rec_end(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t t;
	const char *reason;
	uint32_t len;
	const msgpack_object *stats = r->n > SD_F_END_STATS ? &r->v[SD_F_END_STATS] : NULL;
	c->why = "END t is not an unsigned integer";
	if (sd_rec_u64(r, SD_F_END_T, &t))
		return REC_BAD;
	c->why = "END reason is not a string";
	if (sd_rec_str(r, SD_F_END_REASON, &reason, &len))
		return REC_BAD;
	c->why = "END stats is not a map";
	if (!stats || stats->type != MSGPACK_OBJECT_MAP)
		return REC_BAD;
	if ((c->why = check_keys(stats, stats_keys, "END stats", c->s->why_buf,
				 sizeof(c->s->why_buf))))
		return REC_BAD;
	free(st->end_reason);
	if (!(st->end_reason = dupn(reason, len)))
		return -ENOMEM;
	st->end_signal = 0;
	sd_obj_u64(sd_map_get(stats, "signal"), &st->end_signal);
	st->ended = 1;
	return 0;
}

/* One record of a stream after its HEADER: the kind's decoder (MODULE_END,
 * kinds of later formats count nothing; NOTE only marks throttled sources). 0, -errno, or
 * SD_ERR_CORRUPT with the stream's error offset and reason set. */
static int decode_record(struct sd_profile *p, struct sstate *st, const struct sd_record *r,
			 struct sd_stream *s)
{
	static int (*const decode[SD_K_LAST + 1])(struct rec_ctx *) = {
		[SD_K_MODULE] = rec_module, [SD_K_THREAD] = rec_thread,
		[SD_K_THREAD_END] = rec_thread_end, [SD_K_FRAME] = rec_frame,
		/* SAMPLE: called directly, below */ [SD_K_ATTRIBUTE] = rec_attribute,
		[SD_K_CONTEXT] = rec_context, [SD_K_REGION] = rec_region,
		[SD_K_THREAD_CPU] = rec_thread_cpu, [SD_K_UNSAMPLED] = rec_unsampled,
		[SD_K_DROPS] = rec_drops, [SD_K_END] = rec_end, [SD_K_REGION_STATS] = rec_region_stats,
		[SD_K_REGION_OPEN] = rec_region_open,
		[SD_K_NOTE] = rec_note, [SD_K_CHILD] = rec_child,
	};
	/* where `t` is in the records that have one (SAMPLE: its thread's time) */
	static const uint8_t t_index[SD_K_LAST + 1] = {
		[SD_K_MODULE] = SD_F_MODULE_T, [SD_K_MODULE_END] = SD_F_MODULE_END_T,
		[SD_K_THREAD] = SD_F_THREAD_T, [SD_K_THREAD_END] = SD_F_THREAD_END_T,
		[SD_K_END] = SD_F_END_T, [SD_K_NOTE] = SD_F_NOTE_T, [SD_K_REGION] = SD_F_REGION_T,
		[SD_K_THREAD_CPU] = SD_F_THREAD_CPU_T, [SD_K_UNSAMPLED] = SD_F_UNSAMPLED_T,
		[SD_K_REGION_STATS] = SD_F_RSTATS_T, [SD_K_REGION_OPEN] = SD_F_ROPEN_T,
		[SD_K_CHILD] = SD_F_CHILD_T };
	uint64_t t;

	if (r->kind > SD_K_LAST)
		return 0; /* a kind of a later format: skipped */
	if (r->kind != SD_K_END)
		st->ended = 0; /* records after an END (a failed exec): not the end yet */
	if (t_index[r->kind] && !sd_rec_u64(r, t_index[r->kind], &t) && t > st->max_t)
		st->max_t = t;
	if (r->kind != SD_K_SAMPLE && !decode[r->kind])
		return 0;
	struct rec_ctx c = { p, st, r, s, generic };
	/* SAMPLE, nearly every record, by a direct call the compiler can inline */
	int ret = r->kind == SD_K_SAMPLE ? rec_sample(&c) : decode[r->kind](&c);
	if (ret != REC_BAD)
		return ret;
	s->err_off = r->offset;
	s->err_why = c.why == generic ? field_why(r, s->why_buf, sizeof(s->why_buf)) : c.why;
	return SD_ERR_CORRUPT;
}

/* The stream's records, one after the other (the loop of every report: the record
 * decoder is static here so that it inlines into it). */
struct sd_load *sd_profile_parse(const struct sd_profile *p, struct sd_stream *s)
{
	struct sd_load *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	struct sstate *st = &l->st;
	struct sd_record rec;
	l->name = s->name;
	sd_obs_stream(p, st);
	int r = sd_stream_header(s, &rec);
	if (r == 0)
		r = decode_header(st, &rec, s);
	while (r == 0) {
		r = sd_stream_next(s, &rec);
		if (r == 1)
			r = decode_record((struct sd_profile *)p, st, &rec, s);
		else if (r == 0)
			break;
		else if (r == SD_ERR_TRUNC && s->nrecords > 0) {
			l->truncated = 1;
			r = 0;
			break;
		}
	}
	if (r == 0)
		r = decode_end(st);
	l->r = r;
	l->bad_off = s->err_off;
	return l;
}
