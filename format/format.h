/* format.h - the sonde stream, defined once (docs/FORMAT.md is its prose).
 *
 * Everything a writer and a reader of a stream must agree on: the format
 * version, the record kinds, the position of every field in each record's
 * array, the bits of the flag fields, the pseudo-frame addresses, and the
 * names of drop reasons, unsampled reasons and region events. The runtime's
 * writer (writer/stream.c), the analyzer's reader (analyze/), the test
 * stream builder (tests/cli/mkstream.c) and the fuzz target use these
 * names; no other file spells a kind, a field position or a flag as a number.
 *
 * A record is a msgpack array whose element 0 is its kind; field k of a
 * record is element k. Readers ignore elements past the ones listed here,
 * so fields can be appended without a version bump; an incompatible change
 * bumps SD_FORMAT_VERSION, here and in docs/FORMAT.md.
 *
 * Header only, no code: included by the runtime (async-signal-safe parts
 * included) and by the analyzer alike.
 */
#ifndef SONDE_FORMAT_H
#define SONDE_FORMAT_H

/* HEADER: [SD_K_HEADER, SD_FORMAT_MAGIC, SD_FORMAT_VERSION, info] */
#define SD_FORMAT_MAGIC "sonde"
#define SD_FORMAT_VERSION 1

enum sd_kind {
	SD_K_HEADER = 1,
	SD_K_MODULE,
	SD_K_MODULE_END,
	SD_K_THREAD,
	SD_K_THREAD_END,
	SD_K_FRAME,
	SD_K_SAMPLE,
	SD_K_DROPS,
	SD_K_END,
	SD_K_NOTE,
	SD_K_ATTRIBUTE,
	SD_K_CONTEXT,
	SD_K_REGION,
	SD_K_THREAD_CPU,
	SD_K_UNSAMPLED,
	SD_K_REGION_STATS,
	SD_K_REGION_OPEN,
	SD_K_CHILD,
	SD_K_MESSAGES,
	SD_K_LAST = SD_K_MESSAGES /* the highest kind this version defines */
};

/* Record names, indexed by kind ("" for 0). */
#define SD_KIND_NAMES                                                                     \
	{ "", "HEADER", "MODULE", "MODULE_END", "THREAD", "THREAD_END", "FRAME", "SAMPLE", \
	  "DROPS", "END", "NOTE", "ATTRIBUTE", "CONTEXT", "REGION", "THREAD_CPU", "UNSAMPLED",     \
	  "REGION_STATS", "REGION_OPEN", "CHILD", "MESSAGES" }

/* Field positions, per kind (element 0 is the kind). Optional trailing
 * fields are marked; every other field is always present. */
enum { SD_F_HEADER_MAGIC = 1, SD_F_HEADER_VERSION, SD_F_HEADER_INFO, SD_F_HEADER_N };
enum { SD_F_MODULE_ID = 1, SD_F_MODULE_T, SD_F_MODULE_PATH, SD_F_MODULE_BUILD_ID,
       SD_F_MODULE_BIAS, SD_F_MODULE_LO, SD_F_MODULE_HI,
       SD_F_MODULE_SIZE,  /* optional (with MTIME): the file's size, nil: unknown */
       SD_F_MODULE_MTIME, /* optional: its modification time, ns since the epoch */
       SD_F_MODULE_N };
enum { SD_F_MODULE_END_ID = 1, SD_F_MODULE_END_T, SD_F_MODULE_END_N };
enum { SD_F_THREAD_ID = 1, SD_F_THREAD_TID, SD_F_THREAD_T, SD_F_THREAD_NAME, SD_F_THREAD_N };
enum { SD_F_THREAD_END_ID = 1, SD_F_THREAD_END_T, SD_F_THREAD_END_NAME,
       SD_F_THREAD_END_DELTAS, /* optional: counter deltas since the last sample */
       SD_F_THREAD_END_CPU,    /* optional (needs DELTAS): {cpu_ns, user_ns, sys_ns} */
       SD_F_THREAD_END_N };
