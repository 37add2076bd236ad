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
};

/* Region events, as in docs/FORMAT.md REGION. */

/* Called by the sampler when a thread's context changes and regions are on;
 * ordinary context, on the thread whose context changed. */
typedef void (*sd_region_hook)(uint32_t node, int event);

/* Turns the API on (it is a cheap no-op until then). hook: NULL unless
 * SONDE_REGIONS=on. Ordinary context, once, from the runtime constructor. */
void sd_annotate_start(sd_region_hook hook);
/* Turns the API off again (process end): calls become no-ops. */
void sd_annotate_stop(void);

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
