/* handler.c - the sampling signal's handler and the sample it takes, and
 * nothing that runs outside signal context. The rest of sonde's signal-context
 * code is in say.c (its messages), forward.c (signals not sonde's, the flush
 * handler), unwind_fp.c (the frame-pointer walk) and foreign.c.
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
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"
#include "annotate/annotate.h"
#include "sampler/sampler.h"

/* ---- the loader snapshot --------------------------------------------- */

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

/* Publishes a new snapshot (built by loader.c) and returns the old one,
 * which the caller frees once sd_phdr_snapshot_readers_sigsafe() is 0. */
struct phdr_snapshot *sd_phdr_snapshot_swap_sigsafe(struct phdr_snapshot *s)
{
	return atomic_exchange(&snapshot, s);
}

int sd_phdr_snapshot_readers_sigsafe(void)
{
	return atomic_load(&snapshot_readers);
}

/* ---- the sample handler ------------------------------------------------ */

static pid_t gettid_sigsafe(void)
{
	return (pid_t)sd_syscall(SYS_gettid);
}

/* The part of a known stack of the thread that holds sp, from sp up, into
 * [*lo, *hi): its own stack, the program's alternate stack or sonde's; 0:
 * none (a coroutine's stack, say). async-signal-safe. */
static int stack_of_sigsafe(const struct sd_thread *t, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	*lo = sp;
	if (sp >= t->stack_lo && sp < t->stack_hi)
		*hi = t->stack_hi;
	else if (t->prog_alt && sp >= t->prog_alt_lo && sp < t->prog_alt_hi)
		*hi = t->prog_alt_hi;
	else if (t->alt_lo && sp >= t->alt_lo && sp < t->alt_lo + t->alt_bytes)
		*hi = t->alt_lo + t->alt_bytes;
	else
		return 0;
	return 1;
}

/* Is pc the first instruction of an installed signal handler? (Called only
 * when the frame above pc is a signal frame.) async-signal-safe. */
static int handler_entry_sigsafe(uintptr_t pc)
{
	for (int sig = 1; sig < 65; sig++)
		if (atomic_load_explicit(&sd_rt.handler_entry[sig], memory_order_relaxed) == pc)
			return 1;
	return 0;
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
	if (k >= 1 && k + 2 < n && t->scratch[k + 1] == t->scratch[k - 1] && handler_entry_sigsafe(pc))
		k += 2; /* a handler not yet begun, its signal frame: the code below */
	unsigned got = (unsigned)(n - k);
	if (n == (int)t->scratch_len || got > max) {
		if (got > max)
			got = max;
		*flags |= SD_FLAG_TRUNCATED;
	}
	memcpy(pcs, &t->scratch[k], got * sizeof *pcs);
	return got;
}

/* Which of this thread's sources sent this signal, or -1: a signal sonde did
 * not send (kill, raise, sigqueue, tgkill or a timer of the program's). Our
 * POSIX timers carry SD_TIMER_COOKIE + index; our perf events signal with a
 * kernel si_code and their descriptor. */
#define SRC_STALE (-2) /* sonde's, from a timer or descriptor it no longer has */

static int source_of_sigsafe(const struct sd_thread *t, const siginfo_t *si)
{
	if (si->si_code == SI_TIMER) {
		unsigned i = (unsigned)(si->si_value.sival_int - SD_TIMER_COOKIE);
		if (i >= sd_rt.cfg.nsources || !t)
			return -1;
		/* A timer of ours deleted since it fired (the thread's sources
		 * closed or replaced): never the program's signal. */
		return t->has_timer[i] ? (int)i : SRC_STALE;
	}
	if (si->si_code <= 0 || !t)
		return -1;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		if (t->src_fd[i] >= 0 && t->src_fd[i] == si->si_fd)
			return (int)i;
	/* A descriptor's signal (POLL_IN...) naming none of this thread's
	 * sources: queued by a sampling descriptor of ours before it was
	 * closed behind sonde's back (a raw close_range) or replaced, and
	 * delivered since, when the number is sonde's again or the program's
	 * own file. It is the program's only when the number it names is a
	 * descriptor of the program's set to send this very signal (F_SETSIG):
	 * forwarding any other would kill a program that never handles
	 * sonde's signal (tests/e2e/rawfds.sh, pending). */
	if (sd_runtime_is_sonde_fd(si->si_fd) ||
	    sd_sys(SYS_fcntl, si->si_fd, F_GETSIG) != sd_rt.cfg.signo)
		return SRC_STALE;
	return -1;
}

