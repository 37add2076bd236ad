/*
 * merge.c: a stream read by decode.c merged into the profile (profile_int.h), for
 * profile.c: contexts, counters, coverage, the --where filters on each sample key, call
 * nodes (symbolized once each), threads, sources, drops, the stream's own row, sample
 * rows, thread-end rows and region timings, in that order: each step maps the stream's
 * ids to merged ones that the later steps use. The coverage account's step is
 * merge_cov.c's. Runs after the stream was read without error, so a corrupt stream
 * never reaches here.
 */
#include "analyze/profile/profile_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Child of merged node `parent` for function `func`, created if needed. */
static int cnode_child(struct sd_profile *p, uint32_t parent, uint32_t func, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | func;

	if (sd_u64map_get(&p->children, key, out))
		return 0;
	if (p->nnodes >= UINT32_MAX - 1 ||
	    sd_grow(&p->nodes, &p->capnodes, p->nnodes + 1, sizeof(*p->nodes)))
		return -ENOMEM;
	struct sd_cnode *n = &p->nodes[p->nnodes];
	n->parent = parent;
	n->func = func;
	n->how = 0;
	n->addr = 0;
	*out = (uint32_t)p->nnodes;
	if (sd_u64map_put(&p->children, key, *out))
		return -ENOMEM;
	p->nnodes++;
	return 0;
}

static int add_root_pseudo(struct sd_profile *p, const char *name, uint64_t n, double w,
			   uint32_t *out)
{
	uint32_t c;
	int f;

	if (!n)
		return 0;
	if ((f = sd_sym_pseudo(p->sym, name)) < 0 || cnode_child(p, 0, (uint32_t)f, &c))
		return -ENOMEM;
	p->nodes[c].samples += n;
	p->nodes[c].weight += w;
	*out = c;
	return 0;
}

/* Is f one of the API's functions (sonde.h's sonde_*, sonde.hpp's sonde::, the Fortran
 * module's __sonde_MOD_* and its shim's sonde_f_*, inlined or not; the runtime's own
 * frames are not in the stream)? */
static int api_func(const struct sd_profile *p, uint32_t f)
{
	const char *name = sd_sym_func(p->sym, f)->name;
	return name && (!strncmp(name, "sonde_", 6) || !strncmp(name, "sonde::", 7) ||
			!strncmp(name, "__sonde_MOD_", 12));
}

/* 1 + the function whose code opened a context level, from the stack recorded when it
 * was first opened (CONTEXT site: FRAME nodes, innermost last): the innermost frame,
 * inlined ones included, that is not the API's (sonde_begin() calls the runtime from
 * inside the caller, inlined or not). For the tree view's splice. 0 or -ENOMEM. */
static int site_func(struct sd_profile *p, const struct sstate *st, uint32_t site, uint32_t *out)
{
	*out = 0;
	for (uint32_t x = site; x; x = st->nodes[x].parent) {
		const struct snode *n = &st->nodes[x];
		const struct sd_frame *fr;
		int nf = sd_snode_frames(p, st, n, &fr);
		if (nf < 0)
			return -ENOMEM;
		for (int k = nf; k-- > 0;)
			if (!api_func(p, fr[k].func)) {
				*out = fr[k].func + 1;
				return 0;
			}
	}
	return 0;
}

