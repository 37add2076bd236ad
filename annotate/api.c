/* api.c - the annotation entry points (sonde_rt_*, called by the inline
 * functions of include/sonde.h) and the blackboards.
 *
 * Runs in program threads, ordinary context. A thread's blackboard is its
 * stack of open values and `ctx`, the context node of the whole stack, which
 * the signal handler reads (one aligned word, stored after the node is
 * published: a sample arriving mid-update sees the old or the new context,
 * never a torn one). Process-scope values live on one process-wide stack
 * under a lock; its node is `pctx`. Misuse warns once per message (warn.c)
 * and is repaired so that later annotations keep working.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "annotate/annotate_int.h"
#include "common/common.h"
#include "common/log.h"
#include "common/real.h"
#include "include/sonde.h"
#include "mem/mem.h"

struct entry {
	uint16_t attr;
	uint32_t node;
	/* SONDE_REGIONS=on: when it began (clock ticks), the inclusive time of
	 * its children so far, its entry in the thread's table, and the
	 * counters at its beginning */
	uint64_t t0, child;
	uint64_t sent, recv; /* bytes its call moved (sonde_rt_attr_end_traffic) */
	struct sd_rstat *rs;
	uint64_t c0[SD_REGION_COUNTERS_MAX];
};

struct cache_e {
	uint64_t key;
	uint32_t parent;
	uint32_t node;
	uint16_t attr;
	uint8_t type;
};

struct name_e {
	const char *p;
	struct sd_attr *a;
};

struct stack {
	struct entry e[SD_STACK_MAX];
	unsigned depth;
	unsigned overflow; /* begins ignored past SD_STACK_MAX */
	_Atomic uint32_t ctx;
};

struct ann_thread {
	struct stack st;
	struct cache_e cache[1024];
	struct name_e names[16];
	struct sd_rtable *rt; /* SONDE_REGIONS=on: made at the first begin */
	int rt_adopted;       /* its ring took it (the writer frees it) */
	int rt_failed;        /* could not be made: no timing in this thread */
};

static _Atomic int enabled;
static void (*region_hook)(uint32_t node, int event);
static struct sd_annotate_hooks hooks; /* what sd_annotate_start was given */
static int agg;                        /* hooks.aggregate */
static __thread struct ann_thread *tls __attribute__((tls_model("initial-exec")));
static struct stack pstack;
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static struct sd_attr *region_attr;

/* ---- start/stop and the handler's view ------------------------------------ */

void sd_annotate_start(const struct sd_annotate_hooks *h)
{
	if (h)
		hooks = *h;
	region_hook = hooks.region;
	agg = hooks.aggregate;
	if (hooks.ncounters > SD_REGION_COUNTERS_MAX || !hooks.read_counters)
		hooks.ncounters = hooks.read_counters ? SD_REGION_COUNTERS_MAX : 0;
	if (agg)
		sd_rclock_init();
	region_attr = sd_ann_attr_get("region", SD_TYPE_STRING, SD_SCOPE_THREAD);
	atomic_store(&enabled, 1);
}

uint32_t sd_annotate_thread_ctx_sigsafe(void)
{
	struct ann_thread *t = tls;
	return t ? atomic_load_explicit(&t->st.ctx, memory_order_relaxed) : 0;
}

uint32_t sd_annotate_process_ctx_sigsafe(void)
{
	return atomic_load_explicit(&pstack.ctx, memory_order_relaxed);
}

static struct ann_thread *self(void)
{
	if (!tls)
		tls = sd_mem_calloc(1, sizeof *tls);
	return tls;
}

static const char *attr_name(uint16_t id)
{
	struct sd_attr_view a;
	return sd_annotate_attr_get(id, &a) == 0 ? a.name : "?";
}

/* ---- the tree walk, cached per thread ------------------------------------- */

