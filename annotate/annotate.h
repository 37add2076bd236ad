/* annotate.h - the annotate component's interface: attributes, the
 * generalized context tree, per-thread and process blackboards.
 *
 * The public API (include/sonde.h, sonde_rt_* entry points) runs in program
 * threads, ordinary context. The signal handler reads only the two
 * blackboards (_sigsafe functions below): each is one word holding a context
 * node id, published after the node itself is complete, so a sample never
 * sees a node that is not yet readable. The writer reads nodes and
 * attributes by id (they are immutable once published) to write CONTEXT and
 * ATTRIBUTE records before the first sample that uses them.
 */
#ifndef SONDE_ANNOTATE_H
#define SONDE_ANNOTATE_H

#include <stdint.h>

#include "format/format.h"

#define SD_ATTR_MAX 256
#define SD_ATTR_NAME_MAX 63
#define SD_VALUE_MAX 255
#define SD_NODES_MAX 65536
#define SD_STACK_MAX 64

enum sd_type { SD_TYPE_STRING = 0, SD_TYPE_INT = 1, SD_TYPE_DOUBLE = 2 };
enum sd_scope { SD_SCOPE_THREAD = 0, SD_SCOPE_PROCESS = 1 };

struct sd_attr_view {
	const char *name;
	int type;  /* enum sd_type */
	int scope; /* enum sd_scope */
};

struct sd_node_view {
	uint32_t parent;
	uint16_t attr;
	uint8_t type;
	uint8_t flags; /* 1 = value truncated */
	int64_t i;
	double d;
	const char *s;
	/* where it was first opened: return addresses, innermost first (sonde's own
	 * frames included), nsites of them (0: unknown) */
	const uintptr_t *sites;
	unsigned nsites;
};

/* Region timing aggregated in each thread (SONDE_REGIONS=on, regions.c): one
 * entry per (thread, context node), collected by the writer. A consistent copy
 * of an entry, in ns; counts: inclusive counter deltas (ncounts of them). */
#define SD_REGION_COUNTERS_MAX 8
struct sd_region_stat {
	uint32_t node;
	uintptr_t site; /* where the node was first opened (the caller's return address) */
	uint64_t calls, forced, incl_ns, excl_ns, min_ns, max_ns;
	double sumsq_ns2; /* sum of the squared inclusive times */
	uint64_t sent, recv; /* bytes its calls sent and received (MPI calls), 0: none */
	int changed;            /* collect: calls or forced changed since the last one */
	uint64_t open_begin_ns; /* a call still open began then (CLOCK_MONOTONIC); 0: none */
	unsigned ncounts;
	uint64_t counts[SD_REGION_COUNTERS_MAX];
};
struct sd_rtable;

/* Calls fn with each entry of t that changed since the last collection (calls
 * or forced ends: s->changed) or whose open call did (one began, or it is open
 * and its totals changed: s->open_begin_ns). Writer thread; the table's thread
 * may run on. Returns how many. */
int sd_annotate_rtable_collect(struct sd_rtable *t,
			       void (*fn)(void *arg, const struct sd_region_stat *s), void *arg);
/* Frees a table whose thread has ended and that was collected a last time
 * (its totals stay in the process's, for queries). */
void sd_annotate_rtable_free(struct sd_rtable *t);

/* What the sampler gives the annotate component at start. */
struct sd_annotate_hooks {
	/* SONDE_REGIONS=trace: every begin and end, on the thread itself */
	void (*region)(uint32_t node, int event);
	/* SONDE_REGIONS=on: regions aggregated in each thread's table */
	int aggregate;
	/* counters read at each begin and end of an aggregated region (0: none),
	 * and the reader of the calling thread's totals (0, or -1: unreadable) */
	unsigned ncounters;
	int (*read_counters)(uint64_t *out);
	/* a thread's new table: the sampler links it to the thread's ring; 1 if
	 * it did (the writer frees it then), 0 if the thread has no ring */
	int (*adopt_table)(struct sd_rtable *t);
	/* after an aggregated region's end, on the thread, ordinary context: a
	 * moment for the runtime to write (a single-threaded program has no
	 * writer thread). May be NULL. */
	void (*ended)(void);
};

/* Region events, as in docs/FORMAT.md REGION. */

/* Turns the API on (it is a cheap no-op until then). hooks: NULL for
 * annotations that only label samples. Ordinary context, once, from the
 * runtime constructor. */
void sd_annotate_start(const struct sd_annotate_hooks *hooks);

/* The calling thread's current thread-scope context node, and the process
 * context node. async-signal-safe. */
uint32_t sd_annotate_thread_ctx_sigsafe(void);
uint32_t sd_annotate_process_ctx_sigsafe(void);

/* The calling thread is ending: regions still open get forced-end events.
 * Ordinary context. */
void sd_annotate_thread_exit(void);

/* Published counts and immutable entries, for the writer. Ids from 1. */
uint32_t sd_annotate_node_count(void);
int sd_annotate_node_get(uint32_t id, struct sd_node_view *out);
uint32_t sd_annotate_attr_count(void);
int sd_annotate_attr_get(uint32_t id, struct sd_attr_view *out);

/* fork: hold the annotation lock across fork. */
void sd_annotate_fork_prepare(void);
void sd_annotate_fork_parent(void);
void sd_annotate_fork_child(void);

#endif
