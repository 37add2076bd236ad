/* exec.c - the wrappers around the program's process changes: exec* (the
 * stream flushed first), _exit/_Exit (completed first), the children it
 * makes and reaps (fork, posix_spawn, wait*: CHILD events), and the calls
 * that change what paths name (chroot, unshare, setns)
 * (sampler/interpose/interpose.h has the index of every wrapper).
 *
 * Ordinary context of the program's threads; the wait wrappers run in its
 * SIGCHLD handlers too, and stay async-signal-safe there.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/interpose/interpose.h"

static int exec_begin(void)
{
	if (!running() || !our_process())
		return 0;
	sd_runtime_exec_prepare();
	return 1;
}

static void exec_end(int began, int saved_errno)
{
	if (began)
		sd_runtime_exec_failed();
	errno = saved_errno;
}

SONDE_API int execve(const char *path, char *const argv[], char *const envp[])
{
	RESOLVE(execve);
	int b = exec_begin();
	int r = REAL(execve)(path, argv, envp);
	exec_end(b, errno);
	return r;
}

SONDE_API int execv(const char *path, char *const argv[])
{
	RESOLVE(execv);
	int b = exec_begin();
	int r = REAL(execv)(path, argv);
	exec_end(b, errno);
	return r;
}

SONDE_API int execvp(const char *file, char *const argv[])
{
	RESOLVE(execvp);
	int b = exec_begin();
	int r = REAL(execvp)(file, argv);
	exec_end(b, errno);
	return r;
}

SONDE_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	RESOLVE(execvpe);
	int b = exec_begin();
	int r = REAL(execvpe)(file, argv, envp);
	exec_end(b, errno);
	return r;
}

SONDE_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	RESOLVE(fexecve);
	int b = exec_begin();
	int r = REAL(fexecve)(fd, argv, envp);
	exec_end(b, errno);
	return r;
}

/* execl, execlp, execle: collect the variadic list, then the v-forms. */
#define COLLECT_ARGS(arg0, ap, argv, extra)                                    \
	size_t n_ = 1;                                                         \
	va_start(ap, arg0);                                                    \
	while (va_arg(ap, char *))                                             \
		n_++;                                                          \
	va_end(ap);                                                            \
	char *argv[n_ + 1];                                                    \
	va_start(ap, arg0);                                                    \
	argv[0] = (char *)arg0;                                                \
	for (size_t i_ = 1; i_ <= n_; i_++)                                    \
		argv[i_] = va_arg(ap, char *);                                 \
	extra;                                                                 \
	va_end(ap)

SONDE_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execv(path, argv);
}

SONDE_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execvp(file, argv);
}

SONDE_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

/* ---- child processes ---------------------------------------------------- */

/* A child the program started: recorded in this process's stream (CHILD), so
 * that the report knows it even when it leaves no stream of its own (killed
 * before its first flush, a program that is not profiled). vfork is not
 * wrapped (its child shares this stack: a wrapper's frame would be gone when
 * the parent resumes); a vfork child that execs writes its own stream, whose
 * HEADER names this process as its ppid. async-signal-safe. */
static void child_started(pid_t pid, enum sd_child_event how)
{
	if (pid <= 0 || !running() || !our_process())
		return;
	int e = errno;
	sd_writer_child_sigsafe(pid, how, 0);
	errno = e;
}

/* A child the program reaped, with its wait status: how it ended. Wait
 * wrappers run in the program's SIGCHLD handlers too: async-signal-safe. */
static void child_reaped(pid_t pid, int status)
{
	if (pid <= 0 || !running() || !our_process())
		return;
	int e = errno;
	if (WIFEXITED(status))
		sd_writer_child_sigsafe(pid, SD_CHILD_EXIT, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		sd_writer_child_sigsafe(pid, SD_CHILD_SIGNAL, WTERMSIG(status));
	errno = e;
}

/* Without a writer thread (writer/slots.c) nothing drains the rings and the
 * CHILD events that forks and waits queue (1024 at most) but the program's
 * threads where sonde runs in ordinary context: after a fork or a spawn too
 * (a fork in a signal handler takes the writer's lock already, in the
 * atfork handlers). */
static void drain_if_writerless(void)
{
	if (!running() || !our_process())
		return;
	int e = errno;
	if (sd_writer_thread_wanted_due())
		sd_writer_thread_wanted();
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_writer_drain_self();
	sd_runtime_restore_signals(&old);
	errno = e;
}

SONDE_API pid_t fork(void)
{
	RESOLVE(fork);
	if (running() && our_process())
		sd_writer_rest_if_single();
	pid_t pid = REAL(fork)();
	for (unsigned round = 0; pid < 0 && errno == EAGAIN && slots_given_back(&round);)
		pid = REAL(fork)();
	if (pid > 0) {
		child_started(pid, sd_rt.cfg.follow_fork ? SD_CHILD_FORK : SD_CHILD_FORK_UNPROFILED);
		drain_if_writerless();
	}
	return pid;
}

/* A spawn that returned r with child p: recorded, and told the caller. */
static int spawned(int r, pid_t p, pid_t *pid)
{
	if (r == 0) {
		child_started(p, SD_CHILD_SPAWN);
		drain_if_writerless();
		if (pid)
			*pid = p;
	}
	return r;
}

SONDE_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	RESOLVE(posix_spawn);
	pid_t p = 0;
	int r = REAL(posix_spawn)(&p, path, fa, at, argv, envp); /* before p is read */
	for (unsigned round = 0; r == EAGAIN && slots_given_back(&round);)
		r = REAL(posix_spawn)(&p, path, fa, at, argv, envp);
	return spawned(r, p, pid);
}

