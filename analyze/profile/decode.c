/*
 * decode.c: one stream's records into its struct sstate (profile_int.h), for profile.c:
 * the HEADER checked key by key (decode_header.c), then one function per record kind
 * (rec_* here, sd_decode_rec_* in decode_annot.c and decode_cov.c), each checking its
 * fields' types and the ids they name before anything is kept. This file holds the
 * record loop (sd_profile_parse), the kind table, SAMPLE and its per-key table, the
 * records of modules, threads, frames, notes, children and the END, and the checks the
 * decoders share. SAMPLE, the hot path, is called directly rather than through the kind
 * table so that it inlines. Nothing here touches the merged profile except the
 * symbolizer's module registration at merge time; see the top of profile.c for what is
 * kept and why.
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
	free(st->modstat);
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
	free(st->peers);
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

char *sd_decode_strdup_or(const msgpack_object *o, const char *dflt)
{
	char *s = sd_obj_strdup(o);
	return s ? s : strdup(dflt);
}

/* A copy of p[0..len) as a C string (p may be NULL when len is 0). NULL on ENOMEM. */
char *sd_decode_dupn(const char *p, size_t len)
{
	char *d = malloc(len + 1);
	if (d) {
		if (len)
			memcpy(d, p, len);
		d[len] = 0;
	}
	return d;
}

/* A definition of id `id` in a table of n entries (slot 0 reserved): 1..n redefine,
 * n+1..n appends; anything else is corrupt. Returns the index or -1. */
long sd_decode_def_index(uint64_t id, size_t n)
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

/* NULL if o is an array of n unsigned integers, else why it is corrupt. */
const char *sd_decode_check_counts(const msgpack_object *o, size_t n, const char *what)
{
	int i = !strcmp(what, "SAMPLE deltas")	  ? 0
		: !strcmp(what, "REGION counts")  ? 1
		: !strcmp(what, "THREAD_END deltas") ? 2
						  : 3;
	static const char *const why[4][3] = {
		{ "SAMPLE deltas is not an array",
		  "SAMPLE deltas does not have one value per header counter",
		  "SAMPLE deltas holds a value that is not an unsigned integer" },
		{ "REGION counts is not an array",
		  "REGION counts does not have one value per header counter",
		  "REGION counts holds a value that is not an unsigned integer" },
		{ "THREAD_END deltas is not an array",
		  "THREAD_END deltas does not have one value per header counter",
		  "THREAD_END deltas holds a value that is not an unsigned integer" },
		{ "REGION_STATS counts is not an array",
		  "REGION_STATS counts does not have one value per header counter",
		  "REGION_STATS counts holds a value that is not an unsigned integer" },
	};
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return why[i][0];
	/* THREAD_END and REGION_STATS (before its traffic): [] is none */
	if (o->via.array.size != n && !(i >= 2 && o->via.array.size == 0))
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
		[SD_K_MESSAGES] = { "t:u", "rank:u", "size:u" },
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
	return sd_decode_check_keys(o, cpu_keys, "THREAD_END cpu", s->why_buf,
				    sizeof(s->why_buf));
}

/* ---- the record decoders (profile_int.h: struct rec_ctx, REC_BAD) ------------------ */

