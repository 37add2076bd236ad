/* blocking.c - the wrappers of calls that can block (sleeps, event waits,
 * semaphores, socket receives, locks, condition variables, barriers,
 * joins), and what every wrapper of a blocking call shares (read, write,
 * syscall in fds.c; wait* in exec.c): where and for how long the thread
 * waits, for the wall-time source (sampler/interpose/interpose.h has the
 * index of every wrapper). Also sd_interpose_init, which resolves the real
 * functions at start.
 *
 * Ordinary context of the program's threads. The lock wrappers are on the
 * program's hot path: without a wall-time source they cost one branch and
 * the real function's indirect call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/real.h"
#include "sampler/interpose/interpose.h"

/* With a wall-time source, each call that can block records where the
 * thread entered it, so that the writer can charge the time it stays
 * blocked to that stack (writer/offcpu.c) without ever signalling it. The
 * stack is unwound here, in ordinary context, and kept while the thread
 * keeps calling from the same place (same return address and frame): an
 * event loop pays for one unwind. With the stack goes the entry of the
 * libc function called (fn), which the profile shows above [blocked]. No
 * wall-time source: one branch.
 *
 * Locks are taken by the uncontended path first (pthread_mutex_trylock,
 * pthread_rwlock_tryrdlock, sem_trywait: the same outcome as the blocking
 * call whenever they succeed or fail for any reason but contention), so a
 * lock that is free costs no unwind. sonde's own locks, joins and sleeps do
 * not come here (common/real.h, common/sys.h); those of its calls that do
 * (its writes and its syscall(SYS_perf_event_open), made by name so that
 * tests/fault can fail them) are passed through by their return address. */
static uintptr_t self_lo, self_len; /* sonde's executable segment */

static void blk_self_init(void)
{
	Dl_info di;
	struct link_map *lm = NULL;
	if (!dladdr1((void *)blk_self_init, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !di.dli_fbase)
		return;
	const ElfW(Ehdr) *eh = di.dli_fbase;
	const ElfW(Phdr) *ph = (const void *)((const char *)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t lo = lm->l_addr + ph[i].p_vaddr;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    (uintptr_t)blk_self_init - lo < ph[i].p_memsz) {
			self_lo = lo;
			self_len = ph[i].p_memsz;
		}
	}
}

/* At start, before the program's threads: every real function resolved
 * (common/real.c), and sonde's own code found. */
void sd_interpose_init(void)
{
	sd_real_init();
	blk_self_init();
}

static int blk_wanted(void *ra)
{
	return sd_rt.wall_src >= 0 && (uintptr_t)ra - self_lo >= self_len && running();
}

