/* start.c - the start of the sonde runtime: its constructor (main thread,
 * before main) and destructor, and what the constructor sets up: the
 * configuration, sonde's share of descriptors and signal quota, the sampling
 * and flush signal handlers, the probes of every source (source_table.c), the
 * writer and its stream header, the threads alive already, the annotation
 * hooks (SONDE_REGIONS). OFF -> ARMED -> RUNNING (sampler.h).
 *
 * Ordinary context only: the constructor, and the annotation hooks below on
 * the annotating thread itself (each keeps its sampling handler off its ring
 * with `busy`). A fatal set-up error says one line and leaves sonde off.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"
#include "annotate/annotate.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

/* The stream header's sources (start_writer), kept for the writer. */
static struct sd_source_info source_info[SD_MAX_SOURCES];
static char mechanism[SD_MAX_SOURCES][96];

static pid_t gettid_(void)
{
	return (pid_t)sd_syscall(SYS_gettid);
}

/* After a region event, ordinary context: without a writer thread (a
 * single-threaded program, writer.c) the region calls of a program that
 * sleeps between them, and so takes no sample, write its stream. Not while
 * samples drain (at most two flush periods ago): a drain here is time the
 * program's own clock around the call sees and the region's does not
 * (api.query: 111 ms against the program's 117 beside a CPU hog). */
static void region_ended(void)
{
	struct sd_thread *t = sd_tls_thread;
	if (!t || !t->ring || !sd_writer_drain_after_sigsafe(t->ring, 2))
		return;
	int e = errno;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_writer_drain_self();
	sd_runtime_restore_signals(&old);
	errno = e;
}

/* SONDE_REGIONS=on: every change of a thread's context goes into its ring
 * with a timestamp. Called by annotate on the thread itself, ordinary
 * context; `busy` keeps this thread's sampling handler off the ring. */
static void region_event(uint32_t node, int ev)
{
	struct sd_thread *t = sd_tls_thread;
	if (!t || atomic_load_explicit(&sd_rt.state, memory_order_relaxed) != SD_RUNNING)
		return;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	/* a REGION: the context node in `weight`, the event in `source`, with
	 * SD_REC_REGION_LOST set on the first event kept after events were dropped
	 * (the writer writes an event SD_REGION_LOST before it) */
	uint8_t src = (uint8_t)(ev | (t->region_lost ? SD_REC_REGION_LOST : 0));
	struct sd_rec *rec = sd_ring_begin_sigsafe(t->ring, SD_REC_REGION, src, 0, node, 0,
						   0, SD_DROP_REGION_RING_FULL);
	t->region_lost = rec == NULL;
	if (rec) {
		if (sd_rt.counters.n &&
		    sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, NULL, rec->pcs) == 0)
			rec->ncounters = (uint16_t)sd_rt.counters.n;
		sd_ring_commit_sigsafe(t->ring, rec);
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
	if (ev != SD_REGION_BEGIN)
		region_ended(); /* between the program's calls, not inside one */
}

/* SONDE_REGIONS=on: a thread's region table, linked to its ring so that the
 * writer collects it at every flush and frees it after the thread ended. */
static int adopt_region_table(struct sd_rtable *rt)
{
	struct sd_thread *t = sd_tls_thread;
	if (!t || !t->ring)
		return 0;
	sd_writer_ring_regions(t->ring, rt);
	return 1;
}

/* SONDE_REGION_COUNTERS=on: the calling thread's counter totals. */
static int region_counters(uint64_t *out)
{
	struct sd_thread *t = sd_tls_thread;
	if (!t)
		return -1;
	_Static_assert(SD_REGION_COUNTERS_MAX >= SD_MAX_COUNTERS, "a region's counters");
	int was = t->busy;
	t->busy = 1; /* its sampling handler keeps off the counters meanwhile */
	atomic_signal_fence(memory_order_seq_cst);
	int r = sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, NULL, out);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = was;
	return r == 0 ? 0 : -1;
}


/* sonde's POSIX timers (where perf_event is refused) hold at most a
 * sixteenth of the user's signal quota (docs/ENV.md). */
