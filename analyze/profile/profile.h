/*
 * analyze/profile/profile.h: the merged profile: streams read (decode.c) and merged (merge.c)
 * into one call tree, per-thread and per-source tables, a merged annotation context tree,
 * sample rows per (context, call path) and region timings (profile.c); many files loaded
 * at once (load.c); --where filters (where.c); the coverage account's rows; the --group-by
 * key of a row (group.c); observers that hear of what the aggregation does not keep, such
 * as the timeline's event list (timeline.c). profile_int.h is the engine's own.
 */
#ifndef SONDE_ANALYZE_PROFILE_H
#define SONDE_ANALYZE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <regex.h>
#include <msgpack.h>

#include "analyze/util/util.h"
#include "analyze/read/read.h"
#include "analyze/symbols/symbols.h"

struct sd_profile;

/* ---- profile.c --------------------------------------------------------------------- */

/* One row of the threads view. */
struct sd_thread_row {
	uint64_t pid, tid;
	char *name;
	uint64_t samples;
	uint64_t periods;           /* the sum of its samples' weights */
	uint64_t first_ns, last_ns; /* time of the first and last sample (valid if samples) */
};

/* One row of the sources view, merged across streams by (name, period, unit, mechanism). */
struct sd_source_row {
	char *name, *spec, *unit, *mechanism;
	uint64_t period;
	uint64_t samples;
	double weight;              /* sum of weight x period, in `unit` */
	/* throttling (docs/ENV.md): threads (of streams whose NOTEs say the sampler
	 * throttled this source) with a signalled sample of weight > 1, the threads with
	 * samples of it, and the largest such weight (the multiple the period was raised
	 * to); counted while merging, before --where filters */
	uint64_t throttled_threads, sampled_threads, max_multiple;
};

/* One counter (HEADER `counters`), merged across streams by name. `total` sums the deltas
 * of the samples counted and of THREAD_END records (without --where/--source); `source` lists the distinct sources of all streams, joined
 * with ", ". */
struct sd_counter_row {
	char *name, *group, *unit, *source;
	uint64_t total;             /* includes end_total */
	uint64_t end_total;         /* of it, THREAD_END deltas (after a thread's last sample) */
	uint64_t streams;           /* streams whose header lists it */
};

/* A counter a stream asked for but could not have (HEADER `counters_unavailable`),
 * merged by (name, reason). */
struct sd_counter_unavail { char *name, *reason; uint64_t streams; };

/* Merged call tree: node 0 is the root; parent < child. */
/* how: SD_CNODE_CALLED / SD_CNODE_INLINED, the ways the node was reached from its parent
 * (a call, or code of func inlined into the parent's function at the same address). */
enum { SD_CNODE_CALLED = 1, SD_CNODE_INLINED = 2 };
/* addr: an address the node's function was sampled at, as recorded: the ELF address in
 * its module (the first merged; 0: none, an inlined function's node or a pseudo frame),
 * for pprof's locations. */
struct sd_cnode { uint32_t parent, func; uint64_t samples; double weight; uint32_t how;
		  uint64_t addr; };
/* The numbers of a stream's MODULE kept per module (profile_int.h, sstate.modstat). */
enum { SD_MODSTAT = 5 };
/* Is node x only ever inlined into its parent (one address, pprof's Line list)? */
#define SD_CNODE_IS_INLINE(n) ((n)->how == SD_CNODE_INLINED)

/* Merged annotation context tree: node 0 is the empty context; parent < child. `attr`
 * indexes sd_profile.attr_names, `value` sd_profile.value_strs (values as strings). */
/* site: 1 + the function whose code first opened the level (CONTEXT site), 0: unknown. */
struct sd_ctxnode { uint32_t parent, attr, value, site; };

/* Samples of one (stream, thread, source, context, process context, call node): what the
 * context views aggregate. Never one per sample. `tname` is owned by the thread row. */