static int cache_hit(const struct cache_e *c, uint32_t parent, uint16_t attr,
		     const struct sd_value *v)
{
	if (!c->node || c->key != v->key || c->parent != parent || c->attr != attr ||
	    c->type != v->type)
		return 0;
	if (v->type != SD_TYPE_STRING)
		return 1;
	size_t len;
	const char *have = sd_ann_node_str(c->node, &len);
	return have && len == v->len && !memcmp(have, v->s, v->len);
}

/* The child node, through a per-thread 2-way set-associative cache (512
 * sets): a loop cycling through a few hundred values stays in the cache. */
static uint32_t child(struct ann_thread *t, uint32_t parent, uint16_t attr, const struct sd_value *v)
{
	if (!t)
		return sd_ann_child(parent, attr, v);
	uint64_t h = v->key ^ ((uint64_t)parent << 32) ^ ((uint64_t)attr << 16);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	struct cache_e *set = &t->cache[(h & 511) * 2];
	if (cache_hit(&set[0], parent, attr, v))
		return set[0].node;
	if (cache_hit(&set[1], parent, attr, v)) {
		struct cache_e tmp = set[0];
		set[0] = set[1];
		set[1] = tmp;
		return set[0].node;
	}
	uint32_t id = sd_ann_child(parent, attr, v);
	set[1] = set[0];
	set[0].key = v->key;
	set[0].parent = parent;
	set[0].attr = attr;
	set[0].type = (uint8_t)v->type;
	set[0].node = id;
	return id;
}

static uint32_t top_node(const struct stack *st)
{
	return st->depth ? st->e[st->depth - 1].node : 0;
}

static void publish(struct stack *st)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&st->ctx, top_node(st), memory_order_release);
}

static inline uint64_t rclock(void)
{
	return sd_rclock_tsc ? __rdtsc() : sd_rclock_slow();
}

/* The calling thread's table, made at its first region. */
static __attribute__((noinline)) struct sd_rtable *table_make(struct ann_thread *t)
{
	if (t->rt_failed)
		return NULL;
	if (!(t->rt = sd_rtable_new(hooks.ncounters, gettid()))) {
		t->rt_failed = 1;
		sd_ann_warn("sonde: SONDE_REGIONS: no memory for this thread's region table (its "
			    "regions are not timed)");
		return NULL;
	}
	t->rt_adopted = hooks.adopt_table && hooks.adopt_table(t->rt);
	return t->rt;
}

/* Entry e (just pushed, node `node`) begins now. */
static inline void agg_begin(struct ann_thread *t, struct entry *e)
{
	struct sd_rtable *rt = t->rt ? t->rt : table_make(t);
	e->rs = rt ? sd_rtable_entry(rt, e->node) : NULL;
	e->child = 0;
	e->sent = e->recv = 0;
	if (hooks.ncounters && e->rs && hooks.read_counters(e->c0) != 0)
		e->rs = NULL; /* counters unreadable: not timed rather than wrong */
	e->t0 = rclock();
	if (e->rs) /* the writer states it if the stream ends before the call does */
		atomic_store_explicit(&e->rs->open_t0, e->t0, memory_order_relaxed);
}

/* Entry j of st (popped, or being cut) ends now. */
static inline void agg_end(struct stack *st, unsigned j, int forced)
{
	struct entry *e = &st->e[j];
	uint64_t incl = rclock() - e->t0;
	if (j)
		st->e[j - 1].child += incl;
	struct sd_rstat *s = e->rs;
	if (!s)
		return;
	uint64_t c[SD_REGION_COUNTERS_MAX];
	unsigned nc = hooks.ncounters;
	if (nc && hooks.read_counters(c) != 0)
		nc = 0;
	uint64_t excl = incl > e->child ? incl - e->child : 0;
	uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (!s->calls || incl < s->min)
		s->min = incl;
	if (incl > s->max)
		s->max = incl;
	s->calls++;
	s->forced += (unsigned)forced;
	s->incl += incl;
	s->excl += excl;
	s->sumsq += (double)incl * (double)incl;
	s->sent += e->sent;
	s->recv += e->recv;
	atomic_store_explicit(&s->open_t0, 0, memory_order_relaxed);
	for (unsigned i = 0; i < nc; i++)
		s->counts[i] += c[i] - e->c0[i];
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
	if (hooks.ended)
		hooks.ended();
}

