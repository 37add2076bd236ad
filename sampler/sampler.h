/* sampler.h - the sampler component's interface: runtime state, per-thread
 * state, sources, the signal handler and the interposed entry points.
 *
 * Lifecycle of the runtime (struct sd_runtime.state), drawn once:
 *
 *   OFF --init: probes done--> ARMED --init: writer started--> RUNNING
 *    ^                           |                              |   ^
 *    +-- writer did not start ---+          sd_runtime_stop()   |   | sd_runtime_exec_failed()
 *    |                                                          v   |
 *    +---- fork child not followed (from any state) ------- DRAINING
 *
 * RUNNING is the only state in which handlers record samples; in every other
 * state they drop and count. A forked child that is followed stays RUNNING
 * (sd_runtime_fork_child(): fresh threads, sources and stream); one that is
 * not goes to OFF. Every change goes through sd_state_move (runtime.c), which
 * checks it is one of these arrows (SD_ASSERT).
 */
#ifndef SONDE_SAMPLER_H
#define SONDE_SAMPLER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <ucontext.h>
#include <link.h>

#include "common/log.h"
#include "common/real.h"
#include "kernel/kernel.h"
#include "writer/writer.h"

#define SD_MAX_SOURCES 4
/* Every POSIX timer sonde arms carries SD_TIMER_COOKIE + source index as its
 * value, so that its signals are told from the program's. */
#define SD_TIMER_COOKIE 0x53440000
/* Each thread's alternate signal stack (sonde's own, when the program set
 * none), and the least stack a sample needs: below it the sample is dropped
 * (reason "stack") rather than risk the program's stack. Measured: an
 * unw_backtrace of 130 frames through the handler uses under 6 KiB. */
#define SD_ALTSTACK_BYTES (64u * 1024u)
#define SD_SAMPLE_STACK_NEED (12u * 1024u)
/* What a sample's drain needs below it (sd_writer_drain_sigsafe: 4.5 KiB
 * measured, file made and modules scanned; the writer thread's deepest use
 * 8.5 KiB, 15.5 in a fork child), with room left for a nested sample. The
 * program's own alternate stack may hold it: AddressSanitizer's is 54 KiB. */
#define SD_DRAIN_STACK_NEED (20u * 1024u)
/* libunwind's per-thread cache of frames (its fast trace: 2^14 entries of
 * 16 bytes, mapped by a thread's first unw_backtrace; measured: 256 KiB more
 * VmSize and VmRSS per sampled thread), counted in sonde's share of
 * RLIMIT_AS (mem/mem.h) for every thread unwound by libunwind. */
#define SD_UNWIND_CACHE_BYTES (256u * 1024u)
/* Throttling: a source whose samples cost (handler + signal round trip,
 * handler.c) more than a quarter of its period in SD_THROTTLE_BAD of
 * SD_THROTTLE_WINDOW samples has its period raised on that thread (at least
 * doubled, and to four times the cost seen), up to SD_THROTTLE_MAX_NS. */
#define SD_THROTTLE_WINDOW 8
#define SD_THROTTLE_BAD 4
#define SD_THROTTLE_MAX_NS 1000000000ull
/* At periods up to this, a cpu-time source's samples are also judged by the
 * thread's CPU clock over each window: the kernel time of signal delivery,
 * which the user-time clock does not see, counts as their cost. */
#define SD_THROTTLE_CPU_CHECK_NS 250000ull
/* Threads never start below this period: at 10 us the kernel's own timer
 * interrupts leave a VM's thread almost no time to run (a first sample took
 * 0.8 s there). A shorter period asked for is met by throttling's rules:
 * samples weighted, one line. */
#define SD_START_MIN_NS 20000ull

enum sd_state { SD_OFF, SD_ARMED, SD_RUNNING, SD_DRAINING };
/* The kinds of sampling source: the index of their rows in sd_source_kinds
 * (what each is, source_kinds.c) and sd_source_ops (how the runtime runs it,
 * source_table.c). */
enum sd_source_kind { SD_SRC_CPU, SD_SRC_WALL, SD_SRC_PAPI, SD_SRC_NKINDS };
enum sd_unwind { SD_UNWIND_LIBUNWIND, SD_UNWIND_FP, SD_UNWIND_NONE };

struct sd_source {
	enum sd_source_kind kind;
	uint64_t period_ns;
	char spec[64];
	int use_timer;            /* cpu-time fell back to a POSIX timer */
	char event[48];           /* PAPI: the event name */
	int papi_code;            /* PAPI: its code */
	char fallback_reason[128];
};

