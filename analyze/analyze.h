/*
 * analyze/analyze.h: the one interface of the offline analyzer and CLI (`sonde`).
 *
 * Three rooms, each calling only the ones before it:
 *   the engine: a stream into a profile
 *     stream.c    reads a docs/FORMAT.md stream record by record (format/format.h; bounded
 *                 memory, byte offsets)
 *     hash.c      two small hash maps (u64 -> u32, string -> u32)
 *     symbols.c, symcache.c  (module, ELF vaddr) to function, file and line with
 *                 elfutils; cached per build-id, in memory and across reports
 *     profile.c   the profile: streams merged into one call tree, per-thread/per-source
 *                 tables, a merged annotation context tree, sample rows per (context,
 *                 call path) and region timings; decode.c reads one stream's records
 *                 (one function per kind), merge.c merges it (profile_int.h: theirs)
 *     load.c      loads many files (--jobs); where.c: --where filters; coverage.c: the
 *                 CPU time measured against what the samples stand for
 *   the report: a profile into text, csv, json, folded
 *     emit.c      what every view prints through: percent, JSON/CSV strings, the metric
 *     table.c     the one row printer: columns declared once, text/csv/json rows
 *     output.c    the dispatcher (sd_output) and the function, thread, source, counter
 *                 and stream views
 *     views.c     the context views (--group-by, --view tree, --view regions);
 *                 view_*.c the others (callers, stats, tree csv/json, processes)
 *   the CLI: `sonde SUBCOMMAND`
 *     main.c      the command table; cmd_*.c one file per subcommand; cli.c the options,
 *                 PATHs and loading that report and diff share
 *
 * Everything here runs in one ordinary thread of the `sonde` process; nothing is shared
 * with the runtime (libsonde.so) except docs/FORMAT.md.
 */
#ifndef SONDE_ANALYZE_H
#define SONDE_ANALYZE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <regex.h>
#include <sys/types.h>
#include <msgpack.h>

#include "format/format.h"

/* Exit codes of the CLI (listed in `sonde --help`). `sonde run` returns the child's. */
enum sd_exit {
	SD_EXIT_OK = 0,
	SD_EXIT_USAGE = 2,    /* bad command line */
	SD_EXIT_IO = 3,       /* a file or directory could not be read */
	SD_EXIT_BADINPUT = 4, /* the input is not a (valid) sonde stream */
};

/* ---- subcommands (cmd_*.c): argv[0] is the subcommand name; result is an exit code ---- */
int sd_cmd_run(int argc, char **argv);
/* run_old.c: an earlier run's streams in `sonde run`'s directory (dirfd; out as the
 * user named it, abs_out its absolute path) moved to DIR.old when they are over, or
 * kept; either said in one line on stderr. 0 or -ENOMEM. */
int sd_run_old_streams(int dirfd, const char *out, const char *abs_out, mode_t dmode);
int sd_cmd_report(int argc, char **argv);
int sd_cmd_dump(int argc, char **argv);
int sd_cmd_events(int argc, char **argv);
int sd_cmd_diff(int argc, char **argv);

/* ---- cmd_events.c, events_papi.c / events_nopapi.c: `sonde events` ---------------- */

/* One probed item: kind (source, counter, papi, papi-preset, papi-native), status
 * (available, unavailable, fallback), where it comes from and why (all owned). */
struct sd_event_row { char *kind, *name, *status, *source, *reason; };
struct sd_events { struct sd_event_row *rows; size_t n, cap; };
/* Append a row (strings copied; source/reason may be NULL): 0 or -ENOMEM. */
int sd_events_add(struct sd_events *ev, const char *kind, const char *name, const char *status,
		  const char *source, const char *reason);
/* Probe PAPI (library, perf_event component, presets, a few native events) and append
 * rows; `paranoid` is /proc/sys/kernel/perf_event_paranoid. 0 or -ENOMEM. */
int sd_events_papi(struct sd_events *ev, int paranoid);

/* ---- stream.c ---------------------------------------------------------------------- */

/* Errors of the reader beyond plain -errno from open/read. */
#define SD_ERR_TRUNC  (-EPIPE)   /* the data ends inside a record */
#define SD_ERR_CORRUPT (-EBADMSG) /* bytes that are not msgpack, or a record not [kind, ...] */
#define SD_ERR_FOREIGN (-EPROTO)  /* first record is not a sonde HEADER */
#define SD_ERR_EMPTY  (-ENODATA)  /* zero bytes */
#define SD_ERR_VERSION (-EPROTONOSUPPORT) /* a sonde HEADER of another format version */
#define SD_ERR_NOTREG (-EMEDIUMTYPE) /* not a regular file (FIFO, device, socket) */

/* The reader's bounds (docs/FORMAT.md, "Size"): the window a file is read through, the
 * window's low-water mark, and the largest record it accepts, in bytes and in values
 * (every array element or map key and value, nested ones included). */
#define SD_WINDOW_BYTES (1u << 20)
#define SD_REFILL_BYTES (64u << 10)
#define SD_MAX_RECORD_BYTES (16u << 20)
#define SD_MAX_RECORD_VALUES (1u << 20)