/* Entry j of st begins (ev SD_REGION_BEGIN) or ends. */
static void event(struct ann_thread *t, struct stack *st, unsigned j, int ev)
{
	if (st == &pstack || !st->e[j].node)
		return;
	if (region_hook)
		region_hook(st->e[j].node, ev);
	else if (agg && t && ev == SD_REGION_BEGIN)
		agg_begin(t, &st->e[j]);
	else if (agg && t)
		agg_end(st, j, ev == SD_REGION_FORCED_END);
}

/* Removes entries [k, depth) and returns their count; end events. */
static unsigned cut(struct ann_thread *t, struct stack *st, unsigned k, int ev)
{
	unsigned n = st->depth - k;
	for (unsigned j = st->depth; j-- > k;)
		event(t, st, j, ev);
	st->depth = k;
	return n;
}

/* Re-creates entries saved[from..n) on top of the stack (after a value below
 * them was removed or replaced). */
static void rebuild(struct ann_thread *t, struct stack *st, const struct entry *saved, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		struct sd_value v;
		sd_ann_node_value(saved[j].node, &v);
		uint32_t node = child(t, top_node(st), saved[j].attr, &v);
		st->e[st->depth].attr = saved[j].attr;
		st->e[st->depth++].node = node;
		event(t, st, st->depth - 1, SD_REGION_BEGIN);
	}
}

static int innermost(const struct stack *st, uint16_t attr)
{
	for (unsigned j = st->depth; j-- > 0;)
		if (st->e[j].attr == attr)
			return (int)j;
	return -1;
}

/* ---- the operations --------------------------------------------------------- */

static struct stack *stack_of(struct sd_attr *a, struct ann_thread **t)
{
	*t = self();
	if (a->scope == SD_SCOPE_PROCESS) {
		sd_real_pthread_mutex_lock(&plock);
		return &pstack;
	}
	return *t ? &(*t)->st : NULL;
}

static void stack_done(struct stack *st)
{
	if (st == &pstack)
		pthread_mutex_unlock(&plock);
}

static void op_begin(struct sd_attr *a, const struct sd_value *v, const char *fn)
{
	struct ann_thread *t;
	struct stack *st = stack_of(a, &t);
	if (!st)
		return;
	if (st->depth == SD_STACK_MAX) {
		st->overflow++;
		sd_ann_warn("sonde: %s(\"%s\"): more than %d values open (ignored; check nesting, "
			    "see docs/API.md, Limits)", fn, a->name, SD_STACK_MAX);
		stack_done(st);
		return;
	}
	uint32_t node = child(t, top_node(st), a->id, v);
	st->e[st->depth].attr = a->id;
	st->e[st->depth++].node = node;
	publish(st);
	event(t, st, st->depth - 1, SD_REGION_BEGIN);
	stack_done(st);
}

/* The length of `s` as a value: begins keep at most SD_VALUE_MAX bytes
 * (value_str), so an end names the value by as many. */
static size_t value_len(const char *s)
{
	return strnlen(s, SD_VALUE_MAX);
}

/* Is the innermost open value the string `want`? */
static int top_is(const struct stack *st, const char *want)
{
	size_t len;
	const char *have = sd_ann_node_str(st->e[st->depth - 1].node, &len);
	return have && len == value_len(want) && !memcmp(have, want, len);
}

static void op_end_slow(struct sd_attr *a, const char *want, const char *fn,
			struct ann_thread *t, struct stack *st);