struct sd_config {
	int enabled;
	struct sd_source sources[SD_MAX_SOURCES];
	unsigned nsources;
	char output[4096];
	unsigned flush_ms;
	unsigned max_depth;
	enum sd_unwind unwind;
	int writer_always; /* SONDE_WRITER=thread: the writer thread from the start */
	unsigned buffer_kb;
	int signo;
	int verbose;
	int follow_fork;
	int regions;         /* enum sd_regions_mode: SONDE_REGIONS */
	int region_counters; /* SONDE_REGION_COUNTERS: counters at each region event */
	mode_t file_mode, dir_mode; /* SONDE_MODE */
	enum sd_argv argv_mode;     /* SONDE_ARGV */
	regex_t argv_re;            /* SONDE_ARGV=redact:REGEX, compiled */
};

/* source_kinds.c, compiled into libsonde and into the CLI (no runtime code):
 * what each kind of source is, as SONDE_SAMPLE names it and `sonde events`
 * lists it. Read-only rows, indexed by enum sd_source_kind. */
struct sd_source_kind_desc {
	const char *name;        /* as SONDE_SAMPLE names it; NULL: by its event's name */
	const char *syntax;      /* its spec: "cpu-time@PERIOD", "NAME@COUNT" */
	const char *unit;        /* of its period and its samples' weights: "ns", "events" */
	uint64_t default_period; /* without @: in unit; 0: the @COUNT must be given */
	const char *default_spec;/* the spec that default stands for, NULL: none */
	const char *summary;     /* one line: what its samples stand for */
	int by_event;            /* sources of this kind differ by event (a PAPI event) */
	/* Whether NAME (the spec up to its last '@') names this kind, and the
	 * spec parsed into src (its kind set already; period, event, spec), saying why not
	 * (one sd_msg line): 0 or -errno. */
	int (*match)(const char *name);
	int (*parse)(const char *tok, const char *name, const char *at, struct sd_source *src);
};
extern const struct sd_source_kind_desc sd_source_kinds[SD_SRC_NKINDS];
/* The periods a time source takes ("a period like 1ms, ..."). */
extern const char sd_source_period_forms[];
/* One SONDE_SAMPLE token into src through the row whose match takes it; one
 * line said when none does or its parse refuses. 0 or -errno. */
int sd_source_parse(const char *tok, struct sd_source *src);
/* src becomes the default source, cpu-time@1ms (no valid source given). */
void sd_source_set_default(struct sd_source *src);
/* Source i of cfg dropped (one the runtime cannot sample: the caller said why); when
 * it was the last, cfg samples the default instead and says so. Start-up only. */
void sd_source_drop(struct sd_config *cfg, unsigned i);

/* source_table.c (runtime only): how the runtime runs each kind, one row per
 * kind. The hot path reads data fields (sd_source_ops_of(s)->timed: one load
 * and an index per sample); the hooks are ordinary-context calls, shared by
 * the kinds of one mechanism (cpu-time and wall-time: the per-thread clocks
 * of sources.c; PAPI: papi.c) and run once per mechanism by the walkers
 * below. The POSIX-timer fallback is not a row: it is how a clocked source
 * runs where perf_event is refused (struct sd_source.use_timer). */
struct sd_thread;
struct sd_source_ops {
	const struct sd_source_kind_desc *desc;
	uint8_t clocked;    /* on a per-thread clock: a perf_event task clock, else a
			     * POSIX CPU-time timer (sources.c), signalling sonde's signal */
	uint8_t timed;      /* a sample stands for period_ns of the thread's time:
			     * throttled, its paused time charged, its start period
			     * at least SD_START_MIN_NS (else: counts of events) */
	uint8_t cpu_clock;  /* counts the thread's CPU time, its clock the program's
			     * own time (handler.c: throttling judged on the CPU clock
			     * at short periods too; the drain's clock) */
	uint8_t off_cpu;    /* its blocked time accounted by the writer (wall-time) */
	uint8_t own_thread; /* opened by the thread itself only: none for threads
			     * alive before sonde started or made without pthread_create */
	int rt_signal;      /* its signal is SIGRTMIN + this (PAPI's own); -1: sonde's */
	/* the stream header's mechanism, without "+off-cpu" */
	const char *(*mechanism)(const struct sd_source *s);
	/* process-wide, at start, each mechanism once: decides what its sources
	 * run on, dropping those that cannot run (one line each) */
	void (*probe)(struct sd_config *cfg);
	void (*probe_release)(void); /* what probe held for the first thread */
	/* thread t (tid; the caller when own_thread) gets its sources of this
	 * mechanism: 0 if they run */
	int (*thread_open)(struct sd_thread *t, pid_t tid);
	void (*thread_stop)(struct sd_thread *t);  /* the thread itself, as it ends,
						    * before it leaves the registry */
	void (*thread_close)(struct sd_thread *t); /* under the registry lock */
	void (*thread_account)(struct sd_thread *t); /* the caller's lost signals, at stop */
	void (*fork_child)(void);
	void (*exec_prepare)(struct sd_thread *t, int stop);
};
extern const struct sd_source_ops sd_source_ops[SD_SRC_NKINDS];