/* A reader over one stream. Fields are read-only for callers. */
struct sd_stream {
	const char *name;        /* for messages; not owned */
	const uint8_t *data;     /* the window: bytes [base, base + have) of the stream (a
				  * file: buf; memory: the caller's, all of it) */
	size_t len_bytes;        /* size of the stream (a file: fstat at open) */
	size_t base, have;
	uint8_t *buf;            /* a file's window (owned), cap bytes */
	size_t cap;
	int fd;                  /* a file's descriptor, -1 for memory */
	unsigned mode;           /* st_mode of the file opened (SD_ERR_NOTREG says which) */
	size_t off;              /* byte offset of the next record */
	uint64_t nrecords;       /* records returned so far */
	size_t err_off;          /* offset of the record that failed (after an error) */
	const char *err_why;     /* what was wrong with it (static string) */
	uint64_t version;        /* from the HEADER */
	msgpack_unpacked up;     /* storage of the last record returned */
	msgpack_object fast[16]; /* the last record, when decoded on the fast path */
	msgpack_object fastn[16];
	char why_buf[160];       /* err_why when it names a field (profile.c) */
};

/* One record: valid until the next sd_stream_next() or sd_stream_close(). */
struct sd_record {
	size_t offset;           /* byte offset of the record in the stream */
	uint64_t kind;
	const msgpack_object *v; /* the whole array: v[0] is the kind */
	uint32_t n;              /* number of elements */
};

/* open(path, flags | O_CLOEXEC) for a path of any length: one longer than PATH_MAX (the
 * runtime writes into such directories, with openat) is opened by pieces, each
 * relative to the directory before it. A descriptor, or -1 and errno as open's. */
int sd_open_path(const char *path, int flags);
/* Open `path` (sd_open_path) without blocking (O_NONBLOCK) and check the descriptor: a regular file is
 * read through a bounded window; a directory is -EISDIR and anything else SD_ERR_NOTREG
 * (s->mode says what it is). 0 or -errno. Call sd_stream_close in every case. */
int sd_stream_open(struct sd_stream *s, const char *path);
/* Read from caller memory `data` (kept, not copied). Never fails. */
void sd_stream_init_mem(struct sd_stream *s, const char *name, const void *data, size_t len);
/* Next record: 1 and *rec filled, 0 at a clean end, SD_ERR_TRUNC, SD_ERR_CORRUPT (also a
 * record past SD_MAX_RECORD_BYTES or SD_MAX_RECORD_VALUES), -errno (read error, ENOMEM).
 * After an error the stream stays at the failing record (err_off). */
int sd_stream_next(struct sd_stream *s, struct sd_record *rec);
/* Read the first record and check it is a sonde HEADER: 0, SD_ERR_EMPTY, SD_ERR_FOREIGN,
 * SD_ERR_TRUNC (bytes are the start of a header), SD_ERR_CORRUPT does not occur here. */
int sd_stream_header(struct sd_stream *s, struct sd_record *rec);
void sd_stream_close(struct sd_stream *s);
/* Print `sonde: NAME: <why> (<hint>)` for an open/header/next error other than
 * truncation, and return the exit code that goes with it. */
int sd_stream_perror(const struct sd_stream *s, const char *name, int err);
/* Print `sonde: NAME: not a regular file (<what it is>; <hint>)` for a file of st_mode
 * `mode`; returns SD_EXIT_BADINPUT. */
int sd_notreg_perror(const char *name, unsigned mode);

/* Field accessors: 0 and *out set if element i exists with the right type, else -EINVAL. */
int sd_rec_u64_slow(const struct sd_record *r, uint32_t i, uint64_t *out);
/* Element i as a number (a float, or an unsigned integer): 0, or -EINVAL. */
int sd_rec_f64(const struct sd_record *r, uint32_t i, double *out);
/* Element i as an unsigned integer: 0, or -EINVAL (absent, or not one).
 * Inline: it is called for every field of every sample. */
static inline int sd_rec_u64(const struct sd_record *r, uint32_t i, uint64_t *out)
{
	if (i < r->n && r->v[i].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*out = r->v[i].via.u64;
		return 0;
	}
	return sd_rec_u64_slow(r, i, out);
}
int sd_rec_str(const struct sd_record *r, uint32_t i, const char **p, uint32_t *len);
/* Look up key `key` in a msgpack map; NULL if absent or obj is not a map. */
const msgpack_object *sd_map_get(const msgpack_object *map, const char *key);
/* Copy a str object into a fresh NUL-terminated string (NULL if not a str). Caller frees. */
char *sd_obj_strdup(const msgpack_object *o);
int sd_obj_u64(const msgpack_object *o, uint64_t *out);

/* ---- hash.c ------------------------------------------------------------------------ */

/* Open-addressing map from u64 keys to u32 values. Zero-initialize to init. */
struct sd_u64map { uint64_t *keys; uint32_t *vals; size_t cap, n; };
/* Grows the array *pp (elements of `size` bytes, capacity *cap) to hold at
 * least `need`, doubling, the new part zeroed. 0 or -ENOMEM (array kept). */
int sd_grow(void *pp, size_t *cap, size_t need, size_t size);
int sd_u64map_get(const struct sd_u64map *m, uint64_t key, uint32_t *val); /* 1 found, 0 not */
int sd_u64map_put(struct sd_u64map *m, uint64_t key, uint32_t val);        /* 0 or -ENOMEM */
void sd_u64map_fini(struct sd_u64map *m);

/* Map from byte strings (copied) to u32. Zero-initialize to init. */
struct sd_strmap { char **keys; size_t *klens; uint32_t *vals; size_t cap, n; };
int sd_strmap_get(const struct sd_strmap *m, const void *key, size_t len, uint32_t *val);
int sd_strmap_put(struct sd_strmap *m, const void *key, size_t len, uint32_t val);
void sd_strmap_fini(struct sd_strmap *m);

/* ---- symbols.c --------------------------------------------------------------------- */