/* Ends the innermost value of `a`; `want` (regions) names the value that must
 * be the innermost open one. The common case (it is the innermost, and no
 * name to check) is kept short; the rest is op_end_slow. */
static void op_end(struct sd_attr *a, const char *want, const char *fn)
{
	struct ann_thread *t;
	struct stack *st = stack_of(a, &t);
	if (!st)
		return;
	if (!st->overflow && st->depth && st->e[st->depth - 1].attr == a->id &&
	    (!want || top_is(st, want))) {
		--st->depth;
		publish(st);
		event(t, st, st->depth, SD_REGION_END);
		stack_done(st);
		return;
	}
	op_end_slow(a, want, fn, t, st);
}

__attribute__((noinline)) static void op_end_slow(struct sd_attr *a, const char *want,
						  const char *fn, struct ann_thread *t,
						  struct stack *st)
{
	char b1[64], b2[64];
	if (st->overflow) {
		st->overflow--;
		stack_done(st);
		return;
	}
	int k = innermost(st, a->id);
	size_t want_len = want ? value_len(want) : 0;
	if (want) {
		/* the innermost open region named `want` */
		k = -1;
		for (unsigned j = st->depth; j-- > 0;) {
			if (st->e[j].attr != a->id)
				continue;
			size_t len;
			const char *have = sd_ann_node_str(st->e[j].node, &len);
			if (have && len == want_len && !memcmp(want, have, len)) {
				k = (int)j;
				break;
			}
		}
	}
	if (k < 0) {
		if (want)
			sd_ann_warn("sonde: %s(\"%s\"): region \"%s\" is not open (check nesting)", fn,
				    want, want);
		else
			sd_ann_warn("sonde: %s(\"%s\"): no value of \"%s\" is open (check nesting)", fn,
				    a->name, a->name);
		stack_done(st);
		return;
	}
	unsigned top = st->depth - 1;
	if ((unsigned)k == top) {
		st->depth--;
		publish(st);
		event(t, st, top, SD_REGION_END);
		stack_done(st);
		return;
	}
	/* Misnested: say what is innermost, then close k and keep the rest. */
	const struct entry *in = &st->e[top];
	if (want && in->attr == a->id)
		sd_ann_warn("sonde: %s(\"%s\"): innermost open region is \"%s\" (check nesting)", fn,
			    want, sd_ann_value_text(in->node, b1, sizeof b1));
	else
		sd_ann_warn("sonde: %s(\"%s\"): innermost open value is \"%s\" of \"%s\" (check "
			    "nesting)", fn, want ? want : a->name, sd_ann_value_text(in->node, b1, sizeof b1),
			    attr_name(in->attr));
	(void)b2;
	struct entry saved[SD_STACK_MAX];
	unsigned n = st->depth - (unsigned)k - 1;
	memcpy(saved, &st->e[k + 1], n * sizeof *saved);
	cut(t, st, (unsigned)k, SD_REGION_FORCED_END);
	rebuild(t, st, saved, n);
	publish(st);
	stack_done(st);
}

static void op_set(struct sd_attr *a, const struct sd_value *v, const char *fn)
{
	struct ann_thread *t;
	struct stack *st = stack_of(a, &t);
	if (!st)
		return;
	int k = innermost(st, a->id);
	if (k < 0) {
		stack_done(st);
		op_begin(a, v, fn);
		return;
	}
	struct entry saved[SD_STACK_MAX];
	unsigned n = st->depth - (unsigned)k - 1;
	memcpy(saved, &st->e[k + 1], n * sizeof *saved);
	cut(t, st, (unsigned)k, SD_REGION_END);
	uint32_t node = child(t, top_node(st), a->id, v);
	st->e[st->depth].attr = a->id;
	st->e[st->depth++].node = node;
	event(t, st, st->depth - 1, SD_REGION_BEGIN);
	rebuild(t, st, saved, n);
	publish(st);
	stack_done(st);
}

