/* writer.h - the writer component's whole interface.
 *
 * The writer owns the per-thread rings that signal handlers fill, the writer
 * thread that drains them, the interning of call stacks into the call-path
 * tree, msgpack encoding and the output file (docs/FORMAT.md).
 *
 * Two worlds meet here. The ring producer side (sd_ring_reserve_sigsafe,
 * sd_ring_commit_sigsafe, sd_ring_drop_sigsafe) runs in signal context on the
 * ring's own thread: async-signal-safe, lock-free, no allocation. Everything
 * else runs in ordinary thread context, never in a handler.
 */
#ifndef SONDE_WRITER_H
#define SONDE_WRITER_H

#include <stdatomic.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/common.h"
#include "format/format.h"
#include "kernel/kernel.h"

enum sd_rec_kind { SD_REC_PAD = 1, SD_REC_SAMPLE = 2, SD_REC_REGION = 3 };

/* The smallest ring (SONDE_BUFFER_KB's least, 64), and the one a thread
 * gets when sonde's share of RLIMIT_AS runs short (docs/ENV.md). */
#define SD_RING_MIN_BYTES (64u * 1024u)

/* Stacks kept per thread of the blocking calls it made (wall-time), one per
 * call site: the calls between two writer ticks are charged to their own. */
#define SD_BLK_BUFS 4
/* In a REGION's `source` (its event): region events of the thread were dropped
 * just before this one. */
#define SD_REC_REGION_LOST 0x80u

/* One raw record in a ring: fixed header, then `depth` PCs, innermost first.
 * pcs[0] is the interrupted PC; pcs[1..] are return addresses. A REGION
 * record has no PCs: `weight` holds the context node and `source` the event
 * (docs/FORMAT.md REGION). `ncounters` values follow the PCs: a sample's
 * counter deltas, a region event's counter totals. */
struct sd_rec {
	uint32_t len_bytes; /* whole record, multiple of 8 */
	uint16_t kind;      /* enum sd_rec_kind */
	uint16_t depth;
	uint64_t t_ns;      /* CLOCK_MONOTONIC */
	uint32_t weight;
	uint8_t source;
	uint8_t flags;
	uint16_t ncounters; /* counter values after the PCs */
	uint32_t ctx;       /* thread context node (annotate) */
	uint32_t pctx;      /* process context node */
	uint64_t pcs[];
};

/* Single-producer (the thread's handlers) single-consumer (the writer) byte
 * ring. head and tail only grow; positions are taken modulo cap_bytes. */
struct sd_rtable;

/* Samples whose innermost frame is at pc (sd_writer_leaf_pcs). */
struct sd_top_pc { uint64_t pc, samples; };

struct sd_ring {
	_Atomic uint64_t head;
	char pad_head[56];
	_Atomic uint64_t tail;
	char pad_tail[56];
	uint8_t *buf;
	uint64_t cap_bytes;    /* power of two */
	uint32_t max_rec_bytes;
	uint64_t reserved_at;  /* producer-private: head after a pad */

	/* Thread identity, set before the ring is published. */
	pid_t tid;
	uint64_t t_begin_ns;
	/* its CPU clock then (begin_cpu_known): where the off-CPU account starts,
	 * whenever its first drain comes (offcpu.c) */
	uint64_t begin_cpu_ns;
	int begin_cpu_known;
	char name_begin[16];
	/* Set once by sd_writer_ring_close(). */
	char name_end[16];
	_Atomic uint64_t t_end_ns;
	_Atomic int closed;

	_Atomic uint64_t drops[SD_DROP_NREASONS];
	/* Counter deltas since the thread's last sample, taken when it ended
	 * (THREAD_END); set before `closed`. */
	unsigned nfinal;
	uint64_t final_deltas[SD_MAX_COUNTERS];
	/* Its CPU time when it ended (or the process did), read by the thread
	 * itself: cpu_known 2 = total, user and system; 1 = total only (read
	 * by the writer from the thread's clock); 0 = unknown. */
	int cpu_known;
	uint64_t cpu_ns, user_ns, sys_ns;

