/* annotate_int.h - private to annotate/. */
#ifndef SONDE_ANNOTATE_INT_H
#define SONDE_ANNOTATE_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "annotate/annotate.h"

/* An attribute; a sonde_attr_t handle points to one. Immutable once its id
 * is published. */
struct sd_attr {
	uint16_t id;
	int type;
	int scope;
	char name[SD_ATTR_NAME_MAX + 1];
};

/* A value being looked up or read back. */
struct sd_value {
	int type;
	int truncated;
	int64_t i;
	double d;
	const char *s;
	size_t len;
	uint64_t key; /* int, double bits, or hash of the string */
	uintptr_t site; /* nonzero: a node made for this value records where (its stack);
			 * the entry point's return address, with sp its stack pointer: the
			 * key of the stacks already taken */
	uintptr_t sp;
	const uintptr_t *sites; /* filled by sd_ann_child: the stack of a node it makes */
	unsigned nsites;
};

/* One (thread, context node) of regions.c. Written by its thread only,
 * between two increments of seq (odd while writing); times in clock ticks. */
struct sd_rstat {
	_Atomic uint32_t seq;
	uint32_t node;
	uintptr_t site;
	/* the begin (ticks) of its call still open, 0 if none: set at begin outside
	 * seq (a begin changes no total), cleared with the totals at the end; kept
	 * across fork (the call goes on in the child) */
	_Atomic uint64_t open_t0;
	uint64_t calls, forced, incl, excl, min, max;
	double sumsq;
	uint64_t sent, recv; /* bytes its calls moved (MPI: sonde_rt_attr_end_traffic) */
	uint64_t counts[SD_REGION_COUNTERS_MAX];
	uint64_t written_calls, written_forced, written_open; /* what the collector wrote last */
};

/* regions.c: the clock (TSC ticks when sd_rclock_tsc, else ns) and tables. */
extern int sd_rclock_tsc;
void sd_rclock_init(void);
uint64_t sd_rclock_slow(void);
double sd_rclock_ns_per_tick(void);
struct sd_rtable *sd_rtable_new(unsigned ncounters, pid_t tid);
/* The entry of node in the calling thread's own table, made if new (NULL when
 * out of memory). */
struct sd_rstat *sd_rtable_entry(struct sd_rtable *t, uint32_t node);
void sd_rtable_fork_child(struct sd_rtable *own);
/* Adds to *out (zeroed by the caller; min_ns UINT64_MAX) every entry of `own` (scope
 * thread) or of every table and the finished threads' totals (process) whose node is a
 * level of attr with value v. Any thread, ordinary context; walks under the table list's
 * lock, never the writer's. */
void sd_rtable_query(struct sd_rtable *own, int process, uint16_t attr, const struct sd_value *v,
		     struct sd_region_stat *out);

struct sd_attr *sd_ann_attr_find(const char *name);
struct sd_attr *sd_ann_attr_get(const char *name, int type, int scope);
uint32_t sd_ann_child(uint32_t parent, uint16_t attr, const struct sd_value *v);
void sd_ann_node_value(uint32_t id, struct sd_value *v);
const char *sd_ann_node_str(uint32_t id, size_t *len);
uint32_t sd_ann_node_parent(uint32_t id);
uint16_t sd_ann_node_attr(uint32_t id);
/* Is node id a level of attribute attr with value v? */
int sd_ann_node_is(uint32_t id, uint16_t attr, const struct sd_value *v);
uint64_t sd_ann_hash_str(const char *s, size_t n);
/* A value of an API call: a string (cut at SD_VALUE_MAX, said once for fn's attr), an
 * integer or a double; and a node's value as text, for messages. */
void sd_ann_value_str(struct sd_value *v, const char *fn, const char *attr, const char *s);
void sd_ann_value_int(struct sd_value *v, int64_t i);
void sd_ann_value_double(struct sd_value *v, double d);
const char *sd_ann_value_text(uint32_t node, char *buf, size_t len);
void sd_ann_lock(void);
void sd_ann_unlock(void);
void sd_ann_lock_reset(void);
void sd_ann_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
