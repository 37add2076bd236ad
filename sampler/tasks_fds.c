/* tasks_fds.c - sonde's descriptors, checked from the writer thread: those
 * closed behind sonde's back found, forgotten and re-armed.
 *
 * Called from: the writer thread at every tick (sd_tasks_audit_descriptors
 * from sd_tasks_tick, ordinary context, every signal blocked there); the
 * close wrappers and thread end (sd_tasks_fd_ours, sd_tasks_forget_stale,
 * ordinary context); the pipe2 wrapper, possibly inside the sampling handler
 * (sd_tasks_fd_remember_sigsafe).
 *
 * Descriptors closed behind sonde's back. The close/close_range/closefrom
 * wrappers spare sonde's descriptors, but a raw system call (syscall(
 * SYS_close_range, 3, ~0U, 0), an inline `syscall`) closes them anyway, and
 * the program's next open() may get one of those numbers. From then on sonde
 * must never read, write, ioctl or close that number, and must not keep
 * sparing it from the program's close(). So every sonde descriptor carries a
 * mark that a reused number lacks: sampling descriptors have the sampling
 * signal as F_SETSIG, counter descriptors SD_KERNEL_MARK_SIG, the stream file
 * and libunwind's pipe their device and inode. A thread's sampling and
 * counter descriptors also have the thread as owner (F_SETOWN_EX): sonde
 * itself reuses the closed numbers too (a re-armed or a new thread's
 * descriptor takes the lowest free one above the floor), so a number that
 * still carries the signal may be another thread's descriptor now, and a
 * thread whose record held it must re-arm rather than take it for its own
 * (it would go unsampled, its time unaccounted, until the other thread's
 * end closed the number). At every tick the writer checks its stream
 * descriptor (one fstat) and this file checks the sampling and counter
 * descriptors of up to AUDIT_PER_TICK threads (two or three system calls
 * each); when the stream descriptor is found gone, every thread
 * and every marked number is checked at once. A thread whose sampling
 * descriptor is gone gets a new one (a perf_event task clock opened for its
 * tid from here), or a POSIX CPU-time timer when that fails; the CPU time it
 * ran between the last check that found its descriptor intact and the new
 * one is counted as unsampled (UNSAMPLED fd_closed, an upper bound: the
 * thread CPU clock counts system time too). A thread whose counter
 * descriptors are gone keeps sampling without counters (its samples are
 * flagged, never zeros).
 *
 *
 * Invariants: a number found without its mark is forgotten (unmarked, set
 * to -1), never closed; one found with the mark of another thread is
 * forgotten by this thread's record but stays tracked as sonde's. Thread records are touched only under the registry
 * lock (sd_runtime_threads_foreach).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/sys.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define AUDIT_PER_TICK 64
#define REMEMBERED 8

/* Descriptors without another mark, by identity. An entry is published by
 * storing fd last; fd -1 is free. */
static struct {
	_Atomic int fd;
	dev_t dev;
	ino_t ino;
} remembered[REMEMBERED] = {[0 ... REMEMBERED - 1] = {.fd = -1}};

void sd_tasks_fd_remember_sigsafe(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return;
	for (int i = 0; i < REMEMBERED; i++) {
		int cur = atomic_load(&remembered[i].fd);
		if (cur == fd)
			atomic_store(&remembered[i].fd, -1);
	}
	for (int i = 0; i < REMEMBERED; i++) {
		int expect = -1;
		if (atomic_load(&remembered[i].fd) != -1)
			continue;
		/* Claim with a value no descriptor has, fill, then publish. */
		if (!atomic_compare_exchange_strong(&remembered[i].fd, &expect, -2))
			continue;
		remembered[i].dev = st.st_dev;
		remembered[i].ino = st.st_ino;
		atomic_store(&remembered[i].fd, fd);
		return;
	}
}

int sd_tasks_fd_remembered_sigsafe(int fd)
{
	struct stat st;
	for (int i = 0; i < REMEMBERED; i++) {
		if (atomic_load(&remembered[i].fd) != fd)
			continue;
		if (fstat(fd, &st) == 0 && st.st_dev == remembered[i].dev &&
		    st.st_ino == remembered[i].ino)
			return 1;
		atomic_store(&remembered[i].fd, -1); /* gone: forget the entry */
		return 0;
	}
	return 0;
}

