/* interpose.c - the libc and loader entry points sonde wraps.
 *
 * These run in the program's threads, in ordinary context (close() and
 * sigaction() may also be called from the program's own signal handlers: their
 * wrappers stay async-signal-safe on the path the program takes). Each one
 * forwards to the real function, found with dlsym(RTLD_NEXT) at start, and
 * never changes what the program observes:
 *
 *   pthread_create    every new thread is set up at birth and torn down at exit;
 *                     the program's second task starts sonde's writer thread
 *   clone             CLONE_VM: the same (writer/writer.c, single thread)
 *   dlopen/dlclose    the module map and the handler's loader snapshot follow
 *   dl_iterate_phdr   inside a sample, served from the snapshot: no loader lock
 *   exec*             the stream is flushed first; resumed if exec fails
 *   _exit/_Exit       the stream is completed first
 *   fork/posix_spawn  the child's pid is recorded (CHILD), and how the
 *   wait*             program saw it end when it reaps it: a child that
 *                     leaves no stream is still known to the report
 *   fork/posix_spawn, refused with EAGAIN (RLIMIT_NPROC): sonde's writer
 *   pthread_create    threads give their slots back and the call is made
 *                     once more (writer/slots.c)
 *   chroot, unshare,  the stream file is made first and the output
 *   setns             directory kept open, so no stream goes into a jail
 *   close/closefrom   sonde's descriptors (and libunwind's pipe, see pipe2)
 *                     are spared: their numbers are never reused under us
 *   dup2/dup3         onto a sonde descriptor: honoured, sonde opens anew
 *   syscall           SYS_close and SYS_close_range go through the wrappers
 *                     above; system calls that wait are noted as below
 *   blocking calls    sleeps, event waits, locks, condition variables,
 *                     barriers, joins, reads and waits for children note
 *                     where and for how long the thread waits (wall-time)
 *   read/write        inside the handler (libunwind validating an address
 *                     through its pipe), only that pipe is read or written:
 *                     never a number a raw close_range freed and the
 *                     program reused (tasks.c); under valgrind the address
 *                     is read through the kernel instead of written
 *   sigaction/signal  the sampling signal stays sonde's; SIGTERM/SIGINT/SIGHUP
 *                     flush-then-default handlers stay invisible
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"
#include "include/sonde.h"
#include "sampler/sampler.h"
#include "mem/mem.h"


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
DECL(int, sigaltstack, (const stack_t *, stack_t *));
DECL(int, pthread_sigmask, (int, const sigset_t *, sigset_t *));
DECL(int, sigprocmask, (int, const sigset_t *, sigset_t *));
DECL(long, syscall, (long, ...));
DECL(ssize_t, read, (int, void *, size_t));
DECL(ssize_t, write, (int, const void *, size_t));
DECL(pid_t, fork, (void));
DECL(int, clone, (int (*)(void *), void *, int, void *, ...));
DECL(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]));
DECL(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *,
			 const posix_spawnattr_t *, char *const[], char *const[]));
DECL(int, chroot, (const char *));
DECL(int, unshare, (int));
DECL(int, setns, (int, int));
DECL(int, timer_create, (clockid_t, struct sigevent *, timer_t *));

static void blk_resolve(void);
static void blk_self_init(void);
static int blk_enter(void *ra, void *fp, void *fn);
static void blk_leave(int on);
static int blk_syscall(long no, long op);

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
	RESOLVE(sigaltstack);
	RESOLVE(pthread_sigmask);
	RESOLVE(sigprocmask);
	blk_resolve();
	blk_self_init();
	RESOLVE(syscall);
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(fork);
	RESOLVE(posix_spawn);
	RESOLVE(posix_spawnp);
	RESOLVE(chroot);
	RESOLVE(unshare);
	RESOLVE(setns);
	RESOLVE(timer_create);
	RESOLVE(clone);
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

/* The program's call that makes a task (fork, posix_spawn, pthread_create)
 * was refused with EAGAIN: 1 when sonde's writer threads gave their slots
 * back and the call should be made once more (*round counts the tries;
 * writer/slots.c). errno kept. async-signal-safe. */
