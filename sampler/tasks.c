/* tasks.c - the program's tasks, checked from the writer thread at every
 * tick (sd_tasks_tick: sonde's descriptors by tasks_fds.c, the loader, the
 * threads made without pthread_create, the children sharing its memory).
 *
 * Called from: the writer thread at every tick (sd_tasks_tick, ordinary
 * context, every signal blocked there); thread end and fork (ordinary
 * context).
 *
 * Tasks made without pthread_create. A raw clone(CLONE_THREAD) thread
 * never passes through the pthread_create wrapper. At every tick the
 * writer reads /proc/self/task (getdents64 on a directory descriptor kept
 * open above the floor: no descriptor of ours appears in the program's low
 * range each tick); a tid that is neither in the registry, nor the writer,
 * nor a foreign thread already, while no pthread_create'd thread is still
 * on its way to registering (sd_rt.starting), is a foreign thread: it gets a
 * record in the registry and a slot in sd_rt.foreign[], and its sources are
 * opened for its tid (perf_event task clock signalling that tid, or the
 * timer fallback); foreign.c samples it without TLS. Its CPU time is read
 * every tick from its thread CPU clock; when its sources cannot be opened,
 * all of it is UNSAMPLED not_sampled. A thread gone from the directory is
 * ended (THREAD_END) and its record freed.
 *
 * Child processes sharing the program's memory (clone(CLONE_VM) without
 * CLONE_THREAD: a different pid, found in /proc/self/task/<tid>/children
 * every CHILD_SCAN_TICKS ticks and confirmed by kcmp(KCMP_VM)) are never
 * sampled: a sampling signal aimed at another process could outlive it into
 * whatever it execs (posix_spawn makes such children), and its handler would
 * write into our memory concurrently. It is listed as a thread of this
 * stream with its process CPU time UNSAMPLED clone_vm_process.
 *
 * Invariants: thread records are touched only under the registry lock
 * (sd_runtime_threads_foreach). sonde's own descriptors are checked by
 * tasks_fds.c.
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

/* ---- tasks made without pthread_create ----------------------------------- */

#define MAX_TASKS 4096
#define CHILD_SCAN_TICKS 10
#define MAX_VM_CHILDREN 16

static int task_dirfd = -1;
/* Threads that deregistered (sd_thread_end) but may still be listed while
 * they finish exiting: never taken for foreign ones. Kept until the kernel
 * no longer has them, however many end between two scans (a ring of 256 let
 * 600 threads ending together be adopted as raw clones, their CPU counted
 * twice). Appended by ending threads under ended_lock, pruned by the writer. */
static pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *ended;
static size_t ended_n, ended_cap;
/* Per scan, sorted: the registered tids and the ended ones. */
static pid_t *known_tids;
static size_t known_n, known_cap;
static _Atomic int ended_lost;
/* Unknown tids of the previous scan: a tid is adopted only when a second
 * scan still finds it unknown (a pthread_create'd thread between clone and
 * registration, or between deregistration and exit, is not foreign). */
static pid_t candidates[SD_MAX_FOREIGN];
static unsigned ncandidates;
static pid_t tids[MAX_TASKS];
static unsigned ntids;
static pid_t writer_tid;

struct vm_child {
	pid_t pid;
	struct sd_ring *ring;
	uint64_t cpu_ns;
};
static struct vm_child vm_children[MAX_VM_CHILDREN];

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* /proc/self/task, kept open above the floor; reopened when a raw close
 * took it. 0 or -errno. */
