/* sys.h - the runtime's own system calls, straight to the kernel.
 *
 * libsonde exports wrappers for libc names the program calls (close,
 * syscall, read, ...; sampler/interpose/). Inside libsonde those names
 * bind to the wrappers too, so sonde calling syscall(SYS_close) would enter
 * its own syscall wrapper, then its close wrapper, and so on: before sonde's
 * constructor has resolved the real functions that recursed until the stack
 * overflowed. The runtime therefore never calls the interposed names for
 * its own system calls: it uses these, which trap into the kernel directly.
 *
 *   sd_sys(NR, args...)      the kernel's raw result: >= 0, or -errno
 *   sd_syscall(NR, args...)  as libc's syscall(): -1 and errno on failure
 *   sd_sys_close(fd), ...    as libc's close(), ...: below
 *
 * Arguments are cast to long (pointers included); at most six. The
 * instruction sequence is per architecture (common/arch/<arch>/sys_arch.h,
 * chosen by CMake). Header only; everything here is async-signal-safe and
 * needs no libc state (usable before any constructor has run).
 *
 * The libc functions the runtime needs that are not plain system calls
 * (pthread_mutex_lock, sigaction, ...) and that libsonde wraps too are
 * reached through sd_real_* (common/real.h). What stays on purpose on an
 * interposed name (the writes and the syscall() that tests/fault's shim
 * fails) is listed in tests/unit/sampler/no_self_interpose.sh, which
 * checks the rest.
 */
#ifndef SONDE_SYS_H
#define SONDE_SYS_H

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

/* sd_sys6_(nr, a, b, c, d, e, f): one trap, raw result. CMake puts
 * common/arch/<arch> on the include path; a compiler run by hand without it
 * (tests/cli/libfuzz.sh builds the analyzer's sources so) gets the
 * generic one, libc's syscall(). */
#if __has_include("sys_arch.h")
#include "sys_arch.h"
#else
#include "common/arch/generic/sys_arch.h"
#endif

/* async-signal-safe */
static inline long sd_sys_ret(long r)
{
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#define sd_sys0_(n) sd_sys6_((long)(n), 0, 0, 0, 0, 0, 0)
#define sd_sys1_(n, a) sd_sys6_((long)(n), (long)(a), 0, 0, 0, 0, 0)
#define sd_sys2_(n, a, b) sd_sys6_((long)(n), (long)(a), (long)(b), 0, 0, 0, 0)
#define sd_sys3_(n, a, b, c) sd_sys6_((long)(n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sd_sys4_(n, a, b, c, d)                                                \
	sd_sys6_((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sd_sys5_(n, a, b, c, d, e)                                             \
	sd_sys6_((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define sd_sys6c_(n, a, b, c, d, e, f)                                         \
	sd_sys6_((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define SD_SYS_PICK_(_1, _2, _3, _4, _5, _6, _7, name, ...) name

#define sd_sys(...)                                                            \
	SD_SYS_PICK_(__VA_ARGS__, sd_sys6c_, sd_sys5_, sd_sys4_, sd_sys3_, sd_sys2_,  \
		     sd_sys1_, sd_sys0_, none)(__VA_ARGS__)
#define sd_syscall(...) sd_sys_ret(sd_sys(__VA_ARGS__))

/* The plain system calls the runtime makes for itself, with libc's
 * conventions: the same arguments and result, -1 and errno on failure, errno
 * untouched on success. None retries on EINTR (libc's do not either); unlike
 * libc's, none is a cancellation point. All async-signal-safe. */

/* close(2); EINTR: the descriptor is closed all the same (Linux). */
static inline int sd_sys_close(int fd)
{
	return (int)sd_syscall(SYS_close, fd);
}

/* read(2). */
static inline ssize_t sd_sys_read(int fd, void *buf, size_t n)
{
	return sd_syscall(SYS_read, fd, buf, n);
}

/* write(2). */
static inline ssize_t sd_sys_write(int fd, const void *buf, size_t n)
{
	return sd_syscall(SYS_write, fd, buf, n);
}

/* nanosleep(2): CLOCK_REALTIME, relative; where the architecture has no
 * nanosleep system call, clock_nanosleep on that clock (as libc does). */
static inline int sd_sys_nanosleep(const struct timespec *req, struct timespec *rem)
{
#ifdef SYS_nanosleep
	return (int)sd_syscall(SYS_nanosleep, req, rem);
#else
	return (int)sd_syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, req, rem);
#endif
}

/* sched_yield(2). */
static inline int sd_sys_sched_yield(void)
{
	return (int)sd_syscall(SYS_sched_yield);
}

/* sigtimedwait(2): the signal taken, or -1 and errno (EAGAIN: none came in
 * time). info->si_code as the kernel gives it (libc's turns SI_TKILL into
 * SI_USER). */
static inline int sd_sys_sigtimedwait(const sigset_t *set, siginfo_t *info,
				      const struct timespec *timeout)
{
	return (int)sd_syscall(SYS_rt_sigtimedwait, set, info, timeout, _NSIG / 8);
}

#endif