/* A function: what the flat profile has one row for. Keyed by (module path, name). */
struct sd_func {
	char *name;      /* symbol name, or "module+0xADDR" / "0xADDR" when unknown */
	char *module;    /* basename of the module path ("" for none) */
	char *display;   /* name, plus " [module]" when the name occurs in two modules */
};

/* One frame of an address: function, and the source file (sd_sym_file; 0: unknown) and
 * line where that function is at the address (for an inlined call's caller: the call). */
struct sd_frame { uint32_t func, file, line; };

/* Flags of sd_sym_new (and sd_profile_init). */
enum {
	SD_SYM_ADDRESSES = 1,    /* never look up names (always module+0xoffset) */
	SD_SYM_NO_INLINE = 2,    /* one frame per address: no inlined frames */
	SD_SYM_NO_DEMANGLE = 4,  /* keep C++ names mangled */
	SD_SYM_LINES = 8,        /* name frames "function file:line" (--lines) */
	SD_SYM_SHORT = 16,       /* --short-names: C++ names without template arguments,
				  * parameters and clone suffixes */
};

struct sd_symbolizer;
/* flags: SD_SYM_*. NULL on ENOMEM. */
struct sd_symbolizer *sd_sym_new(int flags);
void sd_sym_free(struct sd_symbolizer *sy);
/* Register a module of a stream; returns a module handle >= 0 or -ENOMEM. Modules with
 * the same path and build-id share a handle; modules with the same build-id share one
 * loaded file. A relative path is taken relative to cwd (the stream's HEADER `cwd`, an
 * absolute path, or NULL: then the module is not symbolized, with a warning). build_id
 * may be NULL. */
int sd_sym_module(struct sd_symbolizer *sy, const char *path, const char *cwd,
		  const uint8_t *build_id, size_t build_id_len);
/* Function id of address `addr` in module handle `mod` (-1: no module, addr is raw; -2:
 * module id not defined in the stream): the innermost of its frames (sd_sym_frames).
 * Result >= 0, or -ENOMEM. Cached per (mod, addr). */
int sd_sym_lookup(struct sd_symbolizer *sy, int mod, uint64_t addr);
/* Frames of (mod, addr) as for sd_sym_lookup, outermost first: the function containing
 * the address, then one per inlined call down to the innermost. Returns their number
 * (>= 1) and *frames (valid until the next sd_sym_* call that may add frames), or
 * -ENOMEM / -EINVAL. Cached per (mod, addr). */
/* The name of a pseudo-frame (FRAME with module 0 and a small address,
 * docs/FORMAT.md), or NULL when addr is not one. */
const char *sd_pseudo_frame_name(uint64_t addr);
int sd_sym_frames(struct sd_symbolizer *sy, int mod, uint64_t addr,
		  const struct sd_frame **frames);
/* Path of a file id of struct sd_frame ("" for 0 and unknown ids). */
const char *sd_sym_file(const struct sd_symbolizer *sy, uint32_t file);
/* A pseudo function with a fixed name such as "[no stack]". */
int sd_sym_pseudo(struct sd_symbolizer *sy, const char *name);
/* Source "file:line" of (mod, addr)'s innermost frame into buf, 0 or -ENOENT/-ENOMEM. */
int sd_sym_srcline(struct sd_symbolizer *sy, int mod, uint64_t addr, char *buf, size_t len);
/* A C++ name as --short-names shows it: template arguments "<>", no parameters, no
 * clone suffix (operator<, operator<<, operator() kept). malloc'ed; NULL on ENOMEM. */
char *sd_sym_short_name(const char *name);
/* Fill every func's `display` (call once after all lookups). 0 or -ENOMEM. */
int sd_sym_finish(struct sd_symbolizer *sy);
size_t sd_sym_nfuncs(const struct sd_symbolizer *sy);
/* The modules registered (sd_sym_module): how many, and module i's path, basename (what
 * struct sd_func's module holds) and build-id (NULL, 0: none). */
size_t sd_sym_nmodules(const struct sd_symbolizer *sy);
void sd_sym_module_info(const struct sd_symbolizer *sy, size_t i, const char **path,
			const char **base, const uint8_t **build_id, size_t *build_id_len);
const struct sd_func *sd_sym_func(const struct sd_symbolizer *sy, uint32_t id);

/* ---- symcache.c: raw locations of one ELF file, in memory and across reports ------- */

enum { SD_BUILD_ID_MAX = 64, SD_SYM_MAX_INLINE = 64 };
/* What an address of a file resolves to, before the report's options apply: the symbol
 * table's name (no version), the DWARF subprogram's name, the address's own file:line,
 * and the inlined calls at it, innermost first, each with the file:line of its call. */
struct sd_rawinl { const char *name, *file; uint32_t line; };
struct sd_rawloc {
	const char *sym, *outer, *file; /* NULL: unknown */
	uint32_t line, ninl;
	struct sd_rawinl *inl;          /* room for SD_SYM_MAX_INLINE */
};
/* The file a cache was made from: its build-id (may be empty) and stat identity. */
struct sd_fileid {
	uint8_t bid[SD_BUILD_ID_MAX]; uint32_t bid_len;
	uint64_t dev, ino, size; int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};
