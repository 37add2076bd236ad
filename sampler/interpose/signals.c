/* signals.c - the wrappers of the program's signal and timer calls
 * (timer_create, sigaction, signal, sigaltstack, sigprocmask,
 * pthread_sigmask): sonde's sampling signal, its flush-then-default
 * handlers and its alternate stacks stay sonde's and invisible, the
 * program's stay as it set them (sampler/interpose/interpose.h has the
 * index of every wrapper).
 *
 * Ordinary context of the program's threads; sigaction may also be called
 * from the program's own signal handlers: its wrapper stays
 * async-signal-safe on the path the program takes.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "common/sys.h"
#include "sampler/interpose/interpose.h"

/* sonde's own timers (sources.c: its signal, a cookie value, one thread;
 * made by name so that tests/fault can fail them) pass through the wrapper
 * below untouched. */
static int timer_is_sondes(const struct sigevent *sev)
{
	return sev && sev->sigev_notify == SIGEV_THREAD_ID && sd_rt.cfg.signo > 0 &&
	       sev->sigev_signo == sd_rt.cfg.signo &&
	       (unsigned)(sev->sigev_value.sival_int - SD_TIMER_COOKIE) < SD_MAX_SOURCES;
}

/* The program's timers. Each POSIX timer holds one unit of the user's
 * RLIMIT_SIGPENDING (the kernel allocates its signal when it is made), and
 * so does each of sonde's where perf_event is refused. When the program's
 * timer_create finds the quota used up (EAGAIN) while sonde holds timers,
 * sonde gives one up (that thread is not sampled from then on, said once)
 * and the call is made again: the program never lacks a timer sonde took. */
SONDE_API int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
	RESOLVE(timer_create);
	if (!REAL(timer_create)) {
		errno = ENOSYS;
		return -1;
	}
	for (;;) {
		int r = REAL(timer_create)(clock, sev, id);
		if (r == 0 || errno != EAGAIN || !running() || !our_process() || timer_is_sondes(sev))
			return r;
		int e = errno;
		if (!sd_runtime_timer_yield()) {
			errno = e;
			return r;
		}
	}
}

/* ---- signals ------------------------------------------------------------ */

void sd_handler_entry_note(int sig, const struct sigaction *act)
{
	if (!act || sig <= 0 || sig >= 65)
		return;
	uintptr_t pc = (act->sa_flags & SA_SIGINFO) ? (uintptr_t)act->sa_sigaction
						     : (uintptr_t)act->sa_handler;
	if (pc != (uintptr_t)SIG_DFL && pc != (uintptr_t)SIG_IGN)
		atomic_store_explicit(&sd_rt.handler_entry[sig], pc, memory_order_relaxed);
}

/* A handler of the program's with SA_ONSTACK runs on the alternate stack of
 * the thread it interrupts, and on the thread's own stack where there is
 * none. sonde gives every thread one: until the program sets one itself (in
 * any thread), its handlers are installed without SA_ONSTACK, and the
 * program is told the flag it asked for. A 200 KiB handler then ran on
 * sonde's 64 KiB stack and died; a SIGSEGV handler meant to fail on stack
 * overflow ran. */
static int onstack_install(int sig, const struct sigaction *act, struct sigaction *old)
{
	int held = sig > 0 && sig < 65 &&
		   atomic_load_explicit(&sd_rt.onstack_held[sig], memory_order_relaxed);
	if (!act || !(act->sa_flags & SA_ONSTACK) || sig <= 0 || sig >= 65 ||
	    atomic_load_explicit(&sd_rt.prog_alt_any, memory_order_acquire) || !our_process()) {
		int r = sd_real_sigaction(sig, act, old);
		if (r == 0 && act && held)
			atomic_store_explicit(&sd_rt.onstack_held[sig], 0, memory_order_relaxed);
		if (r == 0 && old && held)
			old->sa_flags |= SA_ONSTACK;
		return r;
	}
	struct sigaction a = *act;
	a.sa_flags &= ~SA_ONSTACK;
	int r = sd_real_sigaction(sig, &a, old);
	if (r != 0)
		return r;
	atomic_store_explicit(&sd_rt.onstack_held[sig], 1, memory_order_relaxed);
	if (old && held)
		old->sa_flags |= SA_ONSTACK;
	return 0;
}

/* The program sets its first alternate stack: its handlers get SA_ONSTACK
 * back, and threads begun from now on get no stack of sonde's. */
static void onstack_release(void)
{
	if (atomic_exchange_explicit(&sd_rt.prog_alt_any, 1, memory_order_acq_rel))
		return;
	for (int sig = 1; sig < 65; sig++) {
		if (!atomic_exchange_explicit(&sd_rt.onstack_held[sig], 0, memory_order_relaxed))
			continue;
		struct sigaction cur;
		if (sd_real_sigaction(sig, NULL, &cur) != 0)
			continue;
		cur.sa_flags |= SA_ONSTACK;
		sd_real_sigaction(sig, &cur, NULL);
	}
}

