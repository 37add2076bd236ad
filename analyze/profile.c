/*
 * profile.c: loads sonde streams into one merged profile for `sonde report`.
 *
 * Samples are never stored one by one. While a stream is read, each SAMPLE only adds to
 * counters of its stream-local FRAME node, its thread and its source. When the stream is
 * done, each node that has samples below it is symbolized once and mapped to a node of
 * the merged call tree (struct sd_cnode), keyed by (parent, function), so paths of all
 * streams, processes and threads with the same functions meet in one node.
 *
 * A stream is merged only after it was read without error (a truncated stream is read up
 * to its last whole record), so a corrupt file leaves the profile as it was.
 *
 * Input is untrusted. Ids that are defined (node, module, thread) must be at most one
 * more than the number defined so far, so memory stays proportional to the file; a FRAME's
 * parent must be an earlier node (no cycles); references to undefined ids are counted
 * under "[unknown ...]" names instead of failing.
 */
#include "analyze/analyze.h"

#include <stdlib.h>
#include <string.h>

struct snode { uint32_t parent; int64_t mod; uint64_t addr; uint64_t samples; double weight;
	       uint32_t cnode; int used; };
struct sthread { uint64_t tid, t, now, samples, first, last; char *name; int defined; };
struct ssource { char *name, *spec, *unit, *mechanism; uint64_t period, samples; double weight; };

/* Everything known about the stream being read. Index 0 of nodes is the root; index 0 of
 * threads collects samples of undefined threads; sources[nsources] undefined sources. */
struct sstate {
	uint64_t pid;
	struct snode *nodes; size_t nnodes;       /* nnodes includes the root */
	int *mods; size_t nmods;                  /* stream module id - 1 -> symbolizer handle */
	struct sthread *threads; size_t nthreads; /* includes slot 0 */
	struct ssource *sources; size_t nsources; /* plus one more for undefined */
	uint64_t nostack, badnode;
	double nostack_w, badnode_w;
	struct sd_strmap drops;                   /* thread \0 reason -> index in dropv */
	uint64_t *dropv; char **dropr; size_t ndrops;
};

static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*(void **)pp, ncap * size);
	if (!np)
		return -ENOMEM;
	memset((char *)np + *cap * size, 0, (ncap - *cap) * size);
	*(void **)pp = np;
	*cap = ncap;
	return 0;
}

int sd_profile_init(struct sd_profile *p, int addresses)
{
	memset(p, 0, sizeof(*p));
	p->sym = sd_sym_new(addresses);
	if (!p->sym || grow(&p->nodes, &p->capnodes, 1, sizeof(*p->nodes)))
		return -ENOMEM;
	p->nnodes = 1; /* the root */
	return 0;
}

void sd_profile_fini(struct sd_profile *p)
{
	sd_sym_free(p->sym);
	free(p->nodes);
	sd_u64map_fini(&p->children);
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].name);
	free(p->threads);
	for (size_t i = 0; i < p->nsources; i++) {
		struct sd_source_row *r = &p->sources[i];
		free(r->name), free(r->spec), free(r->unit), free(r->mechanism);
	}
	free(p->sources);
	free(p->pids);
	sd_strmap_fini(&p->drop_reasons);
	for (size_t i = 0; i < p->ndrop; i++)
		free(p->drop_names[i]);
	free(p->drop_names);
	free(p->drop_counts);
	memset(p, 0, sizeof(*p));
}

static void sstate_fini(struct sstate *st)
{
	free(st->nodes);
	free(st->mods);
	for (size_t i = 0; i < st->nthreads; i++)
		free(st->threads[i].name);
	free(st->threads);
	for (size_t i = 0; i <= st->nsources && st->sources; i++) {
		struct ssource *s = &st->sources[i];
		free(s->name), free(s->spec), free(s->unit), free(s->mechanism);
	}
	free(st->sources);
	sd_strmap_fini(&st->drops);
	for (size_t i = 0; i < st->ndrops; i++)
		free(st->dropr[i]);
	free(st->dropr);
	free(st->dropv);
}

static char *strdup_or(const msgpack_object *o, const char *dflt)
{
	char *s = sd_obj_strdup(o);
	return s ? s : strdup(dflt);
}

