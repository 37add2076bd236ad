/*
 * wire.c: a parsed stream (struct sd_load: what sd_profile_parse made of one file) as bytes
 * and back, for a report that parses in other processes (the MPI report, analyze/mpi/):
 * they parse, rank 0 merges the loads in file order exactly as the local loader does, so
 * the profile and every message are the same.
 *
 * The form is this build's memory layout: each struct as its bytes, then what its
 * pointers point to (strings, arrays), in a fixed order; pointers in the copied bytes are
 * replaced on reading. It is meant for processes of one job running the same binary on
 * one architecture, not for storage. What only the parse uses (its lookup tables, the
 * regions open while reading, the observers' state) is not sent: a load of a profile
 * with observers (--format speedscope|trace, the page's timeline) is never made remotely
 * (load.c). A malformed or short buffer gives NULL, never a crash.
 */
#include "analyze/profile/profile_int.h"

#include <stdlib.h>
#include <string.h>

struct wbuf { uint8_t *p; size_t n, cap; int oom; };
struct rbuf { const uint8_t *p; size_t n, off; int bad; };

static void put(struct wbuf *w, const void *d, size_t n)
{
	if (w->oom || !n)
		return;
	if (w->n + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->n + n)
			cap *= 2;
		uint8_t *g = realloc(w->p, cap);
		if (!g) {
			w->oom = 1;
			return;
		}
		w->p = g, w->cap = cap;
	}
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof v);
}

/* A string: its length + 1 (0: NULL), then its bytes. */
static void put_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	put_u64(w, s ? n + 1 : 0);
	put(w, s, n);
}

/* n elements of sz bytes (NULL: none). */
static void put_arr(struct wbuf *w, const void *a, size_t n, size_t sz)
{
	put_u64(w, a ? n : UINT64_MAX);
	if (a)
		put(w, a, n * sz);
}

static void get(struct rbuf *r, void *d, size_t n)
{
	if (r->bad || n > r->n - r->off) {
		r->bad = 1;
		memset(d, 0, n);
		return;
	}
	memcpy(d, r->p + r->off, n);
	r->off += n;
}

static uint64_t get_u64(struct rbuf *r)
{
	uint64_t v;
	get(r, &v, sizeof v);
	return v;
}

static char *get_str(struct rbuf *r)
{
	uint64_t n = get_u64(r);
	if (r->bad || !n)
		return NULL;
	if (n - 1 > r->n - r->off) {
		r->bad = 1;
		return NULL;
	}
	char *s = malloc(n);
	if (!s) {
		r->bad = 1;
		return NULL;
	}
	get(r, s, n - 1);
	s[n - 1] = 0;
	return s;
}

/* An array of exactly `want` elements (want: UINT64_MAX takes what was sent, in *n). */
static void *get_arr(struct rbuf *r, uint64_t want, size_t *n, size_t sz)
{
	uint64_t m = get_u64(r);
	if (n)
		*n = 0;
	if (r->bad || m == UINT64_MAX)
		return NULL;
	if ((want != UINT64_MAX && m != want) || m > (r->n - r->off) / (sz ? sz : 1)) {
		r->bad = 1;
		return NULL;
	}
	void *a = malloc(m * sz + 1);
	if (!a) {
		r->bad = 1;
		return NULL;
	}
	get(r, a, m * sz);
	if (n)
		*n = m;
	return a;
}

