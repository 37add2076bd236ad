/* threads.c - the runtime's thread records: made and set up as a thread
 * begins (ring, alternate stack, stack bounds, unwinder, counters and
 * sources), paused and resumed while the program blocks the sampling signal,
 * torn down as it ends, reused through pools; threads alive before sonde
 * started are adopted; in a forked child the parent's records are dropped.
 *
 * Runs in ordinary context only: the pthread_create trampoline and thread
 * exit (each thread for itself), the constructor (runtime.c, start.c), the
 * writer's scan (tasks.c: sd_runtime_thread_new) and fork/stop (runtime.c).
 *
 * Invariants: the registry (sd_rt.threads) is touched only under the
 * runtime's lock (sd_runtime_lock), with every signal blocked on the locking
 * thread. A thread record is freed only by its own thread after its sources
 * are closed and its pending sampling signals are consumed, or in a forked
 * child where its thread no longer exists.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sys.h"
#include "annotate/annotate.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

static pthread_key_t thread_key;

static pid_t gettid_(void)
{
	return (pid_t)sd_syscall(SYS_gettid);
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

void sd_thread_open_sources(struct sd_thread *t)
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

void sd_thread_close_sources(struct sd_thread *t)
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
 * (interpose/signals.c). */
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
	sd_runtime_lock();
	t->next = sd_rt.threads;
	sd_rt.threads = t;
	sd_runtime_unlock();
	pthread_setspecific(thread_key, t);
	sd_thread_open_sources(t);
	/* The mask it had, with sonde's signal unblocked, in one call (a fresh
	 * record is never paused: nothing of the mask wrapper's applies). */
	sigdelset(&old, sd_rt.cfg.signo);
	sd_runtime_restore_signals(&old);
	return t;
}


static uint64_t own_cpu_ns(void)
{
	uint64_t ns = 0;
	sd_own_cpu_ns_sigsafe(&ns);
	return ns;
}

void sd_thread_sources_enable(struct sd_thread *t, int on)
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
	sd_thread_sources_enable(t, 0);
	if (t->pause_key_ra != (uintptr_t)ra || t->pause_key_fp != (uintptr_t)fp) {
		/* max frames, one more than a sample keeps: a full buffer says
		 * the stack was cut (sd_thread_pause_charge) */
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
void sd_thread_pause_charge(struct sd_thread *t)
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
		sd_thread_pause_charge(t);
	t->paused = 0;
	if (atomic_load(&sd_rt.state) == SD_RUNNING)
		sd_thread_sources_enable(t, 1);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

/* The calling thread's CPU time, and its counter deltas since its last
 * sample (returns how many; 0 when there are none, or `counters` is 0), as
 * it ends: one clock read and one getrusage for both. Before its sources
 * close. */
unsigned sd_thread_final(struct sd_thread *t, int counters, uint64_t *out,
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
		sd_thread_pause_charge(t);
		t->paused = 0;
	}
	t->busy = 1;
	uint64_t final[SD_MAX_COUNTERS];
	struct sd_cpu_times cpu;
	unsigned nfinal = sd_thread_final(t, 1, final, &cpu);
	sd_source_thread_stop_all(t);
	sd_runtime_lock();
	sd_thread_close_sources(t);
	sd_runtime_registry_unlink(t);
	sd_tasks_thread_gone(t->tid); /* still listed in /proc while it exits */
	sd_runtime_unlock();
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


/* Backstop for exits that skip the trampoline's cleanup. */
static void thread_key_destructor(void *p)
{
	if (p && p == sd_tls_thread)
		sd_thread_end();
}

void sd_threads_init(void)
{
	pthread_key_create(&thread_key, thread_key_destructor);
}

/* Threads alive before sonde started (made by other libraries'
 * constructors): sampled through sources that target their tid; their
 * handler finds the record through the adopted table. */
void sd_threads_adopt_existing(pid_t self)
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
		sd_runtime_lock();
		t->next = sd_rt.threads;
		sd_rt.threads = t;
		sd_runtime_unlock();
		sd_rt.adopted[n] = t;
		atomic_store(&sd_rt.nadopted, n + 1);
		sd_thread_open_sources(t);
	}
	closedir(d);
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


void sd_threads_fork_child(struct sd_thread *self)
{
	pthread_mutex_init(&pool_lock, NULL);
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
}

void sd_thread_fork_restart(struct sd_thread *self)
{
	drain_pending_samples(NULL);
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		self->mult[i] = atomic_load(&sd_rt.start_mult[i]) ? atomic_load(&sd_rt.start_mult[i]) : 1;
	sd_thread_open_sources(self);
	if (self->paused) { /* forked while the program kept the signal blocked */
		sd_thread_sources_enable(self, 0);
		self->pause_cpu_ns = own_cpu_ns();
		memset(self->pause_acc_ns, 0, sizeof self->pause_acc_ns);
	}
}