static int on_header(struct sstate *st, const struct sd_record *r)
{
	const msgpack_object *info = r->n > 3 ? &r->v[3] : NULL;
	const msgpack_object *srcs = sd_map_get(info, "sources");
	size_t n = srcs && srcs->type == MSGPACK_OBJECT_ARRAY ? srcs->via.array.size : 0;

	sd_obj_u64(sd_map_get(info, "pid"), &st->pid);
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
	/* thread slot 0: samples of threads never announced */
	st->threads = calloc(1, sizeof(*st->threads));
	if (!st->threads)
		return -ENOMEM;
	st->nthreads = 1;
	st->nodes = calloc(1, sizeof(*st->nodes));
	if (!st->nodes)
		return -ENOMEM;
	st->nnodes = 1;
	return 0;
}

/* A definition of id `id` in a table of n entries (slot 0 reserved): 1..n redefine,
 * n+1..n appends; anything else is corrupt. Returns the index or -1. */
static long def_index(uint64_t id, size_t n)
{
	return id >= 1 && id <= n ? (long)id : -1;
}

static int on_record(struct sd_profile *p, struct sstate *st, const struct sd_record *r,
		     struct sd_stream *s)
{
	uint64_t a, b, c, d, e;
	const char *str;
	uint32_t len;
	long i;
	const char *why = "a field is missing or has the wrong type";

