/*
 * decode_annot.c: a stream's annotation records into its struct sstate (profile_int.h),
 * for decode.c's record loop: ATTRIBUTE and CONTEXT define the context tree; REGION
 * events are replayed per thread into exact region timings (struct sreg), REGION_STATS
 * and REGION_OPEN give a thread's totals directly (SONDE_REGIONS=on), and at the end of
 * the stream the regions still open are closed (sd_decode_regions_end). Where events
 * were lost, the calls they belong to are left out and counted, never paired with
 * another call's event (region_event). Runs where the stream is read (possibly a --jobs
 * worker): touches nothing but the stream's state.
 */
#include "analyze/profile/profile_int.h"

#include <stdlib.h>
#include <string.h>

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
int sd_decode_regions_end(struct sstate *st)
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
		return sd_decode_dupn(o->via.str.ptr, o->via.str.size);
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

int sd_decode_rec_attribute(struct rec_ctx *c)
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
	if ((i = sd_decode_def_index(id, st->nattrs)) < 0 || id >= UINT32_MAX)
		return REC_BAD;
	if ((size_t)i == st->nattrs) {
		if (sd_grow(&st->attrs, &st->capattrs, st->nattrs + 1, sizeof(*st->attrs)))
			return -ENOMEM;
		st->nattrs++;
	}
	struct sattr *at = &st->attrs[i];
	free(at->name);
	if (!(at->name = sd_decode_dupn(name, len)))
		return -ENOMEM;
	return 0;
}