/* Map the stream's used context nodes to merged ones (parents first: parent < child). */
static int merge_contexts(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->naggs; i++)
		st->ctxs[st->aggs[i].ctx].used = st->ctxs[st->aggs[i].pctx].used = 1;
	for (size_t i = 0; i < st->nregs; i++)
		st->ctxs[st->regs[i].node].used = 1;
	for (size_t i = st->nctxs; i-- > 1;)
		if (st->ctxs[i].used)
			st->ctxs[st->ctxs[i].parent].used = 1;
	st->ctxs[0].gnode = 0;
	for (size_t i = 1; i < st->nctxs; i++) {
		struct sctx *x = &st->ctxs[i];
		struct sattr *at = &st->attrs[x->attr];
		if (!x->used)
			continue;
		if (!at->merged) {
			long g = sd_profile_attr(p, at->name);
			if (g < 0)
				return -ENOMEM;
			at->gid = (uint32_t)g;
			at->merged = 1;
		}
		long v = sd_profile_value(p, x->value);
		if (v < 0)
			return -ENOMEM;
		uint32_t key[3] = { st->ctxs[x->parent].gnode, at->gid, (uint32_t)v };
		if (sd_strmap_get(&p->ctx_children, key, sizeof(key), &x->gnode))
			continue;
		if (p->nctx >= UINT32_MAX - 1 || sd_grow(&p->ctx, &p->capctx, p->nctx + 1, sizeof(*p->ctx)))
			return -ENOMEM;
		p->ctx[p->nctx] = (struct sd_ctxnode){ key[0], key[1], key[2], 0 };
		if (x->site && site_func(p, st, x->site, &p->ctx[p->nctx].site))
			return -ENOMEM;
		x->gnode = (uint32_t)p->nctx;
		if (sd_strmap_put(&p->ctx_children, key, sizeof(key), x->gnode))
			return -ENOMEM;
		p->nctx++;
	}
	return 0;
}

/* Merge the stream's counters into p->counters by name (st->ctrs[].gid) and its
 * unavailable counters by (name, reason). */
static int merge_counters(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->nctrs; i++) {
		struct scounter *c = &st->ctrs[i];
		size_t j;
		for (j = 0; j < p->ncounters && strcmp(p->counters[j].name, c->name); j++)
			;
		if (j == p->ncounters) {
			if (j >= UINT32_MAX - 1 ||
			    sd_grow(&p->counters, &p->capcounters, j + 1, sizeof(*p->counters)))
				return -ENOMEM;
			struct sd_counter_row *g = &p->counters[j];
			g->name = c->name, g->group = c->group, g->unit = c->unit;
			g->source = c->source;
			c->name = c->group = c->unit = c->source = NULL; /* moved */
			p->ncounters++;
		} else {
			/* a source not listed yet is appended: "a, b" */
			struct sd_counter_row *g = &p->counters[j];
			size_t l = strlen(c->source), gl = strlen(g->source);
			int seen = 0;
			for (const char *q = g->source; (q = strstr(q, c->source)); q++)
				if ((q == g->source || q[-1] == ' ') && (q[l] == 0 || q[l] == ','))
					seen = 1;
			if (!seen) {
				char *ns = realloc(g->source, gl + l + 3);
				if (!ns)
					return -ENOMEM;
				memcpy(ns + gl, ", ", 2);
				memcpy(ns + gl + 2, c->source, l + 1);
				g->source = ns;
			}
		}
		for (size_t k = 0; k < i; k++) /* a name listed twice in one header */
			if (st->ctrs[k].gid == j)
				goto next;
		p->counters[j].streams++;
next:
		c->gid = (uint32_t)j;
	}
	for (size_t i = 0; i < st->nun; i++) {
		size_t j;
		for (j = 0; j < p->nunavail; j++)
			if (!strcmp(p->unavail[j].name, st->unames[i]) &&
			    !strcmp(p->unavail[j].reason, st->ureasons[i]))
				break;
		if (j == p->nunavail) {
			if (sd_grow(&p->unavail, &p->capunavail, j + 1, sizeof(*p->unavail)))
				return -ENOMEM;
			p->unavail[j].name = st->unames[i];
			p->unavail[j].reason = st->ureasons[i];
			st->unames[i] = st->ureasons[i] = NULL; /* moved */
			p->nunavail++;
		}
		p->unavail[j].streams++;
	}
	return 0;
}

/* The stream's nctrs values v as a fresh array indexed by merged counter (NULL: ENOMEM). */
static uint64_t *global_counts(const struct sd_profile *p, const struct sstate *st,
			       const uint64_t *v)
{
	uint64_t *g = calloc(p->ncounters, sizeof(*g));

	if (g)
		for (size_t k = 0; k < st->nctrs; k++)
			g[st->ctrs[k].gid] += v[k];
	return g;
}