static int sent_by_user_sigsafe(const siginfo_t *si)
{
	return si->si_code == SI_USER || si->si_code == SI_TKILL || si->si_code == SI_QUEUE ||
	       si->si_code == SI_TIMER || si->si_code == SI_MESGQ || si->si_code == SI_ASYNCIO;
}


/* ---- throttling ---------------------------------------------------------- */


/* The thread's first sample came after its random first phase (sampler.h):
 * from now on its clock runs at the full period. A POSIX timer has that as
 * its interval already. async-signal-safe (ioctl). */
void sd_handler_phase_done_sigsafe(struct sd_thread *t, int src)
{
	t->phase[src] = 0;
	if (t->src_fd[src] >= 0)
		sd_kernel_period_sigsafe(t->src_fd[src], sd_rt.cfg.sources[src].period_ns * t->mult[src]);
}

/* Discards the samples still queued for this thread (they were taken at the
 * old period and mostly measure sonde's own time); signals that are not
 * sonde's are queued again, unchanged. async-signal-safe. */
static void discard_queued_sigsafe(struct sd_thread *t)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sd_rt.cfg.signo);
	struct timespec zero = {0, 0};
	siginfo_t si, theirs[8];
	unsigned n = 0;
	for (int i = 0; i < 100000 && n < 8; i++) {
		if (sd_syscall(SYS_rt_sigtimedwait, &set, &si, &zero, _NSIG / 8) <= 0)
			break;
		int src = source_of_sigsafe(t, &si);
		if (src >= 0)
			sd_ring_drop_sigsafe(t->ring, SD_DROP_THROTTLED);
		else if (src != SRC_STALE)
			theirs[n++] = si;
	}
	for (unsigned i = 0; i < n; i++)
		sd_syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid_sigsafe(), sd_rt.cfg.signo, &theirs[i]);
}

static int signal_queued_sigsafe(int sig)
{
	sigset_t p;
	if (sd_syscall(SYS_rt_sigpending, &p, _NSIG / 8) != 0)
		return 0;
	return sigismember(&p, sig) == 1;
}

/* Raises source src's period on thread t from period, behind at cost a
 * sample: at least doubled, to four times the cost, up to SD_THROTTLE_MAX_NS;
 * threads that begin later start there too; said once per source.
 * async-signal-safe. */
static void throttle_raise_sigsafe(struct sd_thread *t, int src, uint64_t period, uint64_t cost)
{
	const struct sd_source *s = &sd_rt.cfg.sources[src];
	/* The cost seen may be inflated (preemption, a cold unwinder cache):
	 * one step raises the period at most 64 times; later windows go on. */
	uint64_t next = period * 2;
	if (cost > period * 16)
		cost = period * 16;
	if (cost * 4 > next)
		next = cost * 4;
	uint64_t mult = (next + s->period_ns - 1) / s->period_ns;
	if (mult * s->period_ns > SD_THROTTLE_MAX_NS)
		mult = SD_THROTTLE_MAX_NS / s->period_ns;
	if (mult <= t->mult[src] || mult > UINT32_MAX / 4)
		return;
	next = mult * s->period_ns;
	int ok = -1;
	if (t->src_fd[src] >= 0) {
		ok = sd_kernel_period_sigsafe(t->src_fd[src], next);
	} else if (t->has_timer[src]) {
		struct itimerspec its = {
			.it_interval = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)},
			.it_value = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)},
		};
		ok = timer_settime(t->src_timer[src], 0, &its, NULL);
	}
	if (ok != 0)
		return;
	t->mult[src] = (uint32_t)mult;
	/* Threads that begin from now on start at this period. */
	uint32_t start = atomic_load(&sd_rt.start_mult[src]);
	while (start < mult && !atomic_compare_exchange_weak(&sd_rt.start_mult[src], &start,
							     (uint32_t)mult))
		;
	discard_queued_sigsafe(t);
	t->queued_at_exit = 0;
	sd_say_throttled_sigsafe(src, next);
}

