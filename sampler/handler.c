/* handler.c - everything that runs in signal context, and nothing else.
 *
 * Called from: the kernel, on this thread's sampling signal (perf_event
 * overflow via F_SETSIG, or a POSIX timer with SIGEV_THREAD_ID), and from
 * libunwind's dl_iterate_phdr calls made while this thread is unwinding.
 *
 * Invariants: every function here is async-signal-safe. No malloc, no locks,
 * no stdio, no dynamic TLS: the thread record is reached through an
 * initial-exec TLS pointer and everything it points to was allocated before
 * the thread could be sampled. errno is saved and restored. A sample that
 * cannot be taken without waiting is dropped and counted. The loader lock is
 * never taken: libunwind's calls to dl_iterate_phdr from here are served from
 * a snapshot (hazards B1: gperftools deadlocks there against dlclose).
 *
 * The snapshot is the one piece of shared mutable state: it is built outside
 * signal context (sd_phdr_snapshot_rebuild), published with an atomic pointer
 * swap, and an old copy is freed only once no handler is reading it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "annotate/annotate.h"
#include "sampler/sampler.h"

extern __thread struct sd_thread *sd_tls_thread __attribute__((tls_model("initial-exec")));

/* ---- the loader snapshot --------------------------------------------- */

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

static _Atomic(struct phdr_snapshot *) snapshot;
static _Atomic int snapshot_readers;

int sd_phdr_snapshot_iterate_sigsafe(int (*cb)(struct dl_phdr_info *, size_t, void *),
				     void *data)
{
	int ret = 0;
	atomic_fetch_add(&snapshot_readers, 1);
	struct phdr_snapshot *s = atomic_load(&snapshot);
	for (size_t i = 0; s && i < s->count; i++) {
		struct dl_phdr_info info = s->e[i].info;
		info.dlpi_adds = s->adds;
		info.dlpi_subs = s->subs;
		ret = cb(&info, sizeof info, data);
		if (ret)
			break;
	}
	atomic_fetch_sub(&snapshot_readers, 1);
	return ret;
}

/* ---- not signal context: building the snapshot ------------------------ */

struct build_ctx {
	size_t count, phdr_count, name_bytes;
	struct phdr_snapshot *s;
	char *cursor;
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct build_ctx *b = data;
	b->count++;
	b->phdr_count += info->dlpi_phnum;
	b->name_bytes += strlen(info->dlpi_name ? info->dlpi_name : "") + 1;
	return 0;
}

static int fill_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct build_ctx *b = data;
	struct phdr_snapshot *s = b->s;
	if (s->count >= b->count)
		return 1; /* the set grew between the two passes: retry */
	struct phdr_entry *e = &s->e[s->count++];
	memset(&e->info, 0, sizeof e->info);
	e->info.dlpi_addr = info->dlpi_addr;
	e->info.dlpi_phnum = info->dlpi_phnum;
	e->phdrs = (ElfW(Phdr) *)b->cursor;
	memcpy(e->phdrs, info->dlpi_phdr, info->dlpi_phnum * sizeof(ElfW(Phdr)));
	b->cursor += info->dlpi_phnum * sizeof(ElfW(Phdr));
	e->info.dlpi_phdr = e->phdrs;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t n = strlen(name) + 1;
	e->name = b->cursor;
	memcpy(e->name, name, n);
	b->cursor += n;
	e->info.dlpi_name = e->name;
	s->adds = info->dlpi_adds;
	s->subs = info->dlpi_subs;
	return 0;
}

/* Rebuilds the snapshot from the real loader state. Ordinary context only;
 * the calling thread must have sonde's signals blocked or be the writer. */
