/* runtime.c - start, stop, threads, fork and exec of the sonde runtime.
 *
 * Runs in ordinary context only: the constructor and destructor (main
 * thread, before and after main), the pthread_create trampoline and thread
 * exit (each thread for itself), pthread_atfork handlers and the exec/_exit
 * wrappers (the calling thread). The lifecycle is drawn in sampler.h.
 *
 * Invariants: the thread registry is touched only under `lock`, and only with
 * every signal blocked on the locking thread, so no handler (sonde's or the
 * program's) can run on a thread that holds it. A thread record is freed only
 * by its own thread after its sources are closed and its pending sampling
 * signals are consumed, or in a forked child where its thread no longer exists.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"
#include "include/sonde.h"
#include "annotate/annotate.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

struct sd_runtime sd_rt;
__thread struct sd_thread *sd_tls_thread __attribute__((tls_model("initial-exec")));
static __thread sigset_t fork_saved_mask __attribute__((tls_model("initial-exec")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
static struct sd_source_info source_info[SD_MAX_SOURCES];
static char mechanism[SD_MAX_SOURCES][96];

/* Bitmap of descriptors that are sonde's (perf_event fds, the output file,
 * libunwind's pipe), read by the close/dup2 wrappers without a lock.
 * sd_runtime_fd_track is async-signal-safe (atomics only). */
#define FDMAP_BITS 65536
static _Atomic uint64_t fdmap[FDMAP_BITS / 64];
static _Atomic int fd_count; /* bits set in fdmap */

void sd_runtime_fd_track_sigsafe(int fd, int on)
{
	if (fd < 0 || fd >= FDMAP_BITS)
		return;
	uint64_t bit = 1ull << (fd % 64);
	if (on) {
		if (!(atomic_fetch_or(&fdmap[fd / 64], bit) & bit))
			atomic_fetch_add(&fd_count, 1);
	} else if (atomic_fetch_and(&fdmap[fd / 64], ~bit) & bit) {
		atomic_fetch_sub(&fd_count, 1);
	}
}

int sd_runtime_fd_room_sigsafe(int n)
{
	return atomic_load_explicit(&fd_count, memory_order_relaxed) + n <= sd_rt.fd_share;
}

int sd_runtime_is_sonde_fd(int fd)
{
	if (fd < 0 || fd >= FDMAP_BITS)
		return 0;
	return (atomic_load_explicit(&fdmap[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1;
}

int sd_runtime_fd_next(int fd)
{
	for (fd = fd < 0 ? 0 : fd; fd < FDMAP_BITS; fd++) {
		uint64_t w = atomic_load_explicit(&fdmap[fd / 64], memory_order_relaxed) >> (fd % 64);
		if (w)
			return fd + __builtin_ctzll(w);
		fd |= 63;
	}
	return -1;
}

void sd_runtime_block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	sd_real_pthread_sigmask(SIG_BLOCK, &all, old);
}

void sd_runtime_restore_signals(const sigset_t *old)
{
	sd_real_pthread_sigmask(SIG_SETMASK, old, NULL);
}

static pid_t gettid_(void)
{
	return (pid_t)sd_syscall(SYS_gettid);
}

/* Is from -> to an arrow of the lifecycle drawn in sampler.h? */
__attribute__((unused)) /* only in SD_ASSERT, compiled out without SONDE_ASSERTS */
static int state_arrow(int from, int to)
{
	return (from == SD_OFF && to == SD_ARMED) || (from == SD_ARMED && to == SD_RUNNING) ||
	       (from == SD_RUNNING && to == SD_DRAINING) ||
	       (from == SD_DRAINING && to == SD_RUNNING) || to == SD_OFF;
}

/* Moves the runtime to `to` (from `from`, or from any state when from < 0):
 * 1 when it moved. Only the drawn arrows (SD_ASSERT). */
static int sd_state_move(int from, int to)
{
	int cur = atomic_load(&sd_rt.state);
	if (from >= 0) {
		if (!atomic_compare_exchange_strong(&sd_rt.state, &from, to))
			return 0;
		cur = from;
	} else {
		atomic_store(&sd_rt.state, to);
	}
	SD_ASSERT(state_arrow(cur, to));
	(void)cur;
	return 1;
}

SONDE_API int sonde_rt_active(void)
{
	return atomic_load(&sd_rt.state) == SD_RUNNING;
}

/* Consumes sampling signals still queued for the calling thread (its
 * sources are closed), so none reaches a handler without a thread record.
 * They are samples the thread kept blocked until it ended: counted. A signal
 * that is not sonde's is queued again for the process. */
static void drain_pending_samples(struct sd_thread *t)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sd_rt.cfg.signo);
	struct timespec zero = {0, 0};
	siginfo_t si;
	for (int i = 0; i < 1000000 && sd_sys_sigtimedwait(&set, &si, &zero) > 0; i++) {
		int ours = si.si_code == SI_TIMER
				   ? (unsigned)(si.si_value.sival_int - SD_TIMER_COOKIE) < SD_MAX_SOURCES
				   : si.si_code > 0;
		if (!ours)
			sd_syscall(SYS_rt_sigqueueinfo, getpid(), sd_rt.cfg.signo, &si);
		else if (t)
			sd_ring_drop_sigsafe(t->ring, SD_DROP_SIGNALS_BLOCKED);
	}
}

