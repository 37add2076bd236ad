/* real.h - libc's own functions, for the runtime's own calls, where
 * libsonde exports a wrapper of the same name for the program.
 *
 * Inside libsonde a call of pthread_mutex_lock, pthread_join, sigaction, ...
 * binds to libsonde's own wrapper (sampler/interpose/): the wrappers exist
 * for the program, and sonde's own calls would only pay for them (and make
 * every component call the sampler's wrappers back). The runtime calls
 * these instead, which reach the real function (dlsym(RTLD_NEXT), resolved
 * once: sd_real_init, or the first call before it); the plain system
 * calls go straight to the kernel (common/sys.h). Same arguments, result
 * and errno as libc's; each is as async-signal-safe as libc's once
 * resolved. Defined in common/real.c, with the table of every real
 * function the wrappers call (common/real_table.h); a test program links
 * real.c as it is (from an executable, RTLD_NEXT finds libc's).
 */
#ifndef SONDE_REAL_H
#define SONDE_REAL_H

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

/* Resolves every real function (common/real_table.h) at once: at start,
 * before the program's threads (sd_interpose_init). Ordinary context. */
void sd_real_init(void);

/* close, also of a descriptor sonde spares from the program's close */
int sd_real_close(int fd);
/* pthread_create: a thread the wrapper does not set up (sonde's own) */
int sd_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg);
int sd_real_pthread_join(pthread_t th, void **ret);
int sd_real_pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime);
/* every lock of sonde's own: not charged as a wait of the program's */
int sd_real_pthread_mutex_lock(pthread_mutex_t *m);
/* the loader's own list, never the handler's snapshot */
int sd_real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
/* the actions as the kernel has them, not as the program is shown them */
int sd_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int sd_real_sigaltstack(const stack_t *ss, stack_t *old);
/* the mask, without pausing the thread's sampling as the program's does */
int sd_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old);

#endif
