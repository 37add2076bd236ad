/* writer_int.h - private to writer/: the writer's state and the functions its
 * files share. Nothing outside writer/ includes this. */
#ifndef SONDE_WRITER_INT_H
#define SONDE_WRITER_INT_H

#include <msgpack.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "writer/writer.h"

#define SD_BUILD_ID_MAX 64
#define SD_NOTES 16
/* Child events queued between two drains: a writer tick, or without a
 * writer thread a fork or a thread's start or end (a program reaps all its
 * children at once). */
#define SD_CHILD_SLOTS 1024

/* One CHILD event (docs/FORMAT.md), queued by any thread or signal handler
 * (sd_writer_child_sigsafe): `seq` is its place in the queue + 1 once filled. */
struct sd_child_ev {
	_Atomic uint64_t seq;
	uint64_t t_ns;
	int32_t pid, value;
	unsigned event;
};

struct sd_module {
	uint32_t id;
	char *path;
	uintptr_t bias, lo, hi;
	uint8_t build_id[SD_BUILD_ID_MAX];
	unsigned build_id_len;
	uint64_t t_load, t_unload; /* CLOCK_MONOTONIC ns */
	int loaded, seen;
	int has_stat;              /* its file's size and mtime, stat'ed when it was met */
	uint64_t size, mtime_ns;
};

struct sd_intern_slot {
	uint64_t addr;
	uint32_t parent, module, node;
};

/* The writer thread's stack, beside the static TLS glibc carves from it.
 * Measured (the lowest byte written below writer_main's frame, over the
 * e2e programs: wall-time, regions, dlopen, raw clones, forked children):
 * 8.5 KiB, 15.5 KiB in a forked child; four times that. Sanitizers' frames
 * are several times larger. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SD_WRITER_STACK_BYTES (1024u * 1024u)
#else
#define SD_WRITER_STACK_BYTES (64u * 1024u)
#endif

/* The writer's whole state. `lock` guards everything below it; the flags
 * above it are atomics shared with the handler-side flush request. */
/* A ring's buffers: what a new thread can take over from an ended one
 * (rings.c keeps up to SD_RING_POOL). */
#define SD_RING_POOL 32

struct sd_ring_bufs {
	uint8_t *buf;
	uint64_t *prev_pcs;
	uint32_t *prev_nodes;
};

/* Process slots (slots.c): this process's view of RLIMIT_NPROC and of its
 * process tree's writers. */
#define SD_NPROC_MARGIN 64 /* tasks kept free below RLIMIT_NPROC (docs/ENV.md) */
struct sd_slots_tree;
struct sd_slots {
	struct sd_slots_tree *_Atomic tree; /* shared by the processes fork made;
				     * NULL until this process's first fork */
	_Atomic pid_t tid;  /* this process's writer thread (maybe gone), 0 none */
	_Atomic unsigned gen_own; /* rule 3's generation while there is no tree */
	unsigned gen;      /* the generation when the writer started */
	int said;          /* this process (or its parent before the fork) said it */
	int init_ns;       /* in the initial user namespace: -1 unknown */
	long tasks;        /* the machine's tasks when last seen, -1 unknown */
	uint16_t tasks16;  /* sysinfo's count (modulo 65536) then */
};
/* Why slots are scarce, for the message: RLIMIT_NPROC's soft limit, the
 * machine's task count, or the program was refused a task
 * (rule 3: tasks not read). */
struct sd_slots_why {
	unsigned long long limit;
	long tasks;
	int refused;
};