struct sd_crow {
	uint32_t cnode, source, ctx, pctx; /* source: index into sd_profile.sources */
	uint64_t pid, tid;
	const char *tname;
	uint64_t samples;
	uint64_t periods;           /* sum of the samples' weights: the periods they stand for */
	double weight;
	uint64_t *counts;           /* counter deltas by sd_profile.counters index; owned */
	uint32_t ncounts;           /* entries in counts; later counters are 0 */
	uint32_t file, line;        /* source of the innermost frame (sd_sym_file id, 0:
				     * unknown), from the stream node's address */
	int64_t rank;               /* HEADER rank of its stream, -1 without one */
	uint32_t host;              /* HEADER host of its stream: index into value_strs */
	uint32_t stream;            /* index into sd_profile.sinfo */
	int thread_end;             /* 1: the THREAD_END deltas of its thread (what the
				     * counters advanced after its last sample): no sample,
				     * no source (`source` is not an index), no context; cnode
				     * is the pseudo function "[thread end]" */
};

/* One stream of the report (--view streams, and the notes every view states first). */
struct sd_stream_info {
	char *file;                 /* as given or found in a directory */
	uint64_t pid;
	int64_t rank;               /* -1 without one */
	char *host;
	char *end;                  /* reason of its END record; NULL: no END (incomplete) */
	uint64_t signal;            /* END reason "signal": the signal number (0: not said) */
	int truncated;              /* it ends inside a record */
	uint64_t samples;           /* SAMPLE records it holds (before --where, --source) */
	uint64_t samples_dropped;   /* DROPS of reasons that count samples */
	uint64_t regions;           /* REGION records it holds */
	uint64_t regions_dropped;   /* DROPS of reasons `region_*` (region events) */
	/* the process image (--view processes, --group-by process; docs/REPORT.md) */
	char *name;                 /* basename of argv[0], else of exe, else "?" */
	char *label;                /* "NAME[PID]" */
	char *command;              /* argv joined with spaces; NULL: no argv in the header */
	char *exe;                  /* HEADER exe; NULL: none */
	uint64_t ppid; int has_ppid;
	uint64_t origin_ns; int has_clock; /* HEADER clock monotonic_ns: when it began */
	uint64_t last_ns;           /* the latest t of its records (ns after origin) */
	double cpu_ns;              /* CPU time of its threads whose CPU time is known
				     * (THREAD_END cpu, else the last THREAD_CPU) */
	uint64_t cpu_threads;       /* threads with a known CPU time */
	uint64_t cpu_flush;         /* of them, known up to the last flush only */
	uint64_t threads;           /* threads it defined */
};

/* A child process that a stream's CHILD records name (docs/FORMAT.md): its parent's
 * stream started it (fork, spawn) or reaped it, or both. The processes view lists the
 * children that no stream of the report is from (docs/REPORT.md, "Processes view"). */
struct sd_child {
	uint64_t pid;
	uint32_t parent;            /* the stream that recorded it: index into sinfo */
	int how;                    /* enum sd_child_event of its start; -1: unknown */
	int has_start;              /* its start was recorded: start_ns is valid */
	uint64_t start_ns;          /* CLOCK_MONOTONIC (its parent's clock origin + t) */
	int end;                    /* SD_CHILD_EXIT or SD_CHILD_SIGNAL as the program reaped
				     * it (value: exit code or signal); -1: unknown */
	uint64_t end_ns, value;
	int has_stream;             /* a stream of the report is from its host and pid
				     * (sd_profile_children) */
};

/* ---- coverage.c: the CPU time the kernel measured against what the samples stand for ---- */

/* Sample drop reasons of docs/FORMAT.md (DROPS) as coverage gaps, in this order; the last,
 * "other_drops", sums reasons this sonde does not know (region_* are not samples). */
#define SD_COV_NDROP 11
extern const char *const sd_cov_drop_names[SD_COV_NDROP];