static void put_state(struct wbuf *w, const struct sstate *st)
{
	put(w, st, sizeof *st);
	put_str(w, st->host);
	put_arr(w, st->nodes, st->nnodes, sizeof *st->nodes);
	put_arr(w, st->mods, st->nmods, sizeof *st->mods);
	put_arr(w, st->modbidlen, st->modbidlen ? st->nmods : 0, sizeof *st->modbidlen);
	put_arr(w, st->modstat, st->modstat ? SD_MODSTAT * st->nmods : 0, sizeof *st->modstat);
	for (size_t i = 0; i < st->nmods; i++) {
		put_str(w, st->modpath ? st->modpath[i] : NULL);
		put_arr(w, st->modbid ? st->modbid[i] : NULL,
			st->modbidlen ? st->modbidlen[i] : 0, 1);
	}
	put_arr(w, st->threads, st->nthreads, sizeof *st->threads);
	for (size_t i = 0; i < st->nthreads; i++) {
		put_str(w, st->threads[i].name);
		put_arr(w, st->threads[i].endcnt, st->nctrs, sizeof(uint64_t));
	}
	put_arr(w, st->sources, st->sources ? st->nsources + 1 : 0, sizeof *st->sources);
	for (size_t i = 0; st->sources && i <= st->nsources; i++) {
		const struct ssource *s = &st->sources[i];
		put_str(w, s->name), put_str(w, s->spec), put_str(w, s->unit);
		put_str(w, s->mechanism);
	}
	put_arr(w, st->dropv, st->ndrops, sizeof *st->dropv);
	put_arr(w, st->dropt, st->ndrops, sizeof *st->dropt);
	for (size_t i = 0; i < st->ndrops; i++)
		put_str(w, st->dropr[i]);
	put_arr(w, st->attrs, st->nattrs, sizeof *st->attrs);
	for (size_t i = 0; i < st->nattrs; i++)
		put_str(w, st->attrs[i].name);
	put_arr(w, st->ctxs, st->nctxs, sizeof *st->ctxs);
	for (size_t i = 0; i < st->nctxs; i++)
		put_str(w, st->ctxs[i].value);
	put_arr(w, st->aggs, st->naggs, sizeof *st->aggs);
	put_arr(w, st->aggcnt, st->aggcnt ? st->naggs * st->nctrs : 0, sizeof *st->aggcnt);
	put_arr(w, st->regs, st->nregs, sizeof *st->regs);
	for (size_t i = 0; i < st->nregs; i++)
		put_arr(w, st->regs[i].cnt, st->nctrs, sizeof(uint64_t));
	put_arr(w, st->ctrs, st->nctrs, sizeof *st->ctrs);
	for (size_t i = 0; i < st->nctrs; i++) {
		const struct scounter *c = &st->ctrs[i];
		put_str(w, c->name), put_str(w, c->group), put_str(w, c->unit);
		put_str(w, c->source);
	}
	for (size_t i = 0; i < st->nun; i++)
		put_str(w, st->unames[i]), put_str(w, st->ureasons[i]);
	put_str(w, st->exe), put_str(w, st->cwd), put_str(w, st->name);
	put_str(w, st->command), put_str(w, st->end_reason);
	put_arr(w, st->children, st->nchildren, sizeof *st->children);
	put_arr(w, st->peers, st->npeers, sizeof *st->peers);
}

/* The state's scalars as sent, its pointers (the sender's) cleared, before they are read. */
static void clear_pointers(struct sstate *st)
{
	st->host = st->exe = st->cwd = st->name = st->command = st->end_reason = NULL;
	st->nodes = NULL, st->mods = NULL, st->modpath = NULL, st->modbid = NULL;
	st->modbidlen = NULL, st->modstat = NULL, st->threads = NULL, st->sources = NULL;
	st->dropv = st->dropt = NULL, st->dropr = NULL, st->attrs = NULL, st->ctxs = NULL;
	st->aggs = NULL, st->aggtab = NULL, st->aggcap = 0, st->regs = NULL, st->ctrs = NULL;
	st->unames = st->ureasons = NULL, st->aggcnt = NULL, st->children = NULL;
	st->peers = NULL;
	memset(&st->drops, 0, sizeof st->drops);
	memset(&st->regmap, 0, sizeof st->regmap);
	memset(&st->childmap, 0, sizeof st->childmap);
	memset(st->obs, 0, sizeof st->obs);
	memset(st->obs_ops, 0, sizeof st->obs_ops);
	st->nobs = 0, st->obs_samples = 0;
	st->capattrs = st->nattrs, st->capctxs = st->nctxs, st->capaggs = st->naggs;
	st->capregs = st->nregs, st->capchildren = st->nchildren;
	st->capaggcnt = st->naggs * st->nctrs;
}

/* Counts a state arrives with, zeroed until their arrays are read (so that a bad buffer
 * leaves a state that sd_sstate_fini frees whole). */