int sd_interpose_blk_enter(void *ra, void *fp, void *fn)
{
	if (!blk_wanted(ra))
		return 0;
	struct sd_thread *t = sd_tls_thread;
	if (!t || t->busy || t->in_handler)
		return 0; /* busy: sonde's own call, perhaps in signal context */
	struct sd_ring *r = t->ring;
	if (!r->blk_pcs)
		return 0;
	uint32_t seq = atomic_load_explicit(&r->blk_seq, memory_order_relaxed);
	if (seq & 1)
		return 0; /* nested (a handler of the program's inside a call) */
	uint32_t cur = atomic_load_explicit(&r->blk_cur, memory_order_relaxed);
	if (r->blk_key_ra[cur] != (uintptr_t)ra || r->blk_key_fp[cur] != (uintptr_t)fp ||
	    r->blk_fn[cur] != (uintptr_t)fn) {
		/* Another call site: the buffer that holds it already, else
		 * one whose time the writer took (never the current), else the
		 * next in turn; the stacks of the calls made since the writer's
		 * last tick stay for it. */
		uint32_t b = SD_BLK_BUFS, free_b = SD_BLK_BUFS;
		for (uint32_t i = 0; i < SD_BLK_BUFS && b == SD_BLK_BUFS; i++)
			if (r->blk_key_ra[i] == (uintptr_t)ra && r->blk_key_fp[i] == (uintptr_t)fp)
				b = i;
			else if (free_b == SD_BLK_BUFS && i != cur &&
				 !atomic_load_explicit(&r->blk_done_ns[i], memory_order_relaxed))
				free_b = i;
		if (b == SD_BLK_BUFS && free_b == SD_BLK_BUFS) {
			free_b = r->blk_next % SD_BLK_BUFS;
			if (free_b == cur)
				free_b = (free_b + 1) % SD_BLK_BUFS;
			r->blk_next = free_b + 1;
		}
		if (b == SD_BLK_BUFS)
			b = free_b;
		uint32_t g = atomic_load_explicit(&r->blk_gen, memory_order_relaxed);
		atomic_store_explicit(&r->blk_gen, g + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		if (r->blk_key_ra[b] != (uintptr_t)ra || r->blk_key_fp[b] != (uintptr_t)fp) {
			uint64_t *pcs = r->blk_pcs + (size_t)b * sd_rt.cfg.max_depth;
			t->busy = 1;
			atomic_signal_fence(memory_order_seq_cst);
			/* max_depth frames: one more than the writer keeps, so
			 * that a full buffer says the stack was cut (offcpu.c) */
			unsigned n = sd_handler_stack_here(t, pcs, sd_rt.cfg.max_depth);
			if (!n) {
				pcs[0] = (uintptr_t)ra;
				n = 1;
			}
			atomic_signal_fence(memory_order_seq_cst);
			t->busy = 0;
			r->blk_depth[b] = (uint32_t)n;
			r->blk_key_ra[b] = (uintptr_t)ra;
			r->blk_key_fp[b] = (uintptr_t)fp;
		}
		r->blk_fn[b] = (uintptr_t)fn;
		atomic_store_explicit(&r->blk_cur, b, memory_order_relaxed);
		atomic_store_explicit(&r->blk_gen, g + 2, memory_order_release);
	}
	r->blk_t0 = sd_now_ns_sigsafe();
	atomic_store_explicit(&r->blk_seq, seq + 1, memory_order_release);
	return 1;
}

/* System calls made through libc's syscall() that wait: the call is
 * recorded like a wrapped one (issue 18 item 2: a raw futex or nanosleep
 * was charged to the last sampled stack). op: the futex operation. */
int sd_interpose_blk_syscall(long no, long op)
{
	switch (no) {
	case SYS_futex: {
		int cmd = (int)op & FUTEX_CMD_MASK;
		return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
		       cmd == FUTEX_WAIT_REQUEUE_PI || cmd == FUTEX_TRYLOCK_PI + 2 /* LOCK_PI2 */;
	}
#ifdef SYS_futex_waitv
	case SYS_futex_waitv:
#endif
#ifdef SYS_poll
	case SYS_poll:
#endif
#ifdef SYS_select
	case SYS_select:
#endif
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
#ifdef SYS_pause
	case SYS_pause:
#endif
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_rt_sigtimedwait:
	case SYS_rt_sigsuspend:
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
	case SYS_msgrcv:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_io_getevents:
	case SYS_io_uring_enter:
	case SYS_mq_timedreceive:
	case SYS_flock:
	case SYS_sched_yield:
		return 1;
	default:
		return 0;
	}
}

#define BLK_WRAP(ret, name, params, args)                                      \
	SONDE_API ret name params                                              \
	{                                                                      \
		RESOLVE(name);                                                 \
		int on_ = sd_interpose_blk_enter(__builtin_return_address(0),  \
						 __builtin_frame_address(0),   \
						 (void *)REAL(name));          \
		ret r_ = REAL(name) args;                                      \
		blk_leave(on_);                                                \
		return r_;                                                     \
	}

/* A lock: tried first (TRY(arg) returns 0 or an error number, EBUSY when
 * another holds it); only a busy lock records where the thread waits. */
#define BLK_LOCK_WRAP(name, params, args, TRY, arg)                            \
	SONDE_API int name params                                              \
	{                                                                      \
		RESOLVE(name);                                                 \
		void *ra_ = __builtin_return_address(0);                       \
		if (!blk_wanted(ra_))                                          \
			return REAL(name) args;                                \
		int r_ = TRY(arg);                                             \
		if (r_ != EBUSY)                                               \
			return r_;                                             \
		int on_ = sd_interpose_blk_enter(ra_, __builtin_frame_address(0), \
						 (void *)REAL(name));          \
		r_ = REAL(name) args;                                          \
		blk_leave(on_);                                                \
		return r_;                                                     \
	}

/* A semaphore: sem_trywait first (-1 and EAGAIN when it is 0); errno as
 * the program would see it from the call it made. */
#define BLK_SEM_WRAP(name, params, args)                                       \
	SONDE_API int name params                                              \
	{                                                                      \
		RESOLVE(name);                                                 \
		void *ra_ = __builtin_return_address(0);                       \
		if (!blk_wanted(ra_))                                          \
			return REAL(name) args;                                \
		int e_ = errno;                                                \
		if (sem_trywait(s) == 0) {                                     \
			errno = e_;                                            \
			return 0;                                              \
		}                                                              \
		if (errno != EAGAIN)                                           \
			return -1; /* EINVAL: what the call would have said */ \
		errno = e_;                                                    \
		int on_ = sd_interpose_blk_enter(ra_, __builtin_frame_address(0), \
						 (void *)REAL(name));          \
		int r_ = REAL(name) args;                                      \
		blk_leave(on_);                                                \
		return r_;                                                     \
	}

BLK_WRAP(int, nanosleep, (const struct timespec *a, struct timespec *b), (a, b))
BLK_WRAP(int, clock_nanosleep, (clockid_t c, int f, const struct timespec *a, struct timespec *b),
	 (c, f, a, b))
BLK_WRAP(int, usleep, (useconds_t u), (u))
BLK_WRAP(unsigned, sleep, (unsigned s), (s))
BLK_WRAP(int, poll, (struct pollfd *p, nfds_t n, int ms), (p, n, ms))
BLK_WRAP(int, ppoll, (struct pollfd *p, nfds_t n, const struct timespec *ts, const sigset_t *m),
	 (p, n, ts, m))
BLK_WRAP(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv),
	 (n, r, w, e, tv))