	/* wall-time: the periods (weights) of the on-CPU samples its handler
	 * took, and where the thread waits. blk_seq is odd while it is inside
	 * a blocking call, which it entered at blk_t0 (CLOCK_MONOTONIC).
	 * SD_BLK_BUFS stack buffers, one per call site: blk_cur is the one of
	 * the current or last call, the others hold the sites called before,
	 * so that a writer tick that comes late charges each call's time to
	 * its own stack; blk_done_ns[b] sums the elapsed time of the calls of
	 * buffer b the thread left since the writer last took it (a buffer is
	 * reused for another site only when the writer took its time, unless
	 * all are pending). blk_pcs (max_depth entries per buffer), blk_depth,
	 * blk_fn (the libc function's entry)
	 * and blk_cur are rewritten by the thread (ordinary context) between an
	 * odd and the next even blk_gen, read by the writer under an even
	 * blk_gen that did not change meanwhile. */
	_Atomic uint64_t wall_periods;
	_Atomic uint32_t blk_seq;
	_Atomic uint32_t blk_gen;
	uint64_t blk_t0;
	_Atomic uint64_t blk_done_ns[SD_BLK_BUFS];
	_Atomic uint32_t blk_cur;
	uint32_t blk_next;      /* the buffer to reuse when all are pending */
	uint32_t blk_depth[SD_BLK_BUFS]; /* frames in each, at most max_depth: then cut */
	uintptr_t blk_key_ra[SD_BLK_BUFS], blk_key_fp[SD_BLK_BUFS], blk_fn[SD_BLK_BUFS];
	uint64_t *blk_pcs;      /* SD_BLK_BUFS x max_depth entries; NULL without wall-time */

	/* Cumulative CPU time not sampled, per enum sd_unsampled (any thread
	 * sets it through sd_writer_ring_unsampled), and a bit per reason set
	 * once any value was posted, 0 included. */
	_Atomic uint64_t unsampled_ns[SD_UNSAMPLED_NREASONS];
	_Atomic uint32_t unsampled_posted;

	/* SONDE_REGIONS=on: the thread's region table (annotate.h), set once by
	 * sd_writer_ring_regions; collected at every flush period and after the
	 * thread ended, then freed by the writer. */
	_Atomic(struct sd_rtable *) regions;

	/* Writer-private from here on. */
	uint64_t unsampled_sent[SD_UNSAMPLED_NREASONS];
	uint32_t unsampled_written; /* bit per reason: a record was written */
	uint32_t idx;          /* stream thread id, 0 until announced */
	uint32_t last_node;    /* stack node of its last sample */
	int last_trunc;        /* that stack was cut at max_depth */
	int wall_init;
	uint64_t cpu_written_ns;   /* last THREAD_CPU record */
	uint64_t regions_written_ns; /* last collection of `regions` */
	uint64_t wall_mono, wall_cpu, wall_seen;
	int64_t acc_off_ns, acc_kernel_ns;
	int64_t acc_blk_ns[SD_BLK_BUFS]; /* elapsed in blocking calls, by buffer, not yet charged */
	uint32_t blk_wseq;     /* the call counted in part at the last tick */
	uint32_t blk_wbuf;     /* its buffer */
	int64_t blk_wpart;     /* how much of it */
	uint64_t last_t_ns;
	uint64_t drops_sent[SD_DROP_NREASONS];
	uint32_t prev_depth;   /* last interned stack, for prefix reuse */
	uint64_t *prev_pcs;
	uint32_t *prev_nodes;
	uint32_t prev_gen;
	struct sd_ring *next;
};

/* --- producer side: async-signal-safe ---------------------------------- */

/* Reserves room for one record of at most max_rec_bytes. Returns NULL when the
 * ring is full (the caller counts a drop). async-signal-safe; producer only. */
