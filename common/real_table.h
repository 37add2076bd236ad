/* real_table.h - the real functions behind libsonde's wrappers: one pointer
 * each, in one table (common/real.c), for the wrappers of sampler/interpose/
 * only. The rest of the runtime calls the few it needs through the
 * sd_real_* functions of common/real.h.
 *
 * A wrapper resolves the pointer of the function it wraps before every call
 * (SD_REAL_RESOLVE: a load and a test once resolved; dlsym(RTLD_NEXT) the
 * first time), since a library constructor that runs before sonde's (or a
 * destructor after it) calls the wrappers too; then calls through it
 * (SD_REAL: one indirect call, as libc's own PLT would make). A pointer
 * stays NULL where the C library lacks the function (closefrom,
 * close_range, pthread_clockjoin_np on an old glibc); each wrapper says what
 * it does then. The table is written once per entry (the same value from
 * every thread that races to resolve it) and read everywhere after.
 *
 * Includers define _GNU_SOURCE before their first #include, as every
 * runtime file does: Lmid_t, the *_np and clock* functions need it.
 */
#ifndef SONDE_REAL_TABLE_H
#define SONDE_REAL_TABLE_H

#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* X(return type, name, parameter types): every function libsonde wraps and
 * passes on to the real one. */
#define SD_REAL_FUNCTIONS(X)                                                   \
	/* threads, loader (sampler/interpose/threads.c, dl.c) */              \
	X(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
	X(int, clone, (int (*)(void *), void *, int, void *, ...))             \
	X(void *, dlopen, (const char *, int))                                 \
	X(void *, dlmopen, (Lmid_t, const char *, int))                        \
	X(int, dlclose, (void *))                                              \
	X(int, dl_iterate_phdr, (int (*)(struct dl_phdr_info *, size_t, void *), void *)) \
	/* exec, exit, children (exec.c) */                                    \
	X(int, execve, (const char *, char *const[], char *const[]))           \
	X(int, execv, (const char *, char *const[]))                           \
	X(int, execvp, (const char *, char *const[]))                          \
	X(int, execvpe, (const char *, char *const[], char *const[]))          \
	X(int, fexecve, (int, char *const[], char *const[]))                   \
	X(pid_t, fork, (void))                                                 \
	X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			     const posix_spawnattr_t *, char *const[], char *const[])) \
	X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			      const posix_spawnattr_t *, char *const[], char *const[])) \
	X(pid_t, wait, (int *))                                                \
	X(pid_t, waitpid, (pid_t, int *, int))                                 \
	X(pid_t, wait4, (pid_t, int *, int, struct rusage *))                  \
	X(int, waitid, (idtype_t, id_t, siginfo_t *, int))                     \
	X(int, chroot, (const char *))                                         \
	X(int, unshare, (int))                                                 \
	X(int, setns, (int, int))                                              \
	/* descriptors (fds.c) */                                              \
	X(int, close, (int))                                                   \
	X(int, close_range, (unsigned, unsigned, int))                         \
	X(void, closefrom, (int))                                              \
	X(int, dup2, (int, int))                                               \
	X(int, dup3, (int, int, int))                                          \
	X(int, pipe2, (int[2], int))                                           \
	X(ssize_t, read, (int, void *, size_t))                                \
	X(ssize_t, write, (int, const void *, size_t))                         \
	X(long, syscall, (long, ...))                                          \
	/* signals, timers (signals.c) */                                      \
	X(int, sigaction, (int, const struct sigaction *, struct sigaction *)) \
	X(int, sigaltstack, (const stack_t *, stack_t *))                      \
	X(int, pthread_sigmask, (int, const sigset_t *, sigset_t *))           \
	X(int, sigprocmask, (int, const sigset_t *, sigset_t *))               \
	X(int, timer_create, (clockid_t, struct sigevent *, timer_t *))        \
	/* blocking calls (blocking.c) */                                      \
	X(int, nanosleep, (const struct timespec *, struct timespec *))        \
	X(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *)) \
	X(int, usleep, (useconds_t))                                           \
	X(unsigned, sleep, (unsigned))                                         \
	X(int, poll, (struct pollfd *, nfds_t, int))                           \
	X(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *)) \
	X(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *))  \
	X(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *, \
			 const sigset_t *))                                    \
	X(int, epoll_wait, (int, struct epoll_event *, int, int))              \
	X(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *)) \
	X(int, sigtimedwait, (const sigset_t *, siginfo_t *, const struct timespec *)) \
	X(int, sigwaitinfo, (const sigset_t *, siginfo_t *))                   \
	X(int, sigwait, (const sigset_t *, int *))                             \
	X(int, sigsuspend, (const sigset_t *))                                 \
	X(int, pause, (void))                                                  \
	X(int, sem_wait, (sem_t *))                                            \
	X(int, sem_timedwait, (sem_t *, const struct timespec *))              \
	X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))   \
	X(ssize_t, recv, (int, void *, size_t, int))                           \
	X(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *, socklen_t *)) \
	X(ssize_t, recvmsg, (int, struct msghdr *, int))                       \
	X(int, accept, (int, struct sockaddr *, socklen_t *))                  \
	X(int, accept4, (int, struct sockaddr *, socklen_t *, int))            \
	X(int, pthread_join, (pthread_t, void **))                             \
	X(int, pthread_timedjoin_np, (pthread_t, void **, const struct timespec *)) \
	X(int, pthread_clockjoin_np, (pthread_t, void **, clockid_t, const struct timespec *)) \
	X(int, pthread_mutex_lock, (pthread_mutex_t *))                        \
	X(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *)) \
	X(int, pthread_mutex_clocklock, (pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(int, pthread_rwlock_rdlock, (pthread_rwlock_t *))                    \
	X(int, pthread_rwlock_wrlock, (pthread_rwlock_t *))                    \
	X(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t *, const struct timespec *)) \
	X(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t *, const struct timespec *)) \
	X(int, pthread_rwlock_clockrdlock, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(int, pthread_rwlock_clockwrlock, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *))       \
	X(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)) \
	X(int, pthread_cond_clockwait, (pthread_cond_t *, pthread_mutex_t *, clockid_t, \
					const struct timespec *))              \
	X(int, pthread_barrier_wait, (pthread_barrier_t *))                    \
	X(int, sched_yield, (void))

struct sd_real_table {
#define SD_REAL_FIELD_(ret, name, params) ret(*name) params;
	SD_REAL_FUNCTIONS(SD_REAL_FIELD_)
#undef SD_REAL_FIELD_
	/* _exit and _Exit do not return: their pointers say so */
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
};

/* Hidden, as all of libsonde but its API: read PC-relative, without the GOT. */
extern struct sd_real_table sd_real __attribute__((visibility("hidden")));

/* Sets *slot to the real function `name` (dlsym(RTLD_NEXT)), NULL where
 * there is none. Ordinary context (dlsym takes the loader's lock). */
void sd_real_resolve(void **slot, const char *name);

/* The real function `name`, resolved if it was not yet (see above). */
#define SD_REAL_RESOLVE(name)                                                  \
	do {                                                                   \
		if (!sd_real.name)                                             \
			sd_real_resolve((void **)&sd_real.name, #name);        \
	} while (0)
/* The pointer itself (NULL if unresolved or missing); parenthesized, so
 * that a libc macro of the same name never expands on the call. */
#define SD_REAL(name) (sd_real.name)

#endif