/* The most kernel time one context switch is taken to cost when the rest of a thread's
 * CPU time is named kernel time counted as user (coverage): a blocking pipe round trip
 * between two threads cost 14 us of CPU per switch on the 2-vCPU VM sonde is developed
 * on (syscalls included); what exceeds this bound stays unexplained. */
#define SD_COV_SWITCH_KERNEL_NS 50000.0

/* Where a thread's CPU time comes from. */
enum sd_cov_from { SD_COV_UNKNOWN, SD_COV_END, SD_COV_FLUSH };

/* The coverage account of one thread (or of the total): `cpu_ns` as the kernel measured
 * it, `sampled_ns` what its cpu-time samples stand for, and the gaps by cause, so that
 * sampled + drops + kernel + as_user + not_sampled + unexplained = cpu exactly (unexplained may be
 * negative: sampled more than measured). Valid when `computed` and cpu_from is known. */
struct sd_cov_row {
	uint64_t pid, tid;
	const char *name;           /* owned by its thread row (or static) */
	int computed;               /* its stream has a cpu-time source */
	enum sd_cov_from cpu_from;  /* END: THREAD_END cpu; FLUSH: its last THREAD_CPU, the
				     * account runs up to that record (the last flush) */
	int split;                  /* user_ns and sys_ns are known */
	int split_rejected;         /* recorded, but not used: less user time than sampled */
	double cpu_ns, user_ns, sys_ns;
	double sampled_ns;          /* weight x period of its cpu-time samples (not accounted) */
	double after_ns;            /* FLUSH: samples after its last THREAD_CPU (not counted) */
	double drops_ns[SD_COV_NDROP]; /* dropped samples x the cpu-time period */
	double kernel_ns;           /* sys_ns: kernel mode, which cpu-time does not sample */
	double as_user_ns;          /* kernel time around its context switches that the
				     * kernel's tick-based split counted as user time */
	double switches;            /* its context switches (counters), 0 if none known */
	double not_sampled_ns;      /* CPU time of a thread without samples or drops */
	double unexplained_ns;      /* the rest */
	uint64_t threads;           /* total: threads counted in it */
};

struct sd_coverage {
	struct sd_cov_row *rows; size_t n, cap; /* every thread of every stream, in order */
	double procwide_ns[SD_COV_NDROP];       /* DROPS of thread 0 (process-wide), x period */
	uint64_t streams_nocpu;                 /* streams without a cpu-time source */
	uint64_t streams_mixed;                 /* streams with cpu-time and other sources */
	uint64_t streams_cpu;                   /* streams with a cpu-time source */
	char *spec;                             /* the cpu-time spec of the first such stream */
	int specs_differ;                       /* streams sampled cpu-time at other periods */
};

/* A merged stream's process as --stats rank counts it: HEADER rank (-1: none) and pid. */
/* A process: its host (value_strs index), pid and start (HEADER start_ticks, 0 unknown:
 * then host and pid alone tell it), and the rank its streams carry. */
struct sd_proc { int64_t rank; uint64_t pid, start; uint32_t host; };

/* Timing of one region path (a thread context node) in one thread of one stream. */
struct sd_region_row {
	uint32_t ctx;
	uint64_t pid, tid;
	const char *tname;
	uint64_t calls, incl_ns, excl_ns, min_ns, max_ns, forced;
	uint64_t open_end;          /* calls open at the end of the stream (in calls, forced) */
	uint64_t left_out;          /* calls left out: a begin or end lost (not in calls) */
	double sumsq;               /* of the calls' inclusive times, ns^2 */
	uint32_t stream;            /* index into sd_profile.sinfo */
	uint64_t *counts;           /* inclusive counter deltas (REGION counts), by
				     * sd_profile.counters index; owned; NULL if none */
	uint32_t ncounts;
	uint64_t sent, recv;        /* bytes its calls sent and received (MPI calls) */
};

/* MPI point-to-point messages world rank src sent to world rank dst (the MESSAGES record
 * of a stream of src), for --view comm. */