static inline struct sd_rec *sd_ring_reserve_sigsafe(struct sd_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t pos = head & (r->cap_bytes - 1);
	uint64_t contig = r->cap_bytes - pos;
	uint64_t used = head - tail;
	uint64_t need = r->max_rec_bytes;

	if (contig < need) {
		if (r->cap_bytes - used < contig + need)
			return NULL;
		struct sd_rec *pad = (struct sd_rec *)(r->buf + pos);
		pad->len_bytes = (uint32_t)contig;
		pad->kind = SD_REC_PAD;
		head += contig;
		pos = 0;
	} else if (r->cap_bytes - used < need) {
		return NULL;
	}
	SD_ASSERT(head - tail + need <= r->cap_bytes && pos + need <= r->cap_bytes);
	r->reserved_at = head;
	return (struct sd_rec *)(r->buf + pos);
}

/* Publishes the record reserved last (its kind set by the caller), with its
 * final length (rounded up to 8 bytes here). async-signal-safe; producer
 * only. */
static inline void sd_ring_commit_sigsafe(struct sd_ring *r, struct sd_rec *rec)
{
	uint32_t len = (uint32_t)(sizeof *rec + (rec->depth + rec->ncounters) * sizeof rec->pcs[0]);
	rec->len_bytes = (len + 7u) & ~7u;
	SD_ASSERT(rec->len_bytes <= r->max_rec_bytes &&
		  (uint8_t *)rec == r->buf + (r->reserved_at & (r->cap_bytes - 1)));
	atomic_store_explicit(&r->head, r->reserved_at + rec->len_bytes,
			      memory_order_release);
}

/* A record begun: reserved, and every header field filled (the time now,
 * depth and counters 0: the caller adds frames and counter values, then
 * commits). NULL when the ring is full, counted as `full_why`. The one place
 * records are filled. async-signal-safe; the ring's producer only. */
static inline struct sd_rec *sd_ring_begin_sigsafe(struct sd_ring *r, enum sd_rec_kind kind,
						   uint8_t source, uint8_t flags, uint32_t weight,
						   uint32_t ctx, uint32_t pctx, enum sd_drop full_why)
{
	struct sd_rec *rec = sd_ring_reserve_sigsafe(r);
	if (!rec) {
		atomic_fetch_add_explicit(&r->drops[full_why], 1, memory_order_relaxed);
		return NULL;
	}
	rec->kind = (uint16_t)kind;
	rec->depth = 0;
	rec->t_ns = sd_now_ns_sigsafe();
	rec->weight = weight;
	rec->source = source;
	rec->flags = flags;
	rec->ncounters = 0;
	rec->ctx = ctx;
	rec->pctx = pctx;
	return rec;
}

/* Counts one lost sample. async-signal-safe; any thread. */
static inline void sd_ring_drop_sigsafe(struct sd_ring *r, enum sd_drop why)
{
	atomic_fetch_add_explicit(&r->drops[why], 1, memory_order_relaxed);
}

/* n samples lost at once (counted after the fact). Ordinary context or the
 * ring's thread. */
static inline void sd_ring_drops_add(struct sd_ring *r, enum sd_drop why, uint64_t n)
{
	atomic_fetch_add_explicit(&r->drops[why], n, memory_order_relaxed);
}

/* --- writer lifecycle: ordinary context --------------------------------- */

struct sd_source_info {
	const char *name;      /* "cpu-time", "wall-time", or the PAPI event */
	const char *spec;      /* token as given */
	const char *unit;      /* "ns", or "events" for PAPI */
	const char *mechanism; /* what really delivers the samples */
	const char *fallback_reason; /* NULL when none */
	uint64_t period_ns;    /* period in `unit` */
	int signo;
};

enum sd_argv { SD_ARGV_ON, SD_ARGV_OFF, SD_ARGV_REDACT };

