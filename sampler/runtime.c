/* runtime.c - the sonde runtime's state and its lifecycle after start: the
 * state machine, sonde's descriptors, the thread registry and its lock, stop,
 * fork and exec. The start (the constructor) is start.c; the thread records
 * are threads.c.
 *
 * Runs in ordinary context only (except the sigsafe descriptor marks): the
 * destructor, pthread_atfork handlers, the exec/_exit/close wrappers and the
 * writer's scan (the calling thread). The lifecycle is drawn in sampler.h.
 *
 * Invariants: the thread registry is touched only under `lock`, and only with
 * every signal blocked on the locking thread, so no handler (sonde's or the
 * program's) can run on a thread that holds it. A thread record is freed only
 * by its own thread after its sources are closed and its pending sampling
 * signals are consumed, or in a forked child where its thread no longer exists.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Bitmap of descriptors that are sonde's (perf_event fds, the output file,
 * libunwind's pipe), read by the close/dup2 wrappers without a lock.
 * sd_runtime_fd_track is async-signal-safe (atomics only). */
static _Atomic uint64_t fdmap[SD_FDMAP_BITS / 64];
static _Atomic int fd_count; /* bits set in fdmap */

void sd_runtime_fd_track_sigsafe(int fd, int on)
{
	if (fd < 0 || fd >= SD_FDMAP_BITS)
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
	if (fd < 0 || fd >= SD_FDMAP_BITS)
		return 0;
	return (atomic_load_explicit(&fdmap[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1;
}

int sd_runtime_fd_next(int fd)
{
	for (fd = fd < 0 ? 0 : fd; fd < SD_FDMAP_BITS; fd++) {
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
int sd_state_move(int from, int to)
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


void sd_runtime_lock(void)
{
	sd_real_pthread_mutex_lock(&lock);
}

void sd_runtime_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void sd_runtime_registry_unlink(struct sd_thread *t)
{
	for (struct sd_thread **p = &sd_rt.threads; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
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
		sd_thread_pause_charge(self);
		self->paused = 0;
		self->busy = 0;
	}
	if (self) { /* its CPU time always; its counters unless they are being read */
		uint64_t final[SD_MAX_COUNTERS];
		struct sd_cpu_times cpu;
		unsigned n = sd_thread_final(self, !self->busy, final, &cpu);
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
	sd_thread_close_sources(t);
	sd_runtime_registry_unlink(t);
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
	struct sd_thread *self = sd_tls_thread;
	sd_threads_fork_child(self); /* the others' records dropped, every descriptor closed */
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
	sd_thread_fork_restart(self); /* new sources for the one thread there is */
	sd_runtime_restore_signals(&fork_saved_mask);
}
