/* regions.c - region timing aggregated in the thread that runs the regions
 * (SONDE_REGIONS=on): per thread and context node, calls, inclusive and
 * exclusive time, min, max, the sum of squares of the inclusive times, forced
 * ends and, when asked for, inclusive counter deltas.
 *
 * Who calls: api.c on the program's threads (ordinary context) at every begin
 * and end, through the inline functions of regions.h; the writer thread
 * (sd_annotate_rtable_collect) at every flush and at the end; the query API
 * from any thread. Nothing here runs in signal context.
 *
 * The hot path takes no lock and makes no system call: the time is the TSC
 * when the kernel itself keeps time with it (clocksource "tsc": constant,
 * synchronized across CPUs), else CLOCK_MONOTONIC through the vDSO. Each
 * thread updates only its own table; an entry carries a sequence count, odd
 * while its thread writes it, so a reader on another thread (the writer, a
 * query) copies it again until it has a consistent copy. Entries live in
 * chunks that are never moved or freed while the table lives, found by their
 * thread through a private open-addressing index (node -> entry), and by
 * readers through the chunk list (append-only, published with release).
 *
 * Lifetime: a thread's table is made at its first region, handed to the
 * sampler (which links it to the thread's ring), and outlives the thread: the
 * writer collects it once more after the thread ended, then frees it
 * (sd_annotate_rtable_free), which first adds it to the process's retired
 * totals so process-wide queries still count finished threads.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "annotate/annotate_int.h"
#include "common/real.h"
#include "mem/mem.h"

/* ---- the clock ---------------------------------------------------------------- */

int sd_rclock_tsc;                      /* 1: ticks are TSC cycles, else ns */
static uint64_t tsc0, mono0;            /* a (TSC, CLOCK_MONOTONIC) pair at start */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Does the kernel keep time with an invariant, synchronized TSC? Then so can
 * we: it checked the TSC at boot and would have switched away from it. */
static int tsc_trusted(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof buf, f) && !strcmp(buf, "tsc\n");
	fclose(f);
	return ok;
}

void sd_rclock_init(void)
{
	sd_rclock_tsc = tsc_trusted();
	mono0 = mono_ns();
	tsc0 = __rdtsc();
}

uint64_t sd_rclock_slow(void)
{
	return mono_ns();
}

/* Nanoseconds per tick, measured between start and now (the longer the run,
 * the better; at least 200 us apart, waited for if need be). */
double sd_rclock_ns_per_tick(void)
{
	if (!sd_rclock_tsc)
		return 1.0;
	uint64_t m, t;
	do {
		m = mono_ns();
		t = __rdtsc();
	} while (m - mono0 < 200000);
	return t > tsc0 ? (double)(m - mono0) / (double)(t - tsc0) : 1.0;
}

/* ---- tables -------------------------------------------------------------------- */

#define CHUNK_ENTRIES 64

struct chunk {
	struct sd_rstat e[CHUNK_ENTRIES];
	_Atomic uint32_t n;                /* entries in use (release) */
	_Atomic(struct chunk *) next;
};

struct sd_rtable {
	struct chunk first;
	_Atomic(struct chunk *) tail;      /* owner writes; readers follow `next` */
	/* owner only: node -> entry */
	struct sd_rstat **index;
	uint32_t cap, n;
	unsigned ncounters;                /* counters per entry (0: none read) */
	/* the list of every table (queries), under `lock` */
	struct sd_rtable *next, **prev;
	pid_t tid;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sd_rtable *tables;   /* every live table */
static struct sd_rtable *retired;  /* finished threads' totals (tid 0) */

static uint32_t slot_of(uint32_t node, uint32_t cap)
{
	return (node * 0x9e3779b1u) & (cap - 1);
}

static int index_put(struct sd_rstat **ix, uint32_t cap, struct sd_rstat *s)
{
	for (uint32_t i = slot_of(s->node, cap);; i = (i + 1) & (cap - 1))
		if (!ix[i]) {
			ix[i] = s;
			return 0;
		}
}

static int index_grow(struct sd_rtable *t)
{
	uint32_t cap = t->cap ? 2 * t->cap : 64;
	struct sd_rstat **ix = sd_mem_calloc(cap, sizeof *ix);
	if (!ix)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->index[i])
			index_put(ix, cap, t->index[i]);
	sd_mem_free(t->index);
	t->index = ix;
	t->cap = cap;
	return 0;
}