struct sd_writer_config {
	const char *dir;           /* output directory, created if missing, by
				    * the rule of sd_outdir_open */
	mode_t file_mode, dir_mode; /* of what is created (SONDE_MODE); 0: private */
	/* SONDE_ARGV: argv recorded whole, not at all, or with every argument
	 * argv_redact matches replaced (compiled by the caller, alive as long as
	 * the writer). */
	enum sd_argv argv_mode;
	const regex_t *argv_redact;
	unsigned flush_ms;
	unsigned max_depth;
	const char *unwind;        /* "libunwind", "fp", "none" */
	uint32_t ring_bytes;       /* per thread, power of two, >= SD_RING_MIN_BYTES */
	uint32_t thread_bytes;     /* what else a thread costs sonde's share of RLIMIT_AS */
	const struct sd_source_info *sources;
	unsigned nsources;
	const struct sd_counters *counters; /* kernel/kernel.h; NULL or n == 0: none */
	int verbose;
	/* How to start the writer thread without the sampler's pthread_create
	 * interposition (the writer is never sampled). */
	int (*create_thread)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	/* The output file stays open on a descriptor at or above fd_floor, and
	 * is announced through fd_track so that the program's close()/dup2()
	 * of that number is seen (sd_writer_fd_closed). */
	int fd_floor;
	void (*fd_track)(int fd, int on);
	/* wall-time source index (-1: none) and its period: the writer
	 * accounts each thread's off-CPU and kernel time at its tick. */
	int wall_source;
	uint64_t wall_period_ns;
	/* Called by the writer thread at every tick (about 10 ms), without the
	 * writer lock: the sampler checks its descriptors and looks for threads
	 * made without pthread_create. stream_fd_lost is 1 when the writer just
	 * found its own descriptor closed or replaced behind its back (a raw
	 * close_range or close system call: sonde's other descriptors are likely
	 * gone too). Returns the tasks of the process it listed (through a
	 * descriptor kept above the program's: the writer opens none of the
	 * program's numbers at its tick), or -1. May be NULL. */
	int (*tick)(int stream_fd_lost);
	/* 0 (SONDE_WRITER=auto): while the program has a single thread, sonde
	 * has none either: its samples drain the ring (sd_writer_drain_sigsafe)
	 * and the writer thread starts with the program's second thread
	 * (sd_writer_thread_wanted). 1: the writer thread from the start. */
	int thread_always;
	/* Called in a sample's drain while the writer thread is put off (the
	 * program's only thread, in its handler, the writer lock held): what
	 * the tick would do that is safe there (the sampler looks for modules
	 * libc loaded itself). sd_writer_modules_changed may be called in it.
	 * May be NULL. */
	void (*drain_hook)(void);
};

/* --- output directory: ordinary context; shared with `sonde run` -------- */

/* Why sd_outdir_open refused, for the caller's `sonde:` line: `what`
 * ("'DIR' is a symbolic link") and `hint`, which names `knob` (set by the
 * caller: "SONDE_OUTPUT" when NULL, "-o" for `sonde run`). */
struct sd_outdir_why {
	const char *knob;
	char what[4400];
	char hint[200];
};
/* SONDE_MODE: NULL, "" or "private" 0600/0700; "group" 0640/0750; "world"
 * 0644/0755 (both less the umask when used). 0, or -EINVAL and the outputs
 * untouched. */
int sd_outdir_mode_parse(const char *v, mode_t *file_mode, mode_t *dir_mode);
/* Opens (creating what is missing, with dir_mode less the umask) the output
 * directory `path` by the rule in outdir.c and docs/ENV.md: no symbolic link
 * as the directory or planted by another user on the way, the directory owned
 * by the effective user and not writable by others unless sticky. Returns an
 * O_PATH descriptor (close-on-exec) for the *at calls, or -errno with *why
 * filled. Any thread, ordinary context. */