enum { SD_F_FRAME_NODE = 1, SD_F_FRAME_PARENT, SD_F_FRAME_MODULE, SD_F_FRAME_ADDR,
       SD_F_FRAME_N };
enum { SD_F_SAMPLE_THREAD = 1, SD_F_SAMPLE_DT, SD_F_SAMPLE_SOURCE, SD_F_SAMPLE_NODE,
       SD_F_SAMPLE_WEIGHT,
       SD_F_SAMPLE_FLAGS,    /* optional from here on, in this order */
       SD_F_SAMPLE_CONTEXT,
       SD_F_SAMPLE_PCONTEXT,
       SD_F_SAMPLE_DELTAS,
       SD_F_SAMPLE_N };
enum { SD_F_DROPS_THREAD = 1, SD_F_DROPS_COUNTS, SD_F_DROPS_N };
enum { SD_F_END_T = 1, SD_F_END_REASON, SD_F_END_STATS, SD_F_END_N };
enum { SD_F_NOTE_T = 1, SD_F_NOTE_TEXT, SD_F_NOTE_N };
enum { SD_F_ATTRIBUTE_ID = 1, SD_F_ATTRIBUTE_NAME, SD_F_ATTRIBUTE_TYPE, SD_F_ATTRIBUTE_SCOPE,
       SD_F_ATTRIBUTE_N };
enum { SD_F_CONTEXT_NODE = 1, SD_F_CONTEXT_PARENT, SD_F_CONTEXT_ATTR, SD_F_CONTEXT_VALUE,
       SD_F_CONTEXT_FLAGS, /* optional */
       SD_F_CONTEXT_SITE,  /* optional (needs FLAGS): FRAME node of the code that opened it */
       SD_F_CONTEXT_N };
enum { SD_F_REGION_THREAD = 1, SD_F_REGION_T, SD_F_REGION_NODE, SD_F_REGION_EVENT,
       SD_F_REGION_COUNTS, /* optional: counter totals at the event */
       SD_F_REGION_N };
enum { SD_F_THREAD_CPU_THREAD = 1, SD_F_THREAD_CPU_T, SD_F_THREAD_CPU_NS, SD_F_THREAD_CPU_N };
enum { SD_F_UNSAMPLED_THREAD = 1, SD_F_UNSAMPLED_T, SD_F_UNSAMPLED_REASON, SD_F_UNSAMPLED_NS,
       SD_F_UNSAMPLED_N };
/* REGION_STATS: a thread's totals for one context node since the thread (or, in
 * a forked child, the stream) began; the last one of a (thread, node) counts. */
enum { SD_F_RSTATS_THREAD = 1, SD_F_RSTATS_T, SD_F_RSTATS_NODE, SD_F_RSTATS_CALLS,
       SD_F_RSTATS_INCL, SD_F_RSTATS_EXCL, SD_F_RSTATS_MIN, SD_F_RSTATS_MAX,
       SD_F_RSTATS_SUMSQ, SD_F_RSTATS_FORCED, SD_F_RSTATS_SITE,
       SD_F_RSTATS_COUNTS,  /* optional: inclusive counter deltas */
       SD_F_RSTATS_TRAFFIC, /* optional (needs COUNTS): [bytes sent, bytes received] */
       SD_F_RSTATS_N };
/* REGION_OPEN: a region of a thread still open when its REGION_STATS were read. */
enum { SD_F_ROPEN_THREAD = 1, SD_F_ROPEN_T, SD_F_ROPEN_NODE, SD_F_ROPEN_BEGIN, SD_F_ROPEN_N };
/* CHILD: a child process the program started, or one it reaped. */
enum { SD_F_CHILD_T = 1, SD_F_CHILD_PID, SD_F_CHILD_EVENT,
       SD_F_CHILD_VALUE, /* optional: events exit (code) and signal (number) */
       SD_F_CHILD_N };
/* MESSAGES: the MPI point-to-point messages this process (world rank `rank` of
 * `size`) sent, per peer (world rank), since its stream began; the last one counts.
 * peers: [[peer, msgs, bytes]...] */