struct sd_writer {
	_Atomic int inited;
	_Atomic int stop_req;
	_Atomic int final_req;
	_Atomic int final_done;
	_Atomic int thread_running;
	_Atomic int writerless;     /* no writer thread: the program's threads
				     * drain (thread.c) */
	_Atomic int ended;          /* END written */
	/* writerless because the program has a single thread (cfg.thread_always
	 * 0): its samples drain; the thread starts with the program's second */
	_Atomic int deferred;
	_Atomic int rest_req;       /* the writer thread leaves: single again */
	_Atomic unsigned create_seq; /* bumped as the program begins a task */
	_Atomic int last_tasks;     /* what the writer's last tick listed, -1 */
	int in_drain_hook;          /* cfg.drain_hook runs, the lock held */
	_Atomic uint64_t drained_ns; /* when a sample last drained */
	_Atomic int final_signo;
	_Atomic unsigned wake_seq;  /* futex word the writer sleeps on */
	_Atomic uint64_t global_drops[SD_DROP_NREASONS];
	uint64_t global_drops_sent[SD_DROP_NREASONS];
	char notes[SD_NOTES][256];
	/* CHILD events: a bounded queue, many producers (lock-free: the fork
	 * and wait wrappers, also from the program's signal handlers), one
	 * consumer (drain, writer lock held). head counts slots claimed, tail
	 * slots written; an event that finds the queue full is counted lost. */
	struct sd_child_ev child_ev[SD_CHILD_SLOTS];
	_Atomic uint64_t child_head, child_tail, child_lost;
	uint64_t child_lost_said;
	_Atomic unsigned notes_head; /* slots claimed */
	_Atomic unsigned notes_done; /* slots filled */
	unsigned notes_sent;

	pthread_mutex_t lock;
	pthread_t thread;
	int joinable;               /* `thread` made and not joined yet */
	struct sd_slots pslots;     /* process slots (slots.c) */
	struct sd_writer_config cfg;
	struct sd_source_info sources[8];
	char dir[4096];
	char exe[4096];
	char path[4200];
	dev_t dev;
	ino_t ino;
	_Atomic int out_fd;         /* -1 when closed */
	_Atomic int out_fd_dead;    /* the program closed our number */
	int lost_pending;           /* lost behind our back, not reopened yet */
	int reopened;               /* said once: reopened after a raw close */
	uint64_t out_bytes;         /* size of the file we wrote */
	int file_ok;
	_Atomic int discarding;     /* the stream is lost for good (not made, or a
				     * write failed): samples stop (handler.c) */
	int file_pending;           /* not made yet (sd_outfile_flush_at) */
	int dir_fd;                 /* output directory, kept until the file is made
				     * (for good once pinned) */
	int dir_pinned;             /* the process changed its root or mount
				     * namespace (sd_writer_pin_output): the
				     * directory is reached through dir_fd only,
				     * never by its path */
	dev_t dir_dev;
	ino_t dir_ino;
	int seq;
	pid_t fork_of;
	uint64_t t0_mono, t0_real;
	uint64_t last_flush_ns;

	msgpack_sbuffer sbuf;
	msgpack_packer pk;
	size_t rec_start; /* where in sbuf the record being packed starts */
	int pack_oom;	  /* sbuf could not grow: records from then on are dropped */

	struct sd_ring *rings;
	struct sd_ring **rings_tail; /* the last ring's `next` (&rings when none) */
	struct sd_ring_bufs spare[SD_RING_POOL]; /* ended threads' buffers, for reuse */
	unsigned nspare;
	_Atomic int ring_cut_said; /* a ring smaller than SONDE_BUFFER_KB's was said */
	size_t stack_bytes;        /* the writer thread's stack, counted once (mem.h) */
	uint32_t next_thread;

	struct sd_module **mods;
	size_t nmods, capmods;
	struct sd_module **loaded; /* sorted by lo */
	size_t nloaded;
	uint32_t mod_gen;
	int loader_suspect;       /* forked child: do not call dl_iterate_phdr */