static inline const struct sd_source_ops *sd_source_ops_of(const struct sd_source *s)
{
	return &sd_source_ops[s->kind];
}

/* The walkers: each mechanism's hook once, in the order of the table. */
void sd_source_probe_all(struct sd_config *cfg);
void sd_source_probe_release_all(void);
/* Sources that are not clocks first, the clocks last: a clock runs from
 * its start. self: t is the calling thread. Returns the clocks' error (other
 * mechanisms say their own): 0 if they run. */
int sd_source_thread_open_all(struct sd_thread *t, pid_t tid, int self);
void sd_source_thread_stop_all(struct sd_thread *t);
void sd_source_thread_close_all(struct sd_thread *t);
void sd_source_thread_account_all(struct sd_thread *t);
void sd_source_fork_child_all(void);
void sd_source_exec_prepare_all(struct sd_thread *t, int stop);
/* Source i's part of the stream header (in, its mechanism text in mech). */
struct sd_source_info;
void sd_source_header_info(const struct sd_config *c, unsigned i, struct sd_source_info *in,
			   char *mech, size_t mech_len);

/* SONDE_REGIONS: off; on: timing aggregated in each thread (REGION_STATS);
 * trace: every begin and end a REGION record. */
enum sd_regions_mode { SD_REGIONS_OFF = 0, SD_REGIONS_ON = 1, SD_REGIONS_TRACE = 2 };

/* Per-thread state. Reached from the handler through an initial-exec TLS
 * pointer; allocated before the thread can be sampled, freed only after its
 * sources are closed. */