/* After a sample of `src` that began at t0_ns (the handler's entry): counts
 * whether this source falls behind on this thread and raises its period when
 * it does. What a sample costs is the handler's own time plus the kernel's
 * signal round trip. The round trip is measured in place: when a signal is
 * already queued as a handler returns, the next entry follows at once, and
 * the gap is one round trip; the least gap seen is kept (preemption only
 * ever lengthens a gap). A perf_event cpu-time clock counts user time only,
 * so at short periods the kernel's part of a sample (delivery, sigreturn)
 * is also measured on the thread's CPU clock, once per window. A sample is "behind" when its cost exceeds a
 * quarter of the period; 4 of 8 behind, or a handler longer than the period
 * twice in a row, raise the period: at least doubled, to four times the
 * least cost of the window's samples that were behind (the least, because
 * preemption and cold caches only inflate costs). (Whether a signal is queued at return is not itself a sign: two
 * sources of one period overflow together.) */
static void throttle_check_sigsafe(struct sd_thread *t, int src, uint64_t t0_ns, uint64_t end)
{
	const struct sd_source *s = &sd_rt.cfg.sources[src];
	if (t->queued_at_exit && t0_ns > t->exit_ns) {
		uint64_t gap = t0_ns - t->exit_ns;
		if (!t->trip_ns || gap < t->trip_ns)
			t->trip_ns = gap;
	}
	uint64_t spent = end - t0_ns;
	uint64_t period = s->period_ns * t->mult[src];
	t->exit_ns = end;
	/* Looking for a queued signal costs a system call (~0.4 us on a VM):
	 * only where the period is within 16 times what a sample is known to
	 * cost, which is where the round trip can matter (a sample is behind
	 * at a quarter of the period; the round trip was measured at 1-3 times
	 * the handler's own time). At 64 times, every sample at 1 ms paid it on
	 * a VM (40 us a sample): bench/overhead.sh 4 us more per sample. */
	t->queued_at_exit = period < 16 * (spent + t->trip_ns) &&
			    signal_queued_sigsafe(sd_rt.cfg.signo);
	if (!sd_source_ops_of(s)->timed)
		return;
	if (t->warm < 4) {
		t->warm++; /* a thread's first samples meet cold unwinder caches */
		return;
	}
	uint64_t cost = spent + t->trip_ns;
	int bad = cost * 4 > period;
	t->win_bad[src] += (uint16_t)bad;
	if (bad && (!t->cost_max[src] || cost < t->cost_max[src]))
		t->cost_max[src] = cost; /* the least cost of the window's bad samples */
	/* Handlers that alone outlast the period twice in a row act at once
	 * (once may be a cold unwinder cache or a preemption). */
	int over = spent > period;
	int now = over && t->over_prev[src];
	t->over_prev[src] = (uint8_t)over;
	if (++t->win_n[src] < SD_THROTTLE_WINDOW && !now)
		return;
	int behind = now || t->win_bad[src] >= SD_THROTTLE_BAD;
	cost = t->cost_max[src];
	/* A cpu-time source at a short period: what the window's samples cost
	 * the thread beyond their periods, in kernel time too (the clock counts
	 * user time only), measured on the thread's CPU clock (one read per
	 * window). A long period leaves the program's own system time out. */
	uint64_t cpu_now;
	if (sd_source_ops_of(s)->cpu_clock && t->src_fd[src] >= 0 &&
	    period <= SD_THROTTLE_CPU_CHECK_NS &&
	    sd_own_cpu_ns_sigsafe(&cpu_now) == 0) {
		uint64_t n = t->win_n[src], per = t->win_cpu_ns[src] && cpu_now > t->win_cpu_ns[src]
				 ? (cpu_now - t->win_cpu_ns[src]) / n : 0;
		uint64_t extra = per > period ? per - period + spent : 0;
		if (!now && extra * 4 > period) {
			behind = 1;
			if (!cost || extra < cost)
				cost = extra;
		}
		t->win_cpu_ns[src] = cpu_now;
	}
	t->win_n[src] = t->win_bad[src] = 0;
	t->cost_max[src] = 0;
	if (!behind || period >= SD_THROTTLE_MAX_NS)
		return;
	throttle_raise_sigsafe(t, src, period, cost);
}

/* Is there room on the stack we run on for a sample? On sonde's own
 * alternate stack there always is; on the thread's stack or the program's
 * alternate stack, SD_SAMPLE_STACK_NEED must be left. async-signal-safe. */
