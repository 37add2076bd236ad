/* fds.c - the descriptor calls sonde wraps (close, close_range, closefrom,
 * dup2, dup3, pipe2, read, write, and libc's syscall() with the system
 * calls it routes to the wrappers): sonde's descriptors and libunwind's
 * address-validation pipe are kept from the program's closes, and the
 * program's descriptors from libunwind inside sonde's handler
 * (sampler/interpose/interpose.h has the index of every wrapper).
 *
 * Ordinary context of the program's threads; close may also be called from
 * the program's own signal handlers (its wrapper stays async-signal-safe on
 * the path the program takes), and libunwind calls read, write, close,
 * pipe2 and syscall inside sonde's signal handler (the *_sigsafe helpers
 * and the paths taken there).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sys.h"
#include "sampler/interpose/interpose.h"

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
	int on = sd_interpose_blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
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
	int on = sd_interpose_blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
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
		sd_interpose_pin_output();
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
	int on = sd_interpose_blk_syscall(no, a[1]) &&
		 sd_interpose_blk_enter(__builtin_return_address(0), __builtin_frame_address(0),
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
