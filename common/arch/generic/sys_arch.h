/* sys_arch.h (other architectures) - no instruction sequence of our own:
 * the name syscall() binds to libsonde's own wrapper, which forwards to
 * libc's (and SYS_close to the close wrapper, which resolves the real close
 * before it calls it, so this does not recurse). One call more and not
 * async-signal-safe before the wrappers are resolved: add
 * common/arch/<arch>/sys_arch.h for a direct trap. */
#ifndef SONDE_SYS_ARCH_H
#define SONDE_SYS_ARCH_H

#include <errno.h>
#include <unistd.h>

static inline long sd_sys6_(long n, long a, long b, long c, long d, long e, long f)
{
	int saved = errno;
	long r = syscall(n, a, b, c, d, e, f);
	if (r == -1) {
		r = -errno;
		errno = saved;
	}
	return r;
}

#endif