static int stack_room_sigsafe(const struct sd_thread *t)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (t->alt_lo && sp >= t->alt_lo && sp < t->alt_lo + t->alt_bytes)
		return 1;
	uintptr_t lo;
	if (sp >= t->stack_lo && sp < t->stack_hi) {
		lo = t->stack_lo;
	} else if (t->prog_alt && sp >= t->prog_alt_lo && sp < t->prog_alt_hi) {
		lo = t->prog_alt_lo;
	} else {
		stack_t ss;
		if (sd_syscall(SYS_sigaltstack, NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
			return 1; /* a stack of the program's we know nothing of */
		lo = (uintptr_t)ss.ss_sp;
	}
	return sp > lo && sp - lo >= SD_SAMPLE_STACK_NEED;
}

/* Room for a drain below this frame: SD_DRAIN_STACK_NEED on sonde's
 * alternate stack, the thread's own, or an alternate stack of the program's
 * (the kernel says where the one in use begins); never on a stack it does
 * not know. */
static int drain_room_sigsafe(const struct sd_thread *t)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo = 0;
	stack_t ss;
	if (t->alt_lo && sp >= t->alt_lo && sp < t->alt_lo + t->alt_bytes)
		lo = t->alt_lo;
	else if (sp >= t->stack_lo && sp < t->stack_hi)
		lo = t->stack_lo;
	else if (t->prog_alt && sp >= t->prog_alt_lo && sp < t->prog_alt_hi)
		lo = t->prog_alt_lo;
	else if (sd_syscall(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
		 sp >= (uintptr_t)ss.ss_sp && sp < (uintptr_t)ss.ss_sp + ss.ss_size)
		lo = (uintptr_t)ss.ss_sp;
	return lo && sp - lo >= SD_DRAIN_STACK_NEED;
}

/* Without a writer thread (a single-threaded program, writer.c) a sample
 * drains, after the sample's own accounting (its time would read as a slow
 * handler: throttling) and on a stack it knows has room; a sample that comes
 * meanwhile is taken as usual (the ring has one writer, this thread). Its
 * CPU time is sonde's: added to what [sonde] samples stand for (the
 * handler's own estimate is capped for a sample's work, not a drain's), as the
 * sampling clock counts it. */
/* The thread's time as its cpu-time source counts it: the perf_event task clock
 * (user mode only) where it has one, else cpu_ns, its CPU clock (0: unread). */
static uint64_t source_clock_sigsafe(const struct sd_thread *t, uint64_t cpu_ns)
{
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		uint64_t v;
		if (sd_source_ops_of(&sd_rt.cfg.sources[i])->cpu_clock && t->src_fd[i] >= 0 &&
		    sd_sys_read(t->src_fd[i], &v, sizeof v) == (ssize_t)sizeof v)
			return v;
	}
	return cpu_ns;
}

static void drain_sigsafe(struct sd_thread *t)
{
	if (t->in_dl || !sd_writer_drain_due_sigsafe(t->ring) || !drain_room_sigsafe(t))
		return;
	/* the drain's time as the sampling clock saw it (its system calls are not
	 * in a user-mode clock, nor in the samples that stand for it) */
	uint64_t c0 = 0, c1 = 0;
	int cpu = sd_own_cpu_ns_sigsafe(&c0) == 0;
	uint64_t a = source_clock_sigsafe(t, c0);
	sd_writer_drain_sigsafe(t->ring);
	cpu = cpu && sd_own_cpu_ns_sigsafe(&c1) == 0;
	uint64_t b = source_clock_sigsafe(t, cpu ? c1 : 0);
	if (a && b >= a)
		t->self_ns += b - a;
	/* nor is it the samples' cost the throttle weighs per window (on the
	 * thread's whole CPU clock) */
	if (cpu && c1 >= c0)
		for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
			if (t->win_cpu_ns[i])
				t->win_cpu_ns[i] += c1 - c0;
}

/* Once the program uses alternate stacks, its SA_ONSTACK handlers are
 * installed with the flag (interpose/signals.c): in a thread that has sonde's stack
 * and none of the program's, they would run on sonde's. Such a thread
 * switches sonde's off at its next sample, through the context sigreturn
 * restores (uc_stack: sonde's stack is SS_AUTODISARM, without which a
 * handler running on it cannot change it), unless the sample interrupted
 * code on that very stack. Threads begun later get none. async-signal-safe. */