static void pick_timer_share(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_SIGPENDING, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (rlim_t)INT_MAX) {
		sd_rt.sigpending_limit = -1;
		sd_rt.timer_share = INT_MAX;
		return;
	}
	sd_rt.sigpending_limit = (long)rl.rlim_cur;
	sd_rt.timer_share = (int)(rl.rlim_cur / 16);
}


/* Where sonde's descriptors go and how many it may hold (docs/ENV.md,
 * "Descriptors"): of a soft RLIMIT_NOFILE L, the stream's one and up to
 * (L - 3) / 16 more (the clocks, counters, /proc/self/task), a thread that
 * finds the share used up samples on a POSIX timer; libunwind's pipe takes
 * none (interpose/fds.c, pipe2). They live in the top numbers of a small limit
 * (the program's lowest numbers stay free), from 1024 up under a large one. */
static void pick_fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > SD_FDMAP_BITS) {
		sd_rt.fd_limit = -1;
		sd_rt.fd_share = SD_FDMAP_BITS / 16;
		sd_rt.fd_floor = 1024;
		return;
	}
	long soft = (long)rl.rlim_cur;
	sd_rt.fd_limit = soft;
	if (rl.rlim_max > rl.rlim_cur && soft + 64 <= SD_FDMAP_BITS) {
		/* Room above the program's limit: sonde's numbers go there
		 * (kernel/perf.c raises the soft limit for each move), and the
		 * program keeps every number below it. */
		rlim_t room = rl.rlim_max - rl.rlim_cur;
		sd_rt.fd_floor = (int)soft;
		sd_rt.fd_share = room > (rlim_t)(SD_FDMAP_BITS - soft) ? (int)(SD_FDMAP_BITS - soft) : (int)room;
		sd_rt.fd_above = 1;
		return;
	}
	sd_rt.fd_share = 1 + (soft > 3 ? (int)((soft - 3) / 16) : 0);
	sd_rt.fd_floor = soft >= 4096 ? 1024 : (int)(soft - sd_rt.fd_share);
	if (sd_rt.fd_floor < 3)
		sd_rt.fd_floor = 3;
}

static void install_flush_handlers(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sd_real_sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = sd_flush_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
		sigfillset(&sa.sa_mask);
		if (sd_real_sigaction(sigs[i], &sa, NULL) == 0)
			sd_rt.sigterm_installed[sigs[i]] = 1;
	}
}

static const char *unwind_name(enum sd_unwind u)
{
	return u == SD_UNWIND_FP ? "fp" : u == SD_UNWIND_NONE ? "none" : "libunwind";
}

static int start_writer(void)
{
	const struct sd_config *c = &sd_rt.cfg;
	for (unsigned i = 0; i < c->nsources; i++) {
		sd_source_header_info(c, i, &source_info[i], mechanism[i], sizeof mechanism[i]);
		if (sd_source_ops_of(&c->sources[i])->off_cpu && sd_rt.wall_src < 0)
			sd_rt.wall_src = (int)i;
	}
	uint32_t ring = 1;
	while (ring < c->buffer_kb * 1024u)
		ring <<= 1;
	struct sd_writer_config wc = {
		.dir = c->output,
		.file_mode = c->file_mode,
		.dir_mode = c->dir_mode,
		.argv_mode = c->argv_mode,
		.argv_redact = c->argv_mode == SD_ARGV_REDACT ? &c->argv_re : NULL,
		.flush_ms = c->flush_ms,
		.max_depth = c->max_depth,
		.unwind = unwind_name(c->unwind),
		.ring_bytes = ring,
		/* a thread's record and buffers (about 60 KiB), alternate stack
		 * and, unwound by libunwind, its cache (sampler.h) */
		.thread_bytes = 64u * 1024u + SD_ALTSTACK_BYTES + 4096u +
				(c->unwind == SD_UNWIND_LIBUNWIND ? SD_UNWIND_CACHE_BYTES : 0),
		.sources = source_info,
		.nsources = c->nsources,
		.verbose = c->verbose,
		.create_thread = sd_real_pthread_create,
		.fd_floor = sd_rt.fd_floor,
		.counters = &sd_rt.counters,
		.wall_source = sd_rt.wall_src,
		.wall_period_ns = sd_rt.wall_src >= 0 ? c->sources[sd_rt.wall_src].period_ns : 0,
		.fd_track = sd_runtime_fd_track_sigsafe,
		.tick = sd_tasks_tick,
		.thread_always = c->writer_always,
		.drain_hook = sd_loader_poll_single_sigsafe,
	};
	return sd_writer_init(&wc);
}