static int slots_given_back(unsigned *round)
{
	return running() && our_process() && sd_writer_slots_retry_sigsafe(round);
}

/* ---- threads ------------------------------------------------------------ */

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
	sd_loader_changed(t0);
}

/* Inside dlopen/dlclose (and sonde's bookkeeping after them, with signals
 * blocked) samples are not unwound (the loader may be half-way through a
 * change): they are charged to [dlopen/dlclose] under the caller's stack,
 * taken here. */
static int dl_begin(struct sd_thread *t)
{
	if (!t)
		return 0;
	int ovr = running() && our_process() ? sd_handler_ovr_begin(t, SD_PSEUDO_DL) : 0;
	t->in_dl++;
	return ovr;
}

static void dl_end(struct sd_thread *t, int ovr)
{
	if (!t)
		return;
	t->in_dl--;
	if (ovr)
		sd_handler_ovr_end(t);
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
	/* On the stack when it fits (it usually does): out of memory, the
	 * real dlopen would search sonde's paths, not the caller's, and fail
	 * the program's dlopen of a library only its DT_RUNPATH finds. */
	union {
		Dl_serinfo si;
		char bytes[1024];
	} small;
	Dl_serinfo *si = size.dls_size <= sizeof small ? &small.si : sd_mem_alloc(size.dls_size);
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
	if (si != &small.si)
		sd_mem_free(si);
	return found;
}

SONDE_API void *dlopen(const char *file, int mode)
{
	RESOLVE(dlopen);
	struct sd_thread *t = sd_tls_thread;
	char buf[PATH_MAX];
	const char *path = resolve_for_caller(file, __builtin_return_address(0), buf, sizeof buf);
	uint64_t t0 = sd_now_ns_sigsafe();
	int ovr = dl_begin(t);
	void *h = REAL(dlopen)(path, mode);
	if (!h && path != file)
		h = REAL(dlopen)(file, mode);
	int e = errno;
	loader_changed(t0);
	dl_end(t, ovr);
	errno = e;
	return h;
}

SONDE_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	RESOLVE(dlmopen);
	struct sd_thread *t = sd_tls_thread;
	uint64_t t0 = sd_now_ns_sigsafe();
	int ovr = dl_begin(t);
	void *h = REAL(dlmopen)(lmid, file, mode);
	int e = errno;
	loader_changed(t0);
	dl_end(t, ovr);
	errno = e;
	return h;
}