int sd_outdir_open(const char *path, mode_t dir_mode, struct sd_outdir_why *why);
/* Opens the existing directory `path` as sd_outdir_open walks it, each
 * component (the last too) held to the rule of the components before the
 * last: a symbolic link is followed only when owned by root or the user in a
 * directory only they can change; nothing is made and no owner is required
 * (the directory of `sonde report -o FILE`). O_PATH descriptor, or -errno
 * (-ELOOP: a link refused) with *why filled. */
int sd_outdir_open_dir(const char *path, struct sd_outdir_why *why);
/* Opens (makes, with dir_mode less the umask) directory `name` of dirfd by
 * the rule of the output directory itself: never a symbolic link, owned by
 * the effective user, not writable by others unless sticky (`sonde run`'s
 * DIR.old). `shown` names it in *why. O_PATH descriptor, or -errno. */
int sd_outdir_open_at(int dirfd, const char *name, mode_t dir_mode, const char *shown,
		      struct sd_outdir_why *why);
/* Creates file `name` in directory dirfd: O_CREAT|O_EXCL|O_NOFOLLOW, append
 * only, close-on-exec, file_mode less the umask. fd or -errno. */
int sd_outdir_create_file(int dirfd, const char *name, mode_t file_mode);
/* The absolute path of directory dirfd (from /proc/self/fd) into buf. 0, or
 * -errno and buf untouched. */
int sd_outdir_path(int dirfd, char *buf, size_t len);

/* --- JIT perf maps (jitmap.c): ordinary context; shared with `sonde run` -- */

/* The largest /tmp/perf-PID.map kept with a profile. */
#define SD_JITMAP_MAX_BYTES (256u << 20)
/* Copies /tmp/perf-<pid>.map into directory dirfd as `name` (through a
 * temporary name, O_CREAT|O_EXCL|O_NOFOLLOW, file mode `mode` less the
 * umask, 0: 0600; an earlier `name` is replaced), when it is a regular file,
 * not a symbolic link, owned by the effective user, at most
 * SD_JITMAP_MAX_BYTES, and last written at or after since_ns
 * (CLOCK_REALTIME). 1 copied; 0 nothing to copy (no map, or an older one);
 * -errno with why (len bytes) filled: "a symbolic link (...)", "owned by uid
 * U, not by you (uid ME)", "not a regular file", "larger than N MiB", or the
 * error of the copy. System calls and the stack only. */
int sd_jitmap_copy(pid_t pid, int dirfd, const char *name, int64_t since_ns, mode_t mode,
		   char *why, size_t len);

/* Opens (makes) the output directory cfg->dir with cfg->dir_mode, fd_floor
 * and fd_track, before anything else holds descriptors; sd_writer_init then
 * uses it. 0, or -errno after one `sonde:` line. Optional. */
int sd_writer_open_dir(const struct sd_writer_config *cfg);
/* Creates the output file and writes the header; does not start the thread.
 * Returns 0 or -errno; on failure it has printed one `sonde:` line. */
int sd_writer_init(const struct sd_writer_config *cfg);
/* Starts the writer thread (all signals blocked in it), unless process
 * slots are scarce (RLIMIT_NPROC) or it cannot be made: then the process
 * runs without one, its rings drained by its own threads and its stream
 * written as it ends (thread.c), said once. While the process has a single
 * task (and cfg.thread_always is 0) the thread is not started yet, said
 * nowhere: the program's samples drain (sd_writer_drain_sigsafe) until
 * sd_writer_thread_wanted. 0 (-errno reserved). */
int sd_writer_start(void);
/* The program is about to make its second task (pthread_create), or a drain
 * found one: the writer thread starts now if it was put off for a
 * single-threaded program (sd_writer_start). Ordinary context. */
void sd_writer_thread_wanted(void);
/* Before the program's fork: when the caller is the program's only thread
 * (its threads have ended), sonde's writer thread leaves and the process
 * goes on as a single-threaded one (sd_writer_start) until its next
 * thread, so that what forks sees one thread, as without sonde. Ordinary
 * context. */