SONDE_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	RESOLVE(posix_spawnp);
	pid_t p = 0;
	int r = REAL(posix_spawnp)(&p, file, fa, at, argv, envp);
	for (unsigned round = 0; r == EAGAIN && slots_given_back(&round);)
		r = REAL(posix_spawnp)(&p, file, fa, at, argv, envp);
	return spawned(r, p, pid);
}

/* The process changes what paths name (its root, its mount namespace): its
 * stream file is made first, in the real output directory, whose descriptor
 * is kept for the children it forks later (sd_writer_pin_output). */
void sd_interpose_pin_output(void)
{
	if (!running() || !our_process())
		return;
	int e = errno;
	sd_writer_pin_output();
	errno = e;
}

SONDE_API int chroot(const char *path)
{
	RESOLVE(chroot);
	sd_interpose_pin_output();
	return REAL(chroot)(path);
}

SONDE_API int unshare(int flags)
{
	RESOLVE(unshare);
	sd_interpose_pin_output();
	return REAL(unshare)(flags);
}

SONDE_API int setns(int fd, int nstype)
{
	RESOLVE(setns);
	sd_interpose_pin_output();
	return REAL(setns)(fd, nstype);
}

SONDE_API void _exit(int status)
{
	RESOLVE(_exit);
	if (running() && our_process())
		sd_runtime_stop("_exit", 0);
	REAL(_exit)(status);
}

SONDE_API void _Exit(int status)
{
	RESOLVE(_Exit);
	if (running() && our_process())
		sd_runtime_stop("_exit", 0);
	REAL(_Exit)(status);
}

/* Waits for children: blocking calls, whose result also says how a child
 * ended (child_reaped); a status the program does not ask for is read into
 * a local. */
#define BLK_WAIT_WRAP(name, params, call)                                      \
	SONDE_API pid_t name params                                            \
	{                                                                      \
		RESOLVE(name);                                                 \
		int own_;                                                      \
		int *stp_ = st ? st : &own_;                                   \
		int on_ = sd_interpose_blk_enter(__builtin_return_address(0),  \
						 __builtin_frame_address(0),   \
						 (void *)REAL(name));          \
		pid_t r_ = REAL(name) call;                                    \
		blk_leave(on_);                                                \
		if (r_ > 0)                                                    \
			child_reaped(r_, *stp_);                               \
		return r_;                                                     \
	}
BLK_WAIT_WRAP(wait, (int *st), (stp_))
BLK_WAIT_WRAP(waitpid, (pid_t p, int *st, int o), (p, stp_, o))
BLK_WAIT_WRAP(wait4, (pid_t p, int *st, int o, struct rusage *ru), (p, stp_, o, ru))

SONDE_API int waitid(idtype_t w, id_t id, siginfo_t *i, int o)
{
	RESOLVE(waitid);
	siginfo_t own;
	siginfo_t *ip = i ? i : &own;
	if (!i)
		memset(&own, 0, sizeof own);
	int on = sd_interpose_blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
					(void *)REAL(waitid));
	int r = REAL(waitid)(w, id, ip, o);
	blk_leave(on);
	if (r == 0 && ip->si_pid > 0 && !(o & WNOWAIT)) {
		if (ip->si_code == CLD_EXITED)
			child_reaped(ip->si_pid, ip->si_status << 8);
		else if (ip->si_code == CLD_KILLED || ip->si_code == CLD_DUMPED)
			child_reaped(ip->si_pid, ip->si_status & 0x7f);
	}
	return r;
}