/* Records of ended threads (with their buffers), kept for the next ones. */
#define THREAD_POOL 32
static struct sd_thread *thread_pool[THREAD_POOL];
static unsigned thread_pool_n;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* both pools */

static void thread_free(struct sd_thread *t)
{
	sd_real_pthread_mutex_lock(&pool_lock);
	int kept = thread_pool_n < THREAD_POOL;
	if (kept)
		thread_pool[thread_pool_n++] = t;
	pthread_mutex_unlock(&pool_lock);
	if (kept)
		return;
	sd_mem_free(t->scratch);
	sd_mem_free(t->ovr_pcs);
	sd_mem_free(t->pause_pcs);
	sd_mem_free(t);
}

/* The fields of a new record (zeroed) that are not 0. */
static void thread_init(struct sd_thread *t, pid_t tid)
{
	t->tid = tid;
	t->scratch_len = sd_rt.cfg.max_depth + 32;
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++) {
		t->src_fd[i] = -1;
		t->mult[i] = atomic_load(&sd_rt.start_mult[i]);
		if (!t->mult[i])
			t->mult[i] = 1;
	}
}

static struct sd_thread *thread_new(pid_t tid, const char *name)
{
	sd_real_pthread_mutex_lock(&pool_lock);
	struct sd_thread *t = thread_pool_n ? thread_pool[--thread_pool_n] : NULL;
	pthread_mutex_unlock(&pool_lock);
	if (t) {
		uint64_t *scratch = t->scratch, *ovr = t->ovr_pcs, *pause = t->pause_pcs;
		memset(t, 0, sizeof *t);
		t->scratch = scratch, t->ovr_pcs = ovr, t->pause_pcs = pause;
		thread_init(t, tid);
		if ((t->ring = sd_writer_ring_new(tid, name)))
			return t;
		thread_free(t);
		return NULL;
	}
	t = sd_mem_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	thread_init(t, tid);
	t->scratch = sd_mem_alloc(t->scratch_len * sizeof *t->scratch);
	t->ovr_pcs = sd_mem_alloc(sd_rt.cfg.max_depth * sizeof *t->ovr_pcs);
	t->pause_pcs = sd_mem_alloc(sd_rt.cfg.max_depth * sizeof *t->pause_pcs);
	t->ring = t->scratch && t->ovr_pcs && t->pause_pcs ? sd_writer_ring_new(tid, name) : NULL;
	if (!t->ring) {
		sd_mem_free(t->pause_pcs);
		sd_mem_free(t->ovr_pcs);
		sd_mem_free(t->scratch);
		sd_mem_free(t);
		return NULL;
	}
	return t;
}

/* The knob behind a failure to open a thread's descriptors (the hint of its
 * message): the descriptor limit only when that is what was hit. */
static const char *open_hint(int err)
{
	if (err == -EDQUOT)
		return "raise ulimit -i";
	if (err == -EMFILE || err == -ENFILE)
		return "raise RLIMIT_NOFILE";
	if (err == -EAGAIN) /* timer_create: the per-user timer and signal limit */
		return "raise RLIMIT_SIGPENDING";
	if (err == -EACCES || err == -EPERM)
		return "check /proc/sys/kernel/perf_event_paranoid, seccomp and container limits";
	return "see 'sonde events'";
}

static void thread_open_sources(struct sd_thread *t)
{
	/* Counters and PAPI first, the sampling clocks last: a clock runs from
	 * its start, and the thread's signals are blocked until it returns (a
	 * sample due meanwhile would wait, charged to sonde's set-up). */
	t->ctr.group_fd = -1;
	t->ctr.ok = 0;
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		t->ctr.fds[i] = -1;
	int err;
	if (sd_rt.counters.n) {
		int share = sd_rt.counters.nperf &&
			    !sd_runtime_fd_room_sigsafe((int)sd_rt.counters.nperf);
		err = share ? -EMFILE
			    : sd_kernel_counters_open(&sd_rt.counters, t->tid, sd_rt.fd_floor,
						      t->tid == sd_rt.pid && !t->adopted, &t->ctr);
		static _Atomic int said;
		if (err && share && !atomic_exchange(&said, 1))
			sd_msg("sonde: thread %d: counters unavailable: no file descriptor left within "
			       "sonde's share of RLIMIT_NOFILE (%d of %ld) (its samples carry no counter "
			       "values; raise RLIMIT_NOFILE)", (int)t->tid, sd_rt.fd_share, sd_rt.fd_limit);
		else if (err && !atomic_exchange(&said, 1))
			sd_msg("sonde: thread %d: counters unavailable: %s (its samples carry no counter "
			       "values; %s)", (int)t->tid, strerror(-err), open_hint(err));
		for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
			sd_runtime_fd_track_sigsafe(t->ctr.fds[i], 1);
	}
	t->papi_es = -1;
	static _Atomic int warned;
	/* PAPI sets are per calling thread: none for adopted threads */
	err = sd_source_thread_open_all(t, t->tid, !t->adopted);
	if (err == -EDQUOT && !atomic_exchange(&warned, 1))
		sd_msg("sonde: thread %d: not sampled: no POSIX timer left within sonde's share of "
		       "RLIMIT_SIGPENDING (%d of %ld) (its CPU time shows as not sampled; raise ulimit -i)",
		       (int)t->tid, sd_rt.timer_share, sd_rt.sigpending_limit);
	else if (err && !atomic_exchange(&warned, 1))
		sd_msg("sonde: thread %d: cannot start sampling: %s (this thread is not sampled; "
		       "%s)", (int)t->tid, strerror(-err), open_hint(err));
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 1);
}