/* A thread id the records before this one defined, for kind `what`. */
int sd_decode_known_thread(struct rec_ctx *c, uint64_t thread, const char *why)
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
	if ((i = sd_decode_def_index(id, st->nmods + 1)) < 0)
		return REC_BAD;
	/* Registered with the symbolizer when the stream is merged: parsing
	 * may run in a worker thread (--jobs), the symbolizer is shared. */
	/* an empty path is the main program's (docs/FORMAT.md, MODULE) */
	char *path = len ? sd_decode_dupn(str, len)
			 : strdup(st->exe[0] ? st->exe : "[unknown module]");
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
		uint64_t *ns = realloc(st->modstat, SD_MODSTAT * n * sizeof(*ns));
		if (ns)
			st->modstat = ns;
		if (!nm || !np || !nb || !nl || !ns) {
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
	/* the file's size and mtime (later sondes); absent or nil: not recorded */
	uint64_t *ms = &st->modstat[SD_MODSTAT * (i - 1)];
	ms[0] = UINT64_MAX;
	ms[1] = ms[2] = ms[3] = ms[4] = 0;
	uint64_t fsize, fmtime;
	if (!sd_rec_u64(r, SD_F_MODULE_SIZE, &fsize) && !sd_rec_u64(r, SD_F_MODULE_MTIME, &fmtime) &&
	    fsize != UINT64_MAX) {
		ms[0] = fsize;
		ms[1] = fmtime;
	}
	/* the run-time range, for pprof's mappings (checked: the record's fields) */
	uint64_t bias, lo, hi;
	if (!sd_rec_u64(r, SD_F_MODULE_BIAS, &bias) && !sd_rec_u64(r, SD_F_MODULE_LO, &lo) &&
	    !sd_rec_u64(r, SD_F_MODULE_HI, &hi) && lo < hi)
		ms[2] = bias, ms[3] = lo, ms[4] = hi;
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
	if ((i = sd_decode_def_index(id, st->nthreads)) < 0 || id >= UINT32_MAX)
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
	t->name = sd_decode_strdup_or(r->n > SD_F_THREAD_NAME ? &r->v[SD_F_THREAD_NAME] : NULL,
				      "");
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
	if (deltas && (c->why = sd_decode_check_counts(deltas, st->nctrs, "THREAD_END deltas")))
		return REC_BAD;
	if (cpu && (c->why = check_cpu(cpu, c->s)))
		return REC_BAD;
	if (!sd_decode_known_thread(c, id,
				    "THREAD_END names a thread that no THREAD record defined before it"))
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
	if ((i = sd_decode_def_index(node, st->nnodes)) < 0 || node >= UINT32_MAX)
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
	if (dl && (why = sd_decode_check_counts(dl, st->nctrs, "SAMPLE deltas")))
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

/* The keys of END's stats map and their types (sd_decode_check_keys). */
#define U MSGPACK_OBJECT_POSITIVE_INTEGER
static const struct keyty stats_keys[] = {
	{ "samples", U }, { "dropped", U }, { "threads", U }, { "frames", U }, { "bytes", U },
	{ "signal", U }, { NULL, U } };
#undef U

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
	if ((c->why = sd_decode_check_keys(stats, stats_keys, "END stats", c->s->why_buf,
					   sizeof(c->s->why_buf))))
		return REC_BAD;
	free(st->end_reason);
	if (!(st->end_reason = sd_decode_dupn(reason, len)))
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
		/* SAMPLE: called directly, below */ [SD_K_ATTRIBUTE] = sd_decode_rec_attribute,
		[SD_K_CONTEXT] = sd_decode_rec_context, [SD_K_REGION] = sd_decode_rec_region,
		[SD_K_THREAD_CPU] = sd_decode_rec_thread_cpu,
		[SD_K_UNSAMPLED] = sd_decode_rec_unsampled, [SD_K_DROPS] = sd_decode_rec_drops,
		[SD_K_END] = rec_end, [SD_K_REGION_STATS] = sd_decode_rec_region_stats,
		[SD_K_REGION_OPEN] = sd_decode_rec_region_open,
		[SD_K_NOTE] = rec_note, [SD_K_CHILD] = rec_child,
		[SD_K_MESSAGES] = sd_decode_rec_messages,
	};
	/* where `t` is in the records that have one (SAMPLE: its thread's time) */
	static const uint8_t t_index[SD_K_LAST + 1] = {
		[SD_K_MODULE] = SD_F_MODULE_T, [SD_K_MODULE_END] = SD_F_MODULE_END_T,
		[SD_K_THREAD] = SD_F_THREAD_T, [SD_K_THREAD_END] = SD_F_THREAD_END_T,
		[SD_K_END] = SD_F_END_T, [SD_K_NOTE] = SD_F_NOTE_T, [SD_K_REGION] = SD_F_REGION_T,
		[SD_K_THREAD_CPU] = SD_F_THREAD_CPU_T, [SD_K_UNSAMPLED] = SD_F_UNSAMPLED_T,
		[SD_K_REGION_STATS] = SD_F_RSTATS_T, [SD_K_REGION_OPEN] = SD_F_ROPEN_T,
		[SD_K_CHILD] = SD_F_CHILD_T, [SD_K_MESSAGES] = SD_F_MSGS_T };
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
		r = sd_decode_header(st, &rec, s);
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
		r = sd_decode_regions_end(st);
	l->r = r;
	l->bad_off = s->err_off;
	return l;
}