static void altstack_off_sigsafe(struct sd_thread *t, void *ucv)
{
	if (!t->alt_lo || t->alt_off || t->prog_alt ||
	    !atomic_load_explicit(&sd_rt.prog_alt_any, memory_order_acquire))
		return;
	ucontext_t *uc = ucv;
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	if (sp >= t->alt_lo && sp < t->alt_lo + t->alt_bytes)
		return;
	uc->uc_stack.ss_sp = NULL;
	uc->uc_stack.ss_size = 0;
	uc->uc_stack.ss_flags = SS_DISABLE;
	t->alt_off = 1;
}

/* A thread alive before sonde started, found by tid: its record adopted
 * (sd_tls_thread) at its first sample; NULL if none. async-signal-safe. */
static struct sd_thread *adopted_sigsafe(void)
{
	pid_t tid = gettid_sigsafe();
	int n = atomic_load_explicit(&sd_rt.nadopted, memory_order_acquire);
	for (int i = 0; i < n; i++)
		if (sd_rt.adopted[i]->tid == tid) {
			sd_tls_thread = sd_rt.adopted[i];
			return sd_rt.adopted[i];
		}
	return NULL;
}

/* d ns spent in this sample's handler: sonde's own time, counted by the
 * thread's clock as the program's (sd_thread.self_ns). async-signal-safe. */
static void self_time_sigsafe(struct sd_thread *t, uint64_t d)
{
	/* Elapsed, not CPU, time (the thread's CPU clock is a system call): a
	 * handler preempted on a busy machine reads long, and a thread's first
	 * samples meet cold caches. So the first four are left out (the
	 * caller's warm check), and each counts at most 4 times the least any
	 * thread took: sonde's time is rather under- than over-counted, and
	 * never takes a sample from the program's code that was its own (600
	 * threads on 2 CPUs: [sonde] read 69 % with a cap per thread). */
	uint64_t least = atomic_load_explicit(&sd_rt.self_min_ns, memory_order_relaxed);
	while ((!least || d < least) &&
	       !atomic_compare_exchange_weak_explicit(&sd_rt.self_min_ns, &least, d,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
	if (!least || d < least)
		least = d;
	t->self_ns += d < 4 * least ? d : 4 * least;
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

	if (!t && !sent_by_user_sigsafe(si)) {
		t = adopted_sigsafe();
		if (!t) {
			sd_writer_drop_global_sigsafe(SD_DROP_NO_THREAD);
			goto out;
		}
	}
	int src = source_of_sigsafe(t, si);
	if (src == SRC_STALE)
		goto out;
	if (src < 0) {
		/* Not ours: the program's, delivered as if sonde were absent. */
		errno = saved_errno;
		sd_signal_forward_sigsafe(sig, si, ucv);
		return;
	}
	if (sd_writer_discarding_sigsafe()) {
		/* nothing can be written (said once): this thread samples no more */
		sd_sources_disable_sigsafe(t);
		altstack_off_sigsafe(t, ucv);
		goto out;
	}
	uint64_t t0 = sd_now_ns_sigsafe();
	int overrun = si->si_code == SI_TIMER && si->si_overrun > 0;
	uint32_t weight = 1;
	if (overrun)
		weight += (uint32_t)si->si_overrun;
	if (t->mult[src] > 1)
		weight *= t->mult[src];
	/* The full period first: a cold first sample (an unwinder cache being
	 * made) lasts longer than a short first phase, and the clock would
	 * overflow again meanwhile, queueing signals that each count a period. */
	int first = t->phase[src];
	if (first)
		sd_handler_phase_done_sigsafe(t, src);
	/* sonde's own time: the thread's clock counts the handler's time as
	 * the program's, and the next overflow lands in the program's code.
	 * Once the handler has used the time this sample stands for, the
	 * sample is charged to [sonde] instead (not unwound): the program's
	 * samples then stand for the program's time, sonde's for its own. */
	const struct sd_source *so = &sd_rt.cfg.sources[src];
	uint64_t stands = sd_source_ops_of(so)->timed ? (uint64_t)weight * so->period_ns : 0;
	if (stands && t->self_ns >= stands) {
		t->self_ns -= stands;
		sd_handler_take_self_sigsafe(t, src, weight);
	} else {
		sd_handler_take_sigsafe(t, src, weight, uc);
	}
	uint64_t end = sd_now_ns_sigsafe();
	if (end > t0 && stands && t->warm >= 4)
		self_time_sigsafe(t, end - t0);
	if (!first && !t->busy)
		throttle_check_sigsafe(t, src, t0, end);
	if (!t->busy)
		drain_sigsafe(t);
	altstack_off_sigsafe(t, ucv);
out:
	errno = saved_errno;
}

/* SIGIO. The kernel sends it (si_code SI_KERNEL) when a perf_event signal
 * could not be queued because the real-time queue is full: with the default
 * action that would kill the program. Those are counted and swallowed; any
 * other SIGIO goes to the program. async-signal-safe. */
void sd_handler_sigio(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct sd_thread *t = sd_tls_thread;
	int app_handles = sd_rt.app_action_set[SIGIO] &&
			  ((sd_rt.app_action[SIGIO].sa_flags & SA_SIGINFO) ||
			   (sd_rt.app_action[SIGIO].sa_handler != SIG_DFL &&
			    sd_rt.app_action[SIGIO].sa_handler != SIG_IGN));
	if (si->si_code == SI_KERNEL && !app_handles) {
		if (t)
			sd_ring_drop_sigsafe(t->ring, SD_DROP_QUEUE_OVERFLOW);
		else
			sd_writer_drop_global_sigsafe(SD_DROP_QUEUE_OVERFLOW);
		errno = saved_errno;
		return;
	}
	errno = saved_errno;
	sd_signal_forward_sigsafe(sig, si, ucv);
}

/* The primary source's sample rec (committed, weight periods) also counts
 * toward the derived source: a copy of it (same stack and context, no
 * counter deltas: those belong to rec) each time the derived period is
 * reached. The copy is reserved after rec, so rec is intact. async-signal-safe. */
static void derive_sigsafe(struct sd_thread *t, const struct sd_rec *rec, uint32_t weight)
{
	int d = sd_rt.derived_src;
	uint64_t pd = sd_rt.cfg.sources[d].period_ns;
	t->derived_acc_ns += (uint64_t)weight * sd_rt.cfg.sources[sd_rt.primary_src].period_ns;
	if (!pd || t->derived_acc_ns < pd)
		return;
	uint64_t k = t->derived_acc_ns / pd;
	t->derived_acc_ns -= k * pd;
	struct sd_rec *c = sd_ring_reserve_sigsafe(t->ring);
	if (!c) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_RING_FULL);
		return;
	}
	memcpy(c, rec, sizeof *rec + rec->depth * sizeof rec->pcs[0]);
	c->source = (uint8_t)d;
	c->weight = (uint32_t)(k > UINT32_MAX ? UINT32_MAX : k);
	c->ncounters = 0;
	sd_ring_commit_sigsafe(t->ring, c);
	if (d == sd_rt.wall_src)
		atomic_fetch_add_explicit(&t->ring->wall_periods, c->weight, memory_order_relaxed);
}