static int task_dir(void)
{
	if (task_dirfd >= 0 && sd_tasks_fd_remembered_sigsafe(task_dirfd))
		return 0;
	if (task_dirfd >= 0)
		sd_runtime_fd_track_sigsafe(task_dirfd, 0); /* not ours any more */
	task_dirfd = -1;
	/* Beyond sonde's share of descriptors: no scan (raw clones are then
	 * neither sampled nor accounted; the share is said with the clocks). */
	if (!sd_runtime_fd_room_sigsafe(1))
		return -EMFILE;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		/* Without it, threads made without pthread_create and children
		 * sharing our memory are neither sampled nor accounted: said once
		 * (out of descriptors, the clocks' own message comes first). */
		int e = errno;
		static int said;
		if (e != EMFILE && e != ENFILE && !said++)
			sd_msg("sonde: /proc/self/task: %s (threads made without pthread_create are "
			       "neither sampled nor accounted while it cannot be read; check that /proc "
			       "is mounted)", strerror(e));
		return -e;
	}
	fd = sd_kernel_fd_high(fd, sd_rt.fd_floor);
	sd_runtime_fd_track_sigsafe(fd, 1);
	sd_tasks_fd_remember_sigsafe(fd);
	task_dirfd = fd;
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static int read_tasks(void)
{
	if (task_dir() != 0 || lseek(task_dirfd, 0, SEEK_SET) != 0)
		return -1;
	char buf[8192];
	ntids = 0;
	for (;;) {
		long n = sd_syscall(SYS_getdents64, task_dirfd, buf, sizeof buf);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			pid_t tid = (pid_t)atoi(d->d_name);
			if (tid > 0 && ntids < MAX_TASKS)
				tids[ntids++] = tid;
		}
	}
	sd_sort(tids, ntids, sizeof *tids, cmp_tid);
	return 0;
}

/* tids is sorted by read_tasks. */
static int listed(pid_t tid)
{
	return bsearch(&tid, tids, ntids, sizeof *tids, cmp_tid) != NULL;
}