static void thread_close_sources(struct sd_thread *t)
{
	sd_tasks_forget_stale(t); /* numbers closed behind our back are not closed again */
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 0);
	sd_source_thread_close_all(t);
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		sd_runtime_fd_track_sigsafe(t->ctr.fds[i], 0);
	sd_kernel_counters_close(&t->ctr);
}

/* Alternate stacks of ended threads, kept for the next ones (mapping,
 * guarding and unmapping one costs about 5 us). */
#define ALT_POOL 64
static char *alt_pool[ALT_POOL];
static unsigned alt_pool_n;

static char *alt_pool_get(void)
{
	sd_real_pthread_mutex_lock(&pool_lock);
	char *m = alt_pool_n ? alt_pool[--alt_pool_n] : NULL;
	pthread_mutex_unlock(&pool_lock);
	return m;
}

static int alt_pool_put(char *m)
{
	sd_real_pthread_mutex_lock(&pool_lock);
	int kept = alt_pool_n < ALT_POOL;
	if (kept)
		alt_pool[alt_pool_n++] = m;
	pthread_mutex_unlock(&pool_lock);
	return kept;
}

/* Gives the calling thread sonde's alternate signal stack (guard page
 * below), unless the program already set one: samples then never run on a
 * small thread stack. The program's own sigaltstack calls are honoured
 * (interpose.c). */
static void altstack_open(struct sd_thread *t)
{
	stack_t cur = {.ss_flags = SS_DISABLE};
	/* A program that uses alternate stacks: its SA_ONSTACK handlers are
	 * installed with the flag, and would run on sonde's stack in a thread
	 * where it set none. Samples run on the thread's stack (they check the
	 * room left) or on the program's alternate stack. */
	if (atomic_load_explicit(&sd_rt.prog_alt_any, memory_order_acquire))
		return;
	/* A thread the program just created has none (the kernel clears it on
	 * clone); the first thread may have inherited one across fork or exec. */
	int fresh = t->tid != sd_rt.pid && !t->adopted;
	if ((!fresh && sd_real_sigaltstack(NULL, &cur) != 0) || !(cur.ss_flags & SS_DISABLE)) {
		if (cur.ss_size && !(cur.ss_flags & SS_DISABLE)) {
			atomic_store_explicit(&sd_rt.prog_alt_any, 1, memory_order_release);
			t->prog_alt = 1; /* inherited across fork, or set before us */
			t->prog_alt_lo = (uintptr_t)cur.ss_sp;
			t->prog_alt_hi = (uintptr_t)cur.ss_sp + cur.ss_size;
		}
		return;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = SD_ALTSTACK_BYTES + page;
	char *m = alt_pool_get();
	if (!m) {
		/* Without room in sonde's share of RLIMIT_AS, none: samples
		 * run on the thread's stack while there is room on it. */
		m = sd_mem_room(bytes) ? sd_mem_map(bytes, 1) : MAP_FAILED;
		if (m == MAP_FAILED)
			return;
		mprotect(m, page, PROT_NONE);
	}
	/* SS_AUTODISARM: off while a handler runs on it, and what the handler's
	 * context says at its return (handler.c switches it off that way once
	 * the program uses alternate stacks; without the flag, a handler on
	 * the stack cannot change it). Kernels before 4.7: without. */
	stack_t ss = {.ss_sp = m + page, .ss_size = SD_ALTSTACK_BYTES, .ss_flags = SD_SS_AUTODISARM};
	int r = sd_real_sigaltstack(&ss, NULL);
	if (r != 0) {
		ss.ss_flags = 0;
		r = sd_real_sigaltstack(&ss, NULL);
	}
	if (r != 0) {
		if (!alt_pool_put(m))
			sd_mem_unmap(m, bytes);
		return;
	}
	t->alt_lo = (uintptr_t)(m + page);
	t->alt_bytes = SD_ALTSTACK_BYTES;
}

/* Signals blocked, sources closed: the stack can go. */
static void altstack_close(struct sd_thread *t)
{
	if (!t->alt_lo)
		return;
	/* Off, in one call; a stack the program set since is put back. */
	stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE}, cur;
	if (sd_real_sigaltstack(&off, &cur) != 0) { /* running on a stack */
		if (sd_real_sigaltstack(NULL, &cur) != 0 || (uintptr_t)cur.ss_sp == t->alt_lo)
			return; /* ours: leave it mapped */
	} else if ((uintptr_t)cur.ss_sp != t->alt_lo && !(cur.ss_flags & SS_DISABLE)) {
		cur.ss_flags &= (int)(1u << 31); /* SS_AUTODISARM (linux/signal.h) kept */
		sd_real_sigaltstack(&cur, NULL);
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (!alt_pool_put((char *)t->alt_lo - page))
		sd_mem_unmap((char *)t->alt_lo - page, t->alt_bytes + page);
	t->alt_lo = 0;
}

/* The main thread's stack, without pthread_getattr_np (which reads all of
 * /proc/self/maps for it: about 0.1 ms of every process's start): its top is
 * the page above the initial stack pointer the loader recorded, its size the
 * stack limit (8 MiB when unlimited). Only an upper bound for frame-pointer
 * walks and the room check, as glibc's own answer is. */
extern void *__libc_stack_end;

static void main_stack_bounds(struct sd_thread *t)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t hi = ((uintptr_t)__libc_stack_end + page - 1) & ~(page - 1);
	struct rlimit rl;
	uintptr_t size = 8u << 20;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < hi)
		size = (uintptr_t)rl.rlim_cur;
	t->stack_lo = hi - size;
	t->stack_hi = hi;
}