struct sd_symcache;
/* An empty cache; NULL on ENOMEM. */
struct sd_symcache *sd_symcache_new(void);
void sd_symcache_free(struct sd_symcache *c);
/* 1 and *l (strings valid until the next put) if addr is cached, else 0. */
int sd_symcache_get(const struct sd_symcache *c, uint64_t addr, struct sd_rawloc *l);
/* Add addr's location (copied; a cached addr is kept as is): 0 or -ENOMEM. */
int sd_symcache_put(struct sd_symcache *c, uint64_t addr, const struct sd_rawloc *l);
/* 1 if entries were added since it was loaded or saved, or it was touched. */
int sd_symcache_dirty(const struct sd_symcache *c);
/* Mark c to be saved (it was made from another file of the same build-id). */
void sd_symcache_touch(struct sd_symcache *c);
/* Open (creating it and its parents, 0700) the cache directory: an fd (O_CLOEXEC), or -1
 * with the reason in why and errno: EPERM when it is there but unsafe (a symlink, not
 * a directory, owned by another user), else why it could not be made or opened. */
int sd_symcache_dir_open(const char *dir, char *why, size_t len);
/* Read cache file `name` of dirfd made for build-id want->bid and size want->size: 0
 * and *out, with *same_file = 1 when it was made from a file of want's identity; -ENOENT (none),
 * -EINVAL (not a valid cache of that file: corrupt, truncated, foreign), -ENOMEM,
 * -errno. Never trusts the file: every offset and count is checked. */
int sd_symcache_load(int dirfd, const char *name, const struct sd_fileid *want,
		     struct sd_symcache **out, int *same_file);
/* Write c as cache file `name` of dirfd, atomically (temporary file, 0600, renamed): 0
 * or -errno. */
int sd_symcache_save(int dirfd, const char *name, struct sd_symcache *c,
		     const struct sd_fileid *id);

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
struct sd_cnode { uint32_t parent, func; uint64_t samples; double weight; uint32_t how; };
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
/* Index into sd_cov_drop_names of a DROPS reason, or -1 for region_* (not samples). */
int sd_cov_drop_index(const char *reason);

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
struct sd_profile;
struct sd_report_opts;
/* text: the coverage block of every text report's header (docs/REPORT.md, "Coverage"). */
void sd_cov_block(FILE *out, const struct sd_profile *p);
/* json: `"coverage":{...},` (the total; with threads, one object per thread too). */
void sd_cov_json(FILE *out, const struct sd_profile *p, int with_threads);
/* --view coverage: one row per thread and a total row (text, csv, json). 0 or -ENOMEM. */
int sd_out_coverage(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

/* A merged stream's process as --stats rank counts it: HEADER rank (-1: none) and pid. */
struct sd_proc { int64_t rank; uint64_t pid; };

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
};

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
	uint64_t *pids; size_t npids, cappids; /* distinct processes */
	struct sd_child *child; size_t nchild, capchild; /* CHILD records, merged */
	struct sd_u64map childmap;  /* pid -> its latest entry in children */
	size_t children_nostream;   /* children without a stream (sd_profile_children): the
				     * report's processes are npids + these */
	struct sd_proc *procs; size_t nprocs, capprocs; /* distinct (rank, pid) of the streams */
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
 * per-file messages; counts usable streams in *used. SD_EXIT_OK, the exit code
 * of the first bad file under strict, or -ENOMEM. */