void sd_writer_rest_if_single(void);
/* 1 when the writer thread was put off and the process has another task
 * now (a raw clone): the caller, in ordinary context, calls
 * sd_writer_thread_wanted. One read of /proc/self/stat when put off. */
int sd_writer_thread_wanted_due(void);
/* In a sample's handler, own: the sampled thread's ring (its sample just
 * committed). Without a writer thread, when a quarter of `own` is used or a
 * flush period has passed since the last such drain, drains every ring and
 * writes when due, as the writer thread would: unless the signal came while
 * this thread held the allocator's lock, or another thread drains (nothing
 * waits for the writer's lock). Needs about 12 KiB of stack. async-signal-safe
 * by what it calls: system calls, the lock-free queues, sonde's allocator
 * (mem.h) and trylock. */
void sd_writer_drain_sigsafe(const struct sd_ring *own);
/* Would sd_writer_drain_sigsafe drain now (before its locks)? And the same with
 * `periods` flush periods since the last drain instead of one. */
int sd_writer_drain_due_sigsafe(const struct sd_ring *own);
int sd_writer_drain_after_sigsafe(const struct sd_ring *own, unsigned periods);
/* Is the stream lost for good (its file could not be made, or a write failed; said
 * once)? Then samples are not taken: the handler turns the thread's sources off.
 * async-signal-safe. */
int sd_writer_discarding_sigsafe(void);
/* Final drain, END record, flush, thread joined (bounded wait). Idempotent.
 * reason: "exit", "exec", "_exit", "signal"; signo for "signal". */
void sd_writer_stop(const char *reason, int signo);
/* After an exec that failed: start the writer thread again. */
void sd_writer_resume(void);
/* Asks the writer thread to flush everything now and waits up to timeout_ms
 * for it (atomics and nanosleep only); without a writer thread, ends the
 * stream in the calling thread when it is not inside sonde (trylock, as
 * sd_writer_drain_sigsafe). Returns 1 when the stream was ended.
 * async-signal-safe. */
int sd_writer_final_flush_sigsafe(const char *reason, int signo, unsigned timeout_ms);
/* The program's fork, posix_spawn or pthread_create just failed with EAGAIN:
 * every writer thread of this process tree (the processes fork made from
 * one image) leaves, giving its slot back, and this
 * waits until their threads are gone (at most 2 s). Returns 1 when the
 * caller should make its call once more: writers were running; 0 at once
 * when none was, or *round is not 0 (the caller's retry: one). errno kept.
 * async-signal-safe (the program may fork in a signal handler). */
int sd_writer_slots_retry_sigsafe(unsigned *round);

/* fork: prepare holds the writer's lock across fork; child starts a fresh
 * stream for the new pid, drops every inherited ring but `keep` (emptied),
 * and a writer thread by the rule of sd_writer_start. */
void sd_writer_fork_prepare(void);
void sd_writer_fork_parent(void);
int sd_writer_fork_child(struct sd_ring *keep);

/* --- rings: ordinary context -------------------------------------------- */

/* Allocates a ring for thread `tid` and registers it with the writer.
 * Returns NULL (and counts nothing) when memory is short. Without a writer
 * thread (sd_writer_start) the caller then drains every ring: call it with
 * every signal blocked. */
struct sd_ring *sd_writer_ring_new(pid_t tid, const char *name);
/* A thread's own CPU time as it ends, read by the thread itself: known 2 =
 * total, user and system; 1 = total only; 0 = none. */
struct sd_cpu_times {
	int known;
	uint64_t cpu_ns, user_ns, sys_ns;
};

/* The thread is gone or going: the writer drains the rest, writes
 * THREAD_END (with `final` counter deltas since its last sample, n of them,
 * when n > 0, and `cpu` when not NULL) and frees the ring. `cpu` is given
 * only by the ring's own thread, which can add no record any more: a ring
 * it leaves drained gives its buffers to the next thread at once, and
 * without a writer thread it drains every ring (with every signal blocked).
 * The producer must not touch the ring afterwards. */