struct sd_thread {
	pid_t tid;
	struct sd_ring *ring;
	volatile sig_atomic_t busy;    /* inside sonde: handler drops */
	int region_lost;               /* a region event was dropped: mark the next kept one */
	volatile sig_atomic_t in_dl;   /* inside dlopen/dlclose */
	volatile sig_atomic_t in_handler; /* dl_iterate_phdr uses the snapshot */
	int src_fd[SD_MAX_SOURCES];    /* perf_event fds, -1 if none */
	timer_t src_timer[SD_MAX_SOURCES];
	int has_timer[SD_MAX_SOURCES];
	/* Every thread samples on its own clock from its first instruction
	 * (sources.c), and its first period is a random phase of the period:
	 * a thread of T ms then gets T/period samples in expectation, not
	 * floor(T/period) (a thread of 1.9 ms at 1 ms would get 1, not 1.9).
	 * Set: the first sample is still to come and sets the full period. */
	uint8_t phase[SD_MAX_SOURCES];
	uintptr_t stack_lo, stack_hi;  /* its stack (frame-pointer walk, room checks) */
	uint8_t unwind_fp;             /* unwound by frame pointers: libunwind's cache
					* did not fit in sonde's share of RLIMIT_AS */
	uint8_t unwind_counted;        /* SD_UNWIND_CACHE_BYTES counted for it (mem.h) */
	uintptr_t alt_lo;              /* sonde's alternate signal stack, 0 if none */
	size_t alt_bytes;              /* its usable size (a guard page lies below) */
	int prog_alt;                  /* the program set its own sigaltstack */
	volatile sig_atomic_t alt_off; /* sonde's stack was switched off (the program
					* uses alternate stacks; interpose/signals.c) */
	uintptr_t prog_alt_lo, prog_alt_hi;
	uint32_t mult[SD_MAX_SOURCES]; /* throttling: effective period = period x mult */
	uint16_t win_n[SD_MAX_SOURCES], win_bad[SD_MAX_SOURCES];
	uint8_t over_prev[SD_MAX_SOURCES];
	uint64_t cost_max[SD_MAX_SOURCES];
	uint64_t win_cpu_ns[SD_MAX_SOURCES]; /* thread CPU time at the window's start, 0: none */
	uint8_t queued_at_exit;        /* a signal of ours was queued at the last return */
	uint64_t exit_ns;              /* when the last sample handler returned */
	uint64_t trip_ns;              /* least signal round trip seen, 0: none yet */
	uint64_t self_ns;              /* time in the sample handler not yet charged to
					* [sonde] (the clock counted it as the program's) */
	uint8_t warm;                  /* samples seen, up to 4 (not judged) */
	uint64_t derived_acc_ns;       /* primary time not yet a derived sample */
	/* While ovr is set (a pseudo-frame, writer.h SD_PSEUDO_*), samples are
	 * not unwound: they are charged to ovr under the stack ovr_pcs, taken
	 * in ordinary context (inside dlopen/dlclose; signals delivered late,
	 * when the program unblocks them). ovr_depth and pause_depth are the
	 * frames taken, at most max_depth: a sample keeps max_depth - 1 of them
	 * under its pseudo-frame, so max_depth means the stack was cut. */
	/* Paused: the program keeps the sampling signal blocked (sd_thread_pause);
	 * its CPU clock then, the stack where it blocked, and per source the
	 * time not yet charged in whole periods. */
	int paused;
	uint64_t pause_cpu_ns;
	uintptr_t pause_key_ra, pause_key_fp;
	unsigned pause_depth;
	uint64_t *pause_pcs;           /* max_depth entries */
	uint64_t pause_acc_ns[SD_MAX_SOURCES];
	volatile sig_atomic_t ovr;
	unsigned ovr_depth;
	uint64_t *ovr_pcs;             /* max_depth entries */
	unsigned scratch_len;
	uint64_t *scratch;             /* unwinder output, max_depth + slack */
	struct sd_counters_thread ctr; /* counters in every sample */
	int papi_es;                   /* PAPI event set, -1 if none */
	int papi_src[SD_MAX_SOURCES];  /* event set index -> source index */
	uint32_t papi_seen[SD_MAX_SOURCES]; /* overflows PAPI dispatched, by set index */
	struct sd_thread *next;        /* registry, under sd_runtime.lock */
	int adopted;                   /* alive before sonde started */
	/* tasks.c, writer thread under the registry lock: the thread's CPU
	 * time when its descriptors were last found intact, and the CPU time
	 * lost while they were closed behind sonde's back. */
	uint64_t audit_cpu_ns;
	uint64_t fd_gap_ns;
};

/* The calling thread's record (NULL: not registered, or sonde off), set by
 * sd_thread_begin with signals blocked. Initial-exec TLS: the handler never
 * reaches __tls_get_addr. Defined in runtime.c. */
extern __thread struct sd_thread *sd_tls_thread __attribute__((tls_model("initial-exec")));

/* A thread made without pthread_create (a raw clone), found by tasks.c in
 * /proc/self/task. Its TLS may be another thread's (no CLONE_SETTLS), so its
 * handler finds this slot by gettid() and never touches TLS (foreign.c). */
#define SD_MAX_FOREIGN 64
struct sd_foreign {
	_Atomic pid_t tid;             /* 0: free; published last */
	struct sd_thread *t;           /* its record (in the registry) */
	_Atomic uintptr_t stack_lo, stack_hi; /* its stack mapping, 0 until known */
	_Atomic uintptr_t sp;          /* a stack pointer the handler saw */
	uint64_t cpu_ns;               /* writer: its CPU time at the last tick */
	uint64_t unsampled_ns;         /* writer: of it, before it was found */
	int sampled;                   /* writer: its sources run */
};

