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
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "include/sonde.h"
#include "annotate/annotate.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"

struct sd_runtime sd_rt;
__thread struct sd_thread *sd_tls_thread __attribute__((tls_model("initial-exec")));
static __thread sigset_t fork_saved_mask __attribute__((tls_model("initial-exec")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
static struct sd_source_info source_info[SD_MAX_SOURCES];
static char mechanism[SD_MAX_SOURCES][48];

/* Bitmap of descriptors that are sonde's (perf_event fds, the output file,
 * libunwind's pipe), read by the close/dup2 wrappers without a lock.
 * sd_runtime_fd_track is async-signal-safe (atomics only). */
#define FDMAP_BITS 65536
static _Atomic uint64_t fdmap[FDMAP_BITS / 64];

void sd_runtime_fd_track_sigsafe(int fd, int on)
{
	if (fd < 0 || fd >= FDMAP_BITS)
		return;
	uint64_t bit = 1ull << (fd % 64);
	if (on)
		atomic_fetch_or(&fdmap[fd / 64], bit);
	else
		atomic_fetch_and(&fdmap[fd / 64], ~bit);
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

void sd_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sd_writer_vsay(fmt, ap);
	va_end(ap);
}

void sd_runtime_block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void sd_runtime_restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

SONDE_API int sonde_rt_active(void)
{
	return atomic_load(&sd_rt.state) == SD_RUNNING;
}

/* Consumes sampling signals still queued for the calling thread (its
 * sources are closed), so none reaches a handler without a thread record. */
static void drain_pending_samples(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sd_rt.cfg.signo);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&set, NULL, &zero) > 0)
		;
}

static struct sd_thread *thread_new(pid_t tid, const char *name)
{
	struct sd_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = tid;
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		t->src_fd[i] = -1;
	t->scratch_len = sd_rt.cfg.max_depth + 32;
	t->scratch = malloc(t->scratch_len * sizeof *t->scratch);
	t->ring = t->scratch ? sd_writer_ring_new(tid, name) : NULL;
	if (!t->ring) {
		free(t->scratch);
		free(t);
		return NULL;
	}
	return t;
}

static void thread_open_sources(struct sd_thread *t)
{
	static _Atomic int warned;
	int err = sd_sources_open(t, t->tid);
	if (err && !atomic_exchange(&warned, 1))
		sd_msg("sonde: thread %d: cannot start sampling: %s (this thread is not sampled; "
		       "check RLIMIT_NOFILE and SONDE_SAMPLE)", (int)t->tid, strerror(-err));
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 1);
	t->papi_es = -1;
	if (!t->adopted)
		sd_papi_thread_open(t); /* PAPI sets are per calling thread */
	t->ctr.group_fd = -1;
	t->ctr.ok = 0;
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		t->ctr.fds[i] = -1;
	if (sd_rt.counters.n) {
		static _Atomic int said;
		err = sd_kernel_counters_open(&sd_rt.counters, t->tid, sd_rt.fd_floor, &t->ctr);
		if (err && !atomic_exchange(&said, 1))
			sd_msg("sonde: thread %d: counters unavailable: %s (its samples carry no counter "
			       "values; check RLIMIT_NOFILE)", (int)t->tid, strerror(-err));
		for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
			sd_runtime_fd_track_sigsafe(t->ctr.fds[i], 1);
	}
}

static void thread_close_sources(struct sd_thread *t)
{
	sd_tasks_forget_stale(t); /* numbers closed behind our back are not closed again */
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 0);
	sd_sources_close(t);
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		sd_runtime_fd_track_sigsafe(t->ctr.fds[i], 0);
	sd_kernel_counters_close(&t->ctr);
}

struct sd_thread *sd_thread_begin(void)
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
		sd_runtime_restore_signals(&old);
		return NULL;
	}
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *lo;
		size_t size;
		if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
			t->stack_hi = (uintptr_t)lo + size;
		}
		pthread_attr_destroy(&attr);
	}
	sd_tls_thread = t; /* signals are blocked: no handler sees it yet */
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND)
		sd_handler_warmup(t);
	pthread_mutex_lock(&lock);
	t->next = sd_rt.threads;
	sd_rt.threads = t;
	pthread_mutex_unlock(&lock);
	pthread_setspecific(thread_key, t);
	thread_open_sources(t);
	sd_runtime_restore_signals(&old);
	sigset_t mine;
	sigemptyset(&mine);
	sigaddset(&mine, sd_rt.cfg.signo);
	pthread_sigmask(SIG_UNBLOCK, &mine, NULL);
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

/* Counter deltas since the thread's last sample, read by the thread itself
 * (its own getrusage); 0 when there are none. Before its sources close. */