	struct sd_intern_slot *slots;
	size_t nslots, used_slots;
	/* samples per innermost PC, for sonde_profile_top (open addressing) */
	struct sd_top_pc *leaf;
	size_t nleaf, used_leaf;
	uint32_t next_node;
	uint32_t *tmp_nodes;
	uint64_t *tmp_pcs;     /* max_depth (+ 1 spare): a blocked stack copied (offcpu.c) */
	uint32_t ctx_sent;   /* CONTEXT records written up to this node */
	uint32_t attrs_sent; /* ATTRIBUTE records written up to this id */

	uint64_t n_samples, n_frames, n_bytes, n_threads;
	uint64_t n_dropped;      /* all drops reported so far */
	uint64_t n_dropped_gone; /* of rings already freed */
};

extern struct sd_writer sd_w;

/* thread.c: wakes the writer thread for its next tick now.
 * async-signal-safe. */
void sd_writer_wake_sigsafe(void);

/* notes.c, writer lock held: the notes posted so far (sd_writer_note), the
 * queued CHILD events, and the process-wide drops when they changed, as
 * records. children_reset: in a forked child, the queue begins empty at the
 * parent's position (no lock: no other thread exists yet). */
void sd_notes_emit(void);
void sd_notes_children_emit(void);
void sd_notes_children_reset(void);
void sd_notes_drops_emit(void);
/* traffic.c: MPI messages sent, per peer */
void sd_traffic_emit(void);
void sd_traffic_fork_child(void);

/* outfile.c, writer lock held (prepare_dir: also before the writer starts,
 * from sd_writer_open_dir or sd_writer_init).
 * prepare_dir: opens (makes) the output directory by the rule of outdir.c,
 * keeps its descriptor above the floor and makes sd_w.dir absolute; 0 or
 * -errno, said. dir_ours: does the kept descriptor still name it (device
 * and inode)? dir_check: at a tick, forgets a kept descriptor the program
 * took over. drop_dir: closes the kept descriptor if it is still ours.
 * drop_fd: forgets the stream's descriptor, closed if close_it.
 * fd_lost: at a tick, 1 when our descriptor number was found closed behind
 * our back (forgotten, never closed; reopened at the next write).
 * due: the stream file is to be made now (a sample, SD_LAZY_BYTES buffered
 * or a flush period lived). flush_at: appends the records buffered (the file
 * made first if due, or if final); flush: flush_at(0). */
int sd_outfile_prepare_dir(void);
int sd_outfile_dir_ours(void);
void sd_outfile_dir_check(void);
void sd_outfile_drop_dir(void);
void sd_outfile_drop_fd(int close_it);
int sd_outfile_fd_lost(void);
int sd_outfile_due(void);
void sd_outfile_flush_at(int final);
void sd_outfile_flush(void);

/* rings.c: frees ring r, its buffers kept for the next thread when the
 * pool has room. Writer lock held. */
void sd_rings_free(struct sd_ring *r);

/* drain.c, writer lock held.
 * sd_drain: every ring's records and what the threads posted, into records;
 * rings of ended threads freed. `final`: also THREAD_END of the threads
 * still running as the process ends. Also from a sample's handler without
 * a writer thread (sd_writer_drain_sigsafe: the lock tried, sonde's
 * allocator not held by the thread).
 * sd_drain_finish: drain everything, END, flush, once (`ended`): reason
 * and signo as sd_writer_stop's. On an exec before the stream file is made
 * (not due yet), nothing is made: the new image writes this pid's stream. */
void sd_drain(int final);
void sd_drain_finish(const char *reason, int signo);

/* jitmap.c: /tmp/perf-PID.map copied beside the stream as STREAM.perf.map, when
 * the stream's file exists (docs/FORMAT.md, Files); one line when it cannot
 * be. Writer lock held, ordinary context (the image's end: exit, _exit, exec). */
void sd_jitmap_keep(void);