struct sd_msg_row { uint32_t src, dst, stream; uint64_t msgs, bytes; };

/* One --where filter: attribute `attr` (an attr_names id) compared with `value`. */
enum sd_where_op { SD_WHERE_EQ, SD_WHERE_NE, SD_WHERE_PRESENT, SD_WHERE_ABSENT };
struct sd_where { enum sd_where_op op; uint32_t attr, value; };

/* ---- observers: who else hears of the samples and regions the engine reads ---------- */

/* The engine's per-stream state (profile_int.h), opaque outside the engine's files. */
struct sstate;
/* What an observer is told, as perf tells a `struct perf_tool`; any callback may be NULL.
 * While a stream is read (decode.c, possibly in a --jobs worker: write only *stream, the
 * observer's own state for that stream, NULL at first): a SAMPLE counted under aggregate
 * `agg` at its thread's time t, its weight x period and its checked counter deltas (or
 * NULL); a REGION event of a thread's context node. When the stream is merged (merge.c,
 * one thread): the frames of each address of its call paths, then the stream itself
 * (stream: the observer's state for it; its rows start at row0; keep_ends: THREAD_END
 * rows follow the sample rows). After --where filters dropped rows (where.c): the rows'
 * new numbers (map[old] = new, or UINT32_MAX: dropped), and the region calls to keep
 * (those for which ok(p, okarg, call as a region row) holds). stream_free frees a
 * stream's state, free the observer (arg). Results: 0 or -ENOMEM. */
struct sd_observer_ops {
	int (*sample)(const struct sstate *st, void **stream, uint64_t t, uint32_t agg,
		      double w, const msgpack_object *deltas);
	int (*region)(void **stream, uint32_t thread, uint64_t t, uint32_t node,
		      uint32_t event);
	void (*stream_free)(void *stream);
	int (*frames)(void *arg, const struct sd_frame *fr, int nf);
	int (*merged)(void *arg, struct sd_profile *p, const struct sstate *st,
		      const void *stream, size_t row0, int keep_ends);
	void (*rows_kept)(void *arg, const uint32_t *map);
	void (*regions_kept)(void *arg, const struct sd_profile *p,
			     int (*ok)(const struct sd_profile *, const void *,
				       const struct sd_region_row *), const void *okarg);
	void (*free)(void *arg);
};
#define SD_MAX_OBSERVERS 4
struct sd_observer { const struct sd_observer_ops *ops; void *arg; };