struct sd_runtime {
	_Atomic int nofd_said;        /* "no file descriptor left" said */
	_Atomic int refused_said;     /* a new thread's perf_event clock refused: said */
	_Atomic int state;             /* enum sd_state */
	struct sd_config cfg;
	pid_t pid;
	int fd_floor;                  /* sonde's fds live at or above this */
	int fd_share;                  /* at most this many descriptors are sonde's */
	int fd_above;                  /* they live above the soft RLIMIT_NOFILE */
	_Atomic int timers;            /* sonde's POSIX timers now */
	int timer_share;               /* at most this many (RLIMIT_SIGPENDING / 16) */
	long sigpending_limit;         /* RLIMIT_SIGPENDING when sonde started; -1: none */
	long fd_limit;                 /* RLIMIT_NOFILE (soft) when sonde started; -1: none */
	struct sd_counters counters;   /* SONDE_COUNTERS, probed at start */
	struct sd_thread *threads;     /* registry, under lock */
	struct sd_thread *adopted[64]; /* alive before start; immutable once published */
	_Atomic int nadopted;
	_Atomic int unwind_init;        /* libunwind initialising: its pipe is ours */
	int under_valgrind;            /* set at start: valgrind's preload is loaded */
	int vpipe;                     /* libunwind's pipe is answered without descriptors */
	struct sd_foreign foreign[SD_MAX_FOREIGN]; /* tasks.c writes, handlers read */
	_Atomic int nforeign;          /* slots in use */
	/* threads begun through pthread_create that sonde could not set up (no
	 * memory for their record or ring): the scan that finds them later says
	 * so, not "a raw clone" (the first SD_MAX_NOMEM; 0: a free slot) */
#define SD_MAX_NOMEM 32
	_Atomic pid_t nomem_tids[SD_MAX_NOMEM];
	_Atomic int starting;          /* pthread_create'd threads not registered yet */
	_Atomic int nbegun;            /* threads sd_thread_begin set up, not yet ended */
	int sigterm_installed[65];     /* our flush handler holds this signal */
	int sigio_installed;           /* our SIGIO handler holds SIGIO */
	int wall_src;                  /* index of the wall-time source, -1 if none */
	/* cpu-time and wall-time together run on one clock: two task clocks of
	 * one thread overflow together, and the second signal, due while the
	 * kernel delivers the first, is lost to exclude_kernel (a wall-time@1ms
	 * beside cpu-time@1ms left cpu-time 17 samples for 400 ms). The source of
	 * the shorter period (primary) is signalled; each of its samples also
	 * counts toward the other (derived), which gets a copy of the sample
	 * every time its own period is reached. -1: none. */
	int primary_src, derived_src;
	struct sigaction app_action[65]; /* what the program asked for */
	int app_action_set[65];
	/* SA_ONSTACK: until the program sets an alternate stack in any thread,
	 * its handlers are installed without SA_ONSTACK (they would run on the
	 * thread's stack, never on sonde's); onstack_held marks those, put back
	 * with the flag when it first does (interpose/signals.c). */
	_Atomic int prog_alt_any;
	_Atomic uint64_t self_min_ns;  /* the least time a sample handler took (handler.c) */
	_Atomic int onstack_held[65];
	/* The first instruction of every signal handler installed in the
	 * process (sonde's, the program's, PAPI's), by signal: a sample whose
	 * interrupted PC is one of them, right above a signal frame, came in
	 * the same instant as that signal, before its handler ran a single
	 * instruction: it belongs to the code the first signal interrupted
	 * (handler.c, unwind_libunwind_sigsafe). */
	_Atomic uintptr_t handler_entry[65];
	_Atomic int throttle_said[SD_MAX_SOURCES];
	_Atomic uint32_t start_mult[SD_MAX_SOURCES]; /* new threads start at period x this */
};

extern struct sd_runtime sd_rt;

/* config.c: parse the environment into cfg; prints one line per problem.
 * Returns 0, or -EINVAL when sonde must stay off (SONDE_ENABLE=0 returns
 * -ECANCELED silently). */
int sd_config_parse(struct sd_config *cfg);
/* Parses a period ("1ms", "250us", "1000hz", "2s", "500ns"). 0 or -EINVAL. */
int sd_config_parse_period(const char *s, uint64_t *period_ns);

/* runtime.c */
/* Moves the runtime to `to` (from `from`, or from any state when from < 0),
 * along an arrow of the lifecycle drawn above (asserted): 1 if it moved. */
int sd_state_move(int from, int to);
/* The thread registry's lock: the caller has every signal blocked. */
void sd_runtime_lock(void);
void sd_runtime_unlock(void);
/* Takes t out of the registry (lock held). */
void sd_runtime_registry_unlink(struct sd_thread *t);
/* descriptors sonde may mark as its own: 0 .. SD_FDMAP_BITS - 1 */
#define SD_FDMAP_BITS 65536

/* threads.c: thread records, ordinary context. */
/* The key whose destructor ends a thread that skipped the trampoline's
 * cleanup; once, in the constructor. */
void sd_threads_init(void);
/* Threads alive before sonde started (not self), adopted and sampled
 * through sources that target their tid. Constructor, before the writer
 * thread exists. */
void sd_threads_adopt_existing(pid_t self);
/* Thread t's counters and sources opened / closed (closing: registry lock
 * held), their descriptors marked as sonde's / no longer. */
