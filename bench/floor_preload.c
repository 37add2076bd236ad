/* floor_preload - the least any in-process signal sampler does, as a preload
 * (bench/startup.sh's `floor` column).
 *
 * LD_PRELOAD'ed into every process of a job, its constructor opens one
 * perf_event task clock of the calling thread at 1 ms of user CPU time,
 * delivered as SIGRTMIN+4 to an empty SA_SIGINFO handler, exactly sonde's
 * delivery path (bench/sigcost.c measures one round trip of it). Nothing
 * else: no other thread, no unwinding, no file, no threads followed. What a
 * job costs with it is the floor under sonde's per-process and per-sample
 * cost on this machine: one more shared object loaded, one perf_event_open,
 * and a signal round trip per millisecond of CPU.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long taken;

static void on_sample(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	taken++;
}

__attribute__((constructor)) static void floor_start(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGRTMIN + 4, &sa, NULL) != 0)
		return;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.exclude_kernel = 1;
	a.wakeup_events = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
	if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGRTMIN + 4) != 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) != 0)
		close(fd);
}
