/* foreign.c - the sampling handler's path for threads made without
 * pthread_create: signal context, like handler.c, and nothing else.
 *
 * Called from: sd_handler_sample, first thing, while any such thread is
 * known (sd_rt.nforeign > 0). tasks.c finds those threads in /proc/self/task
 * from the writer thread, gives each a record and a sampling source aimed at
 * its tid, and publishes it in sd_rt.foreign[] (tid stored last).
 *
 * Such a thread may have no TLS of its own: a raw clone() without
 * CLONE_SETTLS runs with the parent's TLS pointer, so sd_tls_thread, errno
 * and libunwind's per-thread cache would all be the parent's. This path
 * therefore finds the record by gettid() alone, touches no TLS (errno
 * included: only calls that cannot fail here are made), takes no annotation
 * context of the thread (it would be the parent's) and unwinds by frame
 * pointers within the stack mapping tasks.c found around a stack pointer
 * seen here earlier (the interrupted PC alone until then).
 *
 * Invariants: async-signal-safe; a slot's record is used only by the thread
 * whose tid the slot holds, and freed by tasks.c only after that thread is
 * gone (its tid cleared first).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "sampler/sampler.h"

/* gettid without the libc wrapper's errno (it cannot fail anyway). */
static pid_t gettid_raw_sigsafe(void)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_gettid) : "rcx", "r11", "memory");
	return (pid_t)ret;
}

/* Frame-pointer walk bounded by [lo, hi), one readable mapping that holds
 * the interrupted stack pointer: no read can fault. */
static unsigned unwind_sigsafe(struct sd_foreign *f, const ucontext_t *uc, uint64_t *pcs,
			       unsigned max, uint8_t *flags)
{
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t hi = atomic_load_explicit(&f->stack_hi, memory_order_acquire);
	uintptr_t lo = atomic_load_explicit(&f->stack_lo, memory_order_relaxed);
	if (!hi || sp < lo || sp >= hi) {
		atomic_store_explicit(&f->sp, sp, memory_order_relaxed); /* tasks.c finds the mapping */
		pcs[0] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		*flags |= SD_FLAG_PARTIAL;
		return 1;
	}
	return sd_unwind_fp_sigsafe(uc, lo, hi, 0, pcs, max, flags);
}

int sd_foreign_sample_sigsafe(const siginfo_t *si, void *ucv)
{
	pid_t tid = gettid_raw_sigsafe();
	struct sd_foreign *f = NULL;
	for (int i = 0; i < SD_MAX_FOREIGN; i++)
		if (atomic_load_explicit(&sd_rt.foreign[i].tid, memory_order_acquire) == tid) {
			f = &sd_rt.foreign[i];
			break;
		}
	if (!f)
		return 0;
	struct sd_thread *t = f->t;
	int src = -1;
	if (si->si_code == SI_TIMER) {
		src = si->si_value.sival_int;
	} else {
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
			if (t->src_fd[i] >= 0 && t->src_fd[i] == si->si_fd)
				src = (int)i;
	}
	if (src < 0 || src >= (int)sd_rt.cfg.nsources)
		return 1; /* not ours (a stray sigqueue): ignore */
	if (t->phase[src])
		sd_handler_phase_done_sigsafe(t, src);
	if (atomic_load_explicit(&sd_rt.state, memory_order_relaxed) != SD_RUNNING) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_STOPPED);
		return 1;
	}
	if (t->busy) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_BUSY);
		return 1;
	}
	t->busy = 1;
	uint32_t weight = 1;
	if (si->si_code == SI_TIMER && si->si_overrun > 0)
		weight += (uint32_t)si->si_overrun;
	/* ctx 0: the thread blackboard is TLS, not this thread's */
	struct sd_rec *rec = sd_ring_begin_sigsafe(
		t->ring, SD_REC_SAMPLE, (uint8_t)src, sd_rt.counters.n ? SD_FLAG_NO_COUNTERS : 0,
		weight, 0, sd_annotate_process_ctx_sigsafe(), SD_DROP_RING_FULL);
	if (!rec) {
		t->busy = 0;
		return 1;
	}
	rec->depth = (uint16_t)unwind_sigsafe(f, ucv, rec->pcs, sd_rt.cfg.max_depth, &rec->flags);
	sd_ring_commit_sigsafe(t->ring, rec);
	t->busy = 0;
	return 1;
}