void sd_phdr_snapshot_rebuild(void)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct build_ctx b = {0};
		sd_real_dl_iterate_phdr(count_cb, &b);
		b.count += 8; /* slack for a concurrent load between passes */
		size_t bytes = sizeof(struct phdr_snapshot) + b.count * sizeof(struct phdr_entry) +
			       (b.phdr_count + 64) * sizeof(ElfW(Phdr)) + b.name_bytes + 4096;
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return;
		b.s = m;
		b.s->map_bytes = bytes;
		b.cursor = (char *)&b.s->e[b.count];
		if (sd_real_dl_iterate_phdr(fill_cb, &b) != 0) {
			munmap(m, bytes);
			continue;
		}
		struct phdr_snapshot *old = atomic_exchange(&snapshot, b.s);
		if (!old)
			return;
		/* Free the old copy once no handler reads it; a handler runs for
		 * microseconds, so this waits at most a few yields. If readers never
		 * drain (should not happen), the old copy is leaked, not freed under
		 * a reader. */
		for (int spin = 0; spin < 10000; spin++) {
			if (atomic_load(&snapshot_readers) == 0) {
				munmap(old, old->map_bytes);
				return;
			}
			sched_yield();
		}
		return;
	}
}

/* ---- the sample handler ------------------------------------------------ */

uint64_t sd_now_ns_sigsafe(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t gettid_sigsafe(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Frame-pointer walk within the thread's stack bounds: every read is between
 * the interrupted sp and the stack top, so it cannot fault. */
static unsigned unwind_fp_sigsafe(struct sd_thread *t, const ucontext_t *uc, uint64_t *pcs,
				  unsigned max, uint8_t *flags)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	unsigned n = 0;
	pcs[n++] = pc;
	while (n < max) {
		if (fp < sp || fp + 16 > t->stack_hi || (fp & 7))
			break;
		uintptr_t next_fp = ((uintptr_t *)fp)[0];
		uintptr_t ret = ((uintptr_t *)fp)[1];
		if (ret < 4096)
			break;
		pcs[n++] = ret;
		if (next_fp <= fp)
			break;
		sp = fp + 16;
		fp = next_fp;
	}
	if (n == max)
		*flags |= SD_FLAG_TRUNCATED;
	return n;
}

/* unw_backtrace from inside the handler walks our own frames, the signal
 * trampoline and then the interrupted code; the interrupted PC (from the
 * ucontext) marks where the program's frames begin. */
static unsigned unwind_libunwind_sigsafe(struct sd_thread *t, const ucontext_t *uc,
					 uint64_t *pcs, unsigned max, uint8_t *flags)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int n = unw_backtrace((void **)t->scratch, (int)t->scratch_len);
	int k = 0;
	while (k < n && t->scratch[k] != pc)
		k++;
	if (k >= n) {
		pcs[0] = pc;
		*flags |= SD_FLAG_PARTIAL;
		return 1;
	}
	unsigned got = (unsigned)(n - k);
	if (n == (int)t->scratch_len || got > max) {
		if (got > max)
			got = max;
		*flags |= SD_FLAG_TRUNCATED;
	}
	memcpy(pcs, &t->scratch[k], got * sizeof *pcs);
	return got;
}

static int source_of_sigsafe(const struct sd_thread *t, const siginfo_t *si)
{
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_int;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		if (t->src_fd[i] >= 0 && t->src_fd[i] == si->si_fd)
			return (int)i;
	return -1;
}

/* The sampling signal's handler. async-signal-safe. */
void sd_handler_sample(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	/* Threads made without pthread_create first, by tid: their TLS may be
	 * another thread's (foreign.c). */
	if (atomic_load_explicit(&sd_rt.nforeign, memory_order_acquire) &&
	    sd_foreign_sample_sigsafe(si, ucv))
		return;
	int saved_errno = errno;
	struct sd_thread *t = sd_tls_thread;
	const ucontext_t *uc = ucv;

	if (!t) {
		/* A thread alive before sonde started: adopt its record once. */
		pid_t tid = gettid_sigsafe();
		int n = atomic_load_explicit(&sd_rt.nadopted, memory_order_acquire);
		for (int i = 0; i < n; i++)
			if (sd_rt.adopted[i]->tid == tid) {
				t = sd_rt.adopted[i];
				sd_tls_thread = t;
				break;
			}
		if (!t) {
			sd_writer_drop_global_sigsafe(SD_DROP_NO_THREAD);
			goto out;
		}
	}
	int src = source_of_sigsafe(t, si);
	if (src < 0)
		goto out; /* not ours (a stray sigqueue): ignore */
	uint32_t weight = 1;
	if (si->si_code == SI_TIMER && si->si_overrun > 0)
		weight += (uint32_t)si->si_overrun;
	sd_handler_take_sigsafe(t, src, weight, uc);
out:
	errno = saved_errno;
}