static unsigned final_deltas(struct sd_thread *t, uint64_t *out)
{
	uint64_t now[SD_MAX_COUNTERS];
	if (!sd_rt.counters.n ||
	    sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, now) != 0)
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
	sd_annotate_thread_exit(); /* forced ends of open regions, into the ring */
	sigset_t old;
	sd_runtime_block_signals(&old);
	t->busy = 1;
	uint64_t final[SD_MAX_COUNTERS];
	unsigned nfinal = final_deltas(t, final);
	sd_papi_thread_close(t);
	pthread_mutex_lock(&lock);
	thread_close_sources(t);
	registry_remove(t);
	sd_tasks_thread_gone(t->tid); /* still listed in /proc while it exits */
	pthread_mutex_unlock(&lock);
	drain_pending_samples();
	sd_tls_thread = NULL;
	pthread_setspecific(thread_key, NULL);
	char name[16] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	sd_writer_ring_close(t->ring, name, final, nfinal);
	free(t->scratch);
	free(t);
	sd_runtime_restore_signals(&old);
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
	struct sd_rec *rec = sd_ring_reserve_sigsafe(t->ring);
	if (rec) {
		rec->kind = SD_REC_REGION;
		rec->depth = 0;
		rec->t_ns = sd_now_ns_sigsafe();
		rec->weight = node;
		rec->source = (uint8_t)ev;
		rec->flags = 0;
		rec->ctx = rec->pctx = 0;
		rec->ncounters = 0;
		if (sd_rt.counters.n &&
		    sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, rec->pcs) == 0)
			rec->ncounters = (uint16_t)sd_rt.counters.n;
		sd_ring_commit_sigsafe(t->ring, rec);
	} else {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_RING_FULL);
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
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
		pthread_mutex_lock(&lock);
		t->next = sd_rt.threads;
		sd_rt.threads = t;
		pthread_mutex_unlock(&lock);
		sd_rt.adopted[n] = t;
		atomic_store(&sd_rt.nadopted, n + 1);
		thread_open_sources(t);
	}
	closedir(d);
}

static int pick_fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 512;
	if (rl.rlim_cur >= 4096)
		return 1024;
	return (int)(rl.rlim_cur / 2);
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
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		if (sd_real_sigaction(sigs[i], &sa, NULL) == 0)
			sd_rt.sigterm_installed[sigs[i]] = 1;
	}
}

/* Modules the loader mapped without sonde's dlopen wrapper (libc's own
 * dlopen of gconv or NSS modules): the handler's loader snapshot and
 * libunwind's caches are brought up to date. Writer thread. */
static void loader_refresh(void)
{
	sd_phdr_snapshot_rebuild();
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND)
		unw_flush_cache(unw_local_addr_space, 0, 0);
}

static const char *unwind_name(enum sd_unwind u)
{
	return u == SD_UNWIND_FP ? "fp" : u == SD_UNWIND_NONE ? "none" : "libunwind";
}

static int start_writer(void)
{
	const struct sd_config *c = &sd_rt.cfg;
	for (unsigned i = 0; i < c->nsources; i++) {
		const struct sd_source *s = &c->sources[i];
		struct sd_source_info *in = &source_info[i];
		in->name = s->kind == SD_SRC_CPU ? "cpu-time" : s->kind == SD_SRC_WALL ? "wall-time"
										       : s->event;
		in->spec = s->spec;
		in->unit = s->kind == SD_SRC_PAPI ? "events" : "ns";
		snprintf(mechanism[i], sizeof mechanism[i], "%s",
			 s->kind == SD_SRC_PAPI	? "papi:overflow"
			 : s->kind == SD_SRC_WALL ? "posix-timer:monotonic"
			 : s->use_timer		  ? "posix-timer:thread-cputime"
						  : "perf_event:task-clock");
		in->mechanism = mechanism[i];
		in->fallback_reason = s->use_timer ? s->fallback_reason : NULL;
		in->period_ns = s->period_ns;
		in->signo = s->kind == SD_SRC_PAPI ? SIGRTMIN + 2 : c->signo; /* PAPI's own */
	}
	uint32_t ring = 1;
	while (ring < c->buffer_kb * 1024u)
		ring <<= 1;
	struct sd_writer_config wc = {
		.dir = c->output,
		.flush_ms = c->flush_ms,
		.max_depth = c->max_depth,
		.unwind = unwind_name(c->unwind),
		.ring_bytes = ring,
		.sources = source_info,
		.nsources = c->nsources,
		.verbose = c->verbose,
		.create_thread = sd_real_pthread_create,
		.fd_floor = sd_rt.fd_floor,
		.counters = &sd_rt.counters,
		.loader_refresh = loader_refresh,
		.fd_track = sd_runtime_fd_track_sigsafe,
		.tick = sd_tasks_tick,
	};
	return sd_writer_init(&wc);
}