struct counts { size_t nmods, nthreads, nsources, ndrops, nattrs, nctxs, nregs, nctrs, nun; };

/* The modules: paths, build-ids. */
static void get_modules(struct rbuf *r, struct sstate *st, const struct counts *cp)
{
	struct counts c = *cp;
	st->host = get_str(r);
	st->nodes = get_arr(r, st->nnodes, NULL, sizeof *st->nodes);
	st->mods = get_arr(r, c.nmods, NULL, sizeof *st->mods);
	st->modbidlen = get_arr(r, UINT64_MAX, NULL, sizeof *st->modbidlen);
	st->modstat = get_arr(r, SD_MODSTAT * (uint64_t)c.nmods, NULL, sizeof *st->modstat);
	if (!r->bad && c.nmods) {
		st->modpath = calloc(c.nmods, sizeof *st->modpath);
		st->modbid = calloc(c.nmods, sizeof *st->modbid);
		r->bad = !st->modpath || !st->modbid || !st->mods;
	}
	for (size_t i = 0; !r->bad && i < c.nmods; i++, st->nmods = i) {
		st->modpath[i] = get_str(r);
		st->modbid[i] = get_arr(r, st->modbidlen ? st->modbidlen[i] : 0, NULL, 1);
	}
}

/* The threads and the sources. */
static void get_threads(struct rbuf *r, struct sstate *st, const struct counts *cp)
{
	struct counts c = *cp;
	st->threads = get_arr(r, c.nthreads, NULL, sizeof *st->threads);
	for (size_t i = 0; st->threads && i < c.nthreads; i++) {
		struct sthread *t = &st->threads[i];
		t->open = NULL, t->nopen = t->capopen = 0, t->lastcnt = NULL;
		t->name = NULL, t->endcnt = NULL;
	}
	if (st->threads)
		st->nthreads = c.nthreads;
	for (size_t i = 0; !r->bad && i < st->nthreads; i++) {
		st->threads[i].name = get_str(r);
		st->threads[i].endcnt = get_arr(r, c.nctrs, NULL, sizeof(uint64_t));
	}
	st->sources = get_arr(r, c.nsources + 1, NULL, sizeof *st->sources);
	for (size_t i = 0; st->sources && i <= c.nsources; i++)
		st->sources[i].name = st->sources[i].spec = st->sources[i].unit =
			st->sources[i].mechanism = NULL;
	if (st->sources)
		st->nsources = c.nsources;
	for (size_t i = 0; !r->bad && st->sources && i <= st->nsources; i++) {
		struct ssource *s = &st->sources[i];
		s->name = get_str(r), s->spec = get_str(r), s->unit = get_str(r);
		s->mechanism = get_str(r);
	}
}

/* Drops, attributes, contexts, keys and regions. */
static void get_tables(struct rbuf *r, struct sstate *st, const struct counts *cp)
{
	struct counts c = *cp;
	st->dropv = get_arr(r, c.ndrops, NULL, sizeof *st->dropv);
	st->dropt = get_arr(r, c.ndrops, NULL, sizeof *st->dropt);
	if (!r->bad && c.ndrops && !(st->dropr = calloc(c.ndrops, sizeof *st->dropr)))
		r->bad = 1;
	for (size_t i = 0; !r->bad && i < c.ndrops; i++, st->ndrops = i)
		st->dropr[i] = get_str(r);
	st->attrs = get_arr(r, c.nattrs, NULL, sizeof *st->attrs);
	for (size_t i = 0; st->attrs && i < c.nattrs; i++)
		st->attrs[i].name = NULL;
	if (st->attrs)
		st->nattrs = c.nattrs;
	for (size_t i = 0; !r->bad && i < st->nattrs; i++)
		st->attrs[i].name = get_str(r);
	st->ctxs = get_arr(r, c.nctxs, NULL, sizeof *st->ctxs);
	for (size_t i = 0; st->ctxs && i < c.nctxs; i++)
		st->ctxs[i].value = NULL;
	if (st->ctxs)
		st->nctxs = c.nctxs;
	for (size_t i = 0; !r->bad && i < st->nctxs; i++)
		st->ctxs[i].value = get_str(r);
	st->aggs = get_arr(r, st->naggs, NULL, sizeof *st->aggs);
	st->aggcnt = get_arr(r, UINT64_MAX, NULL, sizeof *st->aggcnt);
	st->regs = get_arr(r, c.nregs, NULL, sizeof *st->regs);
	for (size_t i = 0; st->regs && i < c.nregs; i++)
		st->regs[i].cnt = NULL;
	if (st->regs)
		st->nregs = c.nregs;
	for (size_t i = 0; !r->bad && i < st->nregs; i++)
		st->regs[i].cnt = get_arr(r, c.nctrs, NULL, sizeof(uint64_t));
}