/* Two copies of the runtime in one process (two paths in LD_PRELOAD, or a
 * preloaded program that dlopens libsonde) would each sample every thread.
 * The exported entry points resolve to the first copy loaded: a copy whose
 * own file is not the one behind them stays off. */
static int another_copy(void)
{
	void *first = dlsym(RTLD_DEFAULT, "sonde_rt_active");
	Dl_info me, other;
	if (!first || !dladdr((void *)another_copy, &me) || !dladdr(first, &other) ||
	    me.dli_fbase == other.dli_fbase)
		return 0;
	sd_msg("sonde: %s: another copy of the runtime is already loaded in this process "
	       "(%s); this one stays inactive (preload libsonde once)",
	       me.dli_fname ? me.dli_fname : "libsonde", other.dli_fname ? other.dli_fname : "?");
	return 1;
}

static void probes_release(void)
{
	sd_source_probe_release_all();
	sd_kernel_counters_probe_release(&sd_rt.counters);
}

/* Time sources never start below SD_START_MIN_NS (sampler.h): a shorter
 * period asked for starts at a multiple of it, said as throttling. */
static void pick_start_periods(void)
{
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		const struct sd_source *s = &sd_rt.cfg.sources[i];
		uint32_t m = 1;
		if (sd_source_ops_of(s)->timed && s->period_ns < SD_START_MIN_NS) {
			m = (uint32_t)((SD_START_MIN_NS + s->period_ns - 1) / s->period_ns);
			sd_say_throttled_sigsafe((int)i, s->period_ns * m);
		}
		atomic_store(&sd_rt.start_mult[i], m);
	}
}

/* The sampling signal's handler, and SIGIO's where the program left it at
 * its default; every handler installed before sonde noted (handler.c). 0, or
 * -1 (said) when the sampling handler cannot be installed. */
static int install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sd_handler_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	struct sigaction prev;
	for (int sig = 1; sig < 65; sig++) { /* handlers set before sonde started */
		struct sigaction cur;
		if (sd_real_sigaction(sig, NULL, &cur) == 0)
			sd_handler_entry_note(sig, &cur);
	}
	sd_handler_entry_note(sd_rt.cfg.signo, &sa);
	if (sd_real_sigaction(sd_rt.cfg.signo, &sa, &prev) != 0) {
		sd_msg("sonde: signal %d: cannot install the sampling handler: %s (set SONDE_SIGNAL)",
		       sd_rt.cfg.signo, strerror(errno));
		return -1;
	}
	/* A handler set before sonde started (by a library constructor) is the
	 * program's: signals sonde did not send still go to it. */
	if ((prev.sa_flags & SA_SIGINFO) || prev.sa_handler != SIG_DFL) {
		sd_rt.app_action[sd_rt.cfg.signo] = prev;
		sd_rt.app_action_set[sd_rt.cfg.signo] = 1;
	}
	/* SIGIO: what the kernel sends when a sampling signal cannot be queued;
	 * its default action would kill the program. */
	struct sigaction io;
	if (sd_real_sigaction(SIGIO, NULL, &io) == 0 && !(io.sa_flags & SA_SIGINFO) &&
	    (io.sa_handler == SIG_DFL || io.sa_handler == SIG_IGN)) {
		if (io.sa_handler == SIG_IGN) {
			sd_rt.app_action[SIGIO] = io;
			sd_rt.app_action_set[SIGIO] = 1;
		}
		sa.sa_sigaction = sd_handler_sigio;
		sd_handler_entry_note(SIGIO, &sa);
		if (sd_real_sigaction(SIGIO, &sa, NULL) == 0)
			sd_rt.sigio_installed = 1;
	}
	return 0;
}