/* Takes one sample of source `src` on thread t, interrupted at context uc.
 * Called by sonde's own signal handler and by PAPI's overflow dispatch.
 * async-signal-safe. */
void sd_handler_take_sigsafe(struct sd_thread *t, int src, uint32_t weight, const ucontext_t *uc)
{
	int saved_errno = errno;
	if (atomic_load_explicit(&sd_rt.state, memory_order_relaxed) != SD_RUNNING) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_STOPPED);
		goto out;
	}
	if (t->busy) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_BUSY);
		goto out;
	}
	if (t->in_dl) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_IN_DL);
		goto out;
	}
	t->busy = 1;
	struct sd_rec *rec = sd_ring_reserve_sigsafe(t->ring);
	if (!rec) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_RING_FULL);
		t->busy = 0;
		goto out;
	}
	rec->kind = SD_REC_SAMPLE;
	rec->t_ns = sd_now_ns_sigsafe();
	rec->ctx = sd_annotate_thread_ctx_sigsafe();
	rec->pctx = sd_annotate_process_ctx_sigsafe();
	rec->source = (uint8_t)src;
	rec->flags = 0;
	rec->weight = weight;

	unsigned max = sd_rt.cfg.max_depth;
	switch (sd_rt.cfg.unwind) {
	case SD_UNWIND_LIBUNWIND:
		t->in_handler = 1;
		rec->depth = (uint16_t)unwind_libunwind_sigsafe(t, uc, rec->pcs, max, &rec->flags);
		t->in_handler = 0;
		break;
	case SD_UNWIND_FP:
		rec->depth = (uint16_t)unwind_fp_sigsafe(t, uc, rec->pcs, max, &rec->flags);
		break;
	default:
		rec->pcs[0] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		rec->depth = 1;
		break;
	}
	rec->ncounters = 0;
	if (sd_rt.counters.n) {
		uint64_t now[SD_MAX_COUNTERS];
		if (sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, now) == 0) {
			for (unsigned i = 0; i < sd_rt.counters.n; i++) {
				rec->pcs[rec->depth + i] = now[i] - t->ctr.last[i];
				t->ctr.last[i] = now[i];
			}
			rec->ncounters = (uint16_t)sd_rt.counters.n;
		} else {
			rec->flags |= SD_FLAG_NO_COUNTERS;
		}
	}
	sd_ring_commit_sigsafe(t->ring, rec);
	t->busy = 0;
out:
	errno = saved_errno;
}

/* Runs the unwinder once in ordinary context so that libunwind's lazy
 * per-thread cache is allocated here, not in the first handler. */
void sd_handler_warmup(struct sd_thread *t)
{
	t->busy = 1;
	t->in_handler = 1; /* libunwind's lazily made pipe is marked as ours */
	unw_backtrace((void **)t->scratch, (int)t->scratch_len);
	t->in_handler = 0;
	t->busy = 0;
}

/* SIGTERM/SIGINT/SIGHUP while the program keeps the default disposition:
 * flush the stream (the writer thread does the work; we wait, bounded), then
 * let the default action happen. async-signal-safe. */
void sd_flush_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	int saved_errno = errno;
	sd_writer_final_flush_sigsafe("signal", sig, 2000);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sd_real_sigaction(sig, &dfl, NULL);
	/* Blocked while we run; delivered with the default action on return. */
	syscall(SYS_tgkill, getpid(), gettid_sigsafe(), sig);
	errno = saved_errno;
}