/* Counters, the HEADER's strings, children and peers. */
static void get_rest(struct rbuf *r, struct sstate *st, const struct counts *cp)
{
	struct counts c = *cp;
	st->ctrs = get_arr(r, c.nctrs, NULL, sizeof *st->ctrs);
	for (size_t i = 0; st->ctrs && i < c.nctrs; i++)
		st->ctrs[i].name = st->ctrs[i].group = st->ctrs[i].unit = st->ctrs[i].source = NULL;
	if (st->ctrs)
		st->nctrs = c.nctrs;
	for (size_t i = 0; !r->bad && i < st->nctrs; i++) {
		struct scounter *k = &st->ctrs[i];
		k->name = get_str(r), k->group = get_str(r), k->unit = get_str(r);
		k->source = get_str(r);
	}
	if (!r->bad && c.nun) {
		st->unames = calloc(c.nun, sizeof *st->unames);
		st->ureasons = calloc(c.nun, sizeof *st->ureasons);
		r->bad = !st->unames || !st->ureasons;
	}
	for (size_t i = 0; !r->bad && i < c.nun; i++, st->nun = i)
		st->unames[i] = get_str(r), st->ureasons[i] = get_str(r);
	st->exe = get_str(r), st->cwd = get_str(r), st->name = get_str(r);
	st->command = get_str(r), st->end_reason = get_str(r);
	st->children = get_arr(r, st->nchildren, NULL, sizeof *st->children);
	st->peers = get_arr(r, st->npeers, NULL, sizeof *st->peers);
	if (!st->aggs)
		st->naggs = 0;
	if (!st->children)
		st->nchildren = 0;
	if (!st->peers)
		st->npeers = 0;
	if (!st->nodes)
		st->nnodes = 0;
}

static void get_state(struct rbuf *r, struct sstate *st)
{
	get(r, st, sizeof *st);
	struct counts c = { st->nmods, st->nthreads, st->nsources, st->ndrops, st->nattrs,
			    st->nctxs, st->nregs, st->nctrs, st->nun };
	clear_pointers(st);
	st->nmods = st->nthreads = st->nsources = st->ndrops = st->nattrs = st->nctxs = 0;
	st->nregs = st->nctrs = st->nun = 0;
	get_modules(r, st, &c);
	get_threads(r, st, &c);
	get_tables(r, st, &c);
	get_rest(r, st, &c);
}

int sd_load_pack(const struct sd_load *l, uint8_t **out, size_t *len)
{
	struct wbuf w = { 0 };
	put_u64(&w, (uint64_t)(int64_t)l->r);
	put_u64(&w, (uint64_t)l->truncated);
	put_u64(&w, l->bad_off);
	put_state(&w, &l->st);
	if (w.oom) {
		free(w.p);
		return -ENOMEM;
	}
	*out = w.p;
	*len = w.n;
	return 0;
}

struct sd_load *sd_load_unpack(const uint8_t *buf, size_t len, const char *name)
{
	struct rbuf r = { buf, len, 0, 0 };
	struct sd_load *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->r = (int)(int64_t)get_u64(&r);
	l->truncated = (int)get_u64(&r);
	l->bad_off = get_u64(&r);
	l->name = name;
	get_state(&r, &l->st);
	if (r.bad || r.off != r.n) {
		sd_load_free(l);
		return NULL;
	}
	return l;
}