int sd_load_files(struct sd_profile *p, char **files, size_t n, int jobs, int strict,
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

/* ---- emit.c (the helpers every view uses) and output.c (sd_output, the dispatcher) ---- */

/* 100 * v / all, 0 when all is not positive. */
double sd_pct(double v, double all);
/* strcmp, but runs of digits compare as the numbers they are ("iteration=2" before
 * "iteration=10"; "-" and "." stay characters): how every view orders names and values
 * when its metric ties. */
int sd_natcmp(const char *a, const char *b);
/* Levenshtein distance of two short strings (a typo's distance to a name; strings of
 * over 63 bytes count as far from everything: 64). */
unsigned sd_edit_distance(const char *a, const char *b);
/* The name nearest to s, at most 2 edits away ("did you mean"), or NULL: names are the
 * n `const char *` (NULL ones skipped) found `stride` bytes apart from `names` (an
 * array of strings, or the name field first in an array of structs). */
const char *sd_nearest(const char *s, const void *names, size_t n, size_t stride);
/* The same over keys of values each followed by a NUL (la, lb bytes), value by value. */
int sd_natcmp_keys(const char *a, size_t la, const char *b, size_t lb);

enum sd_format { SD_FMT_TEXT, SD_FMT_FOLDED, SD_FMT_CSV, SD_FMT_JSON, SD_FMT_PPROF, SD_FMT_SVG,
		 SD_FMT_HTML, SD_FMT_SPEEDSCOPE, SD_FMT_TRACE };
enum sd_view { SD_VIEW_FLAT, SD_VIEW_THREADS, SD_VIEW_SOURCES, SD_VIEW_TREE,
	       SD_VIEW_REGIONS, SD_VIEW_COUNTERS, SD_VIEW_GROUP, SD_VIEW_CALLERS,
	       SD_VIEW_CALLEES, SD_VIEW_STREAMS, SD_VIEW_COVERAGE, SD_VIEW_PROCESSES,
	       SD_VIEW_MODEL };

struct sd_report_opts {
	enum sd_format format;
	enum sd_view view;
	int weight;                 /* --metric weight */
	int samples;                /* --metric samples: a count of samples; without weight,
				     * samples or counter the metric is the periods (the sum
				     * of the samples' weights) */
	const char *counter;        /* --metric COUNTER: a counter name or group, else NULL */
	/* set by sd_metric_resolve() once the streams are loaded: */
	const char *weight_unit;    /* --metric weight: NULL = ns (shown as ms), else the unit */
	uint32_t *cids; size_t ncids; /* --metric COUNTER: the counters it sums (owned) */
	size_t top;                 /* 0: all rows */
	char **group_by; size_t ngroup; /* SD_VIEW_GROUP: key names (not owned) */
	double min_percent;         /* tree: prune nodes below this share */
	int min_percent_given;      /* --min-percent given: the flat view drops rows too */
	int by_thread;              /* regions: one row per thread */
	int context_above;          /* tree: context levels above the stack, not spliced */
	const char *region;         /* model: the region (NAME, or ATTR=VALUE) */
	char **params; size_t nparams; /* model: the parameters' attribute names */
	int fit_min;                /* model: fit the shortest call per value, not the mean */
	const char *output;         /* -o FILE: where pprof (or svg, speedscope, trace; NULL:
				     * stdout) goes */
	const char *color_by;       /* svg: --color-by ATTR (NULL: colour by module) */
	const char *func;           /* callers/callees: the function NAME (not owned) */
	int stats;                  /* --stats: 0 none, else enum sd_stats_key */
};

int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* Resolve o->counter and the weight unit against the loaded profile: 0, -ENOENT (no
 * counter or group of that name), -ENODATA (only listed as unavailable), -EDOM (--metric
 * weight over sources of different units), -ENOMEM. Frees nothing; see sd_metric_fini. */
int sd_metric_resolve(const struct sd_profile *p, struct sd_report_opts *o);
void sd_metric_fini(struct sd_report_opts *o);
/* The metric of one row, the total of the metric over all counted samples, and a value
 * printed as the metric shows it (ms with 3 decimals for ns weight, else an integer). */
double sd_metric_row(const struct sd_report_opts *o, const struct sd_crow *r);
double sd_metric_total(const struct sd_profile *p, const struct sd_report_opts *o);
void sd_metric_put(FILE *out, const struct sd_report_opts *o, double v, int width);
/* The metric's name: the counter's, "weight", "samples" or "periods" (the default). */
const char *sd_metric_name(const struct sd_report_opts *o);
/* Column name of the metric with prefix (e.g. "self" -> "self", "self_ms", "self_events"). */
const char *sd_metric_col(const struct sd_report_opts *o, const char *prefix, char *buf,
			  size_t len);
/* The footer warning about samples without counter values (nothing if there are none). */
void sd_nocounters_warning(FILE *out, const struct sd_profile *p);
/* outfile.c: -o FILE made safely (docs/REPORT.md, "Output files"): a new file or the
 * user's own regular file is written into a temporary file beside it (0600 by
 * SONDE_MODE, less the umask) that sd_outfile_done renames into place; another user's
 * file or link, or a link in a directory others can change, is refused; a device, or
 * where a trusted link leads, is written in place. */
struct sd_outfile {
	const char *path;       /* as given (messages); NULL: stdout, nothing to do */
	int dirfd;              /* FILE's directory, O_PATH; -1 when done */
	int replace;            /* the temporary file replaces the user's own file */
	char name[256];         /* FILE's last component */
	char tmp[224];          /* the temporary file ("": written in place) */
};
/* Opens path for writing: the descriptor (close-on-exec; the caller closes it, then
 * calls sd_outfile_done), or -EIO after one line on stderr (refused, or why not). */
int sd_outfile_open(struct sd_outfile *of, const char *path);
/* After the descriptor is closed: ok, the temporary file renamed into place (0, or -EIO
 * after one line); not ok, it is removed (0). Closes of->dirfd. */
int sd_outfile_done(struct sd_outfile *of, int ok);
/* emit.c: -o FILE of the file formats (svg, html, speedscope, trace): sd_out_open
 * gives FILE opened for writing by sd_outfile_open into *of, or out when path is NULL
 * (NULL, said on stderr, when it cannot be opened); sd_out_close closes it, puts it in
 * place, says `sonde: WHAT written to PATH (HINT)` on stdout, or why it could not be
 * written. err: the writer's result; returns it, or -EIO. */
FILE *sd_out_open(FILE *out, const char *path, struct sd_outfile *of);
int sd_out_close(FILE *f, struct sd_outfile *of, int err, const char *what, const char *hint);
/* emit.c: the n bytes of s as XML (svg) or HTML text or attribute value: &, <, >, ", '
 * escaped, control characters as '?', invalid UTF-8 as U+FFFD; at most max bytes of s
 * (whole characters). */
void sd_xml_put(FILE *out, const char *s, size_t n, size_t max);
/* What every view states before its rows (docs/REPORT.md, "Notes"): incomplete streams,
 * streams ended by a signal, dropped samples and region events, sources of different
 * periods counted together (views counting samples). text: the lines on out;
 * csv, folded: the lines on stderr; json: the lines on stderr and `"warnings":[...],`
 * on out (a key of the view's object, so the caller prints it after the `{`). */
void sd_notes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* Number of incomplete streams (no END record). */
size_t sd_incomplete(const struct sd_profile *p);
/* view_flat.c: the flat view (its text header, the notes and coverage block under it)
 * and its folded call paths; view_lists.c: --view threads, sources, counters, streams
 * (the caller printed the notes; streams: the caller opens the JSON object). Called by
 * sd_output after sd_sym_finish: 0 or -ENOMEM. */
int sd_out_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_folded(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_threads(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_sources(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_counters(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_streams(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* views.c, called by sd_output after sd_sym_finish: 0 or -ENOMEM. */
int sd_out_group(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_tree(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_regions(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
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
/* view_callers.c: --view callers|callees o->func: 0, -ENOENT (no such function), -ENOMEM */
int sd_out_callers(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* The metric of each merged call node's own samples (index: node; caller frees). NULL on
 * ENOMEM. */
double *sd_node_values(const struct sd_profile *p, const struct sd_report_opts *o);
void sd_csv_str(FILE *out, const char *s);
/* Text output of a name from a stream (program names, argv, symbols, annotations): the
 * escaped form of s[0..len) into dst (NULL: only measured), its length returned.
 * Newline, tab, CR and backslash as \n \t \r \\; other control characters (C0, DEL, and
 * C1 as UTF-8) and bytes that are not UTF-8 as \xNN each; the rest as is. So a name
 * never moves the cursor, sets the terminal's title or breaks a row. */
size_t sd_text_esc(char *dst, const char *s, size_t len);
/* s (NUL-terminated) escaped so onto out. */
void sd_text_put(FILE *out, const char *s);
/* JSON helpers shared with `dump`. */
void sd_json_str(FILE *out, const char *s, size_t len);
void sd_json_obj(FILE *out, const msgpack_object *o);
/* The opening of a view's JSON object: {"metric":M,"samples":N,"weight_UNIT":W (or
 * "weight_ms"), without the closing brace. */
void sd_json_head(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		  const char *metric);

/* ---- model.c: performance models (--view model) ---------------------------------- */

/* t = c0 + c1 * n^I[i] * log2(n)^j per parameter (Extra-P's normal form; the exponent
 * sets are listed in model.c): with several parameters, a sum of one term each, or one
 * product of them. constant: t = c0. r2 on all points; cv_smape: leave-one-out mean
 * relative error (percent), what chose the model. */
#define SD_MODEL_MAXPARAMS 3
struct sd_term { unsigned i, j; };
struct sd_model {
	size_t nparams;
	int constant, product;
	struct sd_term terms[SD_MODEL_MAXPARAMS];
	double c[SD_MODEL_MAXPARAMS + 1];
	double r2, cv_smape;
};
/* Fits n points (x: nparams values each, y: the measured value) with the hypothesis of
 * least cross-validated error. 0, -EINVAL (fewer than 3 points, or too many params),
 * -ENOMEM. */
int sd_model_fit(const double *x, const double *y, size_t n, size_t nparams,
		 struct sd_model *out);
double sd_model_eval(const struct sd_model *m, const double *x);
double sd_model_term(const struct sd_term *t, double n);
/* "c0 + c1 * n^2 * log2(n) UNIT" with the coefficients times scale, into buf. */
void sd_model_text(char *buf, size_t len, const struct sd_model *m, char *const *names,
		   const char *unit, double scale);

/* ---- table.c: the one row printer of the tabular views ----------------------------- */

/* A column: its name (the CSV header and JSON key; text shows `text` when set), whether
 * text aligns it left (else right), its least text width, the text between it and the
 * column before ("  " when NULL), in which formats it appears (SD_IN_* bits, 0: all) and,
 * for JSON, the array it belongs to: consecutive columns of one group print as one array
 * `"group":[...]`. The names must outlive the table. A `fixed` column pads each text cell
 * to `width` on its own, as printf's "%*s" does (a wider cell shifts the rest of its row
 * only), instead of aligning the column to its widest cell (for views whose text was
 * printf columns). */
enum { SD_IN_TEXT = 1, SD_IN_CSV = 2, SD_IN_JSON = 4 };
struct sd_col {
	const char *name, *text, *gap, *group;
	unsigned char left, in, fixed;
	unsigned short width;
};
struct sd_table;
/* A table in o->format over ncols columns (not copied: they must outlive it). NULL on
 * ENOMEM. Cells are added row by row, one per column in order, shown or not. */
struct sd_table *sd_table_new(const struct sd_report_opts *o, const struct sd_col *cols,
			      size_t ncols);
void sd_table_str(struct sd_table *t, const char *s);      /* a string */
void sd_table_u64(struct sd_table *t, uint64_t v);         /* an integer */
void sd_table_num(struct sd_table *t, const char *fmt, ...) /* a printf number, < 64 chars */
	__attribute__((format(printf, 2, 3)));
void sd_table_metric(struct sd_table *t, double v);        /* the report's metric */
void sd_table_pct(struct sd_table *t, double pct);         /* text "12.34%", else 12.34 */
void sd_table_ms(struct sd_table *t, uint64_t ns);         /* ns as ms, 3 decimals */
void sd_table_null(struct sd_table *t);                    /* none: "-", empty, null */
/* In text only (CSV and JSON keep the cell): the cell added last shows the printf result
 * instead, of any length; with max > 0 (at least 3), escaped (sd_text_esc) and, when
 * longer than max bytes, cut to at most max - 3 and ended by "..." (arbitrary strings
 * kept on one line of bounded width). For a text-only column, add any cell first. */
void sd_table_text(struct sd_table *t, size_t max, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t sd_table_rows(const struct sd_table *t);
/* Print the header and the first nrows rows (0: all): text aligned, CSV with a header
 * line, JSON as `"json_key":[{...},...]` (the caller writes the enclosing object). 0, or
 * -ENOMEM when a cell could not be added. */
int sd_table_print(FILE *out, const struct sd_table *t, size_t nrows, const char *json_key);
/* All rows as the end of a view's output: in JSON, `"json_key":[...]}` and a newline, the
 * view's object opened here too unless the caller printed `{` and its head (opened). */
int sd_table_print_view(FILE *out, const struct sd_table *t, const char *json_key, int opened);
void sd_table_free(struct sd_table *t);

/* export_html.c: --format html, one self-contained page of the run's views, on out or
 * into o->output (said on stdout). 0, -EIO (said) or -ENOMEM. */
int sd_out_html(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* output.c: one view of p on out in o's format, without the notes sd_output puts
 * first (export_html.c prints views as tables). 0 or an error of the view. */
int sd_output_view(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* output.c: say how writing the pprof file `path` went (err: 0, or -errno after the
 * writer said why on stderr, outfile.c; the line on stdout when written). 0, -ENOMEM or
 * -EIO. */
int sd_pprof_said(const char *path, int err);
/* export_pprof.c: the profile as a gzipped pprof Profile into path: 0 or -errno. */
int sd_out_pprof(const char *path, const struct sd_profile *p);

/* view_model.c: --view model: 0, -ENOENT (said: no calls or too few values), -ENOMEM */
int sd_out_model(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);

/* view_processes.c: --view processes, one row per process image (stream): 0 or -ENOMEM */
int sd_out_processes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

/* ---- cli.c: options, PATHs and loading shared by `sonde report` and `sonde diff` ---- */

/* The stream files of PATHs as `sonde report` reads them (a file as is; a directory's
 * *.sonde files and its subdirectories', names sorted). SD_EXIT_OK, or SD_EXIT_IO /
 * SD_EXIT_BADINPUT after printing why, or -ENOMEM. *files (each string and the array,
 * possibly partial on error) belong to the caller. */
int sd_expand_paths(char *const *paths, size_t npaths, char ***files, size_t *nfiles);

enum { SD_CLI_REPORT = 1, SD_CLI_DIFF = 2 };

/* A command line of report or diff. Zeroed, then sd_cli_parse; sd_cli_fini frees. */
struct sd_cli {
	unsigned cmd_bit;       /* SD_CLI_REPORT or SD_CLI_DIFF */
	const char *cmd, *see;  /* "report", "see 'sonde report --help'": for messages */
	int help;               /* -h/--help: usage printed, nothing else to do */
	char **paths;           /* positional arguments, in order */
	size_t npaths;
	enum sd_format format;
	enum sd_view view;      /* report */
	const char *func;       /* report: --view callers|callees NAME */
	int weight;             /* --metric weight|time */
	int samples;            /* --metric samples */
	const char *counter;    /* --metric COUNTER */
	char **group_by;        /* --group-by KEY,... (into group_copy) */
	size_t ngroup;
	char *group_copy;
	const char **wheres;    /* --where, in order */
	size_t nwheres;
	size_t top;
	const char *source;     /* --source NAME */
	double min_percent;     /* report: --min-percent (0.5) */
	int min_percent_given;
	int stats;              /* report: --stats, enum sd_stats_key */
	int by_thread;          /* report */
	int context_above;      /* report: --context-above */
	const char *region;     /* report: --region (--view model) */
	int fit_min;            /* report: --fit min (--view model) */
	const char *output;     /* -o FILE (report: --format pprof or svg; diff: svg) */
	const char *color_by;   /* report: --color-by ATTR (--format svg) */
	char **params;          /* report: --param NAME,... (into param_copy) */
	size_t nparams;
	char *param_copy;
	int absolute;           /* diff */
	int sym;                /* SD_SYM_* flags: --addresses, --[no-]inline, ... */
	int strict, jobs;
};

/* Parses argv (argv[0] is the subcommand) for command cmd_bit: every option of the one
 * table that this command takes, each error one `sonde: CMD:` line. SD_EXIT_OK (with
 * c->help set after -h), SD_EXIT_USAGE, or -ENOMEM. */
int sd_cli_parse(struct sd_cli *c, unsigned cmd_bit, const char *usage, int argc, char **argv);
void sd_cli_fini(struct sd_cli *c);
/* Loads the streams of PATHs into p (initialized here) with the --where filters (parsed
 * into filters), --source and the symbol flags. `label` names the input in messages (a
 * diff side's path; NULL for report). An exit code or -ENOMEM. */
int sd_cli_load(const struct sd_cli *c, char *const *paths, size_t npaths, const char *label,
		struct sd_profile *p, struct sd_filters *filters);
/* --metric COUNTER in a view by code (functions, call paths, files, lines, modules):
 * said in one line, -EINVAL; else 0. */
int sd_cli_counter_by_code(const struct sd_cli *c, const struct sd_report_opts *o);
/* After loading: the filters applied, the metric resolved into o (each failure said). */
int sd_cli_resolve(const struct sd_cli *c, const char *label, struct sd_profile *p,
		   const struct sd_filters *filters, struct sd_report_opts *o);

/* ---- view_stats.c: --stats KEY, a row's spread across threads, processes or ranks ---- */

enum sd_stats_key { SD_STATS_NONE, SD_STATS_THREAD, SD_STATS_PROCESS, SD_STATS_RANK };
/* "thread", "process", "rank" by enum sd_stats_key (index 0: ""), NULL-terminated. */
extern const char *const sd_stats_names[];
/* Per-row sums of the metric per unit (thread (pid, tid), process pid, or rank: HEADER
 * rank, else the stream's pid), over every unit of the loaded profile (threads: its
 * thread rows; processes and ranks: its streams), rows with no samples in a unit
 * counting 0 there. Rows are ids chosen by the view (function id, group index). */
struct sd_stats;
/* NULL on ENOMEM. key: enum sd_stats_key, not NONE. */
struct sd_stats *sd_stats_new(const struct sd_profile *p, int key);
/* Add v (the metric of sample row r) to view row `row`: 0 or -ENOMEM. */
int sd_stats_add(struct sd_stats *s, uint32_t row, const struct sd_crow *r, double v);
/* Folded stacks ("a;b;c V" a line, sorted by path; with top, the heaviest `top` lines) of a tree of n nodes, 0 the root
 * (never printed): one line per node whose own value is positive, its path the names
 * from below the root down to it. emit.c. 0 or -ENOMEM. */
struct sd_folded_tree {
	uint32_t n;
	size_t top; /* --top: only the `top` heaviest lines (0: all) */
	const void *ctx;
	uint32_t (*parent)(const void *ctx, uint32_t i);
	const char *(*name)(const void *ctx, uint32_t i);
	double (*value)(const void *ctx, uint32_t i);
};
int sd_folded_print(FILE *out, const struct sd_folded_tree *t);
/* The nodes of t on the paths sd_folded_print prints (with t->top, of the heaviest
 * lines: --top in the tree view's other formats): one flag per node (malloc'ed; NULL on
 * ENOMEM). */
uint8_t *sd_folded_keep(const struct sd_folded_tree *t);
/* The JSON key naming the unit of the stats, `"stats":"KEY",`, for the view's head. */
void sd_stats_json_key(FILE *out, const struct sd_stats *s);
/* The stats columns: min, mean, max and population stddev of the row's values over all
 * units, and n, the number of units: SD_STATS_NCOLS column specs (static) and one row's
 * cells. */
#define SD_STATS_NCOLS 5
extern const struct sd_col sd_stats_cols[SD_STATS_NCOLS];
void sd_stats_cells(struct sd_table *t, const struct sd_stats *s,
		    const struct sd_report_opts *o, uint32_t row);
void sd_stats_free(struct sd_stats *s);
/* The flat view's stats: each sample row's metric added to its innermost function (the
 * function's self). NULL on ENOMEM. */
struct sd_stats *sd_stats_flat(const struct sd_profile *p, const struct sd_report_opts *o);

/* ---- view_tree_fmt.c: --view tree --format text|csv|json -------------------------- */

/* One printed node of the tree view, in depth-first order (depth 0: the outermost). */
struct sd_tree_line { uint32_t depth; const char *name; double total, self; };
/* Print lines[0..n) in o->format (not folded): text with indented names, csv or json
 * rows with their `;`-joined paths. 0 or -ENOMEM. */
int sd_out_tree_rows(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		     const struct sd_tree_line *lines, size_t n);

/* ---- export_svg.c: --format svg, a self-contained interactive flame graph ---------- */

/* The paths a flame graph is drawn from: the tree folded output prints (`f`, its --top
 * included: the frames are the merged prefixes of exactly the lines sd_folded_print
 * writes, each line's value rounded as it prints it), and what each node is, for its
 * colour: `what` gives 0 and *id = its function (sd_sym_func of p), or 1 with *id, *val
 * = the attribute and value (p->attr_names, p->value_strs) of an annotation level (the
 * tree view's context frames). call_nodes: f's node ids are p's call nodes (the flat
 * view), so --color-by can read the value of each sample row. `view` names the view in
 * the subtitle. */
struct sd_tree_src {
	struct sd_folded_tree f;
	const struct sd_profile *p;
	int (*what)(const void *ctx, uint32_t i, uint32_t *id, uint32_t *val);
	int call_nodes;
	const char *view;
};
/* views.c: --view tree's merged tree, for a tree exporter (svg, pprof): NULL on ENOMEM.
 * sd_tree_view_src: its paths (top: the heaviest `top` folded lines, 0: all), valid while
 * tv is. */
struct sd_tree_view;
struct sd_tree_view *sd_tree_view_new(const struct sd_profile *p, const struct sd_report_opts *o);
struct sd_tree_src sd_tree_view_src(const struct sd_tree_view *tv, size_t top);
void sd_tree_view_free(struct sd_tree_view *tv);
/* export_pprof.c: --view tree --format pprof, the tree view's paths (annotation levels
 * as functions) as a gzipped pprof Profile of one sample type, the metric, into path:
 * 0 or -errno. */
int sd_out_pprof_tree(const char *path, const struct sd_tree_src *src,
		      const struct sd_report_opts *o);
/* The flame graph of src on out or into o->output (said on stdout), then the warning
 * about samples without counter values (src->p's). 0, -EIO (said: the file could not
 * be written) or -ENOMEM. */
int sd_out_svg(FILE *out, const struct sd_tree_src *src, const struct sd_report_opts *o);
/* The same of the flat view: its merged call nodes. */
int sd_out_svg_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* `sonde diff --format svg`: B's flame graph coloured by each frame's change of self
 * from A (shares in percentage points, or values with absolute), on stdout or into
 * output. Each side: its profile, options (metric resolved) and path. 0, -EIO (said),
 * -ENOMEM. */
int sd_out_svg_diff(struct sd_profile *pa, const struct sd_report_opts *oa, const char *patha,
		    struct sd_profile *pb, const struct sd_report_opts *ob, const char *pathb,
		    int absolute, const char *output);

/* ---- timeline.c: the event list of --format speedscope and trace (timeline.h) ------ */

struct sd_timeline;
/* Keep every sample and region event in time (the timeline formats), or with
 * regions_only the region calls only (--format html's region timeline): an event list
 * registered on p as an observer before loading. 0, -ENOMEM or -ENOSPC. */
int sd_timeline_attach(struct sd_profile *p, int regions_only);
/* p's event list (sd_timeline_attach), or NULL. */
struct sd_timeline *sd_timeline_of(const struct sd_profile *p);
/* Does format f draw a timeline (and so need sd_timeline_attach)? */
static inline int sd_format_timeline(enum sd_format f)
{
	return f == SD_FMT_SPEEDSCOPE || f == SD_FMT_TRACE;
}
#endif