/* A stack cut at max_depth (SAMPLE flag 1) lacks its outer frames: its path hangs
 * under a root [truncated] (a node of its own, trunc_root) rather than the program's
 * root, so that no view takes it for a whole stack. Each stream node on such a path gets
 * a twin, appended to st->nodes (parents first, as merge_nodes needs), and the key names
 * the twin. 0 or -ENOMEM. */
static int twin_truncated(struct sstate *st)
{
	size_t n0 = st->nnodes, cap = n0;
	uint32_t *twin = NULL, *chain = NULL, root = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < st->naggs; i++) {
		struct sagg *a = &st->aggs[i];
		if (!a->trunc || a->node == 0 || a->node >= n0)
			continue;
		if (!twin && (!(twin = calloc(n0, sizeof(*twin))) ||
			      !(chain = malloc(n0 * sizeof(*chain)))))
			goto out;
		size_t k = 0;
		uint32_t x = a->node;
		while (x && !twin[x]) {
			chain[k++] = x;
			x = st->nodes[x].parent;
		}
		if (st->nnodes + k + 1 >= UINT32_MAX)
			goto out;
		if (sd_grow(&st->nodes, &cap, st->nnodes + k + 1, sizeof(*st->nodes)))
			goto out;
		if (!x && !root) {
			root = (uint32_t)st->nnodes++;
			st->nodes[root] = (struct snode){ .trunc_root = 1 };
		}
		uint32_t parent = x ? twin[x] : root;
		while (k--) {
			struct snode *t = &st->nodes[st->nnodes];
			*t = st->nodes[chain[k]];
			t->parent = parent;
			t->samples = 0, t->weight = 0, t->used = 0;
			parent = twin[chain[k]] = (uint32_t)st->nnodes++;
		}
		a->node = twin[a->node];
	}
	err = 0;
out:
	free(twin);
	free(chain);
	return err;
}

/* The kept keys (those --where keeps) count for their source, thread and call node. */
static void merge_keys(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->naggs; i++) {
		struct sagg *a = &st->aggs[i];
		if (!sd_where_ctx_ok(p, st->ctxs[a->ctx].gnode, st->ctxs[a->pctx].gnode))
			continue;
		a->kept = 1;
		p->nocounters += a->nocnt;
		if (a->trunc)
			st->trunc_samples += a->samples;
		for (size_t k = 0; k < st->nctrs; k++)
			p->counters[st->ctrs[k].gid].total += st->aggcnt[i * st->nctrs + k];
		struct ssource *src = &st->sources[a->source];
		struct sthread *t = &st->threads[a->thread];
		src->samples += a->samples;
		src->weight += a->weight;
		if (!t->samples || a->first < t->first)
			t->first = a->first;
		if (!t->samples || a->last > t->last)
			t->last = a->last;
		t->samples += a->samples;
		t->periods += a->periods;
		if (a->node == 0) {
			st->nostack += a->samples;
			st->nostack_w += a->weight;
		} else if (a->node == UINT32_MAX) {
			st->badnode += a->samples;
			st->badnode_w += a->weight;
		} else {
			st->nodes[a->node].samples += a->samples;
			st->nodes[a->node].weight += a->weight;
		}
	}
}

/* THREAD_END deltas belong to their thread (and process, rank, host), to no call path
 * and no source: a row of their own (merge_end_rows), counted in the totals unless
 * --source picks samples or a --where filter needs a context. */
static int keep_thread_ends(const struct sd_profile *p)
{
	return !p->only_source && sd_where_ctx_ok(p, 0, 0);
}

static void merge_end_totals(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 1; i < st->nthreads; i++)
		for (size_t k = 0; st->threads[i].endcnt && k < st->nctrs; k++) {
			p->counters[st->ctrs[k].gid].total += st->threads[i].endcnt[k];
			p->counters[st->ctrs[k].gid].end_total += st->threads[i].endcnt[k];
		}
}