/* Takes one sample of source `src` on thread t, interrupted at context uc.
 * Called by sonde's own signal handler and by PAPI's overflow dispatch.
 * async-signal-safe. */
static void take_sigsafe(struct sd_thread *t, int src, uint32_t weight, const ucontext_t *uc,
			 int self);

void sd_handler_take_sigsafe(struct sd_thread *t, int src, uint32_t weight, const ucontext_t *uc)
{
	take_sigsafe(t, src, weight, uc, 0);
}

void sd_handler_take_self_sigsafe(struct sd_thread *t, int src, uint32_t weight)
{
	take_sigsafe(t, src, weight, NULL, 1);
}

/* The sample's stack into rec: [sonde] alone (self), the override's
 * pseudo-frame over the stack it took, or the interrupted context unwound.
 * async-signal-safe. */
static void record_stack_sigsafe(struct sd_thread *t, struct sd_rec *rec, const ucontext_t *uc,
				 int self)
{
	unsigned max = sd_rt.cfg.max_depth;
	if (self) {
		rec->pcs[0] = SD_PSEUDO_SONDE;
		rec->depth = 1;
		return;
	}
	if (t->ovr) {
		/* Not unwound: charged to the pseudo-frame under the stack taken
		 * where the override began (dlopen's caller, the unblocking call). */
		unsigned n = t->ovr_depth < max ? t->ovr_depth : max - 1;
		rec->pcs[0] = (uint64_t)t->ovr;
		memcpy(&rec->pcs[1], t->ovr_pcs, n * sizeof rec->pcs[0]);
		rec->depth = (uint16_t)(n + 1);
		if (t->ovr_depth >= max)
			rec->flags |= SD_FLAG_TRUNCATED;
		return;
	}
	switch (t->unwind_fp ? SD_UNWIND_FP : sd_rt.cfg.unwind) {
	case SD_UNWIND_LIBUNWIND:
		t->in_handler = 1;
		rec->depth = (uint16_t)unwind_libunwind_sigsafe(t, uc, rec->pcs, max, &rec->flags);
		t->in_handler = 0;
		break;
	case SD_UNWIND_FP: {
		uintptr_t lo = 0, hi = 0;
		stack_of_sigsafe(t, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP], &lo, &hi);
		rec->depth = (uint16_t)sd_unwind_fp_sigsafe(uc, lo, hi, 1, rec->pcs, max, &rec->flags);
		break;
	}
	default:
		rec->pcs[0] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		rec->depth = 1;
		break;
	}
}

