/* threads.c - the wrappers that set up the program's threads (pthread_create)
 * and see its other tasks sharing memory (clone), for sonde
 * (sampler/interpose/interpose.h has the index of every wrapper).
 *
 * pthread_create runs each new thread through a trampoline of sonde's: the
 * thread is registered (sd_thread_begin) before the program's function runs
 * and torn down (sd_thread_end) when it returns or exits. Ordinary context
 * of the program's creating thread and of the new thread.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "common/sys.h"
#include "mem/mem.h"
#include "sampler/interpose/interpose.h"

/* What a new thread needs from its creator. Its stack's bounds are read by
 * the creating thread (pthread_getattr_np, which mallocs: in the new thread
 * that would cost it a malloc arena of its own, 64 MiB of address space;
 * mem/mem.h), while the new thread waits at the start of its trampoline:
 * `stack` goes TR_WAIT -> TR_BUSY (the creator reads them) -> TR_DONE. A new
 * thread that waited TR_PATIENCE_NS in vain (its creator stopped between
 * pthread_create and the read) takes TR_WAIT -> TR_GAVE_UP and reads them
 * itself; once TR_BUSY it waits for TR_DONE, since its creator is reading
 * its descriptor. Each side drops a reference; the last frees it. */
enum { TR_WAIT, TR_BUSY, TR_DONE, TR_GAVE_UP };
#define TR_PATIENCE_NS 100000000ll

struct trampoline {
	void *(*fn)(void *);
	void *arg;
	_Atomic uint32_t stack; /* TR_* */
	_Atomic int refs;
	uintptr_t stack_lo, stack_hi;
};

static void trampoline_put(struct trampoline *tr)
{
	if (atomic_fetch_sub(&tr->refs, 1) == 1)
		sd_mem_free(tr);
}

static void thread_cleanup(void *unused)
{
	(void)unused;
	sd_thread_end();
}

/* The new thread: waits for its stack's bounds (struct trampoline). */
static void trampoline_stack(struct trampoline *tr, uintptr_t *lo, uintptr_t *hi)
{
	struct timespec slice = {0, 10000000};
	for (long long waited = 0; atomic_load(&tr->stack) != TR_DONE;) {
		uint32_t st = atomic_load(&tr->stack);
		if (st == TR_WAIT && waited >= TR_PATIENCE_NS &&
		    atomic_compare_exchange_strong(&tr->stack, &st, TR_GAVE_UP)) {
			*lo = *hi = 0; /* sd_thread_begin reads them itself */
			return;
		}
		sd_syscall(SYS_futex, &tr->stack, FUTEX_WAIT_PRIVATE, st,
			   st == TR_WAIT ? &slice : NULL, NULL, 0);
		if (st == TR_WAIT)
			waited += slice.tv_nsec;
	}
	*lo = tr->stack_lo;
	*hi = tr->stack_hi;
}

static void *thread_trampoline(void *p)
{
	struct trampoline *trp = p;
	uintptr_t lo, hi;
	trampoline_stack(trp, &lo, &hi);
	struct trampoline tr = *trp;
	trampoline_put(trp);
	void *ret;
	sd_thread_begin(lo, hi);
	atomic_fetch_sub(&sd_rt.starting, 1); /* registered: not a foreign thread */
	pthread_cleanup_push(thread_cleanup, NULL);
	ret = tr.fn(tr.arg);
	pthread_cleanup_pop(1);
	return ret;
}

SONDE_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	RESOLVE(pthread_create);
	if (!running())
		return REAL(pthread_create)(th, attr, fn, arg);
	if (our_process())
		sd_writer_thread_wanted(); /* the program's second task: sonde's too */
	struct trampoline *tr = sd_mem_calloc(1, sizeof *tr);
	if (!tr)
		return REAL(pthread_create)(th, attr, fn, arg);
	tr->fn = fn;
	tr->arg = arg;
	atomic_store(&tr->refs, 2);
	atomic_fetch_add(&sd_rt.starting, 1);
	/* glibc says EAGAIN for a thread's stack it could not map too, errno
	 * ENOMEM then (RLIMIT_AS): no process slot was refused, and a writer's
	 * slot given back would not help. */
	errno = 0;
	int err = REAL(pthread_create)(th, attr, thread_trampoline, tr);
	for (unsigned round = 0; err == EAGAIN && errno != ENOMEM && slots_given_back(&round);)
		err = REAL(pthread_create)(th, attr, thread_trampoline, tr);
	if (err) {
		atomic_fetch_sub(&sd_rt.starting, 1);
		sd_mem_free(tr);
		return err;
	}
	uint32_t st = TR_WAIT;
	if (atomic_compare_exchange_strong(&tr->stack, &st, TR_BUSY)) {
		pthread_attr_t a;
		void *lo;
		size_t size;
		if (pthread_getattr_np(*th, &a) == 0) {
			if (pthread_attr_getstack(&a, &lo, &size) == 0) {
				tr->stack_lo = (uintptr_t)lo;
				tr->stack_hi = (uintptr_t)lo + size;
			}
			pthread_attr_destroy(&a);
		}
		atomic_store(&tr->stack, TR_DONE);
		sd_syscall(SYS_futex, &tr->stack, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	trampoline_put(tr);
	return 0;
}

/* glibc's clone(): a task sharing the program's memory (CLONE_VM: a thread,
 * or a child process the writer's tick accounts) is made without
 * pthread_create: sonde's writer thread starts first where a single-threaded
 * program had put it off (writer/thread.c). The optional arguments are passed on
 * as they came (clone reads only those its flags name). */
SONDE_API int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	RESOLVE(clone);
	if (!REAL(clone)) {
		errno = ENOSYS;
		return -1;
	}
	if ((flags & CLONE_VM) && running() && our_process())
		sd_writer_thread_wanted();
	return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}