SONDE_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sd_handler_entry_note(sig, act);
	int managed = sig > 0 && sig < 65 && sd_rt.cfg.signo > 0 && our_process() &&
		      (sig == sd_rt.cfg.signo || sd_rt.sigterm_installed[sig] ||
		       (sig == SIGIO && sd_rt.sigio_installed));
	if (!managed)
		return onstack_install(sig, act, old);
	struct sigaction prev;
	if (sd_rt.app_action_set[sig]) {
		prev = sd_rt.app_action[sig];
	} else {
		memset(&prev, 0, sizeof prev);
		prev.sa_handler = SIG_DFL;
	}
	if (act) {
		if (sig == sd_rt.cfg.signo || sig == SIGIO) {
			/* Kept: sonde's handler delivers every signal it did not
			 * send to this action (handler.c). */
		} else if (act->sa_handler != SIG_DFL || (act->sa_flags & SA_SIGINFO)) {
			/* The program takes over SIGTERM/...: its handler, its rules. */
			int r = onstack_install(sig, act, NULL);
			if (r != 0)
				return r;
			sd_rt.sigterm_installed[sig] = 0;
		}
		sd_rt.app_action[sig] = *act;
		sd_rt.app_action_set[sig] = 1;
	}
	if (old)
		*old = prev;
	return 0;
}

/* The program's alternate signal stack is the program's: while it has set
 * none, it sees none (sonde's own is hidden); when it sets one, that one is
 * installed for real (its SA_ONSTACK handlers run where it expects, and so
 * do sonde's samples, which check the room left); when it disables it,
 * sonde's comes back. */
SONDE_API int sigaltstack(const stack_t *ss, stack_t *old)
{
	struct sd_thread *t = sd_tls_thread;
	if (ss && !(ss->ss_flags & SS_DISABLE))
		onstack_release();
	if (!t || !t->alt_lo || t->alt_off || !our_process())
		return sd_real_sigaltstack(ss, old);
	stack_t prev;
	if (t->prog_alt) {
		if (sd_real_sigaltstack(NULL, &prev) != 0)
			return -1;
	} else {
		prev.ss_sp = NULL;
		prev.ss_size = 0;
		prev.ss_flags = SS_DISABLE;
	}
	if (ss) {
		if (ss->ss_flags & SS_DISABLE) {
			stack_t mine = {.ss_sp = (void *)t->alt_lo, .ss_size = t->alt_bytes,
					.ss_flags = SD_SS_AUTODISARM};
			if (t->prog_alt && sd_real_sigaltstack(&mine, NULL) != 0)
				return -1;
			t->prog_alt = 0;
		} else {
			if (ss->ss_size < (size_t)MINSIGSTKSZ) {
				errno = ENOMEM;
				return -1;
			}
			if (sd_real_sigaltstack(ss, NULL) != 0)
				return -1;
			t->prog_alt_lo = (uintptr_t)ss->ss_sp;
			t->prog_alt_hi = (uintptr_t)ss->ss_sp + ss->ss_size;
			t->prog_alt = 1;
		}
	}
	if (old)
		*old = prev;
	return 0;
}

/* The program unblocks sonde's signal while samples are queued: the kernel
 * delivers them all as the call returns, and each would be charged to the
 * unblocking call. They stand for time the thread ran with the signal
 * blocked, somewhere below its caller: they are charged to
 * [signals blocked] under the caller's stack instead. Costs one
 * rt_sigpending only when the call unblocks sonde's signal. */
static int late_begin(int how, const sigset_t *set)
{
	struct sd_thread *t = sd_tls_thread;
	if (!set || !t || t->busy || t->ovr || !running() || !our_process())
		return 0;
	int sig = sd_rt.cfg.signo;
	int unblocks = (how == SIG_UNBLOCK && sigismember(set, sig) == 1) ||
		       (how == SIG_SETMASK && sigismember(set, sig) == 0);
	if (!unblocks)
		return 0;
	sigset_t p;
	if (sd_syscall(SYS_rt_sigpending, &p, _NSIG / 8) != 0 || sigismember(&p, sig) != 1)
		return 0;
	return sd_handler_ovr_begin(t, SD_PSEUDO_SIGNALS_BLOCKED);
}

static void late_end(int on)
{
	if (on)
		sd_handler_ovr_end(sd_tls_thread);
}

/* After the program changed its mask from `was` with (how, set): while it
 * keeps sonde's signal blocked, the thread's sources are paused (no signal
 * piles up in the kernel's queue, which is per user and shared with every
 * other process of that user), and the CPU time it runs meanwhile is charged
 * to [signals blocked] when it unblocks (runtime.c). */
static void mask_changed(int how, const sigset_t *set, const sigset_t *was, void *ra, void *fp)
{
	struct sd_thread *t = sd_tls_thread;
	if (!set || !t || t->busy || !running() || !our_process())
		return;
	int sig = sd_rt.cfg.signo;
	int before = sigismember(was, sig) == 1;
	int after = how == SIG_BLOCK	 ? before || sigismember(set, sig) == 1
		    : how == SIG_UNBLOCK ? before && sigismember(set, sig) != 1
					 : sigismember(set, sig) == 1;
	if (!before && after)
		sd_thread_pause(t, ra, fp);
	else if (before && !after)
		sd_thread_resume(t);
}

static int mask_call(int (*fn)(int, const sigset_t *, sigset_t *), int how, const sigset_t *set,
		     sigset_t *old, void *ra, void *fp)
{
	sigset_t was;
	int on = late_begin(how, set);
	int r = fn(how, set, &was);
	int e = errno;
	late_end(on);
	if (r == 0) {
		mask_changed(how, set, &was, ra, fp);
		if (old)
			*old = was;
	}
	errno = e;
	return r;
}

SONDE_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(pthread_sigmask);
	return mask_call(REAL(pthread_sigmask), how, set, old, __builtin_return_address(0),
			 __builtin_frame_address(0));
}

SONDE_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(sigprocmask);
	return mask_call(REAL(sigprocmask), how, set, old, __builtin_return_address(0),
			 __builtin_frame_address(0));
}

SONDE_API sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