BLK_WRAP(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
			const sigset_t *m), (n, r, w, e, ts, m))
BLK_WRAP(int, epoll_wait, (int fd, struct epoll_event *ev, int n, int ms), (fd, ev, n, ms))
BLK_WRAP(int, epoll_pwait, (int fd, struct epoll_event *ev, int n, int ms, const sigset_t *m),
	 (fd, ev, n, ms, m))
BLK_WRAP(int, sigtimedwait, (const sigset_t *s, siginfo_t *i, const struct timespec *ts),
	 (s, i, ts))
BLK_WRAP(int, sigwaitinfo, (const sigset_t *s, siginfo_t *i), (s, i))
BLK_WRAP(int, sigwait, (const sigset_t *s, int *sig), (s, sig))
BLK_WRAP(int, sigsuspend, (const sigset_t *s), (s))
BLK_WRAP(int, pause, (void), ())
BLK_SEM_WRAP(sem_wait, (sem_t *s), (s))
BLK_SEM_WRAP(sem_timedwait, (sem_t *s, const struct timespec *ts), (s, ts))
BLK_SEM_WRAP(sem_clockwait, (sem_t *s, clockid_t c, const struct timespec *ts), (s, c, ts))
BLK_WRAP(ssize_t, recv, (int fd, void *b, size_t n, int f), (fd, b, n, f))
BLK_WRAP(ssize_t, recvfrom, (int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l),
	 (fd, b, n, f, a, l))
BLK_WRAP(ssize_t, recvmsg, (int fd, struct msghdr *m, int f), (fd, m, f))
BLK_WRAP(int, accept, (int fd, struct sockaddr *a, socklen_t *l), (fd, a, l))
BLK_WRAP(int, accept4, (int fd, struct sockaddr *a, socklen_t *l, int f), (fd, a, l, f))
BLK_WRAP(int, pthread_join, (pthread_t th, void **ret), (th, ret))
BLK_WRAP(int, pthread_timedjoin_np, (pthread_t th, void **ret, const struct timespec *ts),
	 (th, ret, ts))
BLK_WRAP(int, pthread_clockjoin_np,
	 (pthread_t th, void **ret, clockid_t c, const struct timespec *ts), (th, ret, c, ts))
BLK_LOCK_WRAP(pthread_mutex_lock, (pthread_mutex_t *m), (m), pthread_mutex_trylock, m)
BLK_LOCK_WRAP(pthread_mutex_timedlock, (pthread_mutex_t *m, const struct timespec *ts), (m, ts),
	      pthread_mutex_trylock, m)
BLK_LOCK_WRAP(pthread_mutex_clocklock, (pthread_mutex_t *m, clockid_t c, const struct timespec *ts),
	      (m, c, ts), pthread_mutex_trylock, m)
BLK_LOCK_WRAP(pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l), pthread_rwlock_tryrdlock, l)
BLK_LOCK_WRAP(pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l), pthread_rwlock_trywrlock, l)
BLK_LOCK_WRAP(pthread_rwlock_timedrdlock, (pthread_rwlock_t *l, const struct timespec *ts), (l, ts),
	      pthread_rwlock_tryrdlock, l)
BLK_LOCK_WRAP(pthread_rwlock_timedwrlock, (pthread_rwlock_t *l, const struct timespec *ts), (l, ts),
	      pthread_rwlock_trywrlock, l)
BLK_LOCK_WRAP(pthread_rwlock_clockrdlock,
	      (pthread_rwlock_t *l, clockid_t c, const struct timespec *ts), (l, c, ts),
	      pthread_rwlock_tryrdlock, l)
BLK_LOCK_WRAP(pthread_rwlock_clockwrlock,
	      (pthread_rwlock_t *l, clockid_t c, const struct timespec *ts), (l, c, ts),
	      pthread_rwlock_trywrlock, l)
BLK_WRAP(int, pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
BLK_WRAP(int, pthread_cond_timedwait,
	 (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts), (c, m, ts))
BLK_WRAP(int, pthread_cond_clockwait,
	 (pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *ts),
	 (c, m, k, ts))
BLK_WRAP(int, pthread_barrier_wait, (pthread_barrier_t *b), (b))
BLK_WRAP(int, sched_yield, (void), ())