/* A table not on the list (the retired totals'; sd_rtable_new lists the others). */
static struct sd_rtable *table_alloc(unsigned ncounters)
{
	struct sd_rtable *t = sd_mem_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	atomic_init(&t->tail, &t->first);
	t->ncounters = ncounters > SD_REGION_COUNTERS_MAX ? SD_REGION_COUNTERS_MAX : ncounters;
	if (index_grow(t) != 0) {
		sd_mem_free(t);
		return NULL;
	}
	return t;
}

struct sd_rtable *sd_rtable_new(unsigned ncounters, pid_t tid)
{
	struct sd_rtable *t = table_alloc(ncounters);
	if (!t)
		return NULL;
	t->tid = tid;
	sd_real_pthread_mutex_lock(&lock);
	t->next = tables;
	t->prev = &tables;
	if (tables)
		tables->prev = &t->next;
	tables = t;
	pthread_mutex_unlock(&lock);
	return t;
}

/* A new entry for node (owner only); NULL when out of memory. */
static struct sd_rstat *entry_new(struct sd_rtable *t, uint32_t node)
{
	if ((t->n + 1) * 2 > t->cap && index_grow(t) != 0)
		return NULL;
	struct chunk *c = atomic_load_explicit(&t->tail, memory_order_relaxed);
	uint32_t k = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (k == CHUNK_ENTRIES) {
		struct chunk *nc = sd_mem_calloc(1, sizeof *nc);
		if (!nc)
			return NULL;
		atomic_store_explicit(&c->next, nc, memory_order_release);
		atomic_store_explicit(&t->tail, nc, memory_order_relaxed);
		c = nc;
		k = 0;
	}
	struct sd_rstat *s = &c->e[k];
	s->node = node;
	atomic_store_explicit(&c->n, k + 1, memory_order_release);
	index_put(t->index, t->cap, s);
	t->n++;
	return s;
}

struct sd_rstat *sd_rtable_entry(struct sd_rtable *t, uint32_t node)
{
	for (uint32_t i = slot_of(node, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct sd_rstat *s = t->index[i];
		if (!s)
			return entry_new(t, node);
		if (s->node == node)
			return s;
	}
}

/* CLOCK_MONOTONIC ns of a clock tick (f: ns per tick); never 0. */
static uint64_t mono_of(uint64_t ticks, double f)
{
	if (!sd_rclock_tsc)
		return ticks;
	double d = ((double)ticks - (double)tsc0) * f;
	uint64_t m = d < 0 && -d >= (double)mono0 ? 1 : (uint64_t)((double)mono0 + d);
	return m ? m : 1;
}

/* A consistent copy of s, converted to ns (f: ns per tick), and the ticks of
 * its open call's begin in *t0 (0: none). 0, or -1 when its thread kept
 * writing it. */
static int entry_read(const struct sd_rstat *s, unsigned nc, double f, struct sd_region_stat *o,
		      uint64_t *t0)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (q & 1)
			continue;
		o->node = s->node;
		o->calls = s->calls;
		o->forced = s->forced;
		o->incl_ns = (uint64_t)((double)s->incl * f);
		o->excl_ns = (uint64_t)((double)s->excl * f);
		o->min_ns = (uint64_t)((double)s->min * f);
		o->max_ns = (uint64_t)((double)s->max * f);
		o->sumsq_ns2 = s->sumsq * f * f;
		o->sent = s->sent;
		o->recv = s->recv;
		o->site = s->site;
		*t0 = atomic_load_explicit(&s->open_t0, memory_order_relaxed);
		o->open_begin_ns = *t0 ? mono_of(*t0, f) : 0;
		o->ncounts = nc;
		for (unsigned i = 0; i < nc; i++)
			o->counts[i] = s->counts[i];
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) == q)
			return 0;
	}
	return -1;
}

int sd_annotate_rtable_collect(struct sd_rtable *t,
			       void (*fn)(void *arg, const struct sd_region_stat *s), void *arg)
{
	double f = sd_rclock_ns_per_tick();
	int n = 0;
	for (struct chunk *c = &t->first; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
		uint32_t k = atomic_load_explicit(&c->n, memory_order_acquire);
		for (uint32_t i = 0; i < k; i++) {
			struct sd_rstat *s = &c->e[i];
			uint64_t t0 = atomic_load_explicit(&s->open_t0, memory_order_relaxed);
			if (s->calls == s->written_calls && s->forced == s->written_forced &&
			    t0 == s->written_open)
				continue; /* a racy first look: a change is seen next time */
			struct sd_region_stat st;
			if (entry_read(s, t->ncounters, f, &st, &t0) != 0)
				continue;
			st.changed = st.calls != s->written_calls || st.forced != s->written_forced;
			if (!st.changed && t0 == s->written_open)
				continue;
			fn(arg, &st);
			s->written_calls = st.calls;
			s->written_forced = st.forced;
			s->written_open = t0;
			n++;
		}
	}
	return n;
}

