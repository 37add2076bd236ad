/* slots.c - process slots (RLIMIT_NPROC): when a process may run a writer
 * thread, and how the writers give their slots back.
 *
 * RLIMIT_NPROC bounds the tasks (processes and threads) of the real user,
 * and a writer thread is one of them: under `ulimit -u 150` a program that
 * forks until EAGAIN made 81 children instead of 149, each child's writer
 * holding a slot. The slots are the program's (DESIGN.md), so:
 *
 *  1. start (sd_writer_start, thread.c: process start, fork child, failed
 *     exec): when the soft limit is finite, the process is not exempt
 *     (root's real uid, or CAP_SYS_RESOURCE or CAP_SYS_ADMIN, in the initial
 *     user namespace: the kernel's own exemptions) and the machine's task
 *     count (/proc/loadavg, an upper bound of the user's: the kernel offers
 *     no count per user) + SD_NPROC_MARGIN reaches the limit, no writer is
 *     started: the process drains its rings itself (thread.c, "without a
 *     writer thread").
 *  2. tick: the same test on the writer thread at every tick, the count
 *     followed by its changes (sysinfo: no descriptor taken while the
 *     program runs): the writer leaves.
 *  3. the program was refused a task (fork, posix_spawn or pthread_create
 *     failed with EAGAIN; sampler/interpose/): every writer of its process
 *     tree leaves, the caller waits until their threads are gone, and the
 *     call is made once more (sd_writer_slots_retry_sigsafe). So a writer
 *     started while slots were plenty never holds the one the program is
 *     refused: the program keeps all its slots.
 *
 * The process tree is that of fork: a shared anonymous mapping (16 KiB) made
 * at a process's first fork (sd_slots_fork_prepare), inherited by forked
 * children (an exec starts a new tree), holding a generation that rule 3
 * bumps, each running writer's (pid, tid), and whether the tree said it on
 * stderr (once per tree: a forking program prints one line, not one per
 * child). Before its first fork a process is a tree of its own, in sd_w.
 *
 * Contexts: sd_slots_* run in ordinary context (sd_writer_start's caller, the
 * fork prepare handler, or the writer thread); sd_writer_slots_retry_sigsafe
 * in any, the program's signal handlers included (atomics, tgkill and
 * nanosleep only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "common/sys.h"
#include "writer/writer_int.h"

/* Writers entered in a tree: pid << 32 | tid each, 0 for a free entry. */
#define SD_TREE_WRITERS 2047

struct sd_slots_tree {
	_Atomic unsigned gen;      /* bumped by rule 3: every writer leaves */
	_Atomic int said;          /* the tree's stderr line is printed */
	_Atomic uint64_t writer[SD_TREE_WRITERS];
};

/* ---- the limit ------------------------------------------------------------ */

/* The start of a small file into buf, NUL-terminated: its length, or -1.
 * Straight system calls: none of the program's wrappers (common/sys.h). */
static long read_small(const char *path, char *buf, size_t len)
{
	long fd = sd_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = sd_sys(SYS_read, fd, buf, len - 1);
	sd_sys(SYS_close, fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* Does /proc/self/uid_map map every uid to itself (the initial user
 * namespace)? Unknown counts as no: not exempt. */
static int initial_userns(void)
{
	char buf[128];
	long n = read_small("/proc/self/uid_map", buf, sizeof buf);
	if (n <= 0)
		return 0;
	unsigned long a, b, c;
	int k;
	return sscanf(buf, "%lu %lu %lu %n", &a, &b, &c, &k) == 3 && a == 0 && b == 0 &&
	       c == 4294967295ul && buf[k] == 0;
}

/* The kernel's exemptions from RLIMIT_NPROC (copy_process): the real user
 * is root, or the task is capable of CAP_SYS_RESOURCE or CAP_SYS_ADMIN, both
 * in the initial user namespace (read once: a process that enters another
 * one keeps the answer). */
static int exempt(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	int caps = sd_syscall(SYS_capget, &h, d) == 0 &&
		   (d[0].effective & (1u << CAP_SYS_RESOURCE | 1u << CAP_SYS_ADMIN));
	if (getuid() != 0 && !caps)
		return 0;
	if (sd_w.pslots.init_ns < 0)
		sd_w.pslots.init_ns = initial_userns();
	return sd_w.pslots.init_ns;
}

/* Tasks on the machine: the total of /proc/loadavg ("0.10 0.20 0.30 2/183
 * 4242"), or -1. Costs a descriptor for a moment: where the runtime starts
 * or a forked child begins, before the program runs in it. */
static long machine_tasks(void)
{
	char buf[128];
	if (read_small("/proc/loadavg", buf, sizeof buf) <= 0)
		return -1;
	const char *slash = strchr(buf, '/');
	return slash ? strtol(slash + 1, NULL, 10) : -1;
}

/* The count sysinfo(2) keeps of the machine's tasks, modulo 65536 (16 bits:
 * not the count itself, but its changes, which the writer's ticks follow
 * without a descriptor). */
static uint16_t machine_tasks16(void)
{
	struct sysinfo si;
	return sd_sys(SYS_sysinfo, &si) == 0 ? si.procs : 0;
}

int sd_slots_scarce(int own, struct sd_slots_why *why)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || exempt())
		return 0;
	/* The writer (own) follows the count from the last one read by its
	 * changes; a start reads it. Unknown (no /proc, no descriptor left):
	 * not scarce as far as one can tell; rule 3 still gives the slots back
	 * when the program needs them. */
	long total;
	uint16_t now16 = machine_tasks16();
	if (own && sd_w.pslots.tasks >= 0)
		total = sd_w.pslots.tasks + (int16_t)(uint16_t)(now16 - sd_w.pslots.tasks16);
	else
		total = machine_tasks();
	sd_w.pslots.tasks = total;
	sd_w.pslots.tasks16 = now16;
	unsigned long long lim = rl.rlim_cur;
	if (total < own)
		return 0;
	/* own: the writer asking is one of the tasks counted */
	if ((unsigned long long)(total - own) + SD_NPROC_MARGIN < lim)
		return 0;
	why->limit = lim;
	why->tasks = total - own; /* the program's and others', not this writer */
	why->refused = 0;
	return 1;
}