enum { SD_F_MSGS_T = 1, SD_F_MSGS_RANK, SD_F_MSGS_SIZE, SD_F_MSGS_PEERS, SD_F_MSGS_N };

/* Field names (docs/FORMAT.md's layouts), per kind, after the kind:
 * fields[kind][SD_F_X - 1]; NULL after the last. */
#define SD_F_MAX SD_F_RSTATS_N /* the most elements of any record, the kind included */
#define SD_FIELD_NAMES                                                                  \
	{                                                                               \
		[SD_K_HEADER] = { "magic", "version", "info" },                         \
		[SD_K_MODULE] = { "module", "t", "path", "build_id", "bias", "lo", "hi",  \
				  "size", "mtime" },                                    \
		[SD_K_MODULE_END] = { "module", "t" },                                  \
		[SD_K_THREAD] = { "thread", "tid", "t", "name" },                       \
		[SD_K_THREAD_END] = { "thread", "t", "name", "deltas", "cpu" },         \
		[SD_K_FRAME] = { "node", "parent", "module", "addr" },                  \
		[SD_K_SAMPLE] = { "thread", "dt", "source", "node", "weight", "flags",   \
				  "context", "pcontext", "deltas" },                    \
		[SD_K_DROPS] = { "thread", "counts" },                                  \
		[SD_K_END] = { "t", "reason", "stats" },                                \
		[SD_K_NOTE] = { "t", "text" },                                          \
		[SD_K_ATTRIBUTE] = { "attr", "name", "type", "scope" },                 \
		[SD_K_CONTEXT] = { "node", "parent", "attr", "value", "flags", "site" }, \
		[SD_K_REGION] = { "thread", "t", "node", "event", "counts" },           \
		[SD_K_THREAD_CPU] = { "thread", "t", "cpu_ns" },                        \
		[SD_K_UNSAMPLED] = { "thread", "t", "reason", "cpu_ns" },               \
		[SD_K_REGION_STATS] = { "thread", "t", "node", "calls", "incl_ns",       \
					"excl_ns", "min_ns", "max_ns", "sumsq_ns2",     \
					"forced", "site", "counts", "traffic" },                   \
		[SD_K_REGION_OPEN] = { "thread", "t", "node", "begin_t" },              \
		[SD_K_CHILD] = { "t", "pid", "event", "value" },                        \
		[SD_K_MESSAGES] = { "t", "rank", "size", "peers" },                       \
	}

/* SAMPLE flags bits. */
#define SD_FLAG_TRUNCATED 1u   /* cut at max_depth */
/* The largest HEADER max_depth (SONDE_MAX_DEPTH's upper bound, docs/ENV.md). */
#define SD_MAX_DEPTH_MAX 1024u
#define SD_FLAG_PARTIAL 2u     /* the unwind stopped on an error */
#define SD_FLAG_SLOWPATH 4u    /* the unwinder fell back from its fast path */
#define SD_FLAG_NO_COUNTERS 8u /* the counters could not be read: no deltas, not zeros */
#define SD_FLAG_ACCOUNTED 16u  /* not a signal: time accounted by sonde (off CPU) */

/* CONTEXT flags bits. */
#define SD_CTX_FLAG_TRUNCATED 1u /* the value was cut at 255 bytes */

/* Pseudo-frames: FRAME records with module 0 and these addresses (never a
 * code address: below SD_PSEUDO_LIMIT) name time without an instruction of
 * its own; always the innermost frame of their path. */
#define SD_PSEUDO_BLOCKED 1u         /* inside a blocking call, stack from its entry */
#define SD_PSEUDO_OFFCPU 2u          /* off CPU elsewhere: last known stack */
#define SD_PSEUDO_KERNEL 3u          /* on CPU in kernel mode */
#define SD_PSEUDO_SIGNALS_BLOCKED 4u /* samples delivered late, when unblocked */
#define SD_PSEUDO_DL 5u              /* inside dlopen/dlclose */
#define SD_PSEUDO_SONDE 6u           /* sonde's own signal handler (alone: no stack) */
#define SD_PSEUDO_LIMIT 4096u
#define SD_PSEUDO_NAMES \
	{ "", "[blocked]", "[off-cpu]", "[kernel]", "[signals blocked]", "[dlopen/dlclose]", \
	  "[sonde]" }