void sd_thread_open_sources(struct sd_thread *t);
void sd_thread_close_sources(struct sd_thread *t);
/* Stops (on 0) or restarts (1, at the full period) t's sources in place. */
void sd_thread_sources_enable(struct sd_thread *t, int on);
/* Charges the CPU time t ran paused, in whole periods per source (the rest
 * carried), as accounted samples; t->busy held. */
void sd_thread_pause_charge(struct sd_thread *t);
/* The calling thread's CPU time into cpu, and its counter deltas since its
 * last sample into out (returns how many; 0 without, or when counters is 0),
 * as it ends: one clock read and one getrusage for both. */
unsigned sd_thread_final(struct sd_thread *t, int counters, uint64_t *out,
			 struct sd_cpu_times *cpu);
/* A forked child: every record but self's dropped (their descriptors closed,
 * not disabled: shared with the parent), the pools' lock made anew; then,
 * when the child is followed, self's sources started anew. */
void sd_threads_fork_child(struct sd_thread *self);
void sd_thread_fork_restart(struct sd_thread *self);

/* Sets up the calling thread: ring, unwinder warm-up, sources. stack_lo,
 * stack_hi: its stack as pthread_getattr_np gives it, read by its creator
 * (interpose/threads.c); 0, 0: unknown, read here (the main thread's is found
 * without). */
struct sd_thread *sd_thread_begin(uintptr_t stack_lo, uintptr_t stack_hi);
/* Tears down the calling thread's state; idempotent. */
void sd_thread_end(void);
/* The program blocked the sampling signal on thread t (its own, ordinary
 * context; ra/fp identify the call site): stop its sources. */
void sd_thread_pause(struct sd_thread *t, void *ra, void *fp);
/* It unblocked it: restart them and charge the CPU time run meanwhile to
 * [signals blocked] under the stack where it blocked. */
void sd_thread_resume(struct sd_thread *t);
/* A thread record for a thread other than the caller (sources not opened).
 * Ordinary context. */
struct sd_thread *sd_runtime_thread_new(pid_t tid, const char *name);

/* runtime.c, again */
void sd_runtime_stop(const char *reason, int signo);
void sd_runtime_block_signals(sigset_t *old);
void sd_runtime_restore_signals(const sigset_t *old);
int sd_runtime_is_sonde_fd(int fd);
/* Marks fd as sonde's (on) or not. async-signal-safe. */
void sd_runtime_fd_track_sigsafe(int fd, int on);
/* Whether sonde may hold n more descriptors within its share of
 * RLIMIT_NOFILE (sd_rt.fd_share, docs/ENV.md "Descriptors"): every
 * descriptor sonde opens beyond its stream asks first. async-signal-safe. */
int sd_runtime_fd_room_sigsafe(int n);
/* The program's timer_create found the signal quota used up: sonde gives up
 * one of its own POSIX timers (a thread's; that thread is not sampled from
 * then on, said once). 1 if one was given up. */
int sd_runtime_timer_yield(void);
/* sources.c: sonde's POSIX timers: at most sd_rt.timer_share (-EDQUOT beyond), each
 * counted (timer_create's wrapper knows them by their signal and cookie and
 * never gives its own up for them: interpose/signals.c). */
int sd_sources_timer_create(clockid_t clock, struct sigevent *sev, timer_t *id);
void sd_sources_timer_delete(timer_t id);
void sd_runtime_fd_closed(int fd);
void sd_runtime_fd_reopen(void);
/* The next descriptor at or above fd marked as sonde's, or -1. */
int sd_runtime_fd_next(int fd);
/* Adding a thread record to / removing it from the registry (removal closes
 * its sources). Ordinary context. */
void sd_runtime_registry_add(struct sd_thread *t);
void sd_runtime_registry_remove(struct sd_thread *t);
/* Calls fn(t, arg) for every thread record under the registry lock, every
 * signal blocked on the calling thread. Ordinary context. */
void sd_runtime_threads_foreach(void (*fn)(struct sd_thread *, void *), void *arg);
void sd_runtime_fork_prepare(void);
void sd_runtime_fork_parent(void);
void sd_runtime_fork_child(void);
void sd_runtime_exec_prepare(void);
void sd_runtime_exec_failed(void);

/* sources.c: open/close the calling thread's sampling sources. */
int sd_sources_open(struct sd_thread *t, pid_t tid);
void sd_sources_close(struct sd_thread *t);
void sd_sources_disable_sigsafe(struct sd_thread *t);
/* Decides each source's mechanism once at start (probing perf_event). */
void sd_sources_probe(struct sd_config *cfg);
void sd_sources_probe_release(void);