struct sd_profile {
	struct sd_symbolizer *sym;
	const char *only_source;    /* count only samples of this source name (NULL: all) */
	const char *picked_source;  /* the source a sample view shows when the streams hold
				     * several and no --source was given (sd_cli_resolve); NULL:
				     * none picked */
	struct sd_cnode *nodes; size_t nnodes, capnodes;
	struct sd_u64map children;  /* (parent << 32 | func) -> node */
	uint64_t *modrange; size_t nmodrange; /* per symbolizer module: bias, lo, hi of its
				     * first stream's MODULE that has them (lo == hi: none) */
	struct sd_thread_row *threads; size_t nthreads, capthreads;
	struct sd_source_row *sources; size_t nsources, capsources;
	uint64_t samples;           /* all samples counted */
	double weight;
	uint64_t dropped;           /* samples dropped: the last DROPS counts of every thread,
				     * reasons that do not start with "region_" */
	uint64_t dropped_regions;   /* region events dropped: reasons "region_*" */
	uint64_t samples_read;      /* SAMPLE records of the merged streams (drops are a
				     * share of samples_read + dropped; filters aside) */
	struct sd_stream_info *sinfo; size_t nsinfo, capsinfo; /* merged streams, in order */
	uint64_t streams, truncated;
	uint64_t unreadable; /* files given that could not be read (said, left out; load.c) */
	struct sd_proc *pids; size_t npids, cappids; /* distinct processes (host, pid, start) */
	struct sd_child *child; size_t nchild, capchild; /* CHILD records, merged */
	struct sd_u64map childmap;  /* pid -> its latest entry in children */
	size_t children_nostream;   /* children without a stream (sd_profile_children): the
				     * report's processes are npids + these */
	struct sd_proc *procs; size_t nprocs, capprocs; /* distinct (rank, process) of the streams */
	struct sd_strmap drop_reasons; uint64_t *drop_counts; size_t ndrop, capdrop;
	char **drop_names;
	/* annotation contexts, merged across streams by attribute name and value */
	struct sd_strmap attr_map, value_map;
	char **attr_names; size_t nattr_names, capattr_names;
	char **value_strs; size_t nvalue_strs, capvalue_strs;
	struct sd_ctxnode *ctx; size_t nctx, capctx;
	struct sd_strmap ctx_children; /* (parent, attr, value) -> ctx node */
	struct sd_crow *rows; size_t nrows, caprows;
	struct sd_region_row *regions; size_t nregions, capregions;
	struct sd_msg_row *msgs; size_t nmsgs, capmsgs; /* MESSAGES, all streams */
	uint32_t msg_world;            /* the largest world size they name */
	uint64_t region_records;       /* REGION records read, all streams */
	uint64_t region_stats;         /* REGION_STATS records read, all streams */
	uint64_t region_counts;        /* REGION records that carried counts */
	struct sd_counter_row *counters; size_t ncounters, capcounters;
	struct sd_counter_unavail *unavail; size_t nunavail, capunavail;
	uint64_t nocounters;           /* samples counted with flag 8 (counters unreadable) */
	uint64_t trunc_samples;        /* samples counted with flag 1 (cut at max_depth), whose
					* paths are under the root [truncated] */
	uint64_t trunc_depth_lo, trunc_depth_hi; /* their streams' max_depth (0: unknown) */
	double cpu_ns;                 /* weight of the cpu-time samples counted */
	struct sd_where *where; size_t nwhere; /* all must hold; applied while merging */
	struct sd_coverage cov;        /* the run's coverage account (no filter applies) */
	struct sd_observer obs[SD_MAX_OBSERVERS]; /* sd_profile_observe, in order */
	size_t nobs;
};

/* sym_flags: SD_SYM_* (sd_sym_new; 1 is --addresses). 0 or -ENOMEM. */
int sd_profile_init(struct sd_profile *p, int sym_flags);
void sd_profile_fini(struct sd_profile *p);
/* Register an observer before any stream is read: p owns arg from here (ops->free at
 * sd_profile_fini, or at once when SD_MAX_OBSERVERS are registered: -ENOSPC). 0 or
 * -ENOSPC. */
int sd_profile_observe(struct sd_profile *p, const struct sd_observer_ops *ops, void *arg);
/* Read a whole stream (header already unread) and merge it into p. The stream is merged
 * only if it is valid: 0 (complete), 1 (truncated: the valid prefix was merged),
 * or an SD_ERR_* / -errno (nothing merged). *bad_off gets the failing offset. */
int sd_profile_add(struct sd_profile *p, struct sd_stream *s, size_t *bad_off);
/* The same in two steps, for reading streams in parallel: parse (any thread;
 * reads only p's options) and merge (one thread at a time, in file order).
 * parse returns NULL when out of memory; merge frees the load and returns
 * what sd_profile_add would. */
struct sd_load;
/* Reads and merges files[0..n) with up to `jobs` threads (load.c); prints the
 * per-file messages; counts usable streams in *used. flags: SD_LOAD_STRICT (--strict:
 * a bad or incomplete file is fatal), SD_LOAD_PROGRESS (--progress: progress lines when
 * stderr is not a terminal). SD_EXIT_OK, the exit code of the first bad file under
 * strict, or -ENOMEM. */
enum { SD_LOAD_STRICT = 1, SD_LOAD_PROGRESS = 2 };
int sd_load_files(struct sd_profile *p, char **files, size_t n, int jobs, unsigned flags,
		  size_t *used);