/* REGION events. */
enum sd_region_event { SD_REGION_END = 0, SD_REGION_BEGIN = 1, SD_REGION_FORCED_END = 2,
		       SD_REGION_LOST = 3 /* events of the thread were dropped just before */ };

/* DROPS reasons, in the runtime's order (the names are what the stream
 * holds; readers must accept names they do not know). X(ENUM, "name"). */
#define SD_DROP_REASONS(X)                                                          \
	X(RING_FULL, "ring_full")                                                   \
	X(BUSY, "busy")                                                             \
	X(IN_DL, "in_dl")                                                           \
	X(NO_THREAD, "no_thread")                                                   \
	X(STOPPED, "stopped")                                                       \
	X(FD_STOLEN, "fd_stolen")                                                   \
	X(STACK, "stack")                     /* too little stack left to unwind */ \
	X(THROTTLED, "throttled")             /* queued when throttling began */    \
	X(QUEUE_OVERFLOW, "queue_overflow")   /* the signal queue was full */       \
	X(SIGNALS_BLOCKED, "signals_blocked") /* queued when a blocker ended */     \
	X(SIGNAL_LOST, "signal_lost")         /* counted overflows never signalled */ \
	X(REGION_RING_FULL, "region_ring_full") /* region events, not samples */
#define SD_DROP_ENUM_(e, name) SD_DROP_##e,
enum sd_drop { SD_DROP_REASONS(SD_DROP_ENUM_) SD_DROP_NREASONS };
#define SD_DROP_NAME_(e, name) name,
#define SD_DROP_NAMES { SD_DROP_REASONS(SD_DROP_NAME_) }
/* Reasons that count region events, not samples, start with this. */
#define SD_DROP_REGION_PREFIX "region_"

/* UNSAMPLED reasons. X(ENUM, "name"). */
#define SD_UNSAMPLED_REASONS(X)                                            \
	X(FD_CLOSED, "fd_closed")     /* sampling descriptor closed under us */ \
	X(NOT_SAMPLED, "not_sampled") /* a thread found but not sampled */      \
	X(CLONE_VM, "clone_vm_process") /* a child process sharing memory */
#define SD_UNSAMPLED_ENUM_(e, name) SD_UNSAMPLED_##e,
enum sd_unsampled { SD_UNSAMPLED_REASONS(SD_UNSAMPLED_ENUM_) SD_UNSAMPLED_NREASONS };
#define SD_UNSAMPLED_NAME_(e, name) name,
#define SD_UNSAMPLED_NAMES { SD_UNSAMPLED_REASONS(SD_UNSAMPLED_NAME_) }

/* CHILD events. X(ENUM, "name"). Readers accept names they do not know. */
#define SD_CHILD_EVENTS(X)                                                        \
	X(FORK, "fork")                     /* forked, followed: writes its stream */ \
	X(FORK_UNPROFILED, "fork_unprofiled") /* forked, SONDE_FOLLOW_FORK=0 */      \
	X(SPAWN, "spawn")                   /* posix_spawn: runs a new program */     \
	X(EXIT, "exit")                     /* reaped: exited, value the code */      \
	X(SIGNAL, "signal")                 /* reaped: killed, value the signal */
#define SD_CHILD_ENUM_(e, name) SD_CHILD_##e,
enum sd_child_event { SD_CHILD_EVENTS(SD_CHILD_ENUM_) SD_CHILD_NEVENTS };
#define SD_CHILD_NAME_(e, name) name,
#define SD_CHILD_NAMES { SD_CHILD_EVENTS(SD_CHILD_NAME_) }

#endif