/* slots.c, ordinary context. init: once, where the runtime starts.
 * scarce: is the process near RLIMIT_NPROC by rule 1 (own: 1 when asked by
 * the running writer, which is one of the tasks counted); 1 and *why
 * filled if so. starting: a writer is about to be made. enter: the writer
 * thread as it begins. leave_due: the writer at its tick, by rules 2 and 3
 * (why->refused). say_first: 1 for the first process of the tree to ask.
 * fork_prepare: before a fork, writer lock held (the tree is made at the
 * first). fork_child: in the child, which has no writer. */
void sd_slots_init(void);
int sd_slots_scarce(int own, struct sd_slots_why *why);
void sd_slots_starting(void);
void sd_slots_enter(void);
int sd_slots_leave_due(struct sd_slots_why *why);
int sd_slots_say_first(void);
void sd_slots_fork_prepare(void);
void sd_slots_fork_child(void);

/* modules.c */
struct sd_scan;
struct sd_scan *sd_modules_collect(void);
void sd_modules_apply(struct sd_scan *scan, uint64_t t_load, uint64_t t_unload);
/* collect + apply: only where no other thread can hold the loader lock
 * (start, before any thread of the program exists besides this one). */
void sd_modules_scan(uint64_t t_load, uint64_t t_unload);
struct sd_module *sd_modules_find(uintptr_t addr, uint64_t t_ns);
void sd_modules_free(void);
void sd_modules_reemit(uint64_t t_ns);

/* stream.c: encoders; writer lock held. */
void sd_stream_header(void);
void sd_stream_module(const struct sd_module *m);
void sd_stream_module_end(const struct sd_module *m);
void sd_stream_thread(struct sd_ring *r);
void sd_stream_thread_end(struct sd_ring *r);
void sd_stream_thread_cpu(struct sd_ring *r, uint64_t t_ns, uint64_t cpu_ns);
void sd_stream_sample(struct sd_ring *r, const struct sd_rec *rec);
void sd_stream_region(struct sd_ring *r, const struct sd_rec *rec);
struct sd_region_stat;
void sd_stream_region_stat(struct sd_ring *r, const struct sd_region_stat *s);
/* REGION_OPEN: s's call still open (s->open_begin_ns set). */
void sd_stream_region_open(struct sd_ring *r, const struct sd_region_stat *s);
/* A copy (sd_mem_alloc, *out) of the samples per innermost PC so far; how many. */
size_t sd_stream_leaf_copy(struct sd_top_pc **out);
void sd_stream_accounted(struct sd_ring *r, uint64_t t_ns, uint8_t source, const uint64_t *pcs,
			 unsigned n, uint32_t pseudo, uint32_t weight, uint8_t flags);
/* offcpu.c: wall-time off-CPU and kernel time of ring r's thread since the
 * last tick, as accounted samples. Writer lock held. */
void sd_offcpu_tick(struct sd_ring *r);
void sd_offcpu_final(struct sd_ring *r);
void sd_stream_drops(uint32_t thread, const uint64_t *counts);
void sd_stream_unsampled(uint32_t thread, const char *reason, uint64_t cpu_ns);
void sd_stream_end(const char *reason, int signo);
/* CHILD: event (enum sd_child_event) of child pid at t_ns (CLOCK_MONOTONIC). */
void sd_stream_child(uint64_t t_ns, int32_t pid, unsigned event, int32_t value);
void sd_stream_note(const char *text);
/* MESSAGES of world rank `rank`: v holds (msgs, bytes) of each of n peers, npeers of
 * them nonzero */
void sd_stream_messages(uint32_t rank, uint32_t n, _Atomic uint64_t *v, uint32_t npeers);
void sd_stream_intern_reset(void);
uint64_t sd_stream_rel(uint64_t t_ns);

/* outfile.c: the MPI rank a launcher gave this process (sd_mpi_rank_env), NULL for none
 * and for a launcher or its daemon (sd_mpi_is_launcher: mpirun under a batch script sees
 * SLURM_PROCID=0 too): the HEADER's rank and the stream's name. */
const char *sd_stream_rank(void);

#endif