__attribute__((constructor)) static void sd_runtime_init(void)
{
	sd_interpose_init();
	if (sd_config_parse(&sd_rt.cfg) != 0)
		return; /* off: disabled, or no usable signal (already said) */
	sd_rt.pid = getpid();
	sd_rt.fd_floor = pick_fd_floor();
	pthread_key_create(&thread_key, thread_key_destructor);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sd_handler_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sd_real_sigaction(sd_rt.cfg.signo, &sa, NULL) != 0) {
		sd_msg("sonde: signal %d: cannot install the sampling handler: %s (set SONDE_SIGNAL)",
		       sd_rt.cfg.signo, strerror(errno));
		return;
	}
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND) {
		atomic_store(&sd_rt.unwind_init, 1);
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
		atomic_store(&sd_rt.unwind_init, 0);
	}
	sd_phdr_snapshot_rebuild();
	sd_sources_probe(&sd_rt.cfg);
	sd_papi_probe(&sd_rt.cfg);
	sd_kernel_counters_probe(getenv("SONDE_COUNTERS"), &sd_rt.counters, sd_msg);
	if (start_writer() != 0)
		return; /* said why; the program runs on unprofiled */
	atomic_store(&sd_rt.state, SD_ARMED);
	pid_t self = gettid_();
	adopt_existing_threads(self); /* before the writer thread exists */
	if (sd_writer_start() != 0) {
		atomic_store(&sd_rt.state, SD_OFF);
		return;
	}
	atomic_store(&sd_rt.state, SD_RUNNING);
	sd_thread_begin();
	sd_annotate_start(sd_rt.cfg.regions ? region_event : NULL);
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
	int expect = SD_RUNNING;
	if (!atomic_compare_exchange_strong(&sd_rt.state, &expect, SD_DRAINING))
		return;
	sigset_t old;
	sd_runtime_block_signals(&old);
	pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		sd_sources_disable(t);
	pthread_mutex_unlock(&lock);
	struct sd_thread *self = sd_tls_thread;
	if (self && !self->busy) {
		uint64_t final[SD_MAX_COUNTERS];
		unsigned n = final_deltas(self, final);
		sd_writer_ring_final(self->ring, final, n);
	}
	sd_writer_stop(reason, signo);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_exec_prepare(void)
{
	sd_papi_exec_prepare(sd_tls_thread, 1);
	sd_runtime_stop("exec", 0);
}

/* DRAINING -> RUNNING after an exec that returned. */
void sd_runtime_exec_failed(void)
{
	int expect = SD_DRAINING;
	if (!atomic_compare_exchange_strong(&sd_rt.state, &expect, SD_RUNNING))
		return;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_writer_resume();
	sd_papi_exec_prepare(sd_tls_thread, 0);
	pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
			if (t->src_fd[i] >= 0)
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
	pthread_mutex_lock(&lock);
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
	pthread_mutex_lock(&lock);
	for (struct sd_thread *t = sd_rt.threads; t; t = t->next)
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
			const struct sd_source *s = &sd_rt.cfg.sources[i];
			if (t->src_fd[i] >= 0 || s->kind != SD_SRC_CPU || s->use_timer)
				continue;
			int fd;
			if (sd_kernel_clock_open(t->tid, s->period_ns, sd_rt.cfg.signo, sd_rt.fd_floor,
						 &fd) == 0 &&
			    sd_kernel_enable_sigsafe(fd, 1) == 0) {
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
	pthread_mutex_lock(&lock);
	t->next = sd_rt.threads;
	sd_rt.threads = t;
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_registry_remove(struct sd_thread *t)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	pthread_mutex_lock(&lock);
	thread_close_sources(t);
	registry_remove(t);
	pthread_mutex_unlock(&lock);
	sd_runtime_restore_signals(&old);
}

void sd_runtime_threads_foreach(void (*fn)(struct sd_thread *, void *), void *arg)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	pthread_mutex_lock(&lock);
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
	pthread_mutex_lock(&lock);
	sd_writer_fork_prepare();
}

void sd_runtime_fork_parent(void)
{
	if (atomic_load(&sd_rt.state) == SD_OFF)
		return;
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
	sd_annotate_fork_child();
	pthread_mutex_init(&lock, NULL);
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
		if (t != self) {
			free(t->scratch);
			free(t);
		}
	}
	sd_rt.threads = NULL;
	atomic_store(&sd_rt.nadopted, 0);
	sd_tasks_fork_child();
	sd_rt.pid = getpid();
	int running = atomic_load(&sd_rt.state) == SD_RUNNING;
	if (!running || !sd_rt.cfg.follow_fork || !self) {
		sd_writer_fork_child(NULL);
		atomic_store(&sd_rt.state, SD_OFF);
		if (self) {
			sd_tls_thread = NULL;
			free(self->scratch);
			free(self);
		}
		sd_runtime_restore_signals(&fork_saved_mask);
		return;
	}
	self->tid = gettid_();
	self->next = NULL;
	self->adopted = 0;
	sd_rt.threads = self;
	sd_papi_fork_child(); /* before any other thread exists in the child */
	if (sd_writer_fork_child(self->ring) != 0) {
		atomic_store(&sd_rt.state, SD_OFF);
		sd_runtime_restore_signals(&fork_saved_mask);
		return;
	}
	drain_pending_samples();
	thread_open_sources(self);
	sd_runtime_restore_signals(&fork_saved_mask);
}
