/* interpose.c - the libc and loader entry points sonde wraps.
 *
 * These run in the program's threads, in ordinary context (close() and
 * sigaction() may also be called from the program's own signal handlers: their
 * wrappers stay async-signal-safe on the path the program takes). Each one
 * forwards to the real function, found with dlsym(RTLD_NEXT) at start, and
 * never changes what the program observes:
 *
 *   pthread_create    every new thread is set up at birth and torn down at exit
 *   dlopen/dlclose    the module map and the handler's loader snapshot follow
 *   dl_iterate_phdr   inside a sample, served from the snapshot: no loader lock
 *   exec*             the stream is flushed first; resumed if exec fails
 *   _exit/_Exit       the stream is completed first
 *   close/closefrom   sonde's descriptors (and libunwind's pipe, see pipe2)
 *                     are spared: their numbers are never reused under us
 *   dup2/dup3         onto a sonde descriptor: honoured, sonde opens anew
 *   syscall           SYS_close and SYS_close_range go through the wrappers
 *                     above
 *   read/write        inside the handler (libunwind validating an address
 *                     through its pipe), only that pipe is read or written:
 *                     never a number a raw close_range freed and the
 *                     program reused (tasks.c)
 *   sigaction/signal  the sampling signal stays sonde's; SIGTERM/SIGINT/SIGHUP
 *                     flush-then-default handlers stay invisible
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "include/sonde.h"
#include "sampler/sampler.h"

extern __thread struct sd_thread *sd_tls_thread __attribute__((tls_model("initial-exec")));

#define REAL(name) real_##name
#define DECL(ret, name, args) static ret(*REAL(name)) args

DECL(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));
DECL(void *, dlopen, (const char *, int));
DECL(void *, dlmopen, (Lmid_t, const char *, int));
DECL(int, dlclose, (void *));
DECL(int, dl_iterate_phdr, (int (*)(struct dl_phdr_info *, size_t, void *), void *));
DECL(int, execve, (const char *, char *const[], char *const[]));
DECL(int, execv, (const char *, char *const[]));
DECL(int, execvp, (const char *, char *const[]));
DECL(int, execvpe, (const char *, char *const[], char *const[]));
DECL(int, fexecve, (int, char *const[], char *const[]));
DECL(void, _exit, (int)) __attribute__((noreturn));
DECL(void, _Exit, (int)) __attribute__((noreturn));
DECL(int, close, (int));
DECL(int, close_range, (unsigned, unsigned, int));
DECL(void, closefrom, (int));
DECL(int, dup2, (int, int));
DECL(int, pipe2, (int[2], int));
DECL(int, dup3, (int, int, int));
DECL(int, sigaction, (int, const struct sigaction *, struct sigaction *));
DECL(long, syscall, (long, ...));
DECL(ssize_t, read, (int, void *, size_t));
DECL(ssize_t, write, (int, const void *, size_t));

#define RESOLVE(name)                                                          \
	do {                                                                   \
		if (!REAL(name))                                               \
			*(void **)&REAL(name) = dlsym(RTLD_NEXT, #name);       \
	} while (0)

void sd_interpose_init(void)
{
	RESOLVE(pthread_create);
	RESOLVE(dlopen);
	RESOLVE(dlmopen);
	RESOLVE(dlclose);
	RESOLVE(dl_iterate_phdr);
	RESOLVE(execve);
	RESOLVE(execv);
	RESOLVE(execvp);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(_exit);
	RESOLVE(_Exit);
	RESOLVE(close);
	RESOLVE(close_range);
	RESOLVE(closefrom);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(pipe2);
	RESOLVE(sigaction);
	RESOLVE(syscall);
	RESOLVE(read);
	RESOLVE(write);
}

static int running(void)
{
	return atomic_load_explicit(&sd_rt.state, memory_order_relaxed) == SD_RUNNING;
}

/* In a vfork child (shared memory) or after a fork we do not follow, sonde
 * must do nothing at all. */
static int our_process(void)
{
	return sd_rt.pid != 0 && getpid() == sd_rt.pid;
}

/* ---- threads ------------------------------------------------------------ */

struct trampoline {
	void *(*fn)(void *);
	void *arg;
};

