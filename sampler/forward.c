/* forward.c - signals sonde did not send, delivered to the program's own
 * disposition as the kernel would have without sonde: its handler called
 * with its mask and flags, or its default action taken; and sonde's handler
 * of SIGTERM, SIGINT and SIGHUP (the stream flushed, then the default).
 *
 * Signal context: called from sonde's handlers (handler.c) when a signal
 * sonde holds is not its own, or the kernel's for the flush handler. async-signal-safe (system calls and the
 * program's recorded sigactions, sd_rt.app_action).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sys.h"
#include "sampler/sampler.h"

static pid_t gettid_sigsafe(void)
{
	return (pid_t)sd_syscall(SYS_gettid);
}

/* Signals whose default action is to do nothing. */
static int default_ignores_sigsafe(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

/* The process dies of sig, as it would without sonde: keep what was recorded
 * (not from a vfork or CLONE_VM child, which shares our memory: that would
 * end the parent's stream), restore the default action and send sig again,
 * same siginfo; it is blocked while we run and acts as we return.
 * async-signal-safe. */
static void die_by_default_sigsafe(int sig, siginfo_t *si)
{
	if (getpid() == sd_rt.pid)
		sd_writer_final_flush_sigsafe("signal", sig, 2000);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sd_real_sigaction(sig, &dfl, NULL);
	sd_syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid_sigsafe(), sig, si);
}

void sd_signal_forward_sigsafe(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct sigaction act;
	if (sig > 0 && sig < 65 && sd_rt.app_action_set[sig]) {
		act = sd_rt.app_action[sig];
	} else {
		memset(&act, 0, sizeof act);
		act.sa_handler = SIG_DFL;
	}
	int info = (act.sa_flags & SA_SIGINFO) != 0;
	if (!info && act.sa_handler == SIG_IGN)
		return;
	if (!info && act.sa_handler == SIG_DFL) {
		if (default_ignores_sigsafe(sig))
			return;
		die_by_default_sigsafe(sig, si);
		return;
	}
	if (act.sa_flags & SA_RESETHAND) {
		sd_rt.app_action[sig].sa_handler = SIG_DFL;
		sd_rt.app_action[sig].sa_flags &= ~SA_SIGINFO;
	}
	/* The mask the program's handler would have run with. */
	sigset_t mask = uc->uc_sigmask, old;
	sigorset(&mask, &mask, &act.sa_mask);
	if (!(act.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	sd_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, &old, _NSIG / 8);
	if (info)
		act.sa_sigaction(sig, si, ucv);
	else
		act.sa_handler(sig);
	sd_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

/* SIGTERM/SIGINT/SIGHUP while the program keeps the default disposition:
 * flush the stream (the writer thread does the work; we wait, bounded), then
 * let the default action happen. async-signal-safe. */
void sd_flush_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved_errno = errno;
	die_by_default_sigsafe(sig, si);
	errno = saved_errno;
}
