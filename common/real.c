/* real.c - libc's own functions behind libsonde's wrappers (real.h,
 * real_table.h).
 *
 * libsonde exports wrappers of libc and loader functions for the program
 * (sampler/interpose/). The real functions are found here, with
 * dlsym(RTLD_NEXT): whatever comes after libsonde in the program's scope
 * (libc, or a library preloaded after it). The table of their pointers
 * serves the wrappers; the sd_real_* functions serve the rest of the
 * runtime (its own locks, joins, threads, signal actions and stacks,
 * closes), which must not pay for the wrappers nor call up into the
 * sampler. Everything is resolved once at start (sd_real_init, from
 * sd_interpose_init) and on first use before that (a library constructor
 * that runs before sonde's). Linked outside libsonde too (unit tests): from
 * an executable, RTLD_NEXT finds libc's functions all the same.
 */
#define _GNU_SOURCE
#include "common/real.h"
#include "common/real_table.h"

#include <errno.h>
#include <sys/syscall.h>

#include "common/sys.h"

struct sd_real_table sd_real;

void sd_real_resolve(void **slot, const char *name)
{
	*slot = dlsym(RTLD_NEXT, name);
}

void sd_real_init(void)
{
#define RESOLVE_(ret, name, params) SD_REAL_RESOLVE(name);
	SD_REAL_FUNCTIONS(RESOLVE_)
#undef RESOLVE_
	SD_REAL_RESOLVE(_exit);
	SD_REAL_RESOLVE(_Exit);
}

/* Where the real function is missing, the kernel is asked directly
 * (common/sys.h), never through an interposed name. */
int sd_real_close(int fd)
{
	SD_REAL_RESOLVE(close);
	if (!SD_REAL(close))
		return (int)sd_syscall(SYS_close, fd);
	return SD_REAL(close)(fd);
}

int sd_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg)
{
	SD_REAL_RESOLVE(pthread_create);
	return SD_REAL(pthread_create)(th, attr, fn, arg);
}

int sd_real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	SD_REAL_RESOLVE(dl_iterate_phdr);
	return SD_REAL(dl_iterate_phdr)(cb, data);
}

int sd_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	SD_REAL_RESOLVE(sigaction);
	return SD_REAL(sigaction)(sig, act, old);
}

int sd_real_sigaltstack(const stack_t *ss, stack_t *old)
{
	SD_REAL_RESOLVE(sigaltstack);
	return SD_REAL(sigaltstack) ? SD_REAL(sigaltstack)(ss, old)
				    : (int)sd_syscall(SYS_sigaltstack, ss, old);
}

int sd_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	SD_REAL_RESOLVE(pthread_sigmask);
	if (!SD_REAL(pthread_sigmask))
		return (int)sd_syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) ? errno : 0;
	return SD_REAL(pthread_sigmask)(how, set, old);
}

/* The runtime's own joins and locks: the real functions, never the
 * wrappers that note where the program waits (sampler/interpose/blocking.c). */
int sd_real_pthread_join(pthread_t th, void **ret)
{
	SD_REAL_RESOLVE(pthread_join);
	return SD_REAL(pthread_join)(th, ret);
}

int sd_real_pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	SD_REAL_RESOLVE(pthread_timedjoin_np);
	return SD_REAL(pthread_timedjoin_np)(th, ret, abstime);
}

int sd_real_pthread_mutex_lock(pthread_mutex_t *m)
{
	SD_REAL_RESOLVE(pthread_mutex_lock);
	return SD_REAL(pthread_mutex_lock)(m);
}