/* A perf_event descriptor of thread tid: sampling (the sampling signal) or
 * counter (SD_KERNEL_MARK_SIG), owned by tid. */
static int perf_fd_ours(int fd, int sig, pid_t tid)
{
	return sd_kernel_fd_marked_sigsafe(fd, sig, tid);
}

int sd_tasks_fd_ours(int fd)
{
	if (fd < 0)
		return 0;
	int sig = fcntl(fd, F_GETSIG);
	if (sig < 0)
		return 0; /* closed */
	if (sig == sd_rt.cfg.signo || sig == SD_KERNEL_MARK_SIG)
		return 1;
	return sd_writer_fd_is_stream(fd) || sd_tasks_fd_remembered_sigsafe(fd);
}

/* The counters of t are gone: they stay off for this thread (its samples are
 * flagged, never zeros). The handler checks ok before reading. */
static int forget_counters(struct sd_thread *t)
{
	/* ok: opened and published (a thread being set up has ok 0). */
	if (!t->ctr.ok || t->ctr.group_fd < 0 ||
	    perf_fd_ours(t->ctr.group_fd, SD_KERNEL_MARK_SIG, t->tid))
		return 0;
	t->ctr.ok = 0;
	atomic_signal_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++) {
		int fd = t->ctr.fds[i];
		if (fd < 0)
			continue;
		/* A sibling still marked for t is ours: closed, the group is gone
		 * anyway. Another sonde descriptor on the number stays tracked. */
		if (perf_fd_ours(fd, SD_KERNEL_MARK_SIG, t->tid)) {
			sd_runtime_fd_track_sigsafe(fd, 0);
			sd_real_close(fd);
		} else if (!sd_tasks_fd_ours(fd)) {
			sd_runtime_fd_track_sigsafe(fd, 0);
		}
		t->ctr.fds[i] = -1;
	}
	t->ctr.group_fd = -1;
	return 1;
}

/* Forgets t's sampling descriptors that lost their mark; returns a bit per
 * source forgotten. */
static unsigned forget_sources(struct sd_thread *t)
{
	unsigned lost = 0;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		int fd = t->src_fd[i];
		if (fd < 0 || perf_fd_ours(fd, sd_rt.cfg.signo, t->tid))
			continue;
		t->src_fd[i] = -1;
		if (!sd_tasks_fd_ours(fd)) /* else another thread's, or the stream, now */
			sd_runtime_fd_track_sigsafe(fd, 0);
		lost |= 1u << i;
	}
	return lost;
}

void sd_tasks_forget_stale(struct sd_thread *t)
{
	forget_sources(t);
	forget_counters(t);
}

/* Sampling for source i of thread t again: a new perf_event task clock for
 * its tid, or a POSIX timer on its CPU clock. 0 or -errno. */
static int rearm(struct sd_thread *t, unsigned i)
{
	const struct sd_source *s = &sd_rt.cfg.sources[i];
	uint64_t period = s->period_ns * (t->mult[i] ? t->mult[i] : 1); /* throttled or not */
	int fd, err = -EINVAL;
	if (sd_source_ops_of(s)->clocked && !s->use_timer) {
		err = sd_runtime_fd_room_sigsafe(1)
			      ? sd_kernel_clock_open_sigsafe(t->tid, period, sd_rt.cfg.signo,
							     sd_rt.fd_floor, &fd)
			      : -EMFILE;
		if (err == 0) {
			t->src_fd[i] = fd; /* before the first signal can come */
			sd_runtime_fd_track_sigsafe(fd, 1);
			if (atomic_load(&sd_rt.state) == SD_RUNNING && !t->paused)
				sd_kernel_enable_sigsafe(fd, 1);
			return 0;
		}
	}
	if (t->has_timer[i])
		return err;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sd_rt.cfg.signo;
	sev.sigev_value.sival_int = SD_TIMER_COOKIE + (int)i; /* told from the program's */
	sev.sigev_notify_thread_id = t->tid;
	/* wall-time's signalled half runs on the thread's CPU clock too (its
	 * blocked half is accounted by the writer: writer/offcpu.c) */
	clockid_t clock = sd_kernel_thread_clock(t->tid);
	err = sd_sources_timer_create(clock, &sev, &t->src_timer[i]);
	if (err)
		return err;
	struct itimerspec its = {
		.it_interval = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)},
		.it_value = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)},
	};
	if (timer_settime(t->src_timer[i], 0, &its, NULL) != 0) {
		err = -errno;
		sd_sources_timer_delete(t->src_timer[i]);
		return err;
	}
	t->has_timer[i] = 1;
	return 0;
}