void sd_writer_ring_close(struct sd_ring *r, const char *name, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu);
/* Counter deltas of a thread that is still running when the process ends,
 * taken by that thread itself, with its CPU time (NULL: none); written with
 * its THREAD_END. */
void sd_writer_ring_final(struct sd_ring *r, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu);

/* Sets the CPU time of the ring's thread that was not sampled for `why`,
 * cumulative (a later call supersedes); written as an UNSAMPLED record at the
 * next drain, the first one even when it is 0 (the thread was concerned but
 * ran no CPU unsampled), later ones when the value changed. Ordinary
 * context, any thread. */
void sd_writer_ring_unsampled(struct sd_ring *r, enum sd_unsampled why, uint64_t cpu_ns);
/* The ring's thread made its region table (SONDE_REGIONS=on): the writer
 * collects it from now on and frees it once the thread has ended. Ordinary
 * context, the ring's thread, once. */
void sd_writer_ring_regions(struct sd_ring *r, struct sd_rtable *rt);
/* The query API's view of the writer (include/sonde.h), ordinary context, any
 * thread but the writer's, sonde's signals blocked by the caller:
 * sd_writer_leaf_pcs: every innermost PC sampled so far with its samples, after
 * draining the rings (a copy in *out, the caller frees it with sd_mem_free; how many);
 * sd_writer_flush_now: drain, collect every region table, write the file (0, or
 * -EAGAIN when the stream is ended or the writer stopped). Without a writer
 * thread the caller drains. */
size_t sd_writer_leaf_pcs(struct sd_top_pc **out);
int sd_writer_flush_now(void);
/* Without a writer thread (sd_writer_start): drains every ring and the
 * queued CHILD events (1024 at most between two drains) and writes when a
 * flush period has passed; with one, nothing. Nothing waits: another thread
 * draining, it returns. Ordinary context, every signal blocked by the
 * caller. */
void sd_writer_drain_self(void);
/* Is fd the writer's descriptor of the stream file, still naming that file
 * (device and inode)? Ordinary context, any thread. */
int sd_writer_fd_is_stream(int fd);

/* The set of loaded objects may have changed (after dlopen/dlclose).
 * t_ns: when the change began (loads) or ended (unloads). */
void sd_writer_modules_changed(uint64_t t_ns);
/* The program is closing (or dup2'ing over) descriptor fd, which is
 * sonde's: if it is the output file, the writer stops using that number and
 * opens the file again before its next write. Any thread. */
void sd_writer_fd_closed(int fd);
/* libsonde's log sink (common/log.h, set at start): the `sonde: ...` line
 * is printed on stderr (one write) and kept as a NOTE record. Ordinary
 * context, any thread. */
void sd_writer_log(const char *line, size_t len);
/* One diagnostic line into the stream (NOTE record); also what was printed.
 * Lock-free: async-signal-safe, any thread. */
void sd_writer_note(const char *text);
/* A child process the program started (SD_CHILD_FORK, _FORK_UNPROFILED,
 * _SPAWN) or reaped (SD_CHILD_EXIT with its exit code, SD_CHILD_SIGNAL with
 * the signal that killed it): queued now, written as a CHILD record at the
 * next writer tick (docs/FORMAT.md). Lock-free, never blocks: a full queue
 * counts the event lost. async-signal-safe; any thread of the process whose
 * stream this is (never a vfork child). */
void sd_writer_child_sigsafe(pid_t pid, enum sd_child_event event, int value);
/* The process is about to change its root or mount namespace (chroot,
 * pivot_root, unshare, setns): the stream file is made now if it is not yet,
 * and the output directory's descriptor is kept for good, so that this
 * stream and those of later forked children are made in the real output
 * directory, never by a path that would name another one afterwards. Ordinary
 * context, any thread. */
void sd_writer_pin_output(void);
/* Process-wide drops (no thread record). async-signal-safe. */
void sd_writer_drop_global_sigsafe(enum sd_drop why);


#endif