SONDE_API int dlclose(void *h)
{
	RESOLVE(dlclose);
	struct sd_thread *t = sd_tls_thread;
	int ovr = dl_begin(t);
	int r = REAL(dlclose)(h);
	int e = errno;
	loader_changed(sd_now_ns_sigsafe());
	dl_end(t, ovr);
	errno = e;
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

/* glibc's clone(): a task sharing the program's memory (CLONE_VM: a thread,
 * or a child process the writer's tick accounts) is made without
 * pthread_create: sonde's writer thread starts first where a single-threaded
 * program had put it off (writer.c). The optional arguments are passed on
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
static void pin_output(void)
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
	pin_output();
	return REAL(chroot)(path);
}

SONDE_API int unshare(int flags)
{
	RESOLVE(unshare);
	pin_output();
	return REAL(unshare)(flags);
}

SONDE_API int setns(int fd, int nstype)
{
	RESOLVE(setns);
	pin_output();
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

/* ---- timers --------------------------------------------------------------- */

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

/* ---- descriptors -------------------------------------------------------- */

/* Every wrapper resolves its real function itself before calling it: a
 * library constructor that runs before sonde's (or a destructor after it)
 * calls these too. Where the real function is missing, the kernel is asked
 * directly (common/sys.h), never through an interposed name. */
int sd_real_close(int fd)
{
	RESOLVE(close);
	if (!REAL(close))
		return (int)sd_syscall(SYS_close, fd);
	return REAL(close)(fd);
}

/* libunwind's address-validation pipe, without descriptors. libunwind
 * checks an address it is not sure of by writing the byte there into a pipe
 * of its own (the kernel says EFAULT where it cannot be read), reading the
 * pipe empty first. Two descriptors for every process, below the program's
 * limit: under ulimit -n 6 a shell pipeline failed for want of them (issue
 * 19 item 4). Where this process can read its own memory through the kernel
 * (process_vm_readv, probed at start: sd_rt.vpipe), libunwind's pipe2 gets
 * two numbers no descriptor can have (above fs.nr_open's ceiling), and its
 * calls on them are answered here: the write by process_vm_readv of the
 * byte (1, or -1 and EFAULT: the answer the pipe gives), the read with
 * EAGAIN (an empty pipe), the close with 0. Not under a seccomp filter (a
 * filter may kill on process_vm_readv and allow write): at start libunwind
 * then keeps its own pipe, and a filter installed later (each check asks
 * PR_GET_SECCOMP, one system call) makes the checks go through a pipe of
 * sonde's. async-signal-safe. */
#define VPIPE_R 0x7ffffff0
#define VPIPE_W 0x7ffffff1

static int vpipe_fd_sigsafe(int fd)
{
	return fd == VPIPE_R || fd == VPIPE_W;
}

/* The byte at addr read through the kernel (process_vm_readv on this
 * process): 1 if readable, else -errno (-EFAULT: unmapped or PROT_NONE).
 * async-signal-safe. */
static long read_byte_sigsafe(uintptr_t addr, char *byte)
{
	struct iovec local = {.iov_base = byte, .iov_len = 1};
	struct iovec remote = {.iov_base = (void *)addr, .iov_len = 1};
	return sd_sys(SYS_process_vm_readv, sd_sys(SYS_getpid), &local, 1, &remote, 1, 0);
}

/* A pipe for libunwind's checks becomes sonde's: both ends above the
 * floor (outside the handler through sd_kernel_fd_high, which may raise the
 * soft limit; inside it by a plain F_DUPFD), marked and remembered. */
static void unwinder_pipe_adopt(int fds[2], int in_handler)
{
	for (int i = 0; i < 2; i++) {
		if (!in_handler) {
			fds[i] = sd_kernel_fd_high(fds[i], sd_rt.fd_floor);
		} else if (sd_rt.fd_floor > 0) {
			long hi = sd_sys(SYS_fcntl, fds[i], F_DUPFD_CLOEXEC, sd_rt.fd_floor);
			if (hi >= 0) {
				sd_sys(SYS_close, fds[i]);
				fds[i] = (int)hi;
			}
		}
		sd_runtime_fd_track_sigsafe(fds[i], 1);
		sd_tasks_fd_remember_sigsafe(fds[i]);
	}
}

/* A real pipe of sonde's for the checks, made when first needed: once the
 * program runs under a seccomp filter, which may refuse process_vm_readv
 * (or kill on it) while it allows write. Both ends above the floor, marked
 * as sonde's. async-signal-safe (system calls only). */
static _Atomic int vpipe_real[2] = {-1, -1};

static ssize_t vpipe_real_write_sigsafe(uintptr_t addr)
{
	int w = atomic_load(&vpipe_real[1]), r = atomic_load(&vpipe_real[0]);
	if (w < 0 || !sd_tasks_fd_remembered_sigsafe(w) || !sd_tasks_fd_remembered_sigsafe(r)) {
		int fds[2];
		if (sd_sys(SYS_pipe2, fds, O_CLOEXEC | O_NONBLOCK) != 0) {
			errno = EFAULT; /* unknown: taken as unreadable (the stack ends there) */
			return -1;
		}
		unwinder_pipe_adopt(fds, 1);
		atomic_store(&vpipe_real[0], fds[0]);
		atomic_store(&vpipe_real[1], fds[1]);
		r = fds[0];
		w = fds[1];
	}
	char drain[64];
	while (sd_sys(SYS_read, r, drain, sizeof drain) > 0)
		;
	long got = sd_sys(SYS_write, w, addr, 1);
	if (got == 1)
		return 1;
	errno = EFAULT; /* EFAULT, or the pipe failed: taken as unreadable */
	return -1;
}

static ssize_t vpipe_io_sigsafe(int fd, uintptr_t addr, size_t n)
{
	if (fd == VPIPE_R || n == 0) {
		errno = EAGAIN;
		return -1;
	}
	/* A seccomp filter installed since start (PR_GET_SECCOMP: 2) may
	 * refuse process_vm_readv: the pipe's own way then. */
	if (sd_sys(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) != 0)
		return vpipe_real_write_sigsafe(addr);
	char byte;
	if (read_byte_sigsafe(addr, &byte) == 1)
		return 1;
	errno = EFAULT;
	return -1;
}

/* Whether the kernel reads this process's memory for it (a seccomp filter
 * or an old kernel may refuse). At start, before libunwind's first use. */
int sd_interpose_vpipe_probe(void)
{
	static volatile char here = 1;
	if (sd_sys(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) != 0)
		return 0; /* under a seccomp filter: libunwind's own pipe */
	char byte = 0;
	return read_byte_sigsafe((uintptr_t)&here, &byte) == 1 && byte == 1;
}

/* Descriptors that are sonde's (perf events, the output file, libunwind's
 * validation pipe) are left open when the program closes them: the program
 * never opened those numbers, and closing them would let a later open() of
 * the program reuse a number that sonde (or libunwind, inside a signal
 * handler) still reads and writes (hazards B6, D4). dup2() onto one of them
 * is honoured: the program asked for that number explicitly. */
SONDE_API int close(int fd)
{
	if (vpipe_fd_sigsafe(fd))
		return 0;
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
					       : (int)sd_syscall(SYS_close_range, lo, fd - 1, flags);
		lo = fd + 1;
		if (fd == UINT_MAX)
			return r;
	}
	if (lo <= last)
		r |= REAL(close_range) ? REAL(close_range)(lo, last, flags)
				       : (int)sd_syscall(SYS_close_range, lo, last, flags);
	return r ? -1 : 0;
}