/* Before libunwind's first use: how its address checks are answered
 * (interpose/fds.c: under valgrind, through process_vm_readv), and its caches
 * per thread. */
static void unwind_setup(void)
{
	sd_rt.under_valgrind = sd_loader_under_valgrind();
	sd_rt.vpipe = sd_interpose_vpipe_probe();
	if (sd_rt.under_valgrind && sd_rt.cfg.verbose)
		sd_msg("sonde: running under valgrind: libunwind's address checks read through "
		       "process_vm_readv, not written to its pipe (docs/ENV.md, Under valgrind)");
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND) {
		atomic_store(&sd_rt.unwind_init, 1);
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
		atomic_store(&sd_rt.unwind_init, 0);
	}
}

/* The annotation API's hooks into the runtime (SONDE_REGIONS, SONDE_REGION_COUNTERS). */
static void annotate_start(void)
{
	struct sd_annotate_hooks ah = {
		.region = sd_rt.cfg.regions == SD_REGIONS_TRACE ? region_event : NULL,
		.aggregate = sd_rt.cfg.regions == SD_REGIONS_ON,
		.ncounters = sd_rt.cfg.region_counters ? sd_rt.counters.n : 0,
		.read_counters = region_counters,
		.adopt_table = adopt_region_table,
		.ended = region_ended,
	};
	sd_annotate_start(&ah);
}

__attribute__((constructor)) static void sd_runtime_init(void)
{
	sd_interpose_init();
	sd_log_set(sd_writer_log, 0); /* sonde's lines: stderr and a NOTE each */
	sd_rt.wall_src = -1;
	sd_rt.primary_src = sd_rt.derived_src = -1;
	if (getauxval(AT_SECURE))
		return; /* setuid/setgid: off, and no SONDE_* is read (docs/ENV.md) */
	if (sd_config_parse(&sd_rt.cfg) != 0)
		return; /* off: disabled, or no usable signal (already said) */
	if (another_copy())
		return;
	sd_rt.pid = getpid();
	pick_fd_floor();
	pick_timer_share();
	sd_mem_init(); /* sonde's share of RLIMIT_AS, before anything is mapped */
	sd_threads_init();
	pick_start_periods();
	if (install_handlers() != 0)
		return;
	/* The output directory first, before the probes hold descriptors: with
	 * a low RLIMIT_NOFILE its walk is what may not fit. */
	struct sd_writer_config dc = {.dir = sd_rt.cfg.output, .dir_mode = sd_rt.cfg.dir_mode,
				      .fd_floor = sd_rt.fd_floor,
				      .fd_track = sd_runtime_fd_track_sigsafe};
	if (sd_writer_open_dir(&dc) != 0)
		return; /* said why; the program runs on unprofiled */
	unwind_setup();
	sd_source_probe_all(&sd_rt.cfg); /* the clocks (and their shared clock), then PAPI */
	sd_kernel_counters_probe(getenv("SONDE_COUNTERS"), &sd_rt.counters, sd_msg);
	/* After the probes: PAPI's library (dlopened by the probe, past the dlopen
	 * wrapper) must be in the snapshot, or no sample taken in its overflow
	 * handler unwinds past its frames. */
	sd_phdr_snapshot_rebuild();
	if (start_writer() != 0) {
		probes_release();
		return; /* said why; the program runs on unprofiled */
	}
	sd_state_move(SD_OFF, SD_ARMED);
	pid_t self = gettid_();
	sd_threads_adopt_existing(self); /* before the writer thread exists */
	if (sd_writer_start() != 0) {
		sd_state_move(SD_ARMED, SD_OFF);
		probes_release();
		return;
	}
	sd_state_move(SD_ARMED, SD_RUNNING);
	sd_thread_begin(0, 0);
	probes_release(); /* after the first thread's own are open */
	annotate_start();
	pthread_atfork(sd_runtime_fork_prepare, sd_runtime_fork_parent, sd_runtime_fork_child);
	install_flush_handlers();
}
__attribute__((destructor)) static void sd_runtime_fini(void)
{
	sd_runtime_stop("exit", 0);
}