struct audit {
	int all;              /* check every thread (the stream descriptor was lost) */
	unsigned pos, from, n;/* round robin: threads [from, from + n) of the list */
	unsigned threads_lost, threads_rearmed, threads_timer, counters_lost;
	int last_err;
};

static void audit_thread(struct sd_thread *t, void *arg)
{
	struct audit *a = arg;
	unsigned pos = a->pos++;
	if (!a->all && (pos < a->from || pos >= a->from + a->n))
		return;
	uint64_t cpu = 0;
	int have_cpu = sd_kernel_thread_cpu_ns(t->tid, &cpu) == 0;
	unsigned lost = forget_sources(t);
	if (forget_counters(t))
		a->counters_lost++;
	if (lost) {
		a->threads_lost++;
		if (have_cpu && cpu > t->audit_cpu_ns)
			t->fd_gap_ns += cpu - t->audit_cpu_ns;
		sd_writer_ring_unsampled(t->ring, SD_UNSAMPLED_FD_CLOSED, t->fd_gap_ns);
		int ok = 1;
		for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
			if (!(lost & (1u << i)))
				continue;
			int err = rearm(t, i);
			if (err) {
				ok = 0;
				a->last_err = err;
			} else if (t->src_fd[i] < 0) {
				a->threads_timer++;
			}
		}
		a->threads_rearmed += ok;
	}
	if (have_cpu)
		t->audit_cpu_ns = cpu;
}

/* After a mass close: every number still marked as sonde's that carries no
 * mark of ours is the program's (or nobody's): unmarked, so that the
 * program's own close() of it works again. */
static void unmark_stale_numbers(void)
{
	for (int fd = sd_runtime_fd_next(0); fd >= 0; fd = sd_runtime_fd_next(fd + 1))
		if (!sd_tasks_fd_ours(fd))
			sd_runtime_fd_track_sigsafe(fd, 0);
}

static void count_thread(struct sd_thread *t, void *arg)
{
	(void)t;
	(*(unsigned *)arg)++;
}

void sd_tasks_audit_descriptors(int stream_fd_lost)
{
	static unsigned rr;
	static int said;
	unsigned n = 0;
	sd_runtime_threads_foreach(count_thread, &n);
	struct audit a = {.all = stream_fd_lost, .n = AUDIT_PER_TICK};
	if (n) {
		a.from = rr % n;
		rr = a.from + AUDIT_PER_TICK;
		if (a.from + a.n > n)
			a.from = n > a.n ? n - a.n : 0;
	}
	sd_runtime_threads_foreach(audit_thread, &a);
	if (stream_fd_lost || a.threads_lost || a.counters_lost)
		unmark_stale_numbers();
	if ((!a.threads_lost && !a.counters_lost) || said)
		return;
	said = 1;
	char text[256];
	snprintf(text, sizeof text,
		 "sonde: %u thread(s) lost their sampling descriptors to a raw close_range or close "
		 "system call: %u re-armed (%u on a POSIX timer)%s%s, %u without counters from now on "
		 "(unsampled CPU time: UNSAMPLED fd_closed; close descriptors through libc)",
		 a.threads_lost, a.threads_rearmed, a.threads_timer, a.last_err ? ", failed: " : "",
		 a.last_err ? strerror(-a.last_err) : "", a.counters_lost);
	if (stream_fd_lost)
		sd_writer_note(text); /* the writer already said it on stderr */
	else
		sd_msg("%s", text);
}
