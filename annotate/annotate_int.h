/* annotate_int.h - private to annotate/. */
#ifndef SONDE_ANNOTATE_INT_H
#define SONDE_ANNOTATE_INT_H

#include <stddef.h>
#include <stdint.h>

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
};

struct sd_attr *sd_ann_attr_find(const char *name);
struct sd_attr *sd_ann_attr_get(const char *name, int type, int scope);
uint32_t sd_ann_child(uint32_t parent, uint16_t attr, const struct sd_value *v);
void sd_ann_node_value(uint32_t id, struct sd_value *v);
const char *sd_ann_node_str(uint32_t id, size_t *len);
uint32_t sd_ann_node_parent(uint32_t id);
uint16_t sd_ann_node_attr(uint32_t id);
uint64_t sd_ann_hash_str(const char *s, size_t n);
void sd_ann_lock(void);
void sd_ann_unlock(void);
void sd_ann_lock_reset(void);
void sd_ann_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