struct sd_load *sd_profile_parse(const struct sd_profile *p, struct sd_stream *s);
int sd_profile_merge(struct sd_profile *p, struct sd_load *l, size_t *bad_off);
/* What tells a stream from its copies: its HEADER's pid, host and clock origin (host
 * valid while l is). 0, or -ENOENT when l was not read whole or its HEADER has no clock. */
int sd_load_ident(const struct sd_load *l, uint64_t *pid, const char **host, uint64_t *origin_ns);
/* After the last stream was merged: which children recorded by a stream's CHILD
 * records have a stream of their own (same host and pid), and how many do not. */
void sd_profile_children(struct sd_profile *p);
/* Drop a load without merging it. */
void sd_load_free(struct sd_load *l);
/* wire.c: a load as bytes of this build (for processes of one job) and back. pack: 0 or
 * -ENOMEM (*out malloc'ed); unpack: NULL when buf is not such bytes or on ENOMEM (name:
 * the stream's, not copied). */
int sd_load_pack(const struct sd_load *l, uint8_t **out, size_t *len);
struct sd_load *sd_load_unpack(const uint8_t *buf, size_t len, const char *name);

/* Streams parsed in other processes (the MPI report, cli/report_mpi.c): process 0 merges,
 * processes 1..nprocs-1 parse file i when 1 + i % (nprocs - 1) is theirs and send it, in
 * file order. Every process calls agree() once, with its file count and a hash of the
 * names (0 when it reads none): 1 when every process gave the same, then sd_load_files
 * works as said (a parsing process calls finished() after its last file, which does not
 * return); 0: process 0 reads everything itself, the others read nothing. Not used when
 * the profile has observers (their per-stream state is not sent). */
struct sd_load_remote {
	void *arg;
	int me, nprocs;
	int (*agree)(void *arg, uint64_t n, uint64_t names);
	int (*send)(void *arg, const uint8_t *buf, size_t len);        /* to process 0 */
	int (*recv)(void *arg, int from, uint8_t **buf, size_t *len);  /* malloc'ed */
	void (*finished)(void *arg);
};
/* Sets (or with NULL clears) the remote loading of later sd_load_files calls. */
void sd_load_set_remote(const struct sd_load_remote *r);
/* where.c: add a plain --where filter (`attr=value`, `attr!=value`, `attr`, `!attr`)
 * before any stream is merged. 0, -EINVAL (malformed: empty attribute name) or -ENOMEM. */
int sd_profile_where(struct sd_profile *p, const char *expr);
/* where.c: do all plain --where filters hold for merged contexts (ctx, pctx)? */
int sd_where_ctx_ok(const struct sd_profile *p, uint32_t ctx, uint32_t pctx);
/* Id of attribute name `name` in p->attr_names, created if needed: >= 0 or -ENOMEM. */
long sd_profile_attr(struct sd_profile *p, const char *name);
/* Id of value `v` in p->value_strs, created if needed: >= 0 or -ENOMEM. */
long sd_profile_value(struct sd_profile *p, const char *v);
/* The value of attribute `attr` in a sample with contexts (ctx, pctx): the innermost on
 * the thread path, else the innermost on the process path. 1 and *value, or 0 (absent). */
int sd_ctx_value(const struct sd_profile *p, uint32_t ctx, uint32_t pctx, uint32_t attr,
		 uint32_t *value);
/* Counter k of a row (0 past its array). */
static inline uint64_t sd_crow_count(const struct sd_crow *r, size_t k)
{
	return k < r->ncounts ? r->counts[k] : 0;
}

/* ---- where.c: --where filters tested after loading --------------------------------- */

/* attr~REGEX / attr!~REGEX, and any filter on a built-in key (builtin >= 0: function,
 * module, thread, process, source); op as struct sd_where (EQ: matches). */
