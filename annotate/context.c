/* context.c - attributes and the generalized context tree (seed 003).
 *
 * Called from the annotation entry points (api.c) in program threads, and
 * read by the writer thread. Every distinct path of attribute values is one
 * node: (parent, attribute, value). Nodes and attributes are append-only and
 * immutable once their id is published (release store of the count), so
 * readers need no lock; creation takes `lock`. Memory is bounded: at most
 * SD_NODES_MAX nodes; past a reserve, new values become "(capped)".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate_int.h"
#include "common/common.h"
#include "common/real.h"
#include "mem/mem.h"

#define CHUNK 4096
#define CAP_RESERVE 1024

#define SITE_FRAMES 16

struct node {
	uintptr_t *sites; /* where it was made: return addresses, innermost first */
	uint8_t nsites;
	uint32_t parent;
	uint16_t attr;
	uint8_t type;
	uint8_t flags;
	uint32_t len; /* string length */
	union {
		int64_t i;
		double d;
		char *s;
	} v;
};

struct slot {
	uint64_t key;   /* value key: int, double bits, or string hash */
	uint32_t parent;
	uint32_t node;  /* 0 = empty */
	uint16_t attr;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sd_attr attrs[SD_ATTR_MAX + 1];
static _Atomic uint32_t nattrs;
static struct node *chunks[SD_NODES_MAX / CHUNK];
static _Atomic uint32_t nnodes;
/* The (parent, attribute, value) -> node index: open addressing, at most half
 * full, grown by doubling (from 1024 slots up to 2 * SD_NODES_MAX) under `lock`.
 * A grown table is published for lock-free readers; the old one is never freed
 * (a reader may still be probing it: it finds what it held, or nothing, and
 * then takes the lock), so the tables together take at most twice the last.
 * Small at first because every new value writes a slot at a random place: a
 * fixed 3 MiB table cost a page fault per new context node (10-30 us each
 * here, charged to the program's begin). */
struct ntable { size_t mask, used; struct ntable *older; struct slot s[]; };
static struct ntable *table;
static _Atomic(struct ntable *) table_pub; /* `table`, for lock-free readers */

static size_t slot_hash(uint32_t parent, uint16_t attr, uint64_t key)
{
	return sd_mix64(key ^ ((uint64_t)parent << 20) ^ ((uint64_t)attr << 52));
}

/* Doubles the index (or makes the first). Under `lock`: 0 or -1. */
static int table_grow(void)
{
	size_t cap = table ? 2 * (table->mask + 1) : 1024;
	if (cap > 2 * SD_NODES_MAX)
		return -1;
	struct ntable *t = sd_mem_calloc(1, sizeof *t + cap * sizeof t->s[0]);
	if (!t)
		return -1;
	t->mask = cap - 1;
	for (size_t i = 0; table && i <= table->mask; i++) {
		const struct slot *o = &table->s[i];
		if (!o->node)
			continue;
		size_t h = slot_hash(o->parent, o->attr, o->key) & t->mask;
		while (t->s[h].node)
			h = (h + 1) & t->mask;
		t->s[h] = *o;
		t->used++;
	}
	t->older = table; /* kept, and reachable: a reader may still probe it */
	atomic_store_explicit(&table_pub, t, memory_order_release);
	table = t;
	return 0;
}
static _Atomic int capped_said;

static struct node *node_at(uint32_t id)
{
	return &chunks[id / CHUNK][id % CHUNK];
}

uint64_t sd_ann_hash_str(const char *s, size_t n)
{
	return sd_fnv1a(s, n);
}

/* ---- attributes ---------------------------------------------------------- */

struct sd_attr *sd_ann_attr_find(const char *name)
{
	uint32_t n = atomic_load_explicit(&nattrs, memory_order_acquire);
	for (uint32_t i = 1; i <= n; i++)
		if (!strcmp(attrs[i].name, name))
			return &attrs[i];
	return NULL;
}

struct sd_attr *sd_ann_attr_get(const char *name, int type, int scope)
{
	struct sd_attr *a = sd_ann_attr_find(name);
	if (a)
		return a;
	if (strlen(name) > SD_ATTR_NAME_MAX) {
		sd_ann_warn("sonde: attribute \"%.63s...\": name longer than %d bytes (ignored; see "
			    "docs/API.md, Limits)", name, SD_ATTR_NAME_MAX);
		return NULL;
	}
	sd_real_pthread_mutex_lock(&lock);
	a = sd_ann_attr_find(name);
	uint32_t n = atomic_load(&nattrs);
	if (!a && n < SD_ATTR_MAX) {
		a = &attrs[n + 1];
		a->id = (uint16_t)(n + 1);
		memcpy(a->name, name, strlen(name) + 1);
		a->type = type < 0 || type > 2 ? SD_TYPE_STRING : type;
		a->scope = scope == SD_SCOPE_PROCESS ? SD_SCOPE_PROCESS : SD_SCOPE_THREAD;
		atomic_store_explicit(&nattrs, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
	if (!a)
		sd_ann_warn("sonde: attribute \"%s\": more than %d attributes (ignored; see "
			    "docs/API.md, Limits)", name, SD_ATTR_MAX);
	return a;
}

/* ---- nodes ---------------------------------------------------------------- */

static int same_value(const struct node *nd, const struct sd_value *v)
{
	switch (v->type) {
	case SD_TYPE_INT:
		return nd->type == SD_TYPE_INT && nd->v.i == v->i;
	case SD_TYPE_DOUBLE:
		return nd->type == SD_TYPE_DOUBLE && !memcmp(&nd->v.d, &v->d, sizeof v->d);
	default:
		return nd->type == SD_TYPE_STRING && nd->len == v->len &&
		       !memcmp(nd->v.s, v->s, v->len);
	}
}

int sd_ann_node_is(uint32_t id, uint16_t attr, const struct sd_value *v)
{
	if (!id || id > atomic_load_explicit(&nnodes, memory_order_acquire))
		return 0;
	const struct node *nd = node_at(id);
	return nd->attr == attr && same_value(nd, v);
}

/* Where the program opened a new node (the splice of `sonde report --view tree`): the
 * stack then, sonde's own frames first (left out here, and by the writer). Taking it
 * costs about 3 us, so a stack is taken once per call site and stack depth (the entry
 * point's return address and stack pointer: a loop that opens a new value each time
 * reuses it) and shared by the nodes made there. Taken before the tree's lock and
 * outside every lock of sonde's: the unwinder takes the loader's lock (dl_iterate_phdr),
 * which a dlopen holds while a library constructor might annotate. */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uintptr_t ret, sp; uintptr_t *sites; uint8_t n; } seen[512];
static unsigned nseen;

static size_t seen_slot(uintptr_t ret, uintptr_t sp)
{
	size_t k = sd_mix64(ret ^ (sp << 7)) & 511;
	while (seen[k].ret && (seen[k].ret != ret || seen[k].sp != sp))
		k = (k + 1) & 511;
	return k;
}

static void site_of(struct sd_value *v)
{
	sd_real_pthread_mutex_lock(&site_lock);
	size_t k = seen_slot(v->site, v->sp);
	int have = seen[k].ret != 0;
	if (have)
		v->sites = seen[k].sites, v->nsites = seen[k].n;
	pthread_mutex_unlock(&site_lock);
	if (have)
		return;
	void *bt[SITE_FRAMES];
	int n = backtrace(bt, SITE_FRAMES), from = 0;
	/* the program's frames start after sonde's innermost run of frames (a sanitizer's
	 * backtrace interceptor may come before it; sonde's thread trampoline comes again
	 * further out) */
	Dl_info self, di;
	if (dladdr((void *)&site_of, &self)) {
		int in = 0;
		for (int i = 0; i < n; i++) {
			int ours = dladdr(bt[i], &di) && di.dli_fbase == self.dli_fbase;
			if (in && !ours) {
				from = i;
				break;
			}
			in |= ours;
		}
	}
	uintptr_t *s = n > from ? sd_mem_alloc((size_t)(n - from) * sizeof *s) : NULL;
	if (!s)
		return;
	memcpy(s, bt + from, (size_t)(n - from) * sizeof *s);
	v->sites = s, v->nsites = (unsigned)(n - from);
	sd_real_pthread_mutex_lock(&site_lock);
	if (nseen >= 384) { /* 3/4 full: start over (the stacks stay: nodes share them) */
		memset(seen, 0, sizeof seen);
		nseen = 0;
	}
	k = seen_slot(v->site, v->sp);
	if (!seen[k].ret) {
		seen[k].ret = v->site, seen[k].sp = v->sp, seen[k].sites = s;
		seen[k].n = (uint8_t)v->nsites;
		nseen++;
	}
	pthread_mutex_unlock(&site_lock);
}

static uint32_t create(uint32_t parent, uint16_t attr, const struct sd_value *v)
{
	uint32_t id = atomic_load(&nnodes) + 1;
	if (id >= SD_NODES_MAX)
		return 0;
	if (!chunks[id / CHUNK] && !(chunks[id / CHUNK] = sd_mem_calloc(CHUNK, sizeof(struct node))))
		return 0;
	struct node *nd = node_at(id);
	nd->parent = parent;
	nd->sites = (uintptr_t *)v->sites;
	nd->nsites = (uint8_t)v->nsites;
	nd->attr = attr;
	nd->type = (uint8_t)v->type;
	nd->flags = v->truncated ? SD_CTX_FLAG_TRUNCATED : 0;
	if (v->type == SD_TYPE_INT) {
		nd->v.i = v->i;
	} else if (v->type == SD_TYPE_DOUBLE) {
		nd->v.d = v->d;
	} else {
		nd->v.s = sd_mem_alloc(v->len + 1);
		if (!nd->v.s)
			return 0;
		nd->len = (uint32_t)v->len;
		memcpy(nd->v.s, v->s, v->len);
		nd->v.s[v->len] = 0;
	}
	atomic_store_explicit(&nnodes, id, memory_order_release);
	return id;
}

static uint32_t find_or_create(uint32_t parent, uint16_t attr, const struct sd_value *v)
{
	if ((!table || 2 * (table->used + 1) > table->mask + 1) && table_grow() != 0 && !table)
		return 0;
	size_t h = slot_hash(parent, attr, v->key) & table->mask;
	for (;; h = (h + 1) & table->mask) {
		struct slot *s = &table->s[h];
		if (!s->node)
			break;
		if (s->key == v->key && s->parent == parent && s->attr == attr &&
		    same_value(node_at(s->node), v))
			return s->node;
	}
	uint32_t id = create(parent, attr, v);
	if (id) {
		struct slot *s = &table->s[h];
		s->key = v->key;
		s->parent = parent;
		s->attr = attr;
		atomic_store_explicit((_Atomic uint32_t *)&s->node, id, memory_order_release);
		table->used++;
	}
	return id;
}

/* The node for `v` of attribute `attr` under `parent`, created on first use.
 * Near the limit, new values share one "(capped)" node per (parent, attr);
 * at the limit, the value is left out (the parent is returned). */
/* Looks up an existing node without the lock: slots are filled once, their
 * node id stored last (release), and nodes never change after that. */
static uint32_t find_lockfree(uint32_t parent, uint16_t attr, const struct sd_value *v)
{
	struct ntable *t = atomic_load_explicit(&table_pub, memory_order_acquire);
	if (!t)
		return 0;
	struct slot *tab = t->s;
	size_t mask = t->mask;
	size_t h = slot_hash(parent, attr, v->key) & mask;
	for (;; h = (h + 1) & mask) {
		uint32_t node = atomic_load_explicit((_Atomic uint32_t *)&tab[h].node,
						     memory_order_acquire);
		if (!node)
			return 0;
		if (tab[h].key == v->key && tab[h].parent == parent && tab[h].attr == attr &&
		    same_value(node_at(node), v))
			return node;
	}
}

uint32_t sd_ann_child(uint32_t parent, uint16_t attr, const struct sd_value *value)
{
	uint32_t found = find_lockfree(parent, attr, value);
	if (found)
		return found;
	struct sd_value sv = *value, *v = &sv;
	v->sites = NULL, v->nsites = 0;
	if (v->site) /* a new node, most likely: where it is opened, before the lock */
		site_of(v);
	sd_real_pthread_mutex_lock(&lock);
	uint32_t id;
	if (atomic_load(&nnodes) < SD_NODES_MAX - CAP_RESERVE) {
		id = find_or_create(parent, attr, v);
	} else {
		/* Existing values still resolve; new ones become "(capped)". */
		struct sd_value capped = {.type = SD_TYPE_STRING, .s = "(capped)", .len = 8};
		capped.key = sd_ann_hash_str(capped.s, capped.len);
		id = 0;
		if (table) {
			size_t h = slot_hash(parent, attr, v->key) & table->mask;
			for (; table->s[h].node; h = (h + 1) & table->mask)
				if (table->s[h].key == v->key && table->s[h].parent == parent &&
				    table->s[h].attr == attr && same_value(node_at(table->s[h].node), v)) {
					id = table->s[h].node;
					break;
				}
		}
		if (!id)
			id = find_or_create(parent, attr, &capped);
		if (!atomic_exchange(&capped_said, 1))
			sd_ann_warn("sonde: annotations: %d distinct contexts reached, new values are "
				    "recorded as \"(capped)\" (see docs/API.md, Limits)",
				    SD_NODES_MAX - CAP_RESERVE);
	}
	pthread_mutex_unlock(&lock);
	return id ? id : parent;
}

/* Copies node `id`'s value into *v (strings point into the node). */
void sd_ann_node_value(uint32_t id, struct sd_value *v)
{
	const struct node *nd = node_at(id);
	v->type = nd->type;
	v->site = 0;
	v->truncated = (nd->flags & SD_CTX_FLAG_TRUNCATED) != 0;
	if (nd->type == SD_TYPE_INT) {
		v->i = nd->v.i;
		v->key = (uint64_t)nd->v.i;
	} else if (nd->type == SD_TYPE_DOUBLE) {
		v->d = nd->v.d;
		memcpy(&v->key, &nd->v.d, sizeof v->key);
	} else {
		v->s = nd->v.s;
		v->len = strlen(nd->v.s);
		v->key = sd_ann_hash_str(v->s, v->len);
	}
}

/* Node `id`'s string value and its length (NULL for other types). */
const char *sd_ann_node_str(uint32_t id, size_t *len)
{
	const struct node *nd = node_at(id);
	if (nd->type != SD_TYPE_STRING)
		return NULL;
	*len = nd->len;
	return nd->v.s;
}

uint32_t sd_ann_node_parent(uint32_t id)
{
	return id ? node_at(id)->parent : 0;
}

uint16_t sd_ann_node_attr(uint32_t id)
{
	return id ? node_at(id)->attr : 0;
}

uint32_t sd_annotate_node_count(void)
{
	return atomic_load_explicit(&nnodes, memory_order_acquire);
}

int sd_annotate_node_get(uint32_t id, struct sd_node_view *out)
{
	if (id == 0 || id > sd_annotate_node_count())
		return -1;
	const struct node *nd = node_at(id);
	out->parent = nd->parent;
	out->attr = nd->attr;
	out->type = nd->type;
	out->flags = nd->flags;
	out->i = nd->type == SD_TYPE_INT ? nd->v.i : 0;
	out->d = nd->type == SD_TYPE_DOUBLE ? nd->v.d : 0;
	out->s = nd->type == SD_TYPE_STRING ? nd->v.s : NULL;
	out->sites = nd->sites;
	out->nsites = nd->nsites;
	return 0;
}

uint32_t sd_annotate_attr_count(void)
{
	return atomic_load_explicit(&nattrs, memory_order_acquire);
}

int sd_annotate_attr_get(uint32_t id, struct sd_attr_view *out)
{
	if (id == 0 || id > sd_annotate_attr_count())
		return -1;
	out->name = attrs[id].name;
	out->type = attrs[id].type;
	out->scope = attrs[id].scope;
	return 0;
}

void sd_ann_lock(void)
{
	sd_real_pthread_mutex_lock(&lock);
}

void sd_ann_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void sd_ann_lock_reset(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&site_lock, NULL);
}

/* ---- values of the API's calls ------------------------------------------------- */

void sd_ann_value_str(struct sd_value *v, const char *fn, const char *attr, const char *s)
{
	memset(v, 0, sizeof *v);
	v->type = SD_TYPE_STRING;
	v->s = s ? s : "";
	v->len = strlen(v->s);
	if (v->len > SD_VALUE_MAX) {
		sd_ann_warn("sonde: %s(\"%s\"): value of %zu bytes truncated to %d (see docs/API.md, "
			    "Limits)", fn, attr, v->len, SD_VALUE_MAX);
		v->len = SD_VALUE_MAX;
		v->truncated = 1;
	}
	v->key = sd_ann_hash_str(v->s, v->len);
}

void sd_ann_value_int(struct sd_value *v, int64_t i)
{
	v->site = 0;
	v->truncated = 0;
	v->type = SD_TYPE_INT;
	v->i = i;
	v->key = (uint64_t)i;
}

void sd_ann_value_double(struct sd_value *v, double d)
{
	v->site = 0;
	v->truncated = 0;
	v->type = SD_TYPE_DOUBLE;
	v->d = d;
	memcpy(&v->key, &d, sizeof v->key);
}

/* Text of a node's value, for messages. */
const char *sd_ann_value_text(uint32_t node, char *buf, size_t len)
{
	struct sd_value v;
	sd_ann_node_value(node, &v);
	if (v.type == SD_TYPE_INT)
		snprintf(buf, len, "%lld", (long long)v.i);
	else if (v.type == SD_TYPE_DOUBLE)
		snprintf(buf, len, "%g", v.d);
	else
		snprintf(buf, len, "%s", v.s);
	return buf;
}