/* Under sonde's share of RLIMIT_AS (mem/mem.h), libunwind's per-thread
 * cache is counted for each thread it unwinds, as long as what is left
 * beside it still holds the least a thread needs (ring, alternate stack,
 * buffers: about 0.2 MiB; 0.45 MiB with the cache) for one more thread or,
 * when the share holds SD_MEM_THREADS such threads, for each thread still
 * to come up to that many (nbegun counts this one and every thread whose
 * ring is made): a thread that comes later is unwound by frame pointers
 * instead (no cache). Said once. */
static void unwind_choose(struct sd_thread *t)
{
	if (sd_rt.cfg.unwind != SD_UNWIND_LIBUNWIND)
		return;
	size_t least = SD_RING_MIN_BYTES + SD_ALTSTACK_BYTES + 4096u + 64u * 1024u;
	int begun = atomic_load(&sd_rt.nbegun);
	size_t floor = least;
	if (sd_mem_budget() >= least * SD_MEM_THREADS && begun < (int)SD_MEM_THREADS)
		floor = least * (SD_MEM_THREADS - (unsigned)begun);
	size_t left = sd_mem_left();
	if (left == SIZE_MAX || (sd_mem_room(SD_UNWIND_CACHE_BYTES + floor) &&
				 sd_mem_charge(SD_UNWIND_CACHE_BYTES) == 0)) {
		t->unwind_counted = left != SIZE_MAX;
		return;
	}
	t->unwind_fp = 1;
	static _Atomic int said;
	if (!atomic_exchange(&said, 1)) {
		char name[16] = "";
		prctl(PR_GET_NAME, name, 0, 0, 0);
		sd_msg("sonde: SONDE_UNWIND: libunwind's cache (%u KiB a thread) does not fit in "
		       "sonde's share of RLIMIT_AS (1/%u of %llu MiB: %zu MiB): thread %d (%s) and "
		       "later ones are unwound by frame pointers (raise RLIMIT_AS, or build with "
		       "-fno-omit-frame-pointer for whole stacks)",
		       SD_UNWIND_CACHE_BYTES / 1024, SD_MEM_SHARE,
		       (unsigned long long)(sd_mem_limit() >> 20), sd_mem_budget() >> 20,
		       (int)t->tid, name);
	}
}

struct sd_thread *sd_thread_begin(uintptr_t stack_lo, uintptr_t stack_hi)
{
	int st = atomic_load(&sd_rt.state);
	if ((st != SD_RUNNING && st != SD_ARMED) || sd_tls_thread)
		return sd_tls_thread;
	sigset_t old;
	sd_runtime_block_signals(&old);
	char name[16] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	struct sd_thread *t = thread_new(gettid_(), name);
	if (!t) {
		/* Its record or ring could not be allocated. The thread runs on;
		 * the writer's scan of /proc/self/task may still find it and
		 * sample it from its tid, as a thread made without pthread_create
		 * (tasks.c). Said once, so its CPU time is not missing silently. */
		for (unsigned i = 0; i < SD_MAX_NOMEM; i++) {
			pid_t none = 0;
			if (atomic_compare_exchange_strong(&sd_rt.nomem_tids[i], &none, gettid_()))
				break;
		}
		static _Atomic int said;
		if (!atomic_exchange(&said, 1))
			sd_msg("sonde: thread %d (%s): no memory for its sample buffers: %s (it is not "
			       "sampled, unless sonde finds it later as a thread made without "
			       "pthread_create; lower SONDE_BUFFER_KB)", (int)gettid_(), name,
			       strerror(ENOMEM));
		sd_runtime_restore_signals(&old);
		return NULL;
	}
	atomic_fetch_add(&sd_rt.nbegun, 1); /* its record and ring are counted: mem/mem.h */
	unwind_choose(t);
	pthread_attr_t attr;
	if (t->tid == sd_rt.pid) {
		main_stack_bounds(t);
	} else if (stack_hi) {
		t->stack_lo = stack_lo;
		t->stack_hi = stack_hi;
	} else if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *lo;
		size_t size;
		if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
			t->stack_lo = (uintptr_t)lo;
			t->stack_hi = (uintptr_t)lo + size;
		}
		pthread_attr_destroy(&attr);
	}
	altstack_open(t);
	sd_tls_thread = t; /* signals are blocked: no handler sees it yet */
	/* libunwind's process-wide state is made here, by the first thread;
	 * every thread's own trace cache by its first sample (handler.c). */
	static _Atomic int warmed;
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND && !atomic_exchange(&warmed, 1))
		sd_unwind_warmup(t);
	sd_real_pthread_mutex_lock(&lock);
	t->next = sd_rt.threads;
	sd_rt.threads = t;
	pthread_mutex_unlock(&lock);
	pthread_setspecific(thread_key, t);
	thread_open_sources(t);
	/* The mask it had, with sonde's signal unblocked, in one call (a fresh
	 * record is never paused: nothing of the mask wrapper's applies). */
	sigdelset(&old, sd_rt.cfg.signo);
	sd_runtime_restore_signals(&old);
	return t;
}

