/* perf.c - per-thread perf_event descriptors (Linux).
 *
 * Called by the sampler when a thread begins (its own thread, or at start for
 * threads that were alive before sonde). The descriptors belong to sonde but
 * live in the program's fd table, so they are close-on-exec and moved above
 * a floor, out of the low range programs use for select() and dup2 games.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sys.h"
#include "kernel/kernel.h"

/* F_DUPFD to a floor at or above the soft RLIMIT_NOFILE: the soft limit is
 * raised (never past the hard one) for that one call and put back. The
 * program's own limit is unchanged before and after; a getrlimit of another
 * thread within those three system calls would see the raised value. One
 * caller at a time (the limit is the process's): the lock holds the
 * holder's tid, and a holder that is not a thread of this process (a fork
 * child inherits the parent's lock word) is passed over. Never in a signal
 * handler (the spin would wait on the interrupted thread). -1 when it
 * cannot. */
static int dup_above_limit(int fd, int floor)
{
	static _Atomic int busy;
	int self = (int)sd_sys(SYS_gettid), held = 0;
	while (!atomic_compare_exchange_weak_explicit(&busy, &held, self, memory_order_acquire,
						      memory_order_relaxed)) {
		if (held && sd_sys(SYS_tgkill, sd_sys(SYS_getpid), held, 0) == -ESRCH)
			atomic_compare_exchange_strong(&busy, &held, 0); /* gone: free */
		else
			sd_sys(SYS_sched_yield);
		held = 0;
	}
	struct rlimit was, up;
	int hi = -1;
	if (sd_sys(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &was) == 0 && was.rlim_cur <= (rlim_t)floor &&
	    was.rlim_max > (rlim_t)floor) {
		up = was; /* room for sonde's numbers from floor up (runtime.c tracks < 65536) */
		up.rlim_cur = (rlim_t)floor + 1 < 65536 ? 65536 : (rlim_t)floor + 1;
		if (up.rlim_cur > was.rlim_max)
			up.rlim_cur = was.rlim_max;
		if (sd_sys(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) == 0) {
			long r = sd_sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
			hi = r >= 0 ? (int)r : -1;
			sd_sys(SYS_prlimit64, 0, RLIMIT_NOFILE, &was, NULL);
		}
	}
	atomic_store_explicit(&busy, 0, memory_order_release);
	return hi;
}

int sd_kernel_fd_high(int fd, int floor)
{
	if (floor <= 0 || fd >= floor)
		return fd;
	int hi = (int)sd_sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
	if (hi == -EINVAL) /* the floor is at or above the soft limit */
		hi = dup_above_limit(fd, floor);
	if (hi < 0)
		return fd; /* keep the low one rather than fail */
	sd_sys(SYS_close, fd);
	return hi;
}

int sd_kernel_clock_open_sigsafe(pid_t tid, uint64_t period_ns, int signo, int fd_floor, int *fd_out)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period_ns;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	attr.wakeup_events = 1;
	/* Through libc's syscall() name on purpose, not common/sys.h: the one
	 * system call tests/fault's shim fails this way (never SYS_close here). */
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = sd_kernel_fd_high(fd, fd_floor);
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	int err = 0;
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl(fd, F_SETSIG, signo) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0)
		err = -errno;
	if (!err && ioctl(fd, PERF_EVENT_IOC_RESET, 0) < 0)
		err = -errno;
	if (err) {
		sd_sys_close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

int sd_kernel_fd_marked_sigsafe(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner;
	if (fd < 0 || fcntl(fd, F_GETSIG) != sig || fcntl(fd, F_GETOWN_EX, &owner) != 0 ||
	    owner.type != F_OWNER_TID)
		return 0;
	if (owner.pid == tid)
		return 1;
	/* The kernel reports an owner that has exited as 0: a thread found gone
	 * (a raw clone thread between its exit and the scan that ends it) still
	 * owns its descriptors, which must be closed, not leaked. */
	return owner.pid == 0 && tid > 0 && sd_syscall(SYS_tgkill, getpid(), tid, 0) != 0 &&
	       errno == ESRCH;
}

int sd_kernel_enable_sigsafe(int fd, int on)
{
	if (ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

int sd_kernel_period_sigsafe(int fd, uint64_t period)
{
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) < 0)
		return -errno;
	return 0;
}

int sd_kernel_thread_cpu_ns(pid_t tid, uint64_t *out)
{
	struct timespec ts;
	if (clock_gettime(sd_kernel_thread_clock(tid), &ts) != 0)
		return -errno;
	*out = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

int sd_kernel_thread_cpu_split(pid_t tid, uint64_t cpu_ns, uint64_t *user_ns, uint64_t *sys_ns)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = sd_sys_read(fd, buf, sizeof buf - 1);
	sd_sys_close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = 0;
	/* after the command's closing parenthesis: state is field 3, utime 14 */
	const char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -EINVAL;
	if (ut + st == 0)
		return -ENODATA;
	*user_ns = (uint64_t)((long double)cpu_ns * ut / (ut + st));
	*sys_ns = cpu_ns - *user_ns;
	return 0;
}

int sd_kernel_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (!f)
		return SD_PARANOID_UNKNOWN;
	int level = 0;
	int ok = fscanf(f, "%d", &level) == 1;
	fclose(f);
	return ok ? level : SD_PARANOID_UNKNOWN;
}

const char *sd_kernel_paranoid_text(char *buf, size_t len)
{
	int e = errno;
	int level = sd_kernel_paranoid();
	if (level == SD_PARANOID_UNKNOWN)
		snprintf(buf, len, "perf_event_paranoid unreadable: %s", strerror(errno ? errno : EIO));
	else
		snprintf(buf, len, "perf_event_paranoid=%d", level);
	errno = e;
	return buf;
}
