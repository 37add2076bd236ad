/* kernel.h - the kernel component's interface: per-thread perf_event
 * descriptors. Issue #2 uses the software task clock as a sampling source;
 * counters in every sample come later through this same header.
 *
 * All functions run in ordinary context unless marked _sigsafe.
 */
#ifndef SONDE_KERNEL_H
#define SONDE_KERNEL_H

#include <stdint.h>
#include <sys/types.h>

/* Opens a task-clock (user time only) event on thread `tid` that overflows
 * every period_ns and delivers signal `signo` to that very thread. The fd is
 * close-on-exec and moved to >= fd_floor when possible. Returns 0 and the fd
 * in *fd_out, or -errno (EACCES/EPERM: refused by perf_event_paranoid or
 * seccomp; ENOENT/ENOSYS: no perf_event; EMFILE: out of descriptors). */
int sd_kernel_clock_open(pid_t tid, uint64_t period_ns, int signo, int fd_floor, int *fd_out);

/* Starts or stops the event without closing it. async-signal-safe (ioctl). */
int sd_kernel_enable_sigsafe(int fd, int on);

/* Reads /proc/sys/kernel/perf_event_paranoid; returns the level or -errno. */
int sd_kernel_paranoid(void);

#endif