/* ---- the tree ------------------------------------------------------------ */

void sd_slots_init(void)
{
	sd_w.pslots.init_ns = -1;
	sd_w.pslots.tasks = -1;
	atomic_store(&sd_w.pslots.tid, 0);
}

/* Is the writer of entry e (pid << 32 | tid) still a task, its slot still
 * taken? An exited thread is gone (ESRCH) once the kernel has released it,
 * and its slot with it. async-signal-safe. */
static int alive_sigsafe(uint64_t e)
{
	return sd_sys(SYS_tgkill, (pid_t)(e >> 32), (pid_t)(e & 0xffffffffu), 0) != -ESRCH;
}

static uint64_t own_entry(pid_t tid)
{
	return (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)tid;
}

/* Enters this process's writer in the tree: a free entry, or one whose
 * thread is gone. A full tree leaves it out (it leaves at its next tick
 * all the same; rule 3 does not wait for it). */
static void enter_tree(struct sd_slots_tree *t, pid_t tid)
{
	uint64_t mine = own_entry(tid);
	for (unsigned i = 0; i < SD_TREE_WRITERS; i++) {
		unsigned k = ((unsigned)tid + i) % SD_TREE_WRITERS;
		uint64_t e = atomic_load(&t->writer[k]);
		if (e == mine)
			return;
		if ((!e || !alive_sigsafe(e)) &&
		    atomic_compare_exchange_strong(&t->writer[k], &e, mine))
			return;
	}
}

/* Live writers of this process (own) and of its tree; entries of writers
 * gone are cleared. async-signal-safe. */
static unsigned writers_sigsafe(void)
{
	pid_t tid = atomic_load(&sd_w.pslots.tid);
	unsigned n = tid && alive_sigsafe(own_entry(tid));
	struct sd_slots_tree *t = atomic_load(&sd_w.pslots.tree);
	for (unsigned i = 0; t && i < SD_TREE_WRITERS; i++) {
		uint64_t e = atomic_load(&t->writer[i]);
		if (!e)
			continue;
		if (alive_sigsafe(e))
			n++;
		else
			atomic_compare_exchange_strong(&t->writer[i], &e, 0);
	}
	return n;
}

/* The generation rule 3 bumps: the tree's, or this process's until it has
 * one. */
static _Atomic unsigned *gen_word(void)
{
	struct sd_slots_tree *t = atomic_load(&sd_w.pslots.tree);
	return t ? &t->gen : &sd_w.pslots.gen_own;
}

void sd_slots_starting(void)
{
	sd_w.pslots.gen = atomic_load(gen_word());
}

void sd_slots_enter(void)
{
	pid_t tid = gettid();
	atomic_store(&sd_w.pslots.tid, tid);
	struct sd_slots_tree *t = atomic_load(&sd_w.pslots.tree);
	if (t)
		enter_tree(t, tid);
}

/* The tree is made at the process's first fork, in the parent (before it,
 * rule 3 concerns this process's writer only): a process that never forks
 * maps nothing. Its running writer is entered now (sd_slots_enter enters
 * it when it comes later; both may: an entry is never taken twice). Writer
 * lock held. */
void sd_slots_fork_prepare(void)
{
	if (atomic_load(&sd_w.pslots.tree))
		return;
	struct sd_slots_tree *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return; /* no address space left: rule 3 stays this process's */
	atomic_store(&t->gen, atomic_load(&sd_w.pslots.gen_own));
	atomic_store(&t->said, sd_w.pslots.said);
	atomic_store(&sd_w.pslots.tree, t);
	pid_t tid = atomic_load(&sd_w.pslots.tid);
	if (tid && atomic_load(&sd_w.thread_running))
		enter_tree(t, tid);
}

int sd_slots_leave_due(struct sd_slots_why *why)
{
	if (atomic_load(gen_word()) != sd_w.pslots.gen) {
		struct rlimit rl;
		why->limit = getrlimit(RLIMIT_NPROC, &rl) == 0 ? rl.rlim_cur : RLIM_INFINITY;
		why->tasks = -1;
		why->refused = 1;
		return 2;
	}
	return sd_slots_scarce(1, why);
}

int sd_slots_say_first(void)
{
	struct sd_slots_tree *t = atomic_load(&sd_w.pslots.tree);
	int first = t ? !atomic_exchange(&t->said, 1) : !sd_w.pslots.said;
	sd_w.pslots.said = 1;
	return first;
}

void sd_slots_fork_child(void)
{
	atomic_store(&sd_w.pslots.tid, 0); /* the parent's writer */
}

int sd_writer_slots_retry_sigsafe(unsigned *round)
{
	if (*round || !atomic_load(&sd_w.inited))
		return 0;
	*round = 1;
	int e = errno;
	int retry = 0;
	if (writers_sigsafe()) {
		atomic_fetch_add(gen_word(), 1);
		sd_writer_wake_sigsafe(); /* ours leaves now; the others at their tick */
		/* Until every one is gone, at most 2 s (a writer stopped by a
		 * debugger, or one whose process was killed as it started). */
		for (unsigned ms = 0; ms < 2000 && writers_sigsafe(); ms++) {
			struct timespec ts = {0, 1000000};
			sd_sys(SYS_nanosleep, &ts, NULL);
		}
		retry = 1;
	}
	errno = e;
	return retry;
}