SONDE_API int close_range(unsigned first, unsigned last, int flags)
{
	RESOLVE(close_range);
	if ((flags & CLOSE_RANGE_CLOEXEC) || first > last)
		return REAL(close_range) ? REAL(close_range)(first, last, flags)
					 : (int)sd_syscall(SYS_close_range, first, last, flags);
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

/* Under valgrind, libunwind's check of an address it is not sure of (the
 * write of the byte there into its pipe, after mincore or msync) is a
 * memcheck error of the program's: "Syscall param write(buf) points to
 * unaddressable byte(s)" (the byte is below the stack pointer, or was never
 * written), and --error-exitcode changes the program's status. There the
 * byte is read through the kernel instead: process_vm_readv on this
 * process, whose remote side memcheck does not check. libunwind gets the
 * same answer, 1, or -1 and EFAULT where the byte cannot be read (unmapped,
 * PROT_NONE), and its pipe stays empty (its next read says EAGAIN, which it
 * takes as a good pipe). Returns 1 with *r set when it answered; 0 to make
 * the write after all: not libunwind's write, or the kernel refused the read
 * (a valgrind without process_vm_readv says ENOSYS). Not valgrind: the write
 * as libunwind made it (a seccomp filter that lets the program write may
 * kill it on process_vm_readv). async-signal-safe. */
static int unwinder_check_sigsafe(int fd, const void *buf, size_t n, ssize_t *r)
{
	struct sd_thread *t = sd_tls_thread;
	if (!sd_rt.under_valgrind || n != 1 || !t || !t->in_handler ||
	    !sd_tasks_fd_remembered_sigsafe(fd))
		return 0;
	char byte;
	long got = read_byte_sigsafe((uintptr_t)buf, &byte);
	if (got == 1) {
		*r = 1;
		return 1;
	}
	if (got == -EFAULT) {
		errno = EFAULT;
		*r = -1;
		return 1;
	}
	return 0;
}

SONDE_API ssize_t read(int fd, void *buf, size_t n)
{
	if (vpipe_fd_sigsafe(fd))
		return vpipe_io_sigsafe(fd, (uintptr_t)buf, n);
	if (unwinder_fd_stale_sigsafe(fd)) {
		errno = EBADF;
		return -1;
	}
	RESOLVE(read);
	int on = blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
			   (void *)REAL(read));
	ssize_t r = REAL(read)(fd, buf, n);
	blk_leave(on);
	return r;
}