static void thread_cleanup(void *unused)
{
	(void)unused;
	sd_thread_end();
}

static void *thread_trampoline(void *p)
{
	struct trampoline tr = *(struct trampoline *)p;
	free(p);
	void *ret;
	sd_thread_begin();
	atomic_fetch_sub(&sd_rt.starting, 1); /* registered: not a foreign thread */
	pthread_cleanup_push(thread_cleanup, NULL);
	ret = tr.fn(tr.arg);
	pthread_cleanup_pop(1);
	return ret;
}

int sd_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg)
{
	RESOLVE(pthread_create);
	return REAL(pthread_create)(th, attr, fn, arg);
}

SONDE_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	RESOLVE(pthread_create);
	if (!running())
		return REAL(pthread_create)(th, attr, fn, arg);
	struct trampoline *tr = malloc(sizeof *tr);
	if (!tr)
		return REAL(pthread_create)(th, attr, fn, arg);
	tr->fn = fn;
	tr->arg = arg;
	atomic_fetch_add(&sd_rt.starting, 1);
	int err = REAL(pthread_create)(th, attr, thread_trampoline, tr);
	if (err) {
		atomic_fetch_sub(&sd_rt.starting, 1);
		free(tr);
	}
	return err;
}

/* ---- loader ------------------------------------------------------------- */

SONDE_API int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	struct sd_thread *t = sd_tls_thread;
	if (t && t->in_handler)
		return sd_phdr_snapshot_iterate_sigsafe(cb, data);
	RESOLVE(dl_iterate_phdr);
	return REAL(dl_iterate_phdr)(cb, data);
}

int sd_real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	RESOLVE(dl_iterate_phdr);
	return REAL(dl_iterate_phdr)(cb, data);
}

static void loader_changed(uint64_t t0)
{
	if (!running() || !our_process())
		return;
	sigset_t old;
	sd_runtime_block_signals(&old);
	sd_phdr_snapshot_rebuild();
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND)
		unw_flush_cache(unw_local_addr_space, 0, 0);
	sd_writer_modules_changed(t0);
	sd_runtime_restore_signals(&old);
}

/* A bare library name is searched along the *caller's* paths (its DT_RPATH
 * and DT_RUNPATH); calling the real dlopen from here would search sonde's
 * instead. So the search is done against the caller's list first. */
static const char *resolve_for_caller(const char *file, void *caller, char *buf, size_t len)
{
	if (!file || strchr(file, '/'))
		return file;
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return file;
	Dl_serinfo size;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size > 65536)
		return file;
	Dl_serinfo *si = malloc(size.dls_size);
	if (!si)
		return file;
	const char *found = file;
	*si = size;
	if (dlinfo(lm, RTLD_DI_SERINFO, si) == 0) {
		for (unsigned i = 0; i < si->dls_cnt; i++) {
			snprintf(buf, len, "%s/%s", si->dls_serpath[i].dls_name, file);
			struct stat st;
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
				found = buf;
				break;
			}
		}
	}
	free(si);
	return found;
}

SONDE_API void *dlopen(const char *file, int mode)
{
	RESOLVE(dlopen);
	struct sd_thread *t = sd_tls_thread;
	char buf[PATH_MAX];
	const char *path = resolve_for_caller(file, __builtin_return_address(0), buf, sizeof buf);
	uint64_t t0 = sd_now_ns_sigsafe();
	if (t)
		t->in_dl++;
	void *h = REAL(dlopen)(path, mode);
	if (!h && path != file)
		h = REAL(dlopen)(file, mode);
	if (t)
		t->in_dl--;
	loader_changed(t0);
	return h;
}

SONDE_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	RESOLVE(dlmopen);
	struct sd_thread *t = sd_tls_thread;
	uint64_t t0 = sd_now_ns_sigsafe();
	if (t)
		t->in_dl++;
	void *h = REAL(dlmopen)(lmid, file, mode);
	if (t)
		t->in_dl--;
	loader_changed(t0);
	return h;
}