/* papi.c: PAPI overflow sources. */
void sd_papi_probe(struct sd_config *cfg);
int sd_papi_thread_open(struct sd_thread *t);
void sd_papi_thread_close(struct sd_thread *t);
/* The calling thread's overflows counted but never signalled, so far, added
 * to its drops (signal_lost); sd_papi_thread_close does the same. Ordinary
 * context, the thread itself (PAPI is not async-signal-safe). */
void sd_papi_thread_account(struct sd_thread *t);
void sd_papi_fork_child(void);
void sd_papi_exec_prepare(struct sd_thread *t, int stop);

/* handler.c: signal context. */
void sd_handler_sample(int sig, siginfo_t *si, void *uc);
/* SIGIO: the kernel falls back to it when a real-time signal queue is full;
 * swallowed (and counted) when the program left SIGIO at its default. */
void sd_handler_sigio(int sig, siginfo_t *si, void *uc);
/* forward.c: delivers a signal sonde did not send to the program's own
 * disposition, as the kernel would have without sonde. async-signal-safe. */
void sd_signal_forward_sigsafe(int sig, siginfo_t *si, void *uc);
/* say.c: "sonde: SPEC: no file descriptor left for a perf_event task clock ...",
 * once per process; share: sonde's share of RLIMIT_NOFILE was used up (not
 * the program's limit). async-signal-safe. */
void sd_say_nofd_sigsafe(int src, int share);
/* A new thread's perf_event clock refused for another reason than
 * descriptors (err: a positive errno), after the probe at start worked: said
 * once. async-signal-safe. */
void sd_say_refused_sigsafe(int src, int err);
/* Thread t's first sample of src came (its random first phase, struct
 * sd_thread): its clock runs at the full period from now. async-signal-safe. */
void sd_handler_phase_done_sigsafe(struct sd_thread *t, int src);
/* say.c: the one `sonde:` line (and NOTE) saying that source src was
 * throttled, first to period_ns. Once per source and process.
 * async-signal-safe. */
void sd_say_throttled_sigsafe(int src, uint64_t period_ns);
void sd_handler_take_sigsafe(struct sd_thread *t, int src, uint32_t weight, const ucontext_t *uc);
/* A sample of sonde's own time (the handler's, counted by the thread's clock
 * as the program's): charged to [sonde] alone, not unwound. async-signal-safe. */
void sd_handler_take_self_sigsafe(struct sd_thread *t, int src, uint32_t weight);
/* libunwind's process-wide lazy state, made on the first thread (loader.c). */
void sd_unwind_warmup(struct sd_thread *t);
/* The calling thread's stack here, innermost first, at most max frames (0
 * without libunwind). Ordinary context; the caller holds t->busy. */
unsigned sd_handler_stack_here(struct sd_thread *t, uint64_t *pcs, unsigned max);
/* unwind_fp.c: frame-pointer walk of an interrupted context: reads inside [lo, hi)
 * directly, outside it through the kernel (probe 1; at most SD_FP_PROBES
 * reads a walk, ~1 us each) or not at all (probe 0). async-signal-safe. */
#define SD_FP_PROBES 16
/* sigaltstack's SS_AUTODISARM (linux/signal.h, Linux >= 4.7). */
#define SD_SS_AUTODISARM ((int)(1u << 31))
unsigned sd_unwind_fp_sigsafe(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, int probe,
			      uint64_t *pcs, unsigned max, uint8_t *flags);
/* Charges the calling thread's samples to pseudo-frame `pseudo` under its
 * current stack (unwound here, ordinary context) until sd_handler_ovr_end().
 * Returns 0 when an override was already in place (nothing to end). */
int sd_handler_ovr_begin(struct sd_thread *t, unsigned pseudo);
void sd_handler_ovr_end(struct sd_thread *t);
/* The loader snapshot: what dl_iterate_phdr answers inside the handler
 * instead of the real one (handler.c reads it and publishes a new one;
 * loader.c builds it, outside signal context). */
struct phdr_entry {
	struct dl_phdr_info info;
	ElfW(Phdr) *phdrs;
	char *name;
};

struct phdr_snapshot {
	size_t count;
	size_t map_bytes;
	unsigned long long adds, subs;
	struct phdr_entry e[];
};