/* The attribute named `name`, through a per-thread cache of name pointers. */
static struct sd_attr *by_name(const char *name, int type)
{
	if (!name)
		return NULL;
	struct ann_thread *t = self();
	if (t) {
		struct name_e *c = &t->names[((uintptr_t)name >> 4) & 15];
		if (c->p == name && !strcmp(c->a->name, name))
			return c->a;
		struct sd_attr *a = sd_ann_attr_get(name, type, SD_SCOPE_THREAD);
		if (a) {
			c->p = name;
			c->a = a;
		}
		return a;
	}
	return sd_ann_attr_get(name, type, SD_SCOPE_THREAD);
}

/* Like by_name, without creating the attribute. */
static struct sd_attr *by_name_existing(const char *name)
{
	struct ann_thread *t = self();
	if (t) {
		struct name_e *c = &t->names[((uintptr_t)name >> 4) & 15];
		if (c->p == name && !strcmp(c->a->name, name))
			return c->a;
	}
	return sd_ann_attr_find(name);
}

static int on(void)
{
	return atomic_load_explicit(&enabled, memory_order_relaxed);
}

/* ---- exported entry points ---------------------------------------------------- */

/* Where the program opened a value (the splice site): the return address and frame of
 * the exported function itself, so it is taken in each of them, not in a helper. */
#define CALLER_SITE(v) ((v).site = (uintptr_t)__builtin_return_address(0), \
			(v).sp = (uintptr_t)__builtin_frame_address(0))

/* The attribute `attr` of type `type` for an exported call, or NULL (sonde is off, or
 * the name is refused: said by by_name). */
static struct sd_attr *entry_attr(const char *attr, int type)
{
	return on() ? by_name(attr, type) : NULL;
}

SONDE_API void sonde_rt_begin(const char *attr, const char *value)
{
	struct sd_attr *a = entry_attr(attr, SD_TYPE_STRING);
	struct sd_value v;
	if (a) {
		sd_ann_value_str(&v, "sonde_begin", attr, value);
		CALLER_SITE(v);
		op_begin(a, &v, "sonde_begin");
	}
}

SONDE_API void sonde_rt_begin_int(const char *attr, int64_t value)
{
	struct sd_attr *a = entry_attr(attr, SD_TYPE_INT);
	struct sd_value v;
	if (a) {
		sd_ann_value_int(&v, value);
		CALLER_SITE(v);
		op_begin(a, &v, "sonde_begin_int");
	}
}

SONDE_API void sonde_rt_set(const char *attr, const char *value)
{
	struct sd_attr *a = entry_attr(attr, SD_TYPE_STRING);
	struct sd_value v;
	if (a) {
		sd_ann_value_str(&v, "sonde_set", attr, value);
		CALLER_SITE(v);
		op_set(a, &v, "sonde_set");
	}
}

SONDE_API void sonde_rt_set_int(const char *attr, int64_t value)
{
	struct sd_attr *a = entry_attr(attr, SD_TYPE_INT);
	struct sd_value v;
	if (a) {
		sd_ann_value_int(&v, value);
		CALLER_SITE(v);
		op_set(a, &v, "sonde_set_int");
	}
}

SONDE_API void sonde_rt_end(const char *attr)
{
	struct sd_attr *a;
	if (!on() || !attr)
		return;
	if (!(a = by_name_existing(attr))) {
		sd_ann_warn("sonde: sonde_end(\"%s\"): no value of \"%s\" is open (check nesting)",
			    attr, attr);
		return;
	}
	op_end(a, NULL, "sonde_end");
}

SONDE_API void sonde_rt_region_end(const char *name)
{
	if (!on() || !region_attr)
		return;
	op_end(region_attr, name ? name : "", "sonde_region_end");
}

/* Not in sonde.h's API: libsonde_caliper.so's end of a named value of any attribute
 * (cali_end_region, cali_end_phase, ...): checked as sonde_region_end checks a region,
 * misuse said in the name fn of the program's own call. */