SONDE_API int dlclose(void *h)
{
	RESOLVE(dlclose);
	struct sd_thread *t = sd_tls_thread;
	if (t)
		t->in_dl++;
	int r = REAL(dlclose)(h);
	if (t)
		t->in_dl--;
	loader_changed(sd_now_ns_sigsafe());
	return r;
}

/* ---- exec and exit ------------------------------------------------------ */

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

/* ---- descriptors -------------------------------------------------------- */

int sd_real_close(int fd)
{
	if (!REAL(close))
		return (int)syscall(SYS_close, fd);
	return REAL(close)(fd);
}

/* Descriptors that are sonde's (perf events, the output file, libunwind's
 * validation pipe) are left open when the program closes them: the program
 * never opened those numbers, and closing them would let a later open() of
 * the program reuse a number that sonde (or libunwind, inside a signal
 * handler) still reads and writes (hazards B6, D4). dup2() onto one of them
 * is honoured: the program asked for that number explicitly. */
SONDE_API int close(int fd)
{
	struct sd_thread *t = sd_tls_thread;
	if (t && t->in_handler) {
		/* Only libunwind closes inside our handler: its validation pipe,
		 * which it may believe is still at numbers a raw close_range freed
		 * and the program (or sonde) reused. Only its own pipe is closed. */
		if (!sd_tasks_fd_remembered_sigsafe(fd))
			return 0;
		sd_runtime_fd_track_sigsafe(fd, 0);
		return sd_real_close(fd);
	}
	if (sd_runtime_is_sonde_fd(fd)) {
		if (sd_tasks_fd_ours(fd))
			return 0;
		/* Closed behind our back (a raw close_range) and reused by the
		 * program: its own now. */
		sd_runtime_fd_track_sigsafe(fd, 0);
	}
	return sd_real_close(fd);
}

/* Closes [first, last] except sonde's descriptors. */
static int close_range_sparing(unsigned first, unsigned last, int flags)
{
	unsigned lo = first;
	int r = 0;
	for (unsigned fd = first; fd <= last && fd < 65536; fd++) {
		if (!sd_runtime_is_sonde_fd((int)fd))
			continue;
		if (!sd_tasks_fd_ours((int)fd)) {
			/* Closed behind our back and reused by the program: its own. */
			sd_runtime_fd_track_sigsafe((int)fd, 0);
			continue;
		}
		if (fd > lo)
			r |= REAL(close_range) ? REAL(close_range)(lo, fd - 1, flags)
					       : (int)syscall(SYS_close_range, lo, fd - 1, flags);
		lo = fd + 1;
		if (fd == UINT_MAX)
			return r;
	}
	if (lo <= last)
		r |= REAL(close_range) ? REAL(close_range)(lo, last, flags)
				       : (int)syscall(SYS_close_range, lo, last, flags);
	return r ? -1 : 0;
}

SONDE_API int close_range(unsigned first, unsigned last, int flags)
{
	RESOLVE(close_range);
	if ((flags & CLOSE_RANGE_CLOEXEC) || first > last)
		return REAL(close_range) ? REAL(close_range)(first, last, flags)
					 : (int)syscall(SYS_close_range, first, last, flags);
	return close_range_sparing(first, last, flags);
}