struct phdr_snapshot *sd_phdr_snapshot_swap_sigsafe(struct phdr_snapshot *s);
int sd_phdr_snapshot_readers_sigsafe(void);
void sd_phdr_snapshot_rebuild(void);
/* Records act's handler as sd_rt.handler_entry[sig] (nothing for SIG_DFL,
 * SIG_IGN or no act; interpose/signals.c). Ordinary context. */
void sd_handler_entry_note(int sig, const struct sigaction *act);

/* The sampler's tracking of the loader (loader.c), ordinary context:
 * sd_loader_poll: has the loader mapped or unmapped anything since the
 * snapshot was built (its load/unload counters, one dl_iterate_phdr
 * callback)? 0 in a forked child until the program's own dlopen/dlclose
 * returned (sd_loader_fork_child). sd_loader_changed: the set of modules
 * changed at t0_ns: rebuild the snapshot, flush libunwind's caches, and have
 * the writer record the new module set; takes the loader lock and the
 * writer's, with sonde's signals blocked. */
int sd_loader_poll(void);
void sd_loader_changed(uint64_t t0_ns);
/* The same from a sample's drain in a single-threaded process (the writer's
 * drain_hook: its lock held, no other thread): only when no loader list is
 * changing (r_debug) and the thread is not in a wrapped dlopen/dlclose. The
 * loader's write lock, recursive, may be this thread's already; nothing
 * else holds it. */
void sd_loader_poll_single_sigsafe(void);
void sd_loader_fork_child(void);
/* 1 when the process runs under valgrind (its core preload,
 * vgpreload_core-<arch>-<os>.so, is loaded), else 0. Ordinary context. */
int sd_loader_under_valgrind(void);
/* Whether process_vm_readv reads this process (libunwind's pipe then needs
 * no descriptors: interpose/fds.c). */
int sd_interpose_vpipe_probe(void);
int sd_phdr_snapshot_iterate_sigsafe(int (*cb)(struct dl_phdr_info *, size_t, void *),
				     void *data);
/* forward.c: SIGTERM/SIGINT/SIGHUP at their default: the stream flushed,
 * then the default action. async-signal-safe. */
void sd_flush_handler(int sig, siginfo_t *si, void *uc);

/* tasks.c: sonde's descriptors and the program's threads, checked from the
 * writer thread (ordinary context). */
/* The writer's tick: finds descriptors closed behind sonde's back (a raw
 * close_range) and re-arms sampling; finds threads made without
 * pthread_create. stream_fd_lost: the writer's own descriptor just vanished. */
int sd_tasks_tick(int stream_fd_lost);
/* tasks_fds.c: sonde's sampling and counter descriptors checked (a share
 * of the threads each tick; all of them, and every marked number, when the
 * stream's descriptor was lost): those gone are forgotten and re-armed. */
void sd_tasks_audit_descriptors(int stream_fd_lost);
/* Is fd, marked as sonde's, still sonde's object (not a number the program
 * closed with a raw system call and reused)? Ordinary context. */
int sd_tasks_fd_ours(int fd);
/* Remembers the identity (device, inode) of a descriptor sonde owns that
 * carries no other mark (libunwind's pipe). async-signal-safe. */
void sd_tasks_fd_remember_sigsafe(int fd);
/* Does fd still name a descriptor remembered that way? async-signal-safe. */
int sd_tasks_fd_remembered_sigsafe(int fd);
/* Forgets t's descriptors that are no longer sonde's (never closes them).
 * Registry lock held. */
void sd_tasks_forget_stale(struct sd_thread *t);
/* Thread tid left the registry (sd_thread_end): it may stay listed in
 * /proc/self/task while it exits, and is not a foreign thread. Registry lock
 * held; async-signal-safe (atomics). */
void sd_tasks_thread_gone(pid_t tid);
/* In a forked child, after the registry was emptied: forgets every foreign
 * thread and the parent's task directory. */
void sd_tasks_fork_child(void);
/* A followed child opens its /proc/self/task at once, before its writer
 * starts (so before any chroot of the child: its first tick could not). */
void sd_tasks_fork_child_open(void);

/* foreign.c: signal context. Takes the sample when the calling thread is a
 * foreign one (sd_rt.foreign, found by gettid); returns 0 otherwise.
 * async-signal-safe; touches no TLS and no errno on the foreign path. */
int sd_foreign_sample_sigsafe(const siginfo_t *si, void *uc);

/* interpose/ (the wrappers of libc and loader functions; the real ones are
 * common/real.c's): at start, in the constructor, before the program's
 * threads, resolves every real function and finds sonde's own code
 * (interpose/blocking.c). Ordinary context. */
void sd_interpose_init(void);

#endif