SONDE_API ssize_t write(int fd, const void *buf, size_t n)
{
	if (vpipe_fd_sigsafe(fd))
		return vpipe_io_sigsafe(fd, (uintptr_t)buf, n);
	if (unwinder_fd_stale_sigsafe(fd)) {
		errno = EBADF;
		return -1;
	}
	ssize_t checked;
	if (unwinder_check_sigsafe(fd, buf, n, &checked))
		return checked;
	RESOLVE(write);
	int on = blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
			   (void *)REAL(write));
	ssize_t r = REAL(write)(fd, buf, n);
	blk_leave(on);
	return r;
}

/* The libc syscall() function: closes reach the wrappers above (a program
 * that closes every descriptor with syscall(SYS_close_range, 3, ~0U, 0) keeps
 * sonde's), and libunwind's pipe reads and writes inside our handler reach
 * only its own pipe, never a number the program reused (EBADF makes
 * libunwind open a new pipe). Six arguments are always passed on, as
 * syscall() itself does. */
/* It reads six arguments whatever the call takes, as libc's syscall() does:
 * the ones past the caller's are whatever lies in its registers and stack
 * (never used by the kernel for a call that takes fewer). AddressSanitizer
 * would see the stack reads as out of the caller's frame. */
__attribute__((no_sanitize_address)) SONDE_API long syscall(long no, ...)
{
	va_list ap;
	long a[6];
	ssize_t checked;
	va_start(ap, no);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (no) {
	case SYS_read:
	case SYS_write:
		if (vpipe_fd_sigsafe((int)a[0]))
			return vpipe_io_sigsafe((int)a[0], (uintptr_t)a[1], (size_t)a[2]);
		if (unwinder_fd_stale_sigsafe((int)a[0])) {
			errno = EBADF;
			return -1;
		}
		if (no == SYS_write &&
		    unwinder_check_sigsafe((int)a[0], (const void *)a[1], (size_t)a[2], &checked))
			return checked;
		break;
	case SYS_exit_group:
		/* the process ends with no libc exit path: the stream is
		 * completed first, as for _exit */
		if (running() && our_process())
			sd_runtime_stop("_exit", 0);
		break;
	case SYS_chroot:
	case SYS_pivot_root:
	case SYS_unshare:
	case SYS_setns:
		pin_output();
		break;
	case SYS_timer_create:
		RESOLVE(syscall);
		if (REAL(syscall) && running() && our_process()) {
			long r;
			while ((r = REAL(syscall)(no, a[0], a[1], a[2], a[3], a[4], a[5])) != 0 &&
			       errno == EAGAIN && sd_runtime_timer_yield())
				;
			return r;
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
	if (!REAL(syscall))
		return sd_syscall(no, a[0], a[1], a[2], a[3], a[4], a[5]);
	int on = blk_syscall(no, a[1]) && blk_enter(__builtin_return_address(0),
						    __builtin_frame_address(0),
						    (void *)REAL(syscall));
	long r = REAL(syscall)(no, a[0], a[1], a[2], a[3], a[4], a[5]);
	blk_leave(on);
	return r;
}

/* libunwind opens a pipe to validate addresses, when it initialises and
 * again from inside our signal handler when it finds it closed. Moved high
 * and marked as sonde's, like our own descriptors. */
SONDE_API int pipe2(int fds[2], int flags)
{
	struct sd_thread *t = sd_tls_thread;
	int libunwind = (t && t->in_handler) || atomic_load(&sd_rt.unwind_init);
	if (libunwind && sd_rt.vpipe) {
		fds[0] = VPIPE_R;
		fds[1] = VPIPE_W;
		return 0;
	}
	RESOLVE(pipe2);
	int r = REAL(pipe2)(fds, flags);
	if (r == 0 && libunwind && sd_rt.fd_floor > 0)
		unwinder_pipe_adopt(fds, t && t->in_handler);
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

void sd_handler_entry_note(int sig, const struct sigaction *act)
{
	if (!act || sig <= 0 || sig >= 65)
		return;
	uintptr_t pc = (act->sa_flags & SA_SIGINFO) ? (uintptr_t)act->sa_sigaction
						     : (uintptr_t)act->sa_handler;
	if (pc != (uintptr_t)SIG_DFL && pc != (uintptr_t)SIG_IGN)
		atomic_store_explicit(&sd_rt.handler_entry[sig], pc, memory_order_relaxed);
}

int sd_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	RESOLVE(sigaction);
	return REAL(sigaction)(sig, act, old);
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

int sd_real_sigaltstack(const stack_t *ss, stack_t *old)
{
	RESOLVE(sigaltstack);
	return REAL(sigaltstack) ? REAL(sigaltstack)(ss, old) : (int)sd_syscall(SYS_sigaltstack, ss, old);
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

int sd_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(pthread_sigmask);
	if (!REAL(pthread_sigmask))
		return (int)sd_syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) ? errno : 0;
	return REAL(pthread_sigmask)(how, set, old);
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

/* ---- blocking calls (wall-time) ------------------------------------------ */

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

static int blk_wanted(void *ra)
{
	return sd_rt.wall_src >= 0 && (uintptr_t)ra - self_lo >= self_len && running();
}

static int blk_enter(void *ra, void *fp, void *fn)
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

static void blk_leave(int on)
{
	if (!on)
		return;
	struct sd_thread *t = sd_tls_thread;
	if (!t)
		return;
	int e = errno;
	struct sd_ring *r = t->ring;
	uint64_t now = sd_now_ns_sigsafe();
	if (now > r->blk_t0)
		atomic_fetch_add_explicit(&r->blk_done_ns[atomic_load_explicit(&r->blk_cur,
									memory_order_relaxed)],
					  now - r->blk_t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->blk_seq, 1, memory_order_release);
	errno = e;
}

/* System calls made through libc's syscall() that wait: the call is
 * recorded like a wrapped one (issue 18 item 2: a raw futex or nanosleep
 * was charged to the last sampled stack). op: the futex operation. */
static int blk_syscall(long no, long op)
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
	DECL(ret, name, params);                                               \
	SONDE_API ret name params                                              \
	{                                                                      \
		RESOLVE(name);                                                 \
		int on_ = blk_enter(__builtin_return_address(0),               \
				    __builtin_frame_address(0), (void *)REAL(name));  \
		ret r_ = REAL(name) args;                                      \
		blk_leave(on_);                                                \
		return r_;                                                     \
	}

/* A lock: tried first (TRY(arg) returns 0 or an error number, EBUSY when
 * another holds it); only a busy lock records where the thread waits. */
#define BLK_LOCK_WRAP(name, params, args, TRY, arg)                            \
	DECL(int, name, params);                                               \
	SONDE_API int name params                                              \
	{                                                                      \
		RESOLVE(name);                                                 \
		void *ra_ = __builtin_return_address(0);                       \
		if (!blk_wanted(ra_))                                          \
			return REAL(name) args;                                \
		int r_ = TRY(arg);                                             \
		if (r_ != EBUSY)                                               \
			return r_;                                             \
		int on_ = blk_enter(ra_, __builtin_frame_address(0), (void *)REAL(name)); \
		r_ = REAL(name) args;                                          \
		blk_leave(on_);                                                \
		return r_;                                                     \
	}

/* A semaphore: sem_trywait first (-1 and EAGAIN when it is 0); errno as
 * the program would see it from the call it made. */
#define BLK_SEM_WRAP(name, params, args)                                       \
	DECL(int, name, params);                                               \
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
		int on_ = blk_enter(ra_, __builtin_frame_address(0), (void *)REAL(name)); \
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
/* Waits for children: blocking calls, whose result also says how a child
 * ended (child_reaped); a status the program does not ask for is read into
 * a local. */
#define BLK_WAIT_WRAP(name, params, call)                                      \
	DECL(pid_t, name, params);                                             \
	SONDE_API pid_t name params                                            \
	{                                                                      \
		RESOLVE(name);                                                 \
		int own_;                                                      \
		int *stp_ = st ? st : &own_;                                   \
		int on_ = blk_enter(__builtin_return_address(0),               \
				    __builtin_frame_address(0), (void *)REAL(name));  \
		pid_t r_ = REAL(name) call;                                    \
		blk_leave(on_);                                                \
		if (r_ > 0)                                                    \
			child_reaped(r_, *stp_);                               \
		return r_;                                                     \
	}
BLK_WAIT_WRAP(wait, (int *st), (stp_))
BLK_WAIT_WRAP(waitpid, (pid_t p, int *st, int o), (p, stp_, o))
BLK_WAIT_WRAP(wait4, (pid_t p, int *st, int o, struct rusage *ru), (p, stp_, o, ru))

DECL(int, waitid, (idtype_t w, id_t id, siginfo_t *i, int o));
SONDE_API int waitid(idtype_t w, id_t id, siginfo_t *i, int o)
{
	RESOLVE(waitid);
	siginfo_t own;
	siginfo_t *ip = i ? i : &own;
	if (!i)
		memset(&own, 0, sizeof own);
	int on = blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
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

/* The runtime's own joins and locks (common/real.h): the real functions,
 * never the wrappers above. */
int sd_real_pthread_join(pthread_t th, void **ret)
{
	RESOLVE(pthread_join);
	return REAL(pthread_join)(th, ret);
}

int sd_real_pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	RESOLVE(pthread_timedjoin_np);
	return REAL(pthread_timedjoin_np)(th, ret, abstime);
}

int sd_real_pthread_mutex_lock(pthread_mutex_t *m)
{
	RESOLVE(pthread_mutex_lock);
	return REAL(pthread_mutex_lock)(m);
}

static void blk_resolve(void)
{
	RESOLVE(nanosleep);
	RESOLVE(clock_nanosleep);
	RESOLVE(usleep);
	RESOLVE(sleep);
	RESOLVE(poll);
	RESOLVE(ppoll);
	RESOLVE(select);
	RESOLVE(pselect);
	RESOLVE(epoll_wait);
	RESOLVE(epoll_pwait);
	RESOLVE(sigtimedwait);
	RESOLVE(sigwaitinfo);
	RESOLVE(sigwait);
	RESOLVE(sigsuspend);
	RESOLVE(pause);
	RESOLVE(sem_wait);
	RESOLVE(sem_timedwait);
	RESOLVE(sem_clockwait);
	RESOLVE(recv);
	RESOLVE(recvfrom);
	RESOLVE(recvmsg);
	RESOLVE(accept);
	RESOLVE(accept4);
	RESOLVE(wait);
	RESOLVE(waitpid);
	RESOLVE(wait4);
	RESOLVE(waitid);
	RESOLVE(pthread_join);
	RESOLVE(pthread_timedjoin_np);
	RESOLVE(pthread_clockjoin_np);
	RESOLVE(pthread_mutex_lock);
	RESOLVE(pthread_mutex_timedlock);
	RESOLVE(pthread_mutex_clocklock);
	RESOLVE(pthread_rwlock_rdlock);
	RESOLVE(pthread_rwlock_wrlock);
	RESOLVE(pthread_rwlock_timedrdlock);
	RESOLVE(pthread_rwlock_timedwrlock);
	RESOLVE(pthread_rwlock_clockrdlock);
	RESOLVE(pthread_rwlock_clockwrlock);
	RESOLVE(pthread_cond_wait);
	RESOLVE(pthread_cond_timedwait);
	RESOLVE(pthread_cond_clockwait);
	RESOLVE(pthread_barrier_wait);
	RESOLVE(sched_yield);
}