	switch (r->kind) {
	case SD_K_MODULE: {
		const msgpack_object *bid = r->n > 4 ? &r->v[4] : NULL;
		if (sd_rec_u64(r, 1, &a) || sd_rec_str(r, 3, &str, &len) || !bid ||
		    (bid->type != MSGPACK_OBJECT_BIN && bid->type != MSGPACK_OBJECT_NIL))
			goto bad;
		why = "MODULE id out of order";
		if ((i = def_index(a, st->nmods + 1)) < 0)
			goto bad;
		char *path = strndup(str, len);
		if (!path)
			return -ENOMEM;
		int h = bid->type == MSGPACK_OBJECT_BIN
			? sd_sym_module(p->sym, path, (const uint8_t *)bid->via.bin.ptr, bid->via.bin.size)
			: sd_sym_module(p->sym, path, NULL, 0);
		free(path);
		if (h < 0)
			return h;
		if ((size_t)i > st->nmods) {
			int *nm = realloc(st->mods, (size_t)i * sizeof(*nm));
			if (!nm)
				return -ENOMEM;
			st->mods = nm;
			st->nmods = (size_t)i;
		}
		st->mods[i - 1] = h;
		return 0;
	}
	case SD_K_THREAD: {
		if (sd_rec_u64(r, 1, &a) || sd_rec_u64(r, 2, &b) || sd_rec_u64(r, 3, &c))
			goto bad;
		why = "THREAD id out of order";
		if ((i = def_index(a, st->nthreads)) < 0)
			goto bad;
		if ((size_t)i == st->nthreads) {
			struct sthread *nt = realloc(st->threads, (st->nthreads + 1) * sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			st->threads = nt;
			memset(&nt[st->nthreads++], 0, sizeof(*nt));
		}
		struct sthread *t = &st->threads[i];
		free(t->name);
		t->name = strdup_or(r->n > 4 ? &r->v[4] : NULL, "");
		if (!t->name)
			return -ENOMEM;
		t->tid = b;
		t->t = t->now = c;
		t->defined = 1;
		return 0;
	}
	case SD_K_THREAD_END:
		if (sd_rec_u64(r, 1, &a))
			goto bad;
		if (a >= 1 && a < st->nthreads && r->n > 3 && r->v[3].type == MSGPACK_OBJECT_STR) {
			char *n = sd_obj_strdup(&r->v[3]);
			if (!n)
				return -ENOMEM;
			free(st->threads[a].name);
			st->threads[a].name = n;
		}
		return 0;
	case SD_K_FRAME: {
		if (sd_rec_u64(r, 1, &a) || sd_rec_u64(r, 2, &b) || sd_rec_u64(r, 3, &c) ||
		    sd_rec_u64(r, 4, &d))
			goto bad;
		why = "FRAME node id out of order";
		if ((i = def_index(a, st->nnodes)) < 0 || a >= UINT32_MAX)
			goto bad;
		why = "FRAME parent is not an earlier node";
		if (b >= a)
			goto bad;
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
		n->parent = (uint32_t)b;
		n->mod = c > INT64_MAX ? INT64_MAX : (int64_t)c;
		n->addr = d;
		return 0;
	}
	case SD_K_SAMPLE: {
		if (sd_rec_u64(r, 1, &a) || sd_rec_u64(r, 2, &b) || sd_rec_u64(r, 3, &c) ||
		    sd_rec_u64(r, 4, &d) || sd_rec_u64(r, 5, &e))
			goto bad;
		struct ssource *src = &st->sources[c < st->nsources ? c : st->nsources];
		struct sthread *t = &st->threads[a < st->nthreads ? a : 0];
		t->now += b; /* time advances even for samples filtered out below */
		if (p->only_source && (c >= st->nsources || strcmp(src->name, p->only_source)))
			return 0;
		double w = (double)e * (double)src->period;
		src->samples++;
		src->weight += w;
		if (!t->samples)
			t->first = t->now;
		t->last = t->now;
		t->samples++;
		if (d == 0) {
			st->nostack++;
			st->nostack_w += w;
		} else if (d < st->nnodes) {
			st->nodes[d].samples++;
			st->nodes[d].weight += w;
		} else {
			st->badnode++;
			st->badnode_w += w;
		}
		return 0;
	}
	case SD_K_DROPS: {
		const msgpack_object *m = r->n > 2 ? &r->v[2] : NULL;
		if (sd_rec_u64(r, 1, &a) || !m || m->type != MSGPACK_OBJECT_MAP)
			goto bad;
		for (uint32_t k = 0; k < m->via.map.size; k++) {
			const msgpack_object_kv *kv = &m->via.map.ptr[k];
			uint32_t idx;
			if (kv->key.type != MSGPACK_OBJECT_STR || sd_obj_u64(&kv->val, &b))
				continue;
			char key[600];
			int kl = snprintf(key, sizeof(key), "%llu:%.*s", (unsigned long long)a,
					  (int)(kv->key.via.str.size > 500 ? 500 : kv->key.via.str.size),
					  kv->key.via.str.ptr);
			if (!sd_strmap_get(&st->drops, key, (size_t)kl, &idx)) {
				idx = (uint32_t)st->ndrops;
				if (sd_strmap_put(&st->drops, key, (size_t)kl, idx))
					return -ENOMEM;
				uint64_t *nv = realloc(st->dropv, (st->ndrops + 1) * sizeof(*nv));
				if (nv)
					st->dropv = nv;
				char **nr = realloc(st->dropr, (st->ndrops + 1) * sizeof(*nr));
				if (nr)
					st->dropr = nr;
				if (!nv || !nr || !(nr[idx] = sd_obj_strdup(&kv->key)))
					return -ENOMEM;
				st->ndrops++;
			}
			st->dropv[idx] = b;
		}
		return 0;
	}
	default: /* MODULE_END, END, NOTE, unknown kinds: nothing to count */
		return 0;
	}
bad:
	s->err_off = r->offset;
	s->err_why = why;
	return SD_ERR_CORRUPT;
}

/* Child of merged node `parent` for function `func`, created if needed. */
static int cnode_child(struct sd_profile *p, uint32_t parent, uint32_t func, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | func;

	if (sd_u64map_get(&p->children, key, out))
		return 0;
	if (p->nnodes >= UINT32_MAX - 1 ||
	    grow(&p->nodes, &p->capnodes, p->nnodes + 1, sizeof(*p->nodes)))
		return -ENOMEM;
	struct sd_cnode *n = &p->nodes[p->nnodes];
	n->parent = parent;
	n->func = func;
	*out = (uint32_t)p->nnodes;
	if (sd_u64map_put(&p->children, key, *out))
		return -ENOMEM;
	p->nnodes++;
	return 0;
}

static int add_root_pseudo(struct sd_profile *p, const char *name, uint64_t n, double w)
{
	uint32_t c;
	int f;

	if (!n)
		return 0;
	if ((f = sd_sym_pseudo(p->sym, name)) < 0 || cnode_child(p, 0, (uint32_t)f, &c))
		return -ENOMEM;
	p->nodes[c].samples += n;
	p->nodes[c].weight += w;
	return 0;
}

static int merge(struct sd_profile *p, struct sstate *st)
{
	/* mark nodes with samples in their subtree; children come after parents */
	for (size_t i = st->nnodes; i-- > 1;)
		if (st->nodes[i].samples || st->nodes[i].used)
			st->nodes[st->nodes[i].parent].used = 1;
	st->nodes[0].cnode = 0;
	for (size_t i = 1; i < st->nnodes; i++) {
		struct snode *n = &st->nodes[i];
		if (!n->samples && !n->used)
			continue;
		int h = n->mod == 0 ? -1 : (uint64_t)n->mod <= st->nmods ? st->mods[n->mod - 1] : -2;
		int f = sd_sym_lookup(p->sym, h, n->addr);
		if (f < 0 || cnode_child(p, st->nodes[n->parent].cnode, (uint32_t)f, &n->cnode))
			return -ENOMEM;
		p->nodes[n->cnode].samples += n->samples;
		p->nodes[n->cnode].weight += n->weight;
	}
	if (add_root_pseudo(p, "[no stack]", st->nostack, st->nostack_w) ||
	    add_root_pseudo(p, "[unknown stack]", st->badnode, st->badnode_w))
		return -ENOMEM;

	for (size_t i = 0; i < st->nthreads; i++) {
		struct sthread *t = &st->threads[i];
		if (!t->defined && !t->samples)
			continue;
		if (grow(&p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads)))
			return -ENOMEM;
		struct sd_thread_row *row = &p->threads[p->nthreads];
		row->name = strdup(t->defined ? t->name : "[unknown thread]");
		if (!row->name)
			return -ENOMEM;
		row->pid = st->pid;
		row->tid = t->tid;
		row->samples = t->samples;
		row->first_ns = t->first;
		row->last_ns = t->last;
		p->nthreads++;
	}
	for (size_t i = 0; i <= st->nsources; i++) {
		struct ssource *s = &st->sources[i];
		size_t j;
		if (i == st->nsources && !s->samples)
			continue;
		p->samples += s->samples;
		p->weight += s->weight;
		for (j = 0; j < p->nsources; j++) {
			struct sd_source_row *r = &p->sources[j];
			if (!strcmp(r->name, s->name) && r->period == s->period &&
			    !strcmp(r->unit, s->unit) && !strcmp(r->mechanism, s->mechanism))
				break;
		}
		if (j == p->nsources) {
			if (grow(&p->sources, &p->capsources, j + 1, sizeof(*p->sources)))
				return -ENOMEM;
			struct sd_source_row *r = &p->sources[j];
			r->name = s->name, r->spec = s->spec, r->unit = s->unit;
			r->mechanism = s->mechanism, r->period = s->period;
			s->name = s->spec = s->unit = s->mechanism = NULL; /* moved */
			p->nsources++;
		}
		p->sources[j].samples += s->samples;
		p->sources[j].weight += s->weight;
	}
	for (size_t i = 0; i < st->ndrops; i++) {
		const char *reason = st->dropr[i];
		uint32_t k;
		p->dropped += st->dropv[i];
		if (!sd_strmap_get(&p->drop_reasons, reason, strlen(reason), &k)) {
			k = (uint32_t)p->ndrop;
			if (grow(&p->drop_counts, &p->capdrop, k + 1, sizeof(*p->drop_counts)))
				return -ENOMEM;
			char **nn = realloc(p->drop_names, (k + 1) * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			p->drop_names = nn;
			if (!(nn[k] = strdup(reason)) ||
			    sd_strmap_put(&p->drop_reasons, reason, strlen(reason), k))
				return -ENOMEM;
			p->ndrop++;
		}
		p->drop_counts[k] += st->dropv[i];
	}
	size_t j;
	for (j = 0; j < p->npids && p->pids[j] != st->pid; j++)
		;
	if (j == p->npids) {
		if (grow(&p->pids, &p->cappids, j + 1, sizeof(*p->pids)))
			return -ENOMEM;
		p->pids[p->npids++] = st->pid;
	}
	p->streams++;
	return 0;
}

int sd_profile_add(struct sd_profile *p, struct sd_stream *s, size_t *bad_off)
{
	struct sstate st = { 0 };
	struct sd_record rec;
	int r, truncated = 0;

	r = sd_stream_header(s, &rec);
	if (r == 0)
		r = on_header(&st, &rec);
	while (r == 0) {
		r = sd_stream_next(s, &rec);
		if (r == 1)
			r = on_record(p, &st, &rec, s);
		else if (r == 0)
			break;
		else if (r == SD_ERR_TRUNC && s->nrecords > 0) {
			truncated = 1;
			r = 0;
			break;
		}
	}
	if (r == 0)
		r = merge(p, &st);
	if (r == 0 && truncated) {
		p->truncated++;
		r = 1;
	}
	*bad_off = s->err_off;
	sstate_fini(&st);
	return r;
}