/* Adds src's entries (ticks) into the retired table. Under `lock`. */
static void retire(struct sd_rtable *src)
{
	if (!retired && !(retired = table_alloc(src->ncounters)))
		return;
	for (struct chunk *c = &src->first; c; c = atomic_load(&c->next)) {
		uint32_t k = atomic_load(&c->n);
		for (uint32_t i = 0; i < k; i++) {
			const struct sd_rstat *s = &c->e[i];
			struct sd_rstat *d = s->calls ? sd_rtable_entry(retired, s->node) : NULL;
			if (!d)
				continue;
			if (!d->calls || s->min < d->min)
				d->min = s->min;
			if (s->max > d->max)
				d->max = s->max;
			d->calls += s->calls;
			d->forced += s->forced;
			d->incl += s->incl;
			d->excl += s->excl;
			d->sumsq += s->sumsq;
			d->sent += s->sent;
			d->recv += s->recv;
			for (unsigned j = 0; j < retired->ncounters && j < src->ncounters; j++)
				d->counts[j] += s->counts[j];
		}
	}
}

static void table_release(struct sd_rtable *t)
{
	for (struct chunk *c = atomic_load(&t->first.next), *next; c; c = next) {
		next = atomic_load(&c->next);
		sd_mem_free(c);
	}
	sd_mem_free(t->index);
	sd_mem_free(t);
}

void sd_annotate_rtable_free(struct sd_rtable *t)
{
	if (!t)
		return;
	sd_real_pthread_mutex_lock(&lock);
	if (t->prev) {
		*t->prev = t->next;
		if (t->next)
			t->next->prev = t->prev;
	}
	retire(t);
	pthread_mutex_unlock(&lock);
	table_release(t);
}

static void query_table(struct sd_rtable *t, uint16_t attr, const struct sd_value *v, double f,
			struct sd_region_stat *out)
{
	for (struct chunk *c = &t->first; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
		uint32_t k = atomic_load_explicit(&c->n, memory_order_acquire);
		for (uint32_t i = 0; i < k; i++) {
			struct sd_region_stat s;
			uint64_t t0;
			if (!sd_ann_node_is(c->e[i].node, attr, v) ||
			    entry_read(&c->e[i], t->ncounters, f, &s, &t0) != 0 || !s.calls)
				continue;
			if (!out->calls || s.min_ns < out->min_ns)
				out->min_ns = s.min_ns;
			if (s.max_ns > out->max_ns)
				out->max_ns = s.max_ns;
			out->calls += s.calls;
			out->forced += s.forced;
			out->incl_ns += s.incl_ns;
			out->excl_ns += s.excl_ns;
			out->sumsq_ns2 += s.sumsq_ns2;
			out->ncounts = s.ncounts;
			for (unsigned j = 0; j < s.ncounts; j++)
				out->counts[j] += s.counts[j];
		}
	}
}

void sd_rtable_query(struct sd_rtable *own, int process, uint16_t attr, const struct sd_value *v,
		     struct sd_region_stat *out)
{
	double f = sd_rclock_ns_per_tick();
	if (!process) {
		if (own)
			query_table(own, attr, v, f, out);
		return;
	}
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_rtable *t = tables; t; t = t->next)
		query_table(t, attr, v, f, out);
	if (retired)
		query_table(retired, attr, v, f, out);
	pthread_mutex_unlock(&lock);
}

static void table_reset(struct sd_rtable *t)
{
	for (struct chunk *c = &t->first; c; c = atomic_load(&c->next)) {
		uint32_t k = atomic_load(&c->n);
		for (uint32_t i = 0; i < k; i++) {
			struct sd_rstat *s = &c->e[i];
			uint32_t node = s->node;
			uintptr_t site = s->site;
			memset((char *)s + offsetof(struct sd_rstat, calls), 0,
			       sizeof *s - offsetof(struct sd_rstat, calls));
			s->node = node;
			s->site = site;
		}
	}
}

/* In a forked child only the calling thread is left: the other threads'
 * tables are forgotten (not freed: their memory may be mid-update), and the
 * lock made usable. */
void sd_rtable_fork_child(struct sd_rtable *own)
{
	pthread_mutex_init(&lock, NULL);
	tables = NULL;
	retired = NULL;
	if (own) {
		own->next = NULL;
		own->prev = &tables;
		tables = own;
		table_reset(own);
	}
}