static void registry_remove(struct sd_thread *t)
{
	for (struct sd_thread **p = &sd_rt.threads; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
}

static uint64_t own_cpu_ns(void)
{
	uint64_t ns = 0;
	sd_own_cpu_ns_sigsafe(&ns);
	return ns;
}

static void sources_enable(struct sd_thread *t, int on)
{
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		if (t->src_fd[i] >= 0)
			sd_kernel_enable_sigsafe(t->src_fd[i], on);
		if (t->has_timer[i]) {
			uint64_t p = on ? sd_rt.cfg.sources[i].period_ns * t->mult[i] : 0;
			struct itimerspec its = {
				.it_interval = {(time_t)(p / 1000000000u), (long)(p % 1000000000u)},
				.it_value = {(time_t)(p / 1000000000u), (long)(p % 1000000000u)},
			};
			timer_settime(t->src_timer[i], 0, &its, NULL);
		}
	}
}

void sd_thread_pause(struct sd_thread *t, void *ra, void *fp)
{
	if (t->paused || t->adopted)
		return;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	sources_enable(t, 0);
	if (t->pause_key_ra != (uintptr_t)ra || t->pause_key_fp != (uintptr_t)fp) {
		/* max frames, one more than a sample keeps: a full buffer says
		 * the stack was cut (pause_charge) */
		t->pause_depth = sd_handler_stack_here(t, t->pause_pcs, sd_rt.cfg.max_depth);
		t->pause_key_ra = (uintptr_t)ra;
		t->pause_key_fp = (uintptr_t)fp;
	}
	t->pause_cpu_ns = own_cpu_ns();
	t->paused = 1;
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

/* Charges the CPU time run while paused, in whole periods per source (the
 * rest carried to the next pause), as accounted samples. */
static void pause_charge(struct sd_thread *t)
{
	uint64_t now = own_cpu_ns();
	uint64_t d = now > t->pause_cpu_ns ? now - t->pause_cpu_ns : 0;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		const struct sd_source *s = &sd_rt.cfg.sources[i];
		if (!sd_source_ops_of(s)->timed || !s->period_ns)
			continue;
		t->pause_acc_ns[i] += d;
		uint64_t k = t->pause_acc_ns[i] / s->period_ns;
		if (!k)
			continue;
		t->pause_acc_ns[i] -= k * s->period_ns;
		uint8_t flags = SD_FLAG_ACCOUNTED;
		if (t->pause_depth >= sd_rt.cfg.max_depth)
			flags |= SD_FLAG_TRUNCATED;
		struct sd_rec *rec = sd_ring_begin_sigsafe(
			t->ring, SD_REC_SAMPLE, (uint8_t)i, flags,
			(uint32_t)(k > UINT32_MAX ? UINT32_MAX : k), sd_annotate_thread_ctx_sigsafe(),
			sd_annotate_process_ctx_sigsafe(), SD_DROP_RING_FULL);
		if (!rec)
			continue;
		unsigned n = t->pause_depth < sd_rt.cfg.max_depth ? t->pause_depth
								  : sd_rt.cfg.max_depth - 1;
		rec->pcs[0] = SD_PSEUDO_SIGNALS_BLOCKED;
		memcpy(&rec->pcs[1], t->pause_pcs, n * sizeof rec->pcs[0]);
		rec->depth = (uint16_t)(n + 1);
		sd_ring_commit_sigsafe(t->ring, rec);
		if ((int)i == sd_rt.wall_src)
			atomic_fetch_add_explicit(&t->ring->wall_periods, k, memory_order_relaxed);
	}
}

void sd_thread_resume(struct sd_thread *t)
{
	if (!t->paused)
		return;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_load(&sd_rt.state) == SD_RUNNING)
		pause_charge(t);
	t->paused = 0;
	if (atomic_load(&sd_rt.state) == SD_RUNNING)
		sources_enable(t, 1);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

/* The calling thread's CPU time, and its counter deltas since its last
 * sample (returns how many; 0 when there are none, or `counters` is 0), as
 * it ends: one clock read and one getrusage for both. Before its sources
 * close. */
static unsigned thread_final(struct sd_thread *t, int counters, uint64_t *out,
			     struct sd_cpu_times *cpu)
{
	struct rusage ru;
	int have_ru = getrusage(RUSAGE_THREAD, &ru) == 0;
	cpu->known = 0;
	if (sd_own_cpu_ns_sigsafe(&cpu->cpu_ns) == 0) {
		cpu->known = 1;
		if (have_ru) {
			cpu->user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
				       (uint64_t)ru.ru_utime.tv_usec * 1000u;
			cpu->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
				      (uint64_t)ru.ru_stime.tv_usec * 1000u;
			cpu->known = 2;
		}
	}
	uint64_t now[SD_MAX_COUNTERS];
	if (!counters || !sd_rt.counters.n || !have_ru ||
	    sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, &ru, now) != 0)
		return 0;
	for (unsigned i = 0; i < sd_rt.counters.n; i++) {
		out[i] = now[i] - t->ctr.last[i];
		t->ctr.last[i] = now[i];
	}
	return sd_rt.counters.n;
}

