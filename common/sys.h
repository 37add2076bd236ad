/* sys.h - the runtime's own system calls, straight to the kernel.
 *
 * libsonde exports wrappers for libc names the program calls (close,
 * syscall, read, ...; sampler/interpose.c). Inside libsonde those names
 * bind to the wrappers too, so sonde calling syscall(SYS_close) would enter
 * its own syscall wrapper, then its close wrapper, and so on: before sonde's
 * constructor has resolved the real functions that recursed until the stack
 * overflowed. The runtime therefore never calls the interposed names for
 * its own system calls: it uses these, which trap into the kernel directly.
 *
 *   sd_sys(NR, args...)      the kernel's raw result: >= 0, or -errno
 *   sd_syscall(NR, args...)  as libc's syscall(): -1 and errno on failure
 *
 * Arguments are cast to long (pointers included); at most six. The
 * instruction sequence is per architecture (common/arch/<arch>/sys_arch.h,
 * chosen by CMake). Header only; everything here is async-signal-safe and
 * needs no libc state (usable before any constructor has run).
 */
#ifndef SONDE_SYS_H
#define SONDE_SYS_H

#include <errno.h>
#include <sys/syscall.h>

#include "sys_arch.h" /* sd_sys6_(nr, a, b, c, d, e, f): one trap, raw result */

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

#endif
