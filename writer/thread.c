/* thread.c - the writer thread, and the process without one.
 *
 * The writer thread sleeps a tick (at most 10 ms), then drains every ring
 * (drain.c) and writes the file once a flush period has passed (outfile.c);
 * a stop or final-flush request wakes it at once. Its stack is small and
 * its own (SD_WRITER_STACK_BYTES); every signal is blocked in it.
 *
 * Without a writer thread: while the program has a single thread (no
 * thread of sonde's may show, see "while the program has a single thread"
 * below), where process slots are scarce (RLIMIT_NPROC, slots.c) or the
 * thread cannot be made, or when it left to give its slot back, the process
 * runs on without one (`writerless`): the program's threads drain the rings
 * in their sample handlers (sd_writer_drain_sigsafe) and where sonde already
 * runs in ordinary context with every signal blocked (a thread starting or
 * ending, a fork, a region's end, the query API: sd_writer_drain_self), and
 * the thread that ends the process writes the rest (sd_writer_stop, as
 * always; from a SIGTERM-like signal's handler too). What overflows a ring
 * meanwhile is dropped and counted.
 *
 * sd_writer_start --one task--> DEFERRED --program's 2nd task--> RUNNING
 *        |                        ^  (sd_writer_thread_wanted)    |
 *        |                        +---- one task again, or fork --+
 *        |                                                        |
 *        +-------------slots plenty-------------------------> RUNNING ---sd_writer_stop---> END
 *        |                                                    |                             ^
 *        | slots scarce, or                                   | writer_main: slots scarce,  |
 *        | pthread_create failed                              | or the program refused a    |
 *        |                                                    | task (the thread left)      |
 *        v                                                    v                             |
 *        +--------------------------------------------> WRITERLESS ---sd_writer_stop------+
 *
 * DEFERRED is WRITERLESS with `deferred` set, said nowhere. sd_writer_stop
 * (writer.c) joins a thread that left. A fork child and a failed exec
 * (sd_writer_resume) begin again at sd_writer_start.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/real.h"
#include "common/sys.h"
#include "mem/mem.h"
#include "writer/writer_int.h"

/* Why the writer thread ends the stream when a signal asks it to
 * (sd_writer_final_flush_sigsafe). */
static const char *final_reason = "exit";

/* The writer sleeps on a futex word for one tick; a stop or final-flush
 * request bumps the word and wakes it at once, so an exiting or exec'ing
 * process never waits for the rest of a tick. */