int sd_decode_rec_context(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t node, parent, attr;
	long i;
	if (sd_rec_u64(r, SD_F_CONTEXT_NODE, &node) || sd_rec_u64(r, SD_F_CONTEXT_PARENT, &parent) ||
	    sd_rec_u64(r, SD_F_CONTEXT_ATTR, &attr) || r->n <= SD_F_CONTEXT_VALUE)
		return REC_BAD;
	c->why = "CONTEXT node id out of order";
	if ((i = sd_decode_def_index(node, st->nctxs)) < 0 || node >= UINT32_MAX)
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

int sd_decode_rec_region(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, event;
	const msgpack_object *cn = r->n > SD_F_REGION_COUNTS ? &r->v[SD_F_REGION_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_REGION_THREAD, &thread) || sd_rec_u64(r, SD_F_REGION_T, &t) ||
	    sd_rec_u64(r, SD_F_REGION_NODE, &node) || sd_rec_u64(r, SD_F_REGION_EVENT, &event))
		return REC_BAD;
	if (cn && (c->why = sd_decode_check_counts(cn, st->nctrs, "REGION counts")))
		return REC_BAD;
	if (!sd_decode_known_thread(c, thread,
				    "REGION names a thread that no THREAD record defined before it"))
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
int sd_decode_rec_region_stats(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, calls, incl, excl, mn, mx, forced, site;
	const msgpack_object *cn = r->n > SD_F_RSTATS_COUNTS ? &r->v[SD_F_RSTATS_COUNTS] : NULL;
	const msgpack_object *tx = r->n > SD_F_RSTATS_TRAFFIC ? &r->v[SD_F_RSTATS_TRAFFIC] : NULL;
	uint64_t sent = 0, recv = 0;
	double sumsq;
	if (sd_rec_u64(r, SD_F_RSTATS_THREAD, &thread) || sd_rec_u64(r, SD_F_RSTATS_T, &t) ||
	    sd_rec_u64(r, SD_F_RSTATS_NODE, &node) || sd_rec_u64(r, SD_F_RSTATS_CALLS, &calls) ||
	    sd_rec_u64(r, SD_F_RSTATS_INCL, &incl) || sd_rec_u64(r, SD_F_RSTATS_EXCL, &excl) ||
	    sd_rec_u64(r, SD_F_RSTATS_MIN, &mn) || sd_rec_u64(r, SD_F_RSTATS_MAX, &mx) ||
	    sd_rec_f64(r, SD_F_RSTATS_SUMSQ, &sumsq) ||
	    sd_rec_u64(r, SD_F_RSTATS_FORCED, &forced) || sd_rec_u64(r, SD_F_RSTATS_SITE, &site))
		return REC_BAD;
	if (cn && (c->why = sd_decode_check_counts(cn, st->nctrs, "REGION_STATS counts")))
		return REC_BAD;
	c->why = "REGION_STATS traffic is not [bytes sent, bytes received]";
	if (tx && (tx->type != MSGPACK_OBJECT_ARRAY || tx->via.array.size != 2 ||
		   sd_obj_u64(&tx->via.array.ptr[0], &sent) ||
		   sd_obj_u64(&tx->via.array.ptr[1], &recv)))
		return REC_BAD;
	if (!sd_decode_known_thread(c, thread,
				    "REGION_STATS names a thread that no THREAD record defined "
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
	g->sent = sent, g->recv = recv;
	if (cn && cn->via.array.size && st->nctrs) { /* []: none (before traffic) */
		if (!g->cnt && !(g->cnt = calloc(st->nctrs, sizeof(*g->cnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			g->cnt[k] = cn->via.array.ptr[k].via.u64;
	}
	st->nregion_stats++;
	st->nregion_counts += cn && cn->via.array.size && st->nctrs;
	st->threads[thread].last_t = t > st->threads[thread].last_t ? t : st->threads[thread].last_t;
	return 0;
}

/* REGION_OPEN: a call of (thread, node) open when its totals were read (SONDE_REGIONS=on);
 * a later REGION_STATS of the same (thread, node) closed it. */
int sd_decode_rec_region_open(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, begin;
	if (sd_rec_u64(r, SD_F_ROPEN_THREAD, &thread) || sd_rec_u64(r, SD_F_ROPEN_T, &t) ||
	    sd_rec_u64(r, SD_F_ROPEN_NODE, &node) || sd_rec_u64(r, SD_F_ROPEN_BEGIN, &begin))
		return REC_BAD;
	if (!sd_decode_known_thread(c, thread,
				    "REGION_OPEN names a thread that no THREAD record defined "
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

/* MESSAGES: the MPI messages the process sent, per peer (world rank), since its stream
 * began; the last record counts. */
int sd_decode_rec_messages(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t t, rank, size;
	if (sd_rec_u64(r, SD_F_MSGS_T, &t) || sd_rec_u64(r, SD_F_MSGS_RANK, &rank) ||
	    sd_rec_u64(r, SD_F_MSGS_SIZE, &size))
		return REC_BAD;
	const msgpack_object *a = r->n > SD_F_MSGS_PEERS ? &r->v[SD_F_MSGS_PEERS] : NULL;
	c->why = "MESSAGES rank is not below its size (at most 2^24)";
	if (size > (1u << 24) || rank >= size)
		return REC_BAD;
	c->why = "MESSAGES peers is not an array of [peer, messages, bytes] with peers below size";
	if (!a || a->type != MSGPACK_OBJECT_ARRAY || a->via.array.size > size)
		return REC_BAD;
	struct speer *pe = calloc(a->via.array.size + 1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->via.array.size; i++) {
		const msgpack_object *e = &a->via.array.ptr[i];
		uint64_t peer;
		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 3 ||
		    sd_obj_u64(&e->via.array.ptr[0], &peer) || peer >= size ||
		    sd_obj_u64(&e->via.array.ptr[1], &pe[i].msgs) ||
		    sd_obj_u64(&e->via.array.ptr[2], &pe[i].bytes)) {
			free(pe);
			return REC_BAD;
		}
		pe[i].peer = (uint32_t)peer;
	}
	free(st->peers);
	st->peers = pe;
	st->npeers = a->via.array.size;
	st->msg_rank = (uint32_t)rank, st->msg_size = (uint32_t)size;
	st->has_msgs = 1;
	return 0;
}