/* The stream's call nodes with samples in their subtree into the merged call tree
 * (symbolized: an inlined address is several frames), and the [no stack] and
 * [unknown stack] roots (their merged nodes in *nostack_c, *badnode_c). */
static int merge_nodes(struct sd_profile *p, struct sstate *st, uint32_t *nostack_c,
		       uint32_t *badnode_c)
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
		if (n->trunc_root) { /* twin_truncated's root: [truncated] */
			int f = sd_sym_pseudo(p->sym, "[truncated]");
			if (f < 0 || cnode_child(p, 0, (uint32_t)f, &n->cnode))
				return -ENOMEM;
			p->nodes[n->cnode].how |= SD_CNODE_CALLED;
			continue;
		}
		/* an address in inlined code is several frames, outermost first */
		const struct sd_frame *fr;
		int nf = sd_snode_frames(p, st, n, &fr);
		if (nf < 0 || sd_obs_frames(p, fr, nf))
			return -ENOMEM;
		n->cnode = st->nodes[n->parent].cnode;
		for (int k = 0; k < nf; k++) {
			if (cnode_child(p, n->cnode, fr[k].func, &n->cnode))
				return -ENOMEM;
			p->nodes[n->cnode].how |= k ? SD_CNODE_INLINED : SD_CNODE_CALLED;
			if (!k && !p->nodes[n->cnode].addr) /* the function the address is in */
				p->nodes[n->cnode].addr = n->addr;
		}
		/* no frame (sonde's MPI wrapper): its samples are its caller's */
		n->file = nf ? fr[nf - 1].file : st->nodes[n->parent].file;
		n->line = nf ? fr[nf - 1].line : st->nodes[n->parent].line;
		p->nodes[n->cnode].samples += n->samples;
		p->nodes[n->cnode].weight += n->weight;
	}
	if (add_root_pseudo(p, "[no stack]", st->nostack, st->nostack_w, nostack_c) ||
	    add_root_pseudo(p, "[unknown stack]", st->badnode, st->badnode_w, badnode_c))
		return -ENOMEM;

	return 0;
}

/* One thread row per THREAD the stream defined. */
static int merge_threads(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->nthreads; i++) {
		struct sthread *t = &st->threads[i];
		if (!t->defined)
			continue;
		if (sd_grow(&p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads)))
			return -ENOMEM;
		struct sd_thread_row *row = &p->threads[p->nthreads];
		row->name = strdup(t->defined ? t->name : "[unknown thread]");
		if (!row->name)
			return -ENOMEM;
		row->pid = st->pid;
		row->tid = t->tid;
		row->samples = t->samples;
		row->periods = t->periods;
		row->first_ns = t->first;
		row->last_ns = t->last;
		t->row = (uint32_t)p->nthreads;
		p->nthreads++;
	}
	return 0;
}

/* Sources merged by name, period, unit and mechanism; srcrow[i]: the row of the
 * stream's source i. */
static int merge_sources(struct sd_profile *p, struct sstate *st, uint32_t *srcrow)
{
	for (size_t i = 0; i <= st->nsources; i++) {
		struct ssource *s = &st->sources[i];
		size_t j;
		if (i == st->nsources && !s->samples)
			continue;
		p->samples += s->samples;
		p->weight += s->weight;
		if (!strcmp(s->name, "cpu-time") && !strcmp(s->unit, "ns"))
			p->cpu_ns += s->weight;
		for (j = 0; j < p->nsources; j++) {
			struct sd_source_row *r = &p->sources[j];
			if (!strcmp(r->name, s->name) && r->period == s->period &&
			    !strcmp(r->unit, s->unit) && !strcmp(r->mechanism, s->mechanism))
				break;
		}
		if (j == p->nsources) {
			if (sd_grow(&p->sources, &p->capsources, j + 1, sizeof(*p->sources)))
				return -ENOMEM;
			struct sd_source_row *r = &p->sources[j];
			r->name = s->name, r->spec = s->spec, r->unit = s->unit;
			r->mechanism = s->mechanism, r->period = s->period;
			s->name = s->spec = s->unit = s->mechanism = NULL; /* moved */
			p->nsources++;
		}
		p->sources[j].samples += s->samples;
		p->sources[j].weight += s->weight;
		srcrow[i] = (uint32_t)j;
	}
	return 0;
}