static void sleep_ms(unsigned ms)
{
	unsigned seen = atomic_load(&sd_w.wake_seq);
	if (atomic_load(&sd_w.stop_req) || atomic_load(&sd_w.final_req))
		return;
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	sd_syscall(SYS_futex, &sd_w.wake_seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

/* async-signal-safe: one atomic and one system call. */
static void wake_writer_sigsafe(void)
{
	atomic_fetch_add(&sd_w.wake_seq, 1);
	sd_syscall(SYS_futex, &sd_w.wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void sd_writer_wake_sigsafe(void)
{
	wake_writer_sigsafe();
}

#define WRITERLESS_HINT "a process without one writes its stream as it ends, dropping what " \
			"overflows a thread's ring"

/* Once on stderr for all the process trees of one process group (a
 * script's or make's commands, each exec'ed into an image and a tree of
 * its own, share no memory but the output directory): the first makes the
 * empty file .sonde-nproc.<pgid> there, the others find it. 1: say it. */
static int group_says_first(void)
{
	char name[64];
	snprintf(name, sizeof name, ".sonde-nproc.%d", (int)getpgrp());
	char path[sizeof sd_w.dir + sizeof name];
	int dfd = AT_FDCWD;
	if (sd_w.dir_pinned && sd_outfile_dir_ours()) /* its path may name another directory */
		dfd = sd_w.dir_fd;
	else
		snprintf(path, sizeof path, "%s/%s", sd_w.dir, name);
	int fd = openat(dfd, dfd == AT_FDCWD ? path : name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno != EEXIST;
	sd_sys_close(fd);
	return 1;
}

/* The process runs without a writer thread from now on (top of this
 * file). `what` happened to the thread, `why` says why (NULL: `err` from
 * pthread_create).
 * Said in this process's stream, and on stderr by the first process of its
 * process tree (slots.c) and process group only: a forking program, or a
 * script, prints one line. */
static void go_writerless(const char *what, const struct sd_slots_why *why, int err)
{
	char buf[400], lim[64] = "";
	atomic_store(&sd_w.writerless, 1);
	if (why && why->limit != (unsigned long long)RLIM_INFINITY)
		snprintf(lim, sizeof lim, ", RLIMIT_NPROC %llu", why->limit);
	if (!why)
		snprintf(buf, sizeof buf, "sonde: writer thread: %s: %s (" WRITERLESS_HINT "%s)",
			 what, strerror(err), err == EAGAIN ? "; raise ulimit -u or ulimit -v" : "");
	else if (why->refused)
		snprintf(buf, sizeof buf, "sonde: writer thread: stopped: the program was refused a "
			 "process or thread (EAGAIN)%s, and the writer's slot was given back ("
			 WRITERLESS_HINT "; raise ulimit -u)", lim);
	else
		snprintf(buf, sizeof buf, "sonde: writer thread: %s, process slots are scarce: %ld "
			 "tasks on this machine%s (" WRITERLESS_HINT "; raise ulimit -u above %llu)",
			 what, why->tasks, lim, (unsigned long long)why->tasks + SD_NPROC_MARGIN);
	if (sd_slots_say_first() && group_says_first())
		sd_msg("%s", buf);
	else
		sd_writer_note(buf);
}

/* The final flush asked by a signal (sd_writer_final_flush_sigsafe), made
 * by the writer thread. */
static void final_flush_here(void)
{
	sd_real_pthread_mutex_lock(&sd_w.lock);
	sd_drain_finish(final_reason, atomic_load(&sd_w.final_signo));
	pthread_mutex_unlock(&sd_w.lock);
	atomic_store(&sd_w.final_done, 1);
}

/* The program down to one thread, as the writer's ticks saw it. */
struct single {
	uint64_t since; /* the program down to one thread since, 0 not */
	unsigned seq;   /* sd_w.create_seq then */
};

/* The program's threads have ended (the last tick listed `tasks`, the
 * program's and this one): after a flush period of one thread, sonde's
 * leaves too (drained first; it starts again with the program's next
 * thread). 1: leave now, deferred and writerless set. */
static int rest_due(struct single *s, int tasks)
{
	uint64_t now = sd_now_ns_sigsafe();
	if (tasks != 2) {
		s->since = 0;
		return 0;
	}
	if (!s->since) {
		s->since = now;
		s->seq = atomic_load(&sd_w.create_seq);
		return 0;
	}
	if (now - s->since < sd_w.cfg.flush_ms * 1000000ull)
		return 0;
	/* Leaving, unless the program began a thread since: its
	 * pthread_create bumps create_seq, then looks at deferred
	 * (sd_writer_thread_wanted); here deferred is set, then
	 * create_seq read: one of the two sees the other. */
	sd_real_pthread_mutex_lock(&sd_w.lock);
	atomic_store(&sd_w.writerless, 1);
	atomic_store(&sd_w.deferred, 1);
	int rest = atomic_load(&sd_w.create_seq) == s->seq;
	if (!rest) {
		atomic_store(&sd_w.deferred, 0);
		atomic_store(&sd_w.writerless, 0);
		s->since = 0;
	}
	pthread_mutex_unlock(&sd_w.lock);
	return rest;
}

/* The runtime's tick hook (cfg.tick); the tasks it listed. Our descriptor
 * gone behind our back means the program closed descriptors with a raw
 * system call: the sampler checks its own before anything is read or
 * written through them. */
static int tick_hook(void)
{
	sd_real_pthread_mutex_lock(&sd_w.lock);
	int lost = sd_outfile_fd_lost();
	sd_outfile_dir_check();
	pthread_mutex_unlock(&sd_w.lock);
	int tasks = sd_w.cfg.tick(lost);
	atomic_store(&sd_w.last_tasks, tasks);
	return tasks;
}

/* The writer thread leaves: `rest`, to start again with the program's next
 * thread, else stopped or gone writerless. */
static void writer_leave(int rest)
{
	if (rest) { /* deferred and writerless set: joined by whoever starts it again */
		sd_real_pthread_mutex_lock(&sd_w.lock);
		sd_drain(0);
		sd_outfile_flush();
		atomic_store(&sd_w.thread_running, 0);
		pthread_mutex_unlock(&sd_w.lock);
	} else {
		atomic_store(&sd_w.thread_running, 0);
	}
	/* a final flush asked of it as it left: done here */
	if (atomic_load(&sd_w.final_req) && !atomic_load(&sd_w.final_done))
		final_flush_here();
}

static void *writer_main(void *unused)
{
	(void)unused;
	unsigned tick = sd_w.cfg.flush_ms < 10 ? sd_w.cfg.flush_ms : 10;
	struct single single = {0, 0};
	int tasks = -1; /* what the last tick listed */
	int rest = 0;
	sd_slots_enter();
	for (;;) {
		sleep_ms(tick);
		if (atomic_load(&sd_w.final_req)) {
			final_flush_here();
			break;
		}
		if (atomic_load(&sd_w.stop_req) || atomic_load(&sd_w.rest_req))
			break;
		if (!sd_w.cfg.thread_always && (rest = rest_due(&single, tasks)))
			break;
		struct sd_slots_why why;
		int leave = sd_slots_leave_due(&why); /* its slot is the program's */
		if (leave) {
			go_writerless("stopped", &why, 0);
			break;
		}
		if (sd_w.cfg.tick)
			tasks = tick_hook();
		sd_real_pthread_mutex_lock(&sd_w.lock);
		sd_drain(0);
		if (sd_now_ns_sigsafe() - sd_w.last_flush_ns >= sd_w.cfg.flush_ms * 1000000ull)
			sd_outfile_flush();
		pthread_mutex_unlock(&sd_w.lock);
	}
	writer_leave(rest);
	return NULL;
}

/* The static TLS of the process, which glibc takes out of a thread's stack
 * (its size is only told by a private function of the loader's, the one
 * the sanitizers ask too); 64 KiB when it does not say. */
static size_t static_tls_bytes(void)
{
	void (*info)(size_t *, size_t *);
	*(void **)&info = dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
	size_t size = 0, align = 0;
	if (info)
		info(&size, &align);
	return size && size < (64u << 20) ? size + align : 64u * 1024u;
}

/* ---- while the program has a single thread ------------------------------
 *
 * A program must not see sonde (DESIGN.md): a writer thread makes a
 * single-threaded program a multi-threaded one to anything that counts its
 * tasks (/proc/self/stat, /proc/self/task: Python 3.12 warns at every
 * os.fork() then). So while the program has one thread sonde has none
 * either (`deferred`, a kind of writerless): the program's thread drains its
 * ring in its own sample handler, when a quarter of the ring is used or a
 * flush period has passed (sd_writer_drain_sigsafe), in ordinary context
 * where sonde already runs (sd_writer_drain_self), and as the process ends. The writer
 * thread starts with the program's second thread (pthread_create: before it
 * is made; a task made otherwise, a raw clone, is found at the next fork or
 * spawn, where sonde runs in ordinary context). */

/* The tasks of this process (/proc/self/stat, field 20); 0 when unknown.
 * async-signal-safe: open, read, close. */
static long tasks_here_sigsafe(void)
{
	char buf[1024];
	int fd = (int)sd_syscall(SYS_openat, AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = (ssize_t)sd_syscall(SYS_read, fd, buf, sizeof buf - 1);
	sd_syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	/* after the name: state is field 3, the number of threads field 20 */
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	long v = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v;
}

static int start_thread_now(void);

/* The writer thread, unless process slots are scarce (slots.c) or it
 * cannot be made, or the program has a single thread: then the process runs
 * on without one. Returns 0. */
int sd_writer_start(void)
{
	if (!sd_w.cfg.thread_always && tasks_here_sigsafe() == 1) {
		atomic_store(&sd_w.deferred, 1);
		atomic_store(&sd_w.writerless, 1);
		return 0;
	}
	atomic_store(&sd_w.deferred, 0);
	return start_thread_now();
}

void sd_writer_thread_wanted(void)
{
	if (!atomic_load(&sd_w.inited))
		return;
	atomic_fetch_add(&sd_w.create_seq, 1); /* before deferred is read: writer_main */
	if (!atomic_load(&sd_w.deferred) || atomic_load(&sd_w.ended))
		return;
	sigset_t all, old;
	sigfillset(&all);
	sd_real_pthread_sigmask(SIG_BLOCK, &all, &old);
	sd_real_pthread_mutex_lock(&sd_w.lock); /* no drain under way; none begins */
	int go = atomic_exchange(&sd_w.deferred, 0) && !atomic_load(&sd_w.ended);
	if (go)
		sd_drain(0);
	pthread_mutex_unlock(&sd_w.lock);
	if (go && sd_w.joinable) { /* one that left (slots.c): gone by now */
		sd_real_pthread_join(sd_w.thread, NULL);
		sd_w.joinable = 0;
	}
	if (go)
		start_thread_now();
	sd_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void sd_writer_rest_if_single(void)
{
	/* the writer's last tick listed two tasks, and now (a descriptor of a
	 * moment, where no other thread of the program's can see it) */
	if (!atomic_load(&sd_w.inited) || sd_w.cfg.thread_always || !sd_w.joinable ||
	    !atomic_load(&sd_w.thread_running) || atomic_load(&sd_w.ended) ||
	    atomic_load(&sd_w.last_tasks) != 2 || tasks_here_sigsafe() != 2)
		return;
	atomic_store(&sd_w.rest_req, 1);
	wake_writer_sigsafe();
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	int joined = sd_real_pthread_timedjoin_np(sd_w.thread, NULL, &until) == 0;
	atomic_store(&sd_w.rest_req, 0);
	if (!joined)
		return; /* still there: it goes on (rest_req cleared before its tick
			 * is likely; if it left, sd_writer_stop joins it) */
	sd_w.joinable = 0;
	atomic_store(&sd_w.deferred, 1);
	atomic_store(&sd_w.writerless, 1);
}

int sd_writer_thread_wanted_due(void)
{
	return atomic_load(&sd_w.deferred) && tasks_here_sigsafe() > 1;
}

/* The writer thread, unless process slots are scarce (slots.c) or it
 * cannot be made: then the process runs on without one. Returns 0. */
static int start_thread_now(void)
{
	struct sd_slots_why why;
	atomic_store(&sd_w.writerless, 0);
	atomic_store(&sd_w.last_tasks, -1);
	if (sd_slots_scarce(0, &why)) {
		go_writerless("not started", &why, 0);
		return 0;
	}
	sigset_t all, old;
	sigfillset(&all);
	sd_real_pthread_sigmask(SIG_BLOCK, &all, &old);
	atomic_store(&sd_w.stop_req, 0);
	atomic_store(&sd_w.thread_running, 1);
	/* A small stack of its own (glibc's default is RLIMIT_STACK, 8 MiB),
	 * counted in sonde's share of the address space once per process: a
	 * writer started again (a forked child) gets the same size back from
	 * glibc's cache of stacks. A share too small for it (RLIMIT_AS under
	 * 5 MiB) does not stop it: without the writer nothing is recorded. */
	pthread_attr_t attr;
	if (!sd_w.stack_bytes) {
		sd_w.stack_bytes = SD_WRITER_STACK_BYTES + static_tls_bytes();
		sd_mem_charge(sd_w.stack_bytes + 4096); /* its guard page too */
	}
	int have_attr = pthread_attr_init(&attr) == 0;
	if (have_attr && pthread_attr_setstacksize(&attr, sd_w.stack_bytes) != 0) {
		pthread_attr_destroy(&attr);
		have_attr = 0;
	}
	sd_slots_starting();
	int err = sd_w.cfg.create_thread(&sd_w.thread, have_attr ? &attr : NULL, writer_main, NULL);
	if (have_attr)
		pthread_attr_destroy(&attr);
	sd_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		atomic_store(&sd_w.thread_running, 0);
		go_writerless("cannot start", NULL, err);
		return 0;
	}
	sd_w.joinable = 1;
	return 0;
}

int sd_writer_final_flush_sigsafe(const char *reason, int signo, unsigned timeout_ms)
{
	if (!atomic_load(&sd_w.inited))
		return 0;
	if (!atomic_load(&sd_w.thread_running)) {
		/* Without a writer thread this thread writes the end itself, unless
		 * the signal came inside sonde (its lock or the allocator's held):
		 * then what was written is what is kept. */
		if (!atomic_load(&sd_w.writerless) || sd_mem_held_here_sigsafe() ||
		    pthread_mutex_trylock(&sd_w.lock) != 0)
			return 0;
		int e = errno;
		sd_drain_finish(reason, signo);
		errno = e;
		pthread_mutex_unlock(&sd_w.lock);
		return 1;
	}
	final_reason = reason;
	atomic_store(&sd_w.final_signo, signo);
	atomic_store(&sd_w.final_req, 1);
	wake_writer_sigsafe();
	for (unsigned waited = 0; waited < timeout_ms; waited++) {
		if (atomic_load(&sd_w.final_done))
			return 1;
		struct timespec ts = {0, 1000000};
		sd_sys_nanosleep(&ts, NULL);
	}
	return 0;
}