struct sd_filter { enum sd_where_op op; int builtin, is_re; char *name, *value; regex_t re; };
struct sd_filters { struct sd_filter *v; size_t n; };
/* Take --where `expr` if it is one of these: 1; 0: a plain attribute filter (give it to
 * sd_profile_where); -EINVAL with the reason in err (no name, bad regex); -ENOMEM. */
int sd_filters_add(struct sd_filters *f, const char *expr, char *err, size_t errlen);
/* Drop the rows (and regions) of a loaded profile that fail a filter and recompute the
 * totals from the kept rows (where.c says which). 0 or -ENOMEM. */
int sd_filters_apply(struct sd_profile *p, const struct sd_filters *f);
void sd_filters_fini(struct sd_filters *f);

/* group.c: the --group-by key of a row (thread: the tid; with text, "TID (NAME)" as the
 * group-by view's text shows it), for the group-by view, diff and --stats.
 * sd_grouper_key: the values, each followed by a NUL, in *key (len bytes, valid until
 * the next call); 0 or -ENOMEM. new: NULL on ENOMEM. */
struct sd_grouper;
struct sd_grouper *sd_grouper_new(const struct sd_profile *p, char *const *names, size_t n,
				  int text);
int sd_grouper_key(struct sd_grouper *g, const struct sd_crow *r, const char **key,
		   size_t *len);
void sd_grouper_free(struct sd_grouper *g);

/* ---- timeline.c: the event list of --format speedscope, trace and html --------------- */
/*
 * The profile aggregates samples into rows without time order (profile.c); a timeline
 * needs each sample at its time. So a timeline attached (only for these formats) is an
 * observer of the engine: it keeps every counted SAMPLE as (time, aggregate key, weight,
 * counter deltas) and every REGION event while a stream is read, in the stream's own ids;
 * when the stream is merged it maps them to the merged rows (struct sd_crow: call node,
 * source, contexts, thread, stream), pairs region begins and ends into slices and keeps
 * each thread's start and end. Every other report attaches none and pays one
 * predictable branch per sample.
 */

/* One counted sample (or, with `end`, a thread's THREAD_END deltas: no sample). */
struct sd_tl_sample {
	uint64_t t;                 /* ns after its stream's origin (the thread's clock) */
	uint32_t row;               /* index into p->rows (kept current by sd_filters_apply) */
	uint32_t thread;            /* index into p->threads */
	double weight;              /* weight x period, in its source's unit */
	size_t cnt;                 /* offset of its deltas in tl->counts, SIZE_MAX: none */
	uint32_t ncnt;              /* deltas there (merged counter ids 0..ncnt-1) */
	int end;                    /* THREAD_END deltas: the row's counts, t = thread end */
};

/* One region call: begin and end (ns after its stream's origin) on one thread. */
struct sd_tl_region {
	uint64_t begin, end;
	uint32_t thread, ctx;       /* p->threads index; merged context node (the region) */
	uint32_t depth;             /* open regions of its thread around it */
	int forced;                 /* ended by a misnested end or by the stream's end */
};

/* A thread's lifetime as its records say (ns after its stream's origin). */
struct sd_tl_thread { uint64_t t0, t_end; uint32_t stream; int known; };

struct sd_timeline {
	struct sd_tl_sample *samples; size_t nsamples, capsamples; /* in record order per stream */
	uint64_t *counts; size_t ncounts, capcounts;
	struct sd_tl_region *regions; size_t nregions, capregions;
	struct sd_tl_thread *threads; size_t nthreads, capthreads; /* by p->threads index */
	uint32_t *func_file; size_t nfunc_file, capfunc_file; /* func id -> sd_sym_file id */
};
/* Keep every sample and region event in time (the timeline formats), or with
 * regions_only the region calls only (--format html's region timeline): an event list
 * registered on p as an observer before loading. 0, -ENOMEM or -ENOSPC. */
int sd_timeline_attach(struct sd_profile *p, int regions_only);
/* p's event list (sd_timeline_attach), or NULL. */
struct sd_timeline *sd_timeline_of(const struct sd_profile *p);

#endif