/* The counters' deltas since the thread's last sample, after rec's stack.
 * async-signal-safe. */
static void record_counters_sigsafe(struct sd_thread *t, struct sd_rec *rec)
{
	if (sd_rt.counters.n) {
		uint64_t now[SD_MAX_COUNTERS];
		if (sd_kernel_counters_read_sigsafe(&sd_rt.counters, &t->ctr, NULL, now) == 0) {
			for (unsigned i = 0; i < sd_rt.counters.n; i++) {
				rec->pcs[rec->depth + i] = now[i] - t->ctr.last[i];
				t->ctr.last[i] = now[i];
			}
			rec->ncounters = (uint16_t)sd_rt.counters.n;
		} else {
			rec->flags |= SD_FLAG_NO_COUNTERS;
		}
	}
}

/* self: a sample of sonde's own time, [sonde] alone. */
static void take_sigsafe(struct sd_thread *t, int src, uint32_t weight, const ucontext_t *uc,
			 int self)
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
	if (t->in_dl && !t->ovr) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_IN_DL);
		goto out;
	}
	if (!stack_room_sigsafe(t)) {
		sd_ring_drop_sigsafe(t->ring, SD_DROP_STACK);
		goto out;
	}
	t->busy = 1;
	struct sd_rec *rec = sd_ring_begin_sigsafe(t->ring, SD_REC_SAMPLE, (uint8_t)src, 0, weight,
						   sd_annotate_thread_ctx_sigsafe(),
						   sd_annotate_process_ctx_sigsafe(), SD_DROP_RING_FULL);
	if (!rec) {
		t->busy = 0;
		goto out;
	}

	record_stack_sigsafe(t, rec, uc, self);
	record_counters_sigsafe(t, rec);
	sd_ring_commit_sigsafe(t->ring, rec);
	if (src == sd_rt.wall_src) /* elapsed time the writer must not account again */
		atomic_fetch_add_explicit(&t->ring->wall_periods, weight, memory_order_relaxed);
	if (src == sd_rt.primary_src && sd_rt.derived_src >= 0)
		derive_sigsafe(t, rec, weight);
	t->busy = 0;
out:
	errno = saved_errno;
}

unsigned sd_handler_stack_here(struct sd_thread *t, uint64_t *pcs, unsigned max)
{
	if (sd_rt.cfg.unwind != SD_UNWIND_LIBUNWIND || t->unwind_fp)
		return 0;
	t->in_handler = 1; /* dl_iterate_phdr from the snapshot, libunwind's pipe ours */
	int n = unw_backtrace((void **)pcs, (int)max);
	t->in_handler = 0;
	return n > 0 ? (unsigned)n : 0;
}

int sd_handler_ovr_begin(struct sd_thread *t, unsigned pseudo)
{
	if (!t || t->ovr || t->busy)
		return 0;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	/* max frames (one more than a sample keeps under the pseudo-frame): a
	 * full buffer says the stack was cut */
	t->ovr_depth = sd_handler_stack_here(t, t->ovr_pcs, sd_rt.cfg.max_depth);
	t->ovr = (sig_atomic_t)pseudo;
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
	return 1;
}

void sd_handler_ovr_end(struct sd_thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->ovr = 0;
}