/* Reads a small /proc file relative to the task directory. */
static ssize_t read_task_file(const char *rel, char *buf, size_t len)
{
	int fd = openat(task_dirfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = sd_sys_read(fd, buf, len - 1);
	sd_sys_close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static void comm_of(const char *rel, char name[16])
{
	char buf[64];
	name[0] = 0;
	if (read_task_file(rel, buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(name, 16, "%.15s", buf);
	}
}

/* Appends tid to the growable array (*v, *n, *cap). 0, or -ENOMEM. */
static int tid_push(pid_t **v, size_t *n, size_t *cap, pid_t tid)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		pid_t *p = sd_mem_realloc(*v, c * sizeof *p);
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = tid;
	return 0;
}

static int known_add(pid_t tid)
{
	return tid_push(&known_tids, &known_n, &known_cap, tid);
}

static void add_registered(struct sd_thread *t, void *arg)
{
	int *err = arg;
	if (known_add(t->tid) != 0)
		*err = -ENOMEM;
}

/* The tids sonde knows as pthread-made threads, registered or ended and
 * not yet gone, sorted in `known_tids`; ended ones the kernel no longer has
 * are forgotten. 0, or -ENOMEM (nothing can be told foreign this scan). */
static int known_collect(void)
{
	int err = 0;
	known_n = 0;
	sd_runtime_threads_foreach(add_registered, &err);
	sd_real_pthread_mutex_lock(&ended_lock);
	size_t keep = 0;
	pid_t pid = getpid();
	for (size_t i = 0; i < ended_n; i++) {
		/* Gone for the kernel (the listing itself can skip an entry
		 * while tasks come and go). */
		if (sd_syscall(SYS_tgkill, pid, ended[i], 0) != 0 && errno == ESRCH)
			continue;
		ended[keep++] = ended[i];
		if (known_add(ended[i]) != 0)
			err = -ENOMEM;
	}
	ended_n = keep;
	pthread_mutex_unlock(&ended_lock);
	if (known_n > 1) /* never sort NULL: out of memory leaves it NULL */
		sd_sort(known_tids, known_n, sizeof *known_tids, cmp_tid);
	return err;
}

static int is_known(pid_t tid)
{
	return known_n && bsearch(&tid, known_tids, known_n, sizeof *known_tids, cmp_tid) != NULL;
}

void sd_tasks_thread_gone(pid_t tid)
{
	sd_real_pthread_mutex_lock(&ended_lock);
	if (tid_push(&ended, &ended_n, &ended_cap, tid) != 0)
		atomic_store(&ended_lost, 1); /* no memory: the next scan adopts no thread */
	pthread_mutex_unlock(&ended_lock);
}

static int was_candidate(pid_t tid)
{
	for (unsigned i = 0; i < ncandidates; i++)
		if (candidates[i] == tid)
			return 1;
	return 0;
}

static struct sd_foreign *foreign_of(pid_t tid)
{
	for (int i = 0; i < SD_MAX_FOREIGN; i++)
		if (atomic_load(&sd_rt.foreign[i].tid) == tid)
			return &sd_rt.foreign[i];
	return NULL;
}

static void adopt_foreign(pid_t tid)
{
	static int said, said_full;
	struct sd_foreign *f = foreign_of(0);
	if (!f) {
		if (!said_full++)
			sd_msg("sonde: thread %d: made without pthread_create, and more than %d such "
			       "threads are alive (it is not sampled nor accounted)", (int)tid,
			       SD_MAX_FOREIGN);
		return;
	}
	/* Listed, but gone since (a thread that ended while the listing was
	 * read, and was pruned from the ended ones as the kernel let it go):
	 * nothing to adopt. */
	if (sd_syscall(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH)
		return;
	char rel[32], name[16];
	snprintf(rel, sizeof rel, "%d/comm", (int)tid);
	comm_of(rel, name);
	struct sd_thread *t = sd_runtime_thread_new(tid, name);
	if (!t) {
		/* Tried again at later scans; said once, since until then its
		 * time is missing from the stream altogether. */
		static int said_nomem;
		if (!said_nomem++)
			sd_msg("sonde: thread %d (%s): no memory for its sample buffers: %s (it is "
			       "neither sampled nor accounted while this lasts; lower SONDE_BUFFER_KB)",
			       (int)tid, name, strerror(ENOMEM));
		return;
	}
	int err = sd_source_thread_open_all(t, tid, 0);
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++)
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 1);
	f->t = t;
	f->cpu_ns = 0;
	f->sampled = err == 0;
	atomic_store(&f->stack_lo, 0);
	atomic_store(&f->stack_hi, 0);
	atomic_store(&f->sp, 0);
	sd_runtime_registry_add(t);
	sd_kernel_thread_cpu_ns(tid, &f->cpu_ns);
	atomic_fetch_add(&sd_rt.nforeign, 1);
	atomic_store_explicit(&f->tid, tid, memory_order_release); /* its handler may run now */
	/* Not sampled: all of its time; sampled: the time before it was found. */
	f->unsampled_ns = f->cpu_ns;
	sd_writer_ring_unsampled(t->ring, SD_UNSAMPLED_NOT_SAMPLED, f->unsampled_ns);
	/* It ended meanwhile (gone, or exiting: its name could not be read):
	 * the next scan ends its record; nothing to say */
	if (!f->sampled && (!name[0] || (sd_syscall(SYS_tgkill, getpid(), tid, 0) != 0 &&
					 errno == ESRCH)))
		return;
	/* a pthread sonde had no memory for as it began, or a raw clone */
	int nomem = 0;
	for (unsigned i = 0; i < SD_MAX_NOMEM && !nomem; i++)
		nomem = atomic_load(&sd_rt.nomem_tids[i]) == tid;
	static int said_late;
	if (nomem) {
		if (!said_late++)
			sd_msg("sonde: thread %d (%s): not set up as it began (no memory then), found "
			       "by the writer's scan: %s (lower SONDE_BUFFER_KB%s)", (int)tid, name,
			       f->sampled ? "sampled from its tid, stacks by frame pointers only and "
					    "no counters" : "cannot be sampled, its CPU time counted as "
					    "UNSAMPLED not_sampled",
			       f->sampled ? "; build with -fno-omit-frame-pointer for call paths" : "");
		return;
	}
	if (said++)
		return;
	if (f->sampled)
		sd_msg("sonde: thread %d (%s): made without pthread_create (a raw clone): sampled from "
		       "its tid, found within two writer ticks of its start, stacks by frame pointers "
		       "only and no counters (build with -fno-omit-frame-pointer for call paths)",
		       (int)tid, name);
	else
		sd_msg("sonde: thread %d (%s): made without pthread_create (a raw clone): cannot be "
		       "sampled: %s (its CPU time is counted as UNSAMPLED not_sampled)", (int)tid,
		       name, strerror(-err));
}

static void end_foreign(struct sd_foreign *f)
{
	struct sd_thread *t = f->t;
	atomic_store(&f->tid, 0); /* the thread is gone: no handler of it runs */
	atomic_fetch_sub(&sd_rt.nforeign, 1);
	if (!f->sampled)
		sd_writer_ring_unsampled(t->ring, SD_UNSAMPLED_NOT_SAMPLED, f->cpu_ns);
	sd_runtime_registry_remove(t); /* closes its sources */
	if (t->ring && f->cpu_ns) { /* its CPU time at the last tick it was seen */
		t->ring->cpu_ns = f->cpu_ns;
		t->ring->cpu_known = 1;
	}
	sd_writer_ring_close(t->ring, t->ring ? t->ring->name_begin : "", NULL, 0, NULL);
	sd_mem_free(t->scratch);
	sd_mem_free(t->ovr_pcs);
	sd_mem_free(t->pause_pcs);
	sd_mem_free(t);
	f->t = NULL;
}

/* The stack mapping around a stack pointer the handler saw: the readable
 * /proc/self/maps line that holds it. */
static void find_stack(struct sd_foreign *f)
{
	uintptr_t sp = atomic_load(&f->sp);
	if (!sp || atomic_load(&f->stack_hi))
		return;
	/* Read through a buffer of its own, not stdio: nothing is allocated on
	 * the writer thread (mem/mem.h). Only a line's start is parsed, so a
	 * line longer than the buffer is skipped to its end. */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[4096];
	size_t have = 0;
	int skip = 0, done = 0;
	while (!done) {
		ssize_t n = sd_sys_read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while (!done && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = 0;
			unsigned long lo, hi;
			char perms[8];
			if (!skip && sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && sp >= lo &&
			    sp < hi) {
				if (perms[0] == 'r') {
					atomic_store(&f->stack_lo, (uintptr_t)lo);
					atomic_store_explicit(&f->stack_hi, (uintptr_t)hi,
							      memory_order_release);
				}
				done = 1;
			}
			skip = 0;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1) { /* no newline in a full buffer */
			have = 0;
			skip = 1;
		}
	}
	sd_sys_close(fd);
}

/* update: post the CPU times read (every CHILD_SCAN_TICKS ticks, and at a
 * task's end: UNSAMPLED records are cumulative, one per update). */
static void scan_threads(int update)
{
	for (int i = 0; i < SD_MAX_FOREIGN; i++) {
		struct sd_foreign *f = &sd_rt.foreign[i];
		pid_t tid = atomic_load(&f->tid);
		if (!tid)
			continue;
		if (!listed(tid) || sd_kernel_thread_cpu_ns(tid, &f->cpu_ns) != 0) {
			end_foreign(f);
			continue;
		}
		if (f->t && f->t->ring) { /* its THREAD_END if the process ends first */
			f->t->ring->cpu_ns = f->cpu_ns;
			f->t->ring->cpu_known = 1;
		}
		if (!f->sampled && update)
			sd_writer_ring_unsampled(f->t->ring, SD_UNSAMPLED_NOT_SAMPLED, f->cpu_ns);
		find_stack(f);
	}
	pid_t next[SD_MAX_FOREIGN];
	unsigned nnext = 0;
	/* Without a complete list of the threads sonde made, none is adopted. */
	if (known_collect() != 0 || atomic_exchange(&ended_lost, 0)) {
		ncandidates = 0;
		return;
	}
	for (unsigned i = 0; i < ntids; i++) {
		pid_t tid = tids[i];
		if (tid == writer_tid || foreign_of(tid) || is_known(tid))
			continue;
		/* A pthread_create'd thread may not be registered yet. */
		if (was_candidate(tid) && atomic_load(&sd_rt.starting) == 0)
			adopt_foreign(tid);
		else if (nnext < SD_MAX_FOREIGN)
			next[nnext++] = tid;
	}
	memcpy(candidates, next, nnext * sizeof *next);
	ncandidates = nnext;
}

/* ---- child processes sharing our memory ----------------------------------- */

#ifndef KCMP_VM
#define KCMP_VM 1
#endif

static clockid_t process_cpu_clock(pid_t pid)
{
	return (clockid_t)((~(unsigned)pid << 3) | 2u);
}

static void scan_vm_children(void)
{
	static int said;
	pid_t self = getpid();
	for (unsigned i = 0; i < ntids && i < 64; i++) {
		char rel[48], buf[1024];
		snprintf(rel, sizeof rel, "%d/children", (int)tids[i]);
		if (read_task_file(rel, buf, sizeof buf) <= 0)
			continue;
		for (char *p = buf, *end; *p; p = end) {
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			int known = 0, free_slot = -1;
			for (int k = 0; k < MAX_VM_CHILDREN; k++) {
				known |= vm_children[k].pid == (pid_t)pid;
				if (!vm_children[k].pid && free_slot < 0)
					free_slot = k;
			}
			if (known || free_slot < 0 ||
			    sd_syscall(SYS_kcmp, self, (pid_t)pid, KCMP_VM, 0, 0) != 0)
				continue;
			char path[64], name[16] = "";
			snprintf(path, sizeof path, "/proc/%ld/comm", pid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				ssize_t n = sd_sys_read(fd, name, sizeof name - 1);
				sd_sys_close(fd);
				name[n > 0 ? n : 0] = 0;
				name[strcspn(name, "\n")] = 0;
			}
			struct sd_ring *r = sd_writer_ring_new((pid_t)pid, name);
			if (!r)
				continue;
			vm_children[free_slot] = (struct vm_child){.pid = (pid_t)pid, .ring = r};
			if (!said++)
				sd_msg("sonde: process %ld (%s): a child sharing the program's memory "
				       "(clone with CLONE_VM, not a thread): not sampled; its CPU time is "
				       "listed as UNSAMPLED clone_vm_process of a thread with its pid",
				       pid, name);
		}
	}
}

static void account_vm_children(int update)
{
	for (int k = 0; k < MAX_VM_CHILDREN; k++) {
		struct vm_child *c = &vm_children[k];
		if (!c->pid)
			continue;
		struct timespec ts;
		if (clock_gettime(process_cpu_clock(c->pid), &ts) == 0 &&
		    sd_syscall(SYS_kcmp, getpid(), c->pid, KCMP_VM, 0, 0) == 0) {
			c->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			if (update)
				sd_writer_ring_unsampled(c->ring, SD_UNSAMPLED_CLONE_VM, c->cpu_ns);
			continue;
		}
		/* Gone (reaped, or exec'd into its own memory): its last reading. */
		sd_writer_ring_unsampled(c->ring, SD_UNSAMPLED_CLONE_VM, c->cpu_ns);
		sd_writer_ring_close(c->ring, c->ring->name_begin, NULL, 0, NULL);
		c->pid = 0;
		c->ring = NULL;
	}
}

void sd_tasks_fork_child(void)
{
	for (int i = 0; i < SD_MAX_FOREIGN; i++) {
		atomic_store(&sd_rt.foreign[i].tid, 0);
		sd_rt.foreign[i].t = NULL; /* freed with the registry */
	}
	atomic_store(&sd_rt.nforeign, 0);
	atomic_store(&sd_rt.starting, 0);
	memset(vm_children, 0, sizeof vm_children); /* rings dropped by the writer */
	if (task_dirfd >= 0) {
		/* It names the parent's task directory. */
		sd_runtime_fd_track_sigsafe(task_dirfd, 0);
		sd_real_close(task_dirfd);
		task_dirfd = -1;
	}
	writer_tid = 0;
	ncandidates = 0;
	/* The parent's ended threads are not this process's; another of its
	 * threads may have held the lock at fork. */
	pthread_mutex_init(&ended_lock, NULL);
	ended_n = 0;
}

void sd_tasks_fork_child_open(void)
{
	task_dir();
}

int sd_tasks_tick(int stream_fd_lost)
{
	static unsigned ticks;
	if (atomic_load(&sd_rt.state) != SD_RUNNING || getpid() != sd_rt.pid)
		return -1;
	/* the writer thread of now: it leaves and starts again (writer.c) */
	writer_tid = (pid_t)sd_syscall(SYS_gettid);
	sd_tasks_audit_descriptors(stream_fd_lost);
	if (sd_loader_poll())
		sd_loader_changed(sd_now_ns_sigsafe());
	if (read_tasks() != 0)
		return -1;
	int update = ticks++ % CHILD_SCAN_TICKS == 0;
	scan_threads(update);
	if (update)
		scan_vm_children();
	account_vm_children(update);
	return (int)ntids;
}