SONDE_API void closefrom(int lowfd)
{
	RESOLVE(close_range);
	close_range_sparing(lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
}

/* Inside our handler only libunwind reads and writes descriptors: its
 * address-validation pipe (it reads the pipe empty, then writes the byte at
 * the address). After a raw close_range its numbers may be the program's
 * pipe or file: a read there would take the program's bytes or block the
 * handler, a write would put our bytes into its file. EBADF instead makes
 * libunwind open a new pipe (pipe2 below). async-signal-safe. */
static int unwinder_fd_stale_sigsafe(int fd)
{
	struct sd_thread *t = sd_tls_thread;
	return t && t->in_handler && !sd_tasks_fd_remembered_sigsafe(fd);
}

SONDE_API ssize_t read(int fd, void *buf, size_t n)
{
	if (unwinder_fd_stale_sigsafe(fd)) {
		errno = EBADF;
		return -1;
	}
	RESOLVE(read);
	return REAL(read)(fd, buf, n);
}

SONDE_API ssize_t write(int fd, const void *buf, size_t n)
{
	if (unwinder_fd_stale_sigsafe(fd)) {
		errno = EBADF;
		return -1;
	}
	RESOLVE(write);
	return REAL(write)(fd, buf, n);
}

/* The libc syscall() function: closes reach the wrappers above (a program
 * that closes every descriptor with syscall(SYS_close_range, 3, ~0U, 0) keeps
 * sonde's), and libunwind's pipe reads and writes inside our handler reach
 * only its own pipe, never a number the program reused (EBADF makes
 * libunwind open a new pipe). Six arguments are always passed on, as
 * syscall() itself does. */
SONDE_API long syscall(long no, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, no);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (no) {
	case SYS_read:
	case SYS_write:
		if (unwinder_fd_stale_sigsafe((int)a[0])) {
			errno = EBADF;
			return -1;
		}
		break;
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]);
	default:
		break;
	}
	RESOLVE(syscall);
	return REAL(syscall)(no, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* libunwind opens a pipe to validate addresses, when it initialises and
 * again from inside our signal handler when it finds it closed. Moved high
 * and marked as sonde's, like our own descriptors. */
SONDE_API int pipe2(int fds[2], int flags)
{
	RESOLVE(pipe2);
	int r = REAL(pipe2)(fds, flags);
	struct sd_thread *t = sd_tls_thread;
	int libunwind = (t && t->in_handler) || atomic_load(&sd_rt.unwind_init);
	if (r == 0 && libunwind && sd_rt.fd_floor > 0) {
		for (int i = 0; i < 2; i++) {
			int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, sd_rt.fd_floor);
			if (hi >= 0) {
				sd_real_close(fds[i]);
				fds[i] = hi;
			}
			sd_runtime_fd_track_sigsafe(fds[i], 1);
			sd_tasks_fd_remember_sigsafe(fds[i]);
		}
	}
	return r;
}

SONDE_API int dup2(int oldfd, int newfd)
{
	RESOLVE(dup2);
	int ours = oldfd != newfd && sd_runtime_is_sonde_fd(newfd);
	if (ours)
		sd_runtime_fd_closed(newfd);
	int r = REAL(dup2)(oldfd, newfd);
	if (ours) {
		int e = errno;
		sd_runtime_fd_reopen();
		errno = e;
	}
	return r;
}

SONDE_API int dup3(int oldfd, int newfd, int flags)
{
	RESOLVE(dup3);
	int ours = oldfd != newfd && sd_runtime_is_sonde_fd(newfd);
	if (ours)
		sd_runtime_fd_closed(newfd);
	int r = REAL(dup3)(oldfd, newfd, flags);
	if (ours) {
		int e = errno;
		sd_runtime_fd_reopen();
		errno = e;
	}
	return r;
}

/* ---- signals ------------------------------------------------------------ */

int sd_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	RESOLVE(sigaction);
	return REAL(sigaction)(sig, act, old);
}

static void say_signal_taken(int sig)
{
	static _Atomic int said;
	if (atomic_exchange(&said, 1))
		return;
	char buf[160];
	int n = snprintf(buf, sizeof buf,
			 "sonde: sigaction(%d): signal used by sonde for sampling, the program's "
			 "handler is kept aside (set SONDE_SIGNAL to another signal)\n", sig);
	if (n > 0) {
		ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
		(void)w;
	}
}

SONDE_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int managed = sig > 0 && sig < 65 && sd_rt.cfg.signo > 0 && our_process() &&
		      (sig == sd_rt.cfg.signo || sd_rt.sigterm_installed[sig]);
	if (!managed)
		return sd_real_sigaction(sig, act, old);
	struct sigaction prev;
	if (sd_rt.app_action_set[sig]) {
		prev = sd_rt.app_action[sig];
	} else {
		memset(&prev, 0, sizeof prev);
		prev.sa_handler = SIG_DFL;
	}
	if (act) {
		if (sig == sd_rt.cfg.signo) {
			if (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN)
				say_signal_taken(sig);
		} else if (act->sa_handler != SIG_DFL || (act->sa_flags & SA_SIGINFO)) {
			/* The program takes over SIGTERM/...: its handler, its rules. */
			int r = sd_real_sigaction(sig, act, NULL);
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