void sd_thread_end(void)
{
	struct sd_thread *t = sd_tls_thread;
	if (!t || t->adopted)
		return;
	SD_ASSERT(!t->in_handler); /* not from a handler, nor while one unwinds */
	sd_annotate_thread_exit(); /* forced ends of open regions, into the ring */
	sigset_t old;
	sd_runtime_block_signals(&old);
	if (t->paused) {
		t->busy = 1;
		pause_charge(t);
		t->paused = 0;
	}
	t->busy = 1;
	uint64_t final[SD_MAX_COUNTERS];
	struct sd_cpu_times cpu;
	unsigned nfinal = thread_final(t, 1, final, &cpu);
	sd_source_thread_stop_all(t);
	sd_real_pthread_mutex_lock(&lock);
	thread_close_sources(t);
	registry_remove(t);
	sd_tasks_thread_gone(t->tid); /* still listed in /proc while it exits */
	pthread_mutex_unlock(&lock);
	drain_pending_samples(t);
	altstack_close(t);
	if (t->unwind_counted) /* its cache goes with the thread (libunwind's key) */
		sd_mem_uncharge(SD_UNWIND_CACHE_BYTES);
	atomic_fetch_sub(&sd_rt.nbegun, 1);
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		if (t->mult[i] > 1) {
			char note[200];
			snprintf(note, sizeof note, "thread %d: %s was throttled to a period %u times "
				 "longer", (int)t->tid, sd_rt.cfg.sources[i].spec, t->mult[i]);
			sd_writer_note(note);
		}
	sd_tls_thread = NULL;
	pthread_setspecific(thread_key, NULL);
	char name[16] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	sd_writer_ring_close(t->ring, name, final, nfinal, &cpu);
	thread_free(t);
	sd_runtime_restore_signals(&old);
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

/* Backstop for exits that skip the trampoline's cleanup. */
static void thread_key_destructor(void *p)
{
	if (p && p == sd_tls_thread)
		sd_thread_end();
}

/* Threads alive before sonde started (made by other libraries'
 * constructors): sampled through sources that target their tid; their
 * handler finds the record through the adopted table. */
static void adopt_existing_threads(pid_t self)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == self)
			continue;
		int n = atomic_load(&sd_rt.nadopted);
		if (n >= (int)(sizeof sd_rt.adopted / sizeof sd_rt.adopted[0]))
			break;
		char path[64], name[16] = "";
		snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(name, sizeof name, f))
				name[strcspn(name, "\n")] = 0;
			fclose(f);
		}
		struct sd_thread *t = thread_new(tid, name);
		if (!t)
			break;
		t->adopted = 1;
		sd_real_pthread_mutex_lock(&lock);
		t->next = sd_rt.threads;
		sd_rt.threads = t;
		pthread_mutex_unlock(&lock);
		sd_rt.adopted[n] = t;
		atomic_store(&sd_rt.nadopted, n + 1);
		thread_open_sources(t);
	}
	closedir(d);
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

int sd_runtime_timer_yield(void)
{
	if (atomic_load(&sd_rt.timers) <= 0)
		return 0;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	struct sd_thread *gave = NULL;
	for (struct sd_thread *t = sd_rt.threads; t && !gave; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
			if (t->has_timer[i]) {
				t->has_timer[i] = 0; /* its queued signal is stale now */
				sd_sources_timer_delete(t->src_timer[i]);
				gave = t;
				break;
			}
	pid_t tid = gave ? gave->tid : 0;
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
	static _Atomic int said;
	if (gave && !atomic_exchange(&said, 1))
		sd_msg("sonde: RLIMIT_SIGPENDING: the program's timer_create found the signal quota "
		       "(%ld) used up: sonde gave up its own timers as needed, first thread %d's (not "
		       "sampled from then on; its CPU time shows as not sampled; raise ulimit -i)",
		       sd_rt.sigpending_limit, (int)tid);
	return gave != NULL;
}

/* Where sonde's descriptors go and how many it may hold (docs/ENV.md,
 * "Descriptors"): of a soft RLIMIT_NOFILE L, the stream's one and up to
 * (L - 3) / 16 more (the clocks, counters, /proc/self/task), a thread that
 * finds the share used up samples on a POSIX timer; libunwind's pipe takes
 * none (interpose.c, pipe2). They live in the top numbers of a small limit
 * (the program's lowest numbers stay free), from 1024 up under a large one. */
static void pick_fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > FDMAP_BITS) {
		sd_rt.fd_limit = -1;
		sd_rt.fd_share = FDMAP_BITS / 16;
		sd_rt.fd_floor = 1024;
		return;
	}
	long soft = (long)rl.rlim_cur;
	sd_rt.fd_limit = soft;
	if (rl.rlim_max > rl.rlim_cur && soft + 64 <= FDMAP_BITS) {
		/* Room above the program's limit: sonde's numbers go there
		 * (kernel/perf.c raises the soft limit for each move), and the
		 * program keeps every number below it. */
		rlim_t room = rl.rlim_max - rl.rlim_cur;
		sd_rt.fd_floor = (int)soft;
		sd_rt.fd_share = room > (rlim_t)(FDMAP_BITS - soft) ? (int)(FDMAP_BITS - soft) : (int)room;
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
	pthread_key_create(&thread_key, thread_key_destructor);
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		const struct sd_source *s = &sd_rt.cfg.sources[i];
		uint32_t m = 1;
		if (sd_source_ops_of(s)->timed && s->period_ns < SD_START_MIN_NS) {
			m = (uint32_t)((SD_START_MIN_NS + s->period_ns - 1) / s->period_ns);
			sd_say_throttled_sigsafe((int)i, s->period_ns * m);
		}
		atomic_store(&sd_rt.start_mult[i], m);
	}

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
		return;
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
	/* The output directory first, before the probes hold descriptors: with
	 * a low RLIMIT_NOFILE its walk is what may not fit. */
	struct sd_writer_config dc = {.dir = sd_rt.cfg.output, .dir_mode = sd_rt.cfg.dir_mode,
				      .fd_floor = sd_rt.fd_floor,
				      .fd_track = sd_runtime_fd_track_sigsafe};
	if (sd_writer_open_dir(&dc) != 0)
		return; /* said why; the program runs on unprofiled */
	/* Before libunwind's first use: its address checks (interpose.c). */
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
	adopt_existing_threads(self); /* before the writer thread exists */
	if (sd_writer_start() != 0) {
		sd_state_move(SD_ARMED, SD_OFF);
		probes_release();
		return;
	}
	sd_state_move(SD_ARMED, SD_RUNNING);
	sd_thread_begin(0, 0);
	probes_release(); /* after the first thread's own are open */
	struct sd_annotate_hooks ah = {
		.region = sd_rt.cfg.regions == SD_REGIONS_TRACE ? region_event : NULL,
		.aggregate = sd_rt.cfg.regions == SD_REGIONS_ON,
		.ncounters = sd_rt.cfg.region_counters ? sd_rt.counters.n : 0,
		.read_counters = region_counters,
		.adopt_table = adopt_region_table,
		.ended = region_ended,
	};
	sd_annotate_start(&ah);
	pthread_atfork(sd_runtime_fork_prepare, sd_runtime_fork_parent, sd_runtime_fork_child);
	install_flush_handlers();
}