SONDE_API void sonde_rt_end_named(const char *attr, const char *value, const char *fn)
{
	struct sd_attr *a;
	if (!on() || !attr || !value || !fn)
		return;
	if (!(a = by_name_existing(attr)))
		sd_ann_warn("sonde: %s(\"%s\"): region \"%s\" is not open (check nesting)", fn,
			    value, value);
	else
		op_end(a, value, fn);
}

SONDE_API sonde_attr_t sonde_rt_attr_create(const char *name, int type, int scope)
{
	if (!on() || !name)
		return NULL;
	return (sonde_attr_t)sd_ann_attr_get(name, type, scope);
}

#define A(h) ((struct sd_attr *)(h))

SONDE_API void sonde_rt_attr_begin_str(sonde_attr_t h, const char *value)
{
	if (!on() || !h)
		return;
	struct sd_value v;
	sd_ann_value_str(&v, "sonde_attr_begin_str", A(h)->name, value);
	CALLER_SITE(v);
	op_begin(A(h), &v, "sonde_attr_begin_str");
}

/* The hot-loop pair, by handle, integer value, thread scope, no region
 * timing: one cache probe, a push and a store. Everything else takes the
 * general path. */
SONDE_API void sonde_rt_attr_begin_int(sonde_attr_t h, int64_t value)
{
	if (!on() || !h)
		return;
	struct sd_attr *a = A(h);
	struct ann_thread *t = tls;
	if (t && a->scope == SD_SCOPE_THREAD && !region_hook && t->st.depth < SD_STACK_MAX) {
		struct stack *st = &t->st;
		uint32_t parent = top_node(st);
		uint64_t k = (uint64_t)value ^ ((uint64_t)parent << 32) ^ ((uint64_t)a->id << 16);
		k ^= k >> 33;
		k *= 0xff51afd7ed558ccdull;
		k ^= k >> 29;
		const struct cache_e *c = &t->cache[(k & 511) * 2];
		for (int way = 0; way < 2; way++, c++)
			if (c->node && c->key == (uint64_t)value && c->parent == parent &&
			    c->attr == a->id && c->type == SD_TYPE_INT) {
				struct entry *e = &st->e[st->depth++];
				e->attr = a->id;
				e->node = c->node;
				publish(st);
				if (agg)
					agg_begin(t, e);
				return;
			}
	}
	struct sd_value v;
	sd_ann_value_int(&v, value);
	CALLER_SITE(v);
	op_begin(a, &v, "sonde_attr_begin_int");
}

SONDE_API void sonde_rt_attr_begin_double(sonde_attr_t h, double value)
{
	if (!on() || !h)
		return;
	struct sd_value v;
	sd_ann_value_double(&v, value);
	CALLER_SITE(v);
	op_begin(A(h), &v, "sonde_attr_begin_double");
}

SONDE_API void sonde_rt_attr_set_str(sonde_attr_t h, const char *value)
{
	if (!on() || !h)
		return;
	struct sd_value v;
	sd_ann_value_str(&v, "sonde_attr_set_str", A(h)->name, value);
	CALLER_SITE(v);
	op_set(A(h), &v, "sonde_attr_set_str");
}

SONDE_API void sonde_rt_attr_set_int(sonde_attr_t h, int64_t value)
{
	if (!on() || !h)
		return;
	struct sd_value v;
	sd_ann_value_int(&v, value);
	CALLER_SITE(v);
	op_set(A(h), &v, "sonde_attr_set_int");
}

SONDE_API void sonde_rt_attr_set_double(sonde_attr_t h, double value)
{
	if (!on() || !h)
		return;
	struct sd_value v;
	sd_ann_value_double(&v, value);
	CALLER_SITE(v);
	op_set(A(h), &v, "sonde_attr_set_double");
}