/* Drops by reason; the stream's sample and region-event drops in *sdrop, *rdrop. */
static int merge_drops(struct sd_profile *p, const struct sstate *st, uint64_t *sdrop,
		       uint64_t *rdrop)
{
	for (size_t i = 0; i < st->ndrops; i++) {
		const char *reason = st->dropr[i];
		uint32_t k;
		/* reasons "region_*" count region events, every other one samples (FORMAT.md) */
		if (!strncmp(reason, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1))
			*rdrop += st->dropv[i];
		else
			*sdrop += st->dropv[i];
		if (!sd_strmap_get(&p->drop_reasons, reason, strlen(reason), &k)) {
			k = (uint32_t)p->ndrop;
			if (sd_grow(&p->drop_counts, &p->capdrop, k + 1, sizeof(*p->drop_counts)))
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
	p->dropped += *sdrop;
	p->dropped_regions += *rdrop;
	return 0;
}

/* The children the stream's CHILD records name, as p->child (stream index si). A
 * child whose start one stream recorded and whose end another did (an image that
 * exec'd, then reaped the child its previous image forked: same host and parent pid)
 * is one entry. */
static int merge_children(struct sd_profile *p, const struct sstate *st, uint32_t si)
{
	const struct sd_stream_info *me = &p->sinfo[si];
	for (size_t i = 0; i < st->nchildren; i++) {
		const struct schild *c = &st->children[i];
		struct sd_child *ch = NULL;
		uint32_t k;
		if (sd_u64map_get(&p->childmap, c->pid, &k)) {
			ch = &p->child[k];
			const struct sd_stream_info *o = &p->sinfo[ch->parent];
			if (o->pid != me->pid || strcmp(o->host, me->host) ||
			    (c->has_start && ch->has_start) || (c->end >= 0 && ch->end >= 0))
				ch = NULL;
		}
		if (!ch) {
			if (sd_grow(&p->child, &p->capchild, p->nchild + 1,
				    sizeof(*p->child)) ||
			    sd_u64map_put(&p->childmap, c->pid, (uint32_t)p->nchild))
				return -ENOMEM;
			ch = &p->child[p->nchild++];
			*ch = (struct sd_child){ .pid = c->pid, .parent = si, .how = -1, .end = -1 };
		}
		if (c->has_start) {
			ch->has_start = 1;
			ch->how = c->how;
			ch->start_ns = st->origin_ns + c->t;
			ch->parent = si;
		}
		if (c->end >= 0) {
			ch->end = c->end;
			ch->end_ns = st->origin_ns + c->end_t;
			ch->value = c->value;
		}
	}
	return 0;
}

void sd_profile_children(struct sd_profile *p)
{
	p->children_nostream = 0;
	for (size_t i = 0; i < p->nchild; i++) {
		struct sd_child *c = &p->child[i];
		const char *host = p->sinfo[c->parent].host;
		c->has_stream = 0;
		for (size_t k = 0; k < p->nsinfo && !c->has_stream; k++)
			c->has_stream = p->sinfo[k].pid == c->pid && !strcmp(p->sinfo[k].host, host);
		if (!c->has_stream) {
			size_t j;
			for (j = 0; j < p->npids && (p->pids[j].pid != c->pid ||
						     strcmp(p->value_strs[p->pids[j].host], host));
			     j++)
				;
			p->children_nostream += j == p->npids; /* distinct, as npids */
		}
	}
}

/* Is a the same process as b: one host and pid, and one start where both are known (a
 * pid reused later is another process)? */
static int same_proc(const struct sd_proc *a, const struct sd_proc *b)
{
	return a->pid == b->pid && a->host == b->host &&
	       (!a->start || !b->start || a->start == b->start);
}

/* x added to the list (*v, *n) unless there already (by_rank: and of the same rank). */
static int add_proc(struct sd_proc **v, size_t *n, size_t *cap, const struct sd_proc *x,
		    int by_rank)
{
	for (size_t j = 0; j < *n; j++)
		if (same_proc(&(*v)[j], x) && (!by_rank || (*v)[j].rank == x->rank))
			return 0;
	if (sd_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = *x;
	return 0;
}

/* The stream's row of --view streams and processes, and its process and (rank, process). */
static int merge_stream_info(struct sd_profile *p, struct sstate *st, const char *name,
			     int truncated, uint64_t sdrop, uint64_t rdrop)
{
	p->samples_read += st->nsamples_all;
	if (sd_grow(&p->sinfo, &p->capsinfo, p->nsinfo + 1, sizeof(*p->sinfo)))
		return -ENOMEM;
	struct sd_stream_info *si = &p->sinfo[p->nsinfo];
	*si = (struct sd_stream_info){ .pid = st->pid, .rank = st->rank, .signal = st->end_signal,
		.truncated = truncated, .samples = st->nsamples_all, .samples_dropped = sdrop,
		.regions = st->nregion_records, .regions_dropped = rdrop };
	si->file = strdup(name ? name : "?");
	si->host = strdup(st->host ? st->host : "?");
	si->end = st->ended && st->end_reason ? strdup(st->end_reason) : NULL;
	si->ppid = st->ppid, si->has_ppid = st->has_ppid;
	si->origin_ns = st->origin_ns, si->has_clock = st->has_clock;
	for (size_t i = 1; i < st->nthreads; i++)
		if (st->threads[i].last_t > st->max_t)
			st->max_t = st->threads[i].last_t;
	si->last_ns = st->max_t;
	si->cpu_ns = st->cpu_ns, si->cpu_threads = st->cpu_threads, si->cpu_flush = st->cpu_flush;
	si->threads = st->nthreads_def;
	si->name = st->name, st->name = NULL; /* moved */
	si->command = st->command, st->command = NULL;
	si->exe = st->has_exe ? strdup(st->exe) : NULL;
	size_t ll = strlen(si->name ? si->name : "?") + 32;
	if ((si->label = malloc(ll)))
		snprintf(si->label, ll, "%s[%" PRIu64 "]", si->name ? si->name : "?", st->pid);
	if (!si->file || !si->host || (st->ended && st->end_reason && !si->end) || !si->name ||
	    !si->label || (st->has_exe && !si->exe)) {
		free(si->file), free(si->host), free(si->end);
		free(si->name), free(si->label), free(si->command), free(si->exe);
		return -ENOMEM;
	}
	p->nsinfo++;
	if (merge_children(p, st, (uint32_t)(p->nsinfo - 1)))
		return -ENOMEM;
	struct sd_proc me = { st->rank, st->pid, st->start_ticks, (uint32_t)st->host_id };
	if (add_proc(&p->pids, &p->npids, &p->cappids, &me, 0) ||
	    add_proc(&p->procs, &p->nprocs, &p->capprocs, &me, 1))
		return -ENOMEM;
	return 0;
}

/* One row per kept key for the context views. */
static int merge_rows(struct sd_profile *p, const struct sstate *st, const uint32_t *srcrow,
		      uint32_t nostack_c, uint32_t badnode_c)
{
	for (size_t i = 0; i < st->naggs; i++) {
		const struct sagg *a = &st->aggs[i];
		if (!a->kept)
			continue;
		if (sd_grow(&p->rows, &p->caprows, p->nrows + 1, sizeof(*p->rows)))
			return -ENOMEM;
		const struct sthread *t = &st->threads[a->thread];
		const struct sd_thread_row *tr = &p->threads[t->row];
		uint64_t *cnt = NULL;
		if (st->nctrs && !(cnt = global_counts(p, st, &st->aggcnt[i * st->nctrs])))
			return -ENOMEM;
		p->rows[p->nrows++] = (struct sd_crow){
			.counts = cnt, .ncounts = cnt ? (uint32_t)p->ncounters : 0,
			.cnode = a->node == 0 ? nostack_c : a->node == UINT32_MAX ? badnode_c
				 : st->nodes[a->node].cnode,
			.source = srcrow[a->source], .ctx = st->ctxs[a->ctx].gnode,
			.pctx = st->ctxs[a->pctx].gnode, .pid = tr->pid, .tid = tr->tid,
			.file = a->node && a->node != UINT32_MAX ? st->nodes[a->node].file : 0,
			.line = a->node && a->node != UINT32_MAX ? st->nodes[a->node].line : 0,
			.tname = tr->name, .samples = a->samples, .periods = a->periods,
			.weight = a->weight,
			.rank = st->rank, .host = (uint32_t)st->host_id,
			.stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* One row per thread with THREAD_END deltas, under the pseudo function [thread end]. */
static int merge_end_rows(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 1; i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		const struct sd_thread_row *tr = &p->threads[t->row];
		uint32_t c;
		int f;
		if (!t->endcnt)
			continue;
		if ((f = sd_sym_pseudo(p->sym, "[thread end]")) < 0 ||
		    cnode_child(p, 0, (uint32_t)f, &c) ||
		    sd_grow(&p->rows, &p->caprows, p->nrows + 1, sizeof(*p->rows)))
			return -ENOMEM;
		uint64_t *cnt = global_counts(p, st, t->endcnt);
		if (!cnt)
			return -ENOMEM;
		p->rows[p->nrows++] = (struct sd_crow){
			.counts = cnt, .ncounts = (uint32_t)p->ncounters, .cnode = c,
			.source = UINT32_MAX, .pid = tr->pid, .tid = tr->tid, .tname = tr->name,
			.rank = st->rank, .host = (uint32_t)st->host_id, .thread_end = 1,
			.stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* One row per region (thread, context node) that --where keeps. */
static int merge_regions(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 0; i < st->nregs; i++) {
		const struct sreg *g = &st->regs[i];
		uint32_t gnode = st->ctxs[g->node].gnode;
		if (!sd_where_ctx_ok(p, gnode, 0))
			continue;
		if (sd_grow(&p->regions, &p->capregions, p->nregions + 1, sizeof(*p->regions)))
			return -ENOMEM;
		const struct sd_thread_row *tr = &p->threads[st->threads[g->thread].row];
		uint64_t *cnt = NULL;
		if (g->cnt && !(cnt = global_counts(p, st, g->cnt)))
			return -ENOMEM;
		p->regions[p->nregions++] = (struct sd_region_row){
			.counts = cnt, .ncounts = cnt ? (uint32_t)p->ncounters : 0,
			.ctx = gnode, .pid = tr->pid, .tid = tr->tid, .tname = tr->name,
			.calls = g->calls, .incl_ns = g->incl, .excl_ns = g->excl, .min_ns = g->min,
			.max_ns = g->max, .forced = g->forced, .sumsq = g->sumsq,
			.open_end = g->open_end, .left_out = g->left_out,
			.sent = g->sent, .recv = g->recv,
			.stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* The stream's MPI messages sent, one row per peer. */
static int merge_messages(struct sd_profile *p, const struct sstate *st)
{
	if (!st->has_msgs)
		return 0;
	if (st->msg_size > p->msg_world)
		p->msg_world = st->msg_size;
	for (size_t i = 0; i < st->npeers; i++) {
		if (sd_grow(&p->msgs, &p->capmsgs, p->nmsgs + 1, sizeof(*p->msgs)))
			return -ENOMEM;
		p->msgs[p->nmsgs++] = (struct sd_msg_row){ st->msg_rank, st->peers[i].peer,
							   (uint32_t)(p->nsinfo - 1),
							   st->peers[i].msgs, st->peers[i].bytes };
	}
	return 0;
}

/* Merges one parsed stream into the profile: its keys, call tree, threads, sources,
 * drops, stream row, context and region rows. 0 or -ENOMEM. */
/* Throttling per merged source: for each (thread, source) of the stream with kept
 * samples, the largest weight of its signalled samples; a thread whose source the
 * stream's NOTEs say was throttled, with a weight over 1, counts as throttled. */
static int merge_throttling(struct sd_profile *p, const struct sstate *st, const uint32_t *srcrow)
{
	size_t ns = st->nsources + 1;
	uint64_t *maxw = calloc(st->nthreads * ns, sizeof(*maxw));
	if (!maxw)
		return -ENOMEM;
	for (size_t i = 0; i < st->naggs; i++) {
		const struct sagg *a = &st->aggs[i];
		uint64_t *m = &maxw[(size_t)a->thread * ns + a->source];
		if (!a->kept || !a->periods)
			continue;
		if (!*m)
			*m = 1; /* sampled */
		if (a->maxw > *m)
			*m = a->maxw;
	}
	for (size_t t = 0; t < st->nthreads; t++)
		for (size_t s = 0; s < st->nsources; s++) {
			uint64_t m = maxw[t * ns + s];
			struct sd_source_row *r = &p->sources[srcrow[s]];
			if (!m)
				continue;
			r->sampled_threads++;
			if (m > 1 && s < 64 && (st->throttled >> s & 1)) {
				r->throttled_threads++;
				if (m > r->max_multiple)
					r->max_multiple = m;
			}
		}
	free(maxw);
	return 0;
}

int sd_merge_stream(struct sd_profile *p, struct sstate *st, const char *name, int truncated)
{
	uint32_t nostack_c = 0, badnode_c = 0;
	uint64_t sdrop = 0, rdrop = 0;
	uint32_t *srcrow = calloc(st->nsources + 1, sizeof(*srcrow));
	int keep_ends = keep_thread_ends(p);
	size_t row0 = p->nrows;
	int err = -ENOMEM;

	st->host_id = sd_profile_value(p, st->host ? st->host : "?");
	if (st->host_id < 0) {
		free(srcrow);
		return -ENOMEM;
	}
	if (!srcrow)
		return -ENOMEM;
	if (merge_contexts(p, st) || merge_counters(p, st) || twin_truncated(st))
		goto out;
	merge_keys(p, st);
	if (st->trunc_samples) {
		uint64_t d = st->max_depth;
		if (!p->trunc_samples || d < p->trunc_depth_lo)
			p->trunc_depth_lo = d;
		if (!p->trunc_samples || d > p->trunc_depth_hi)
			p->trunc_depth_hi = d;
		p->trunc_samples += st->trunc_samples;
	}
	if (keep_ends)
		merge_end_totals(p, st);
	if (merge_nodes(p, st, &nostack_c, &badnode_c) || merge_threads(p, st) ||
	    sd_merge_coverage(p, st) || merge_sources(p, st, srcrow) ||
	    merge_throttling(p, st, srcrow) ||
	    merge_drops(p, st, &sdrop, &rdrop) ||
	    merge_stream_info(p, st, name, truncated, sdrop, rdrop) ||
	    merge_rows(p, st, srcrow, nostack_c, badnode_c) ||
	    (keep_ends && merge_end_rows(p, st)) || merge_regions(p, st) || merge_messages(p, st) ||
	    sd_obs_merged(p, st, row0, keep_ends))
		goto out;
	p->region_records += st->nregion_records;
	p->region_stats += st->nregion_stats;
	p->region_counts += st->nregion_counts;
	p->streams++;
	err = 0;
out:
	free(srcrow);
	return err;
}