__attribute__((destructor)) static void sd_runtime_fini(void)
{
	sd_runtime_stop("exit", 0);
}

/* RUNNING -> DRAINING: stop every source, then the writer's final drain. */
void sd_runtime_stop(const char *reason, int signo)
{
	/* Signals first: a sample of this thread delivered between the move and
	 * the block was dropped as "stopped" and the drop reached the stream (seen
	 * in 1 of about 10 runs of round3 nproc: its burners exit at once; CI
	 * failed on the report's warning). One queued then waits for the restore,
	 * after the stream's end. */
	sigset_t old;
	sd_runtime_block_signals(&old);
	if (!sd_state_move(SD_RUNNING, SD_DRAINING)) {
		sd_runtime_restore_signals(&old);
		return;
	}
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		sd_sources_disable_sigsafe(t);
	pthread_mutex_unlock(&lock);
	struct sd_thread *self = sd_tls_thread;
	if (self && !self->busy && self->paused) {
		/* Charge while the writer still drains: the state is DRAINING, so
		 * pause_charge is called directly. */
		self->busy = 1;
		pause_charge(self);
		self->paused = 0;
		self->busy = 0;
	}
	if (self) { /* its CPU time always; its counters unless they are being read */
		uint64_t final[SD_MAX_COUNTERS];
		struct sd_cpu_times cpu;
		unsigned n = thread_final(self, !self->busy, final, &cpu);
		if (!self->busy && !strcmp(reason, "exit")) /* the destructor: not a handler */
			sd_source_thread_account_all(self);
		sd_writer_ring_final(self->ring, final, n, &cpu);
	}
	sd_writer_stop(reason, signo);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_exec_prepare(void)
{
	sd_source_exec_prepare_all(sd_tls_thread, 1);
	sd_runtime_stop("exec", 0);
}

/* DRAINING -> RUNNING after an exec that returned. */
void sd_runtime_exec_failed(void)
{
	if (!sd_state_move(SD_DRAINING, SD_RUNNING))
		return;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_writer_resume();
	sd_source_exec_prepare_all(sd_tls_thread, 0);
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
			if (t->src_fd[i] >= 0 && !t->paused)
				sd_kernel_enable_sigsafe(t->src_fd[i], 1);
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

/* The program dup2'ed over one of sonde's descriptors. The number is the
 * program's from now on; sampling of that thread is re-armed by
 * sd_runtime_fd_reopen() on a new, high descriptor. */
void sd_runtime_fd_closed(int fd)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
			if (t->src_fd[i] == fd) {
				t->src_fd[i] = -1;
				sd_ring_drop_sigsafe(t->ring, SD_DROP_FD_STOLEN);
			}
	sd_runtime_fd_track_sigsafe(fd, 0);
	pthread_mutex_unlock(&lock);
	sd_writer_fd_closed(fd);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_fd_reopen(void)
{
	if (atomic_load(&sd_rt.state) != SD_RUNNING)
		return;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
			const struct sd_source *s = &sd_rt.cfg.sources[i];
			if (t->src_fd[i] >= 0 || !sd_source_ops_of(s)->clocked ||
			    s->use_timer || (int)i == sd_rt.derived_src)
				continue;
			int fd;
			if (sd_runtime_fd_room_sigsafe(1) &&
			    sd_kernel_clock_open_sigsafe(t->tid, s->period_ns * t->mult[i], sd_rt.cfg.signo,
						 sd_rt.fd_floor, &fd) == 0 &&
			    (t->paused || sd_kernel_enable_sigsafe(fd, 1) == 0)) {
				if (t->paused) /* opened enabled: the program keeps the signal blocked */
					sd_kernel_enable_sigsafe(fd, 0);
				t->src_fd[i] = fd;
				sd_runtime_fd_track_sigsafe(fd, 1);
			}
		}
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

struct sd_thread *sd_runtime_thread_new(pid_t tid, const char *name)
{
	struct sd_thread *t = thread_new(tid, name);
	if (!t)
		return NULL;
	t->adopted = 1; /* sampled through sources that target its tid */
	t->papi_es = -1;
	t->ctr.group_fd = -1;
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		t->ctr.fds[i] = -1;
	return t;
}

void sd_runtime_registry_add(struct sd_thread *t)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	t->next = sd_rt.threads;
	sd_rt.threads = t;
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_registry_remove(struct sd_thread *t)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	thread_close_sources(t);
	registry_remove(t);
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_threads_foreach(void (*fn)(struct sd_thread *, void *), void *arg)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_real_pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		fn(t, arg);
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

/* fork: hold every sonde lock across the fork so the child inherits
 * consistent state, with all signals blocked (a signal storm can make the
 * kernel restart a long clone() forever). */
void sd_runtime_fork_prepare(void)
{
	if (atomic_load(&sd_rt.state) == SD_OFF)
		return;
	sd_runtime_block_signals(&fork_saved_mask);
	sd_annotate_fork_prepare();
	sd_real_pthread_mutex_lock(&lock);
	sd_writer_fork_prepare();
	sd_mem_fork_prepare(); /* last: a leaf lock, taken under the others */
}

void sd_runtime_fork_parent(void)
{
	if (atomic_load(&sd_rt.state) == SD_OFF)
		return;
	sd_mem_fork_parent();
	sd_writer_fork_parent();
	pthread_mutex_unlock(&lock);
	sd_annotate_fork_parent();
	sd_runtime_restore_signals(&fork_saved_mask);
}

/* The child has one thread (this one). Every other thread record, its
 * descriptors (they watch the parent's threads) and its ring are dropped;
 * this thread gets new sources and the process a new stream. */
void sd_runtime_fork_child(void)
{
	if (atomic_load(&sd_rt.state) == SD_OFF)
		return;
	sd_mem_fork_child();
	sd_annotate_fork_child();
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&pool_lock, NULL);
	struct sd_thread *self = sd_tls_thread;
	for (struct sd_thread *t = sd_rt.threads, *next; t; t = next) {
		next = t->next;
		/* Close only: the perf events are shared with the parent, and
		 * disabling them here would stop the parent's sampling. Timers are
		 * not inherited at all. */
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
			sd_runtime_fd_track_sigsafe(t->src_fd[i], 0);
			if (t->src_fd[i] >= 0)
				sd_real_close(t->src_fd[i]);
			t->src_fd[i] = -1;
			t->has_timer[i] = 0;
		}
		for (unsigned i = 0; i < SD_MAX_COUNTERS; i++) {
			sd_runtime_fd_track_sigsafe(t->ctr.fds[i], 0);
			if (t->ctr.fds[i] >= 0)
				sd_real_close(t->ctr.fds[i]);
			t->ctr.fds[i] = -1;
		}
		t->ctr.group_fd = -1;
		t->ctr.ok = 0;
		if (t != self)
			thread_free(t);
	}
	sd_rt.threads = NULL;
	atomic_store(&sd_rt.nadopted, 0);
	atomic_store(&sd_rt.nbegun, self && !self->adopted ? 1 : 0);
	sd_tasks_fork_child();
	sd_rt.pid = getpid();
	int running = atomic_load(&sd_rt.state) == SD_RUNNING;
	if (!running || !sd_rt.cfg.follow_fork || !self) {
		sd_writer_fork_child(NULL);
		sd_state_move(-1, SD_OFF);
		if (self) {
			sd_tls_thread = NULL;
			sd_mem_free(self->scratch);
			sd_mem_free(self->ovr_pcs);
			sd_mem_free(self->pause_pcs);
			sd_mem_free(self);
		}
		sd_runtime_restore_signals(&fork_saved_mask);
		return;
	}
	self->tid = gettid_();
	self->next = NULL;
	self->adopted = 0;
	self->ovr = 0;
	sd_rt.threads = self;
	sd_source_fork_child_all(); /* before any other thread exists in the child */
	sd_loader_fork_child();
	sd_tasks_fork_child_open();
	if (sd_writer_fork_child(self->ring) != 0) {
		sd_state_move(-1, SD_OFF);
		sd_runtime_restore_signals(&fork_saved_mask);
		return;
	}
	drain_pending_samples(NULL);
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		self->mult[i] = atomic_load(&sd_rt.start_mult[i]) ? atomic_load(&sd_rt.start_mult[i]) : 1;
	thread_open_sources(self);
	if (self->paused) { /* forked while the program kept the signal blocked */
		sources_enable(self, 0);
		self->pause_cpu_ns = own_cpu_ns();
		memset(self->pause_acc_ns, 0, sizeof self->pause_acc_ns);
	}
	sd_runtime_restore_signals(&fork_saved_mask);
}