SONDE_API void sonde_rt_attr_end(sonde_attr_t h)
{
	if (!on() || !h)
		return;
	struct sd_attr *a = A(h);
	struct ann_thread *t = tls;
	if (t && a->scope == SD_SCOPE_THREAD && !region_hook && !t->st.overflow && t->st.depth &&
	    t->st.e[t->st.depth - 1].attr == a->id) {
		t->st.depth--;
		publish(&t->st);
		if (agg)
			agg_end(&t->st, t->st.depth, 0);
		return;
	}
	op_end(a, NULL, "sonde_attr_end");
}

/* Not in sonde.h's API: libsonde_mpi.so's end of an MPI call that moved bytes. The
 * innermost open level of a (this thread's) is charged sent and received bytes, then
 * ended as by sonde_attr_end. Only aggregated regions (SONDE_REGIONS=on) keep them. */
SONDE_API void sonde_rt_attr_end_traffic(sonde_attr_t h, uint64_t sent, uint64_t recv)
{
	if (!on() || !h)
		return;
	struct sd_attr *a = A(h);
	struct ann_thread *t = tls;
	if (t && agg && a->scope == SD_SCOPE_THREAD && !t->st.overflow) {
		for (unsigned j = t->st.depth; j-- > 0;)
			if (t->st.e[j].attr == a->id) {
				t->st.e[j].sent += sent;
				t->st.e[j].recv += recv;
				break;
			}
	}
	sonde_rt_attr_end(h);
}

/* ---- queries ---------------------------------------------------------------------- */

SONDE_API int sonde_rt_region_query(const char *attr, int type, const char *s, int64_t i,
				    int scope, struct sonde_region_stats *out)
{
	if (!out)
		return SONDE_UNAVAILABLE;
	memset(out, 0, sizeof *out);
	if (!on() || !agg || !attr)
		return SONDE_UNAVAILABLE;
	struct sd_attr *a = sd_ann_attr_find(attr);
	if (!a)
		return SONDE_NONE;
	struct sd_value v;
	if (type == SONDE_INT)
		sd_ann_value_int(&v, i);
	else
		sd_ann_value_str(&v, "sonde_query", attr, s);
	struct sd_region_stat st = { .min_ns = UINT64_MAX };
	struct ann_thread *t = tls;
	sd_rtable_query(t ? t->rt : NULL, scope == SONDE_PROCESS, a->id, &v, &st);
	if (!st.calls)
		return SONDE_NONE;
	out->calls = st.calls;
	out->forced = st.forced;
	out->incl_ns = (double)st.incl_ns;
	out->excl_ns = (double)st.excl_ns;
	out->min_ns = (double)st.min_ns;
	out->max_ns = (double)st.max_ns;
	out->mean_ns = out->incl_ns / (double)st.calls;
	out->stddev_ns = sd_stddev(st.calls, out->incl_ns, st.sumsq_ns2);
	out->ncounters = (int)st.ncounts;
	for (unsigned k = 0; k < st.ncounts && k < 8; k++)
		out->counters[k] = st.counts[k];
	return SONDE_OK;
}

/* ---- thread end and fork ------------------------------------------------------- */

void sd_annotate_thread_exit(void)
{
	struct ann_thread *t = tls;
	if (!t)
		return;
	if (t->st.depth)
		cut(t, &t->st, 0, SD_REGION_FORCED_END);
	tls = NULL;
	if (t->rt && !t->rt_adopted)
		sd_annotate_rtable_free(t->rt);
	sd_mem_free(t);
}

void sd_annotate_fork_prepare(void)
{
	sd_real_pthread_mutex_lock(&plock);
	sd_ann_lock();
}

void sd_annotate_fork_parent(void)
{
	sd_ann_unlock();
	pthread_mutex_unlock(&plock);
}

void sd_annotate_fork_child(void)
{
	sd_ann_lock_reset();
	pthread_mutex_init(&plock, NULL);
	sd_rtable_fork_child(tls ? tls->rt : NULL);
}
