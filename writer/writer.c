/* writer.c - the writer thread, the ring registry and the output file.
 *
 * Who calls what: program threads create and close rings (their own) and
 * report loader changes; the writer thread wakes every few milliseconds,
 * drains every ring into msgpack records and appends them to the file at
 * least every flush_ms; the thread that ends the process (exit, _exit, exec)
 * stops it and writes the last records itself; a SIGTERM-like signal asks the
 * writer thread for a final flush through atomics only.
 *
 * Without a writer thread: while the program has a single thread (no
 * thread of sonde's may show, see "while the program has a single thread"
 * below), where process slots are scarce (RLIMIT_NPROC, slots.c) or the
 * thread cannot be made, or when it left to give its slot back, the process
 * runs on without one (`writerless`): the program's threads drain the rings
 * in their sample handlers (sd_writer_drain_sigsafe) and where sonde already
 * runs in ordinary context with every signal blocked (a thread starting or
 * ending, a fork, a region's end, the query API: drain_self), and the thread
 * that ends the process writes the rest (sd_writer_stop, as always; from a
 * SIGTERM-like signal's handler too). What overflows a ring meanwhile is
 * dropped and counted.
 *
 *   start_thread --one task--> DEFERRED --program's 2nd task--> RUNNING
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
 * joins a thread that left. A fork child and a failed exec
 * (sd_writer_resume) begin again at start_thread.
 *
 * Invariants: `sd_w.lock` guards all writer state; in signal context it is
 * only tried (sd_writer_drain_sigsafe, sd_writer_final_flush_sigsafe), never
 * waited for. The stream file is made lazily (docs/FORMAT.md, Files) and
 * its descriptor kept; before every write, and at every tick, the number is
 * checked to still name the file we created (device and inode), so a program
 * that closes every descriptor or reuses fd numbers can never receive our
 * bytes: a number found gone is forgotten (never closed) and the file opened
 * again by its path. Only whole records are written: a killed process leaves
 * a valid prefix.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/real.h"
#include "common/sys.h"
#include "writer/writer_int.h"
#include "annotate/annotate.h"
#include "mem/mem.h"

struct sd_writer sd_w = {.lock = PTHREAD_MUTEX_INITIALIZER, .out_fd = -1, .dir_fd = -1};

static const char *final_reason = "exit";

void sd_writer_log(const char *line, size_t len)
{
	char buf[SD_LOG_LINE_MAX + 1];
	if (len > SD_LOG_LINE_MAX)
		len = SD_LOG_LINE_MAX;
	memcpy(buf, line, len);
	buf[len] = '\0';
	sd_writer_note(buf);
	buf[len] = '\n';
	/* write by name, not sd_sys_write (common/sys.h): tests/fault's shim
	 * fails sonde's messages here (libsonde's wrapper passes it on) */
	ssize_t w = write(STDERR_FILENO, buf, len + 1);
	(void)w;
}

/* ---- notes: from any thread, no lock ------------------------------------ */

void sd_writer_note(const char *text)
{
	unsigned slot = atomic_fetch_add(&sd_w.notes_head, 1);
	if (slot >= SD_NOTES)
		return;
	size_t n = strnlen(text, sizeof sd_w.notes[slot] - 1);
	memcpy(sd_w.notes[slot], text, n);
	sd_w.notes[slot][n] = 0;
	atomic_fetch_add(&sd_w.notes_done, 1);
}

static void emit_notes(void)
{
	unsigned done = atomic_load(&sd_w.notes_done);
	unsigned head = atomic_load(&sd_w.notes_head);
	if (done < head && head <= SD_NOTES)
		return; /* a note is being written; next time */
	if (done > SD_NOTES)
		done = SD_NOTES;
	while (sd_w.notes_sent < done)
		sd_stream_note(sd_w.notes[sd_w.notes_sent++]);
}

/* ---- child processes: from any thread or handler, no lock ---------------- */

void sd_writer_child_sigsafe(pid_t pid, enum sd_child_event event, int value)
{
	if (!atomic_load(&sd_w.inited) || pid <= 0 || event >= SD_CHILD_NEVENTS)
		return;
	uint64_t h = atomic_load(&sd_w.child_head);
	do {
		if (h - atomic_load(&sd_w.child_tail) >= SD_CHILD_SLOTS) {
			atomic_fetch_add(&sd_w.child_lost, 1);
			return;
		}
	} while (!atomic_compare_exchange_weak(&sd_w.child_head, &h, h + 1));
	struct sd_child_ev *e = &sd_w.child_ev[h % SD_CHILD_SLOTS];
	e->t_ns = sd_now_ns_sigsafe();
	e->pid = (int32_t)pid;
	e->value = value;
	e->event = (unsigned)event;
	atomic_store_explicit(&e->seq, h + 1, memory_order_release);
}

/* The queued CHILD events, in the order their slots were claimed, up to the
 * first one still being filled (next time). Writer lock held. */
static void emit_children(void)
{
	uint64_t tail = atomic_load(&sd_w.child_tail);
	for (;; tail++) {
		struct sd_child_ev *e = &sd_w.child_ev[tail % SD_CHILD_SLOTS];
		if (atomic_load_explicit(&e->seq, memory_order_acquire) != tail + 1)
			break;
		sd_stream_child(e->t_ns, e->pid, e->event, e->value);
		atomic_store_explicit(&sd_w.child_tail, tail + 1, memory_order_release);
	}
	uint64_t lost = atomic_load(&sd_w.child_lost);
	if (lost != sd_w.child_lost_said && !sd_w.child_lost_said)
		sd_msg("sonde: child processes: %llu fork, spawn or wait events were not recorded "
		    "(more than %d between two writer ticks; the report may not know every child)",
		    (unsigned long long)lost, SD_CHILD_SLOTS);
	sd_w.child_lost_said = lost;
}

/* In a forked child: the queue goes on from where the parent had claimed
 * it, so no slot's `seq` (at most that position) can pass for a new event,
 * and no slot is touched (the queue's pages stay shared). The parent's
 * events are the parent's to write. */
static void children_reset(void)
{
	atomic_store(&sd_w.child_tail, atomic_load(&sd_w.child_head));
	atomic_store(&sd_w.child_lost, 0);
	sd_w.child_lost_said = 0;
}

void sd_writer_drop_global_sigsafe(enum sd_drop why)
{
	atomic_fetch_add_explicit(&sd_w.global_drops[why], 1, memory_order_relaxed);
}

/* ---- the file ----------------------------------------------------------- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Moves fd to at least the configured floor (out of the program's low
 * range) and announces it. Returns the descriptor to use. */
static int adopt_fd(int fd)
{
	fd = sd_kernel_fd_high(fd, sd_w.cfg.fd_floor);
	if (sd_w.cfg.fd_track)
		sd_w.cfg.fd_track(fd, 1);
	return fd;
}

static void drop_fd(int close_it)
{
	int fd = atomic_exchange(&sd_w.out_fd, -1);
	if (fd < 0)
		return;
	if (sd_w.cfg.fd_track)
		sd_w.cfg.fd_track(fd, 0);
	if (close_it)
		sd_sys_close(fd);
}

void sd_writer_fd_closed(int fd)
{
	if (fd >= 0 && atomic_load(&sd_w.out_fd) == fd)
		atomic_store(&sd_w.out_fd_dead, 1);
}

/* The output directory is opened (made if missing) by the rule of outdir.c
 * when the runtime starts, so a bad or unsafe SONDE_OUTPUT is said at once
 * although the stream file is made lazily (flush_file_at). sd_w.dir becomes
 * the directory's absolute path (a program that changes its working
 * directory, or its forked children, still write there) and the directory's
 * descriptor is kept, above the floor, until the file is made in it: it is
 * also the descriptor number reserved for the file, so a program that uses
 * up RLIMIT_NOFILE before its first sample still gets its stream. It is
 * closed only if the number still names the directory (device and inode),
 * never after a raw close_range took it and the program reused the number.
 * Once the process changes its root or mount namespace (sd_writer_pin_output)
 * the descriptor is kept for good and is the only way to the directory: its
 * path may name another directory, or one inside a chroot jail, by then. */
static int prepare_dir(void)
{
	mode_t dmode = sd_w.cfg.dir_mode ? sd_w.cfg.dir_mode : 0700;
	struct sd_outdir_why why = {.knob = "SONDE_OUTPUT"};
	int dirfd = sd_outdir_open(sd_w.dir, dmode, &why);
	if (dirfd < 0) {
		sd_msg("sonde: SONDE_OUTPUT: %s (%s; this run is not profiled)", why.what, why.hint);
		return dirfd;
	}
	char abs[sizeof sd_w.dir];
	if (sd_outdir_path(dirfd, abs, sizeof abs) == 0)
		memcpy(sd_w.dir, abs, sizeof abs);
	struct stat st;
	fstat(dirfd, &st);
	sd_w.dir_dev = st.st_dev;
	sd_w.dir_ino = st.st_ino;
	sd_w.dir_fd = adopt_fd(dirfd);
	return 0;
}

/* Does the kept descriptor still name the output directory (device and
 * inode)? A raw close_range may have taken it and the program reused it. */
static int dir_fd_ours(void)
{
	struct stat st;
	return sd_w.dir_fd >= 0 && fstat(sd_w.dir_fd, &st) == 0 && st.st_dev == sd_w.dir_dev &&
	       st.st_ino == sd_w.dir_ino;
}

/* Lets go of the kept descriptor (no longer spared from the program's
 * close): returns it if it is still the directory's, else -1 (forgotten,
 * never closed: the number may be the program's now). */
static int release_dir_fd(void)
{
	int fd = sd_w.dir_fd, ours = dir_fd_ours();
	sd_w.dir_fd = -1;
	if (fd >= 0 && sd_w.cfg.fd_track)
		sd_w.cfg.fd_track(fd, 0);
	return ours ? fd : -1;
}

/* The directory's descriptor for making the file (the caller closes it):
 * the kept one, or the directory opened again by its absolute path. */
static int take_dir_fd(void)
{
	int fd = release_dir_fd();
	if (fd < 0 && prepare_dir() == 0)
		fd = release_dir_fd();
	return fd;
}

/* At every writer tick while the file is not made yet. Writer lock held. */
static void dir_fd_check(void)
{
	if (sd_w.dir_fd >= 0 && !dir_fd_ours())
		release_dir_fd();
}

/* Closes the kept directory descriptor, if it still names the directory. */
static void drop_dir_fd(void)
{
	int fd = release_dir_fd();
	if (fd >= 0)
		sd_sys_close(fd);
}

/* Made by sd_writer_pin_output (below), which needs it. */
static int create_file(void);
static void stream_lost(void);

void sd_writer_pin_output(void)
{
	if (!atomic_load(&sd_w.inited))
		return;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (!sd_w.dir_pinned) {
		if (!dir_fd_ours()) {
			release_dir_fd();
			prepare_dir();
		}
		sd_w.dir_pinned = 1;
	}
	if (sd_w.file_pending && !atomic_load(&sd_w.ended)) {
		sd_w.file_pending = 0;
		if (create_file() != 0)
			stream_lost();
	}
	pthread_mutex_unlock(&sd_w.lock);
}

/* The stream cannot be written any more (said by the caller): what is buffered is
 * discarded, and the threads' next samples turn their sources off (a run that is
 * not profiled does not pay for sampling). */
static void stream_lost(void)
{
	sd_w.file_ok = 0;
	atomic_store(&sd_w.discarding, 1);
}

int sd_writer_discarding_sigsafe(void)
{
	return atomic_load_explicit(&sd_w.discarding, memory_order_relaxed);
}

/* Creates a new file for this process, <exe>.<host>.<pid>[.<seq>].sonde, in
 * the output directory (prepare_dir); sd_w.path is the file's absolute path,
 * by which it is opened again (checked by device and inode). */
static int create_file(void)
{
	mode_t fmode = sd_w.cfg.file_mode ? sd_w.cfg.file_mode : 0600;
	int pinned = sd_w.dir_pinned;
	int dirfd = !pinned ? take_dir_fd() : dir_fd_ours() ? sd_w.dir_fd : -1;
	if (dirfd < 0) {
		if (pinned)
			sd_msg("sonde: SONDE_OUTPUT: '%s': the output directory's descriptor was closed "
			    "after the process changed its root or mount namespace (chroot, unshare, "
			    "setns): no stream for this process (its path would name another "
			    "directory now)", sd_w.dir);
		return -ENOENT;
	}
	char host[256] = "host";
	gethostname(host, sizeof host - 1);
	int err = -EEXIST;
	for (int seq = 0; seq < 1000; seq++) {
		char suffix[16] = "";
		if (seq)
			snprintf(suffix, sizeof suffix, ".%d", seq);
		int len = snprintf(sd_w.path, sizeof sd_w.path, "%s/%s.%s.%d%s.sonde", sd_w.dir,
				   base_name(sd_w.exe), host, (int)getpid(), suffix);
		if (len < 0 || len >= (int)sizeof sd_w.path) {
			sd_msg("sonde: SONDE_OUTPUT: '%s': path too long (use a shorter directory)",
			    sd_w.dir);
			err = -ENAMETOOLONG;
			break;
		}
		int fd = dirfd >= 0 ? sd_outdir_create_file(dirfd, base_name(sd_w.path), fmode)
				    : sd_outdir_create_file(AT_FDCWD, sd_w.path, fmode);
		if (fd == -EMFILE && dirfd >= 0 && !pinned) {
			/* Out of descriptors: the directory's number was the one kept
			 * for the file. Same directory, by its absolute path. */
			sd_sys_close(dirfd);
			dirfd = -1;
			fd = sd_outdir_create_file(AT_FDCWD, sd_w.path, fmode);
		}
		if (fd == -EEXIST)
			continue;
		if (fd < 0) {
			err = fd;
			sd_msg("sonde: SONDE_OUTPUT: cannot create a file in '%s': %s "
			    "(set SONDE_OUTPUT to a writable directory; this run is not profiled)",
			    sd_w.dir, strerror(-err));
			break;
		}
		if (dirfd >= 0 && !pinned)
			sd_sys_close(dirfd);
		struct stat st;
		fstat(fd, &st);
		sd_w.dev = st.st_dev;
		sd_w.ino = st.st_ino;
		sd_w.seq = seq;
		sd_w.out_bytes = 0;
		atomic_store(&sd_w.out_fd_dead, 0);
		atomic_store(&sd_w.out_fd, adopt_fd(fd));
		sd_w.file_ok = 1;
		if (sd_w.cfg.verbose)
			sd_msg("sonde: profiling to %s", sd_w.path);
		return 0;
	}
	if (dirfd >= 0 && !pinned)
		sd_sys_close(dirfd);
	if (err == -EEXIST)
		sd_msg("sonde: SONDE_OUTPUT: too many files for this process in '%s' "
		    "(clean the directory)", sd_w.dir);
	return err;
}

/* Is fd still the stream file we created (device and inode)? */
static int names_our_file(int fd, struct stat *st)
{
	return fstat(fd, st) == 0 && st->st_dev == sd_w.dev && st->st_ino == sd_w.ino;
}

int sd_writer_fd_is_stream(int fd)
{
	struct stat st;
	return fd >= 0 && atomic_load(&sd_w.out_fd) == fd && names_our_file(fd, &st);
}

/* Our descriptor number no longer names our file: the program closed it
 * without going through libc's close/close_range/closefrom (a raw system
 * call), and the number may already hold one of the program's files. The
 * number is forgotten, never closed nor written. Writer lock held. Returns 1
 * when this is news. */
static int out_fd_lost(void)
{
	int fd = atomic_load(&sd_w.out_fd);
	struct stat st;
	if (fd < 0 || atomic_load(&sd_w.out_fd_dead) || names_our_file(fd, &st))
		return 0;
	/* Forgotten but left marked: the number may already be another sonde
	 * descriptor (a sampling descriptor re-armed since the close); the tick
	 * hook checks every marked number by its mark and unmarks stale ones. */
	atomic_store(&sd_w.out_fd, -1);
	sd_w.lost_pending = 1;
	return 1;
}

/* Opens the stream file again by path, only if the path still names the
 * file we created (device and inode): never someone else's file. -1 and
 * errno (ESTALE when the path names another file) otherwise. */
static int reopen_same_file(void)
{
	int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
	int fd = !sd_w.dir_pinned ? open(sd_w.path, flags)
		 : dir_fd_ours() ? openat(sd_w.dir_fd, base_name(sd_w.path), flags) : -1;
	if (fd < 0)
		return -1;
	struct stat st;
	if (!names_our_file(fd, &st)) {
		sd_sys_close(fd);
		errno = ESTALE;
		return -1;
	}
	return adopt_fd(fd);
}

/* The descriptor to append to: the one we hold, or the file opened again
 * after the program closed our number (through the close wrappers, or behind
 * our back with a raw system call). Checked to be our file (device and
 * inode) right before every write, never someone else's. -1 when the file is
 * gone or replaced. */
static int output_fd(void)
{
	if (atomic_load(&sd_w.out_fd_dead)) {
		drop_fd(0); /* the number is the program's now: never close it */
		atomic_store(&sd_w.out_fd_dead, 0);
	}
	out_fd_lost();
	int fd = atomic_load(&sd_w.out_fd);
	if (fd < 0) {
		fd = reopen_same_file();
		if (fd < 0)
			return -1;
		atomic_store(&sd_w.out_fd, fd);
		if (sd_w.lost_pending && !sd_w.reopened) {
			sd_w.reopened = 1;
			sd_msg("sonde: %s: the stream's descriptor was closed behind sonde's back (a raw "
			    "close_range or close system call): the same file was opened again and "
			    "profiling goes on (the unsampled CPU time is counted in the stream)",
			    sd_w.path);
		}
		sd_w.lost_pending = 0;
	}
	struct stat st;
	if (!names_our_file(fd, &st)) {
		drop_fd(0);
		errno = ESTALE;
		return -1;
	}
	if ((uint64_t)st.st_size > sd_w.out_bytes) {
		/* A write cut short left part of a record: cut back to whole ones. */
		if (ftruncate(fd, (off_t)sd_w.out_bytes) != 0)
			return -1;
	}
	return fd;
}

/* The stream file is made lazily: records are kept in memory until the
 * process has a sample, or has lived one flush period, or has buffered
 * SD_LAZY_BYTES, or ends (exit, signal). A process that execs before any of
 * these (the child of a fork-then-exec, typically) leaves no file: the new
 * image writes the stream of its pid. So a short command costs one small
 * stream, not two, and nothing is created for a child that only execs. */
#define SD_LAZY_BYTES (64u << 10)

static int file_due(void)
{
	return sd_w.n_samples > 0 || sd_w.sbuf.size >= SD_LAZY_BYTES ||
	       sd_now_ns_sigsafe() - sd_w.t0_mono >= sd_w.cfg.flush_ms * 1000000ull;
}

/* Appends the encoded records to the file (made first if it is due, or if
 * final). Writer lock held. */
static void flush_file_at(int final)
{
	if (sd_w.file_pending) {
		if (!final && !file_due())
			return; /* keep buffering */
		sd_w.file_pending = 0;
		if (create_file() != 0)
			stream_lost();
	}
	sd_w.last_flush_ns = sd_now_ns_sigsafe();
	if (!sd_w.sbuf.size)
		return;
	if (!sd_w.file_ok) {
		msgpack_sbuffer_clear(&sd_w.sbuf);
		return;
	}
	int fd = output_fd();
	if (fd < 0) {
		stream_lost();
		int e = errno;
		sd_msg("sonde: %s: stream file vanished or was replaced (%s; profiling data from now "
		    "on is discarded; keep SONDE_OUTPUT out of the program's way)", sd_w.path,
		    e == ESTALE ? "the path names another file now" : strerror(e));
		msgpack_sbuffer_clear(&sd_w.sbuf);
		return;
	}
	const char *p = sd_w.sbuf.data;
	size_t left = sd_w.sbuf.size;
	while (left) {
		/* by name, as the messages (sd_writer_vsay): tests/fault fails it */
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EBADF && atomic_load(&sd_w.out_fd_dead)) {
			/* The program closed our descriptor under us: open again. */
			fd = output_fd();
			if (fd >= 0)
				continue;
		}
		if (n <= 0) {
			int e = n < 0 ? errno : ENOSPC;
			if (ftruncate(fd, (off_t)sd_w.out_bytes) != 0)
				(void)0;
			stream_lost();
			sd_msg("sonde: %s: write failed: %s (profiling data from now on is discarded; "
			    "check free space)", sd_w.path, strerror(e));
			break;
		}
		p += n;
		left -= (size_t)n;
		sd_w.out_bytes += (uint64_t)n;
	}
	sd_w.n_bytes += sd_w.sbuf.size;
	msgpack_sbuffer_clear(&sd_w.sbuf);
}

static void flush_file(void)
{
	flush_file_at(0);
}

/* ---- rings -------------------------------------------------------------- */

static void drain_self(void);

static uint32_t ring_max_rec(void)
{
	return (uint32_t)((sizeof(struct sd_rec) + (sd_w.cfg.max_depth + 1 + SD_MAX_COUNTERS) * 8 +
			   7) & ~7ul);
}

/* Buffers of ended threads are kept for the next ones (up to SD_RING_POOL):
 * mapping and unmapping a ring, and touching its pages again, cost a few
 * microseconds per thread. A thread that ends with its ring drained hands
 * its buffers back at once (sd_writer_ring_close), so a program that starts
 * and joins threads faster than the writer ticks reuses the same few. */

/* Writer lock held. */
static void ring_bufs_release(struct sd_ring *r)
{
	if (!r->buf)
		return;
	if (r->buf != MAP_FAILED && r->prev_pcs && r->prev_nodes &&
	    sd_w.nspare < SD_RING_POOL && r->cap_bytes == sd_w.cfg.ring_bytes) {
		sd_w.spare[sd_w.nspare++] =
			(struct sd_ring_bufs){r->buf, r->prev_pcs, r->prev_nodes};
	} else {
		if (r->buf != MAP_FAILED)
			sd_mem_unmap(r->buf, r->cap_bytes);
		sd_mem_free(r->prev_pcs);
		sd_mem_free(r->prev_nodes);
	}
	r->buf = NULL;
	r->prev_pcs = NULL;
	r->prev_nodes = NULL;
}

/* Writer lock held. */
static void ring_free(struct sd_ring *r)
{
	ring_bufs_release(r);
	sd_mem_free(r->blk_pcs);
	sd_mem_free(r);
}

/* A new thread's ring size: SONDE_BUFFER_KB's, unless sonde has a share of
 * RLIMIT_AS (mem.h). The share is sized for SD_MEM_THREADS threads: the ring
 * is then halved, down to SD_RING_MIN_BYTES, until it fits in a thread's
 * part of the share beside the thread's other costs (cfg.thread_bytes), and
 * in a quarter of what is left (threads that come when the share runs short
 * still get one). Said once. */
static uint64_t ring_bytes_for(pid_t tid, const char *name)
{
	uint64_t cap = sd_w.cfg.ring_bytes;
	size_t left = sd_mem_left();
	if (left == SIZE_MAX)
		return cap;
	size_t part = sd_mem_budget() / SD_MEM_THREADS;
	part = part > sd_w.cfg.thread_bytes ? part - sd_w.cfg.thread_bytes : 0;
	while (cap > SD_RING_MIN_BYTES && (cap > part || cap > left / 4))
		cap >>= 1;
	if (cap < sd_w.cfg.ring_bytes && !atomic_exchange(&sd_w.ring_cut_said, 1))
		sd_msg("sonde: SONDE_BUFFER_KB: %u KiB per thread does not fit in sonde's share of "
		    "RLIMIT_AS (1/%u of %llu MiB: %zu MiB): thread %d (%s) and later ones get rings "
		    "of %llu KiB at most (raise RLIMIT_AS or lower SONDE_BUFFER_KB)",
		    sd_w.cfg.ring_bytes / 1024, SD_MEM_SHARE,
		    (unsigned long long)(sd_mem_limit() >> 20), sd_mem_budget() >> 20, (int)tid,
		    name ? name : "", (unsigned long long)(cap / 1024));
	return cap;
}

struct sd_ring *sd_writer_ring_new(pid_t tid, const char *name)
{
	if (!atomic_load(&sd_w.inited))
		return NULL;
	struct sd_ring *r = sd_mem_calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->cap_bytes = sd_w.cfg.ring_bytes;
	r->max_rec_bytes = ring_max_rec();
	/* wall-time: the stack where the thread waits (offcpu.c) */
	if (sd_w.cfg.wall_source >= 0 &&
	    !(r->blk_pcs = sd_mem_alloc(SD_BLK_BUFS * (size_t)sd_w.cfg.max_depth * sizeof *r->blk_pcs))) {
		sd_mem_free(r);
		return NULL;
	}
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (sd_w.nspare) { /* a finished thread's: same sizes, contents do not matter */
		struct sd_ring_bufs b = sd_w.spare[--sd_w.nspare];
		r->buf = b.buf, r->prev_pcs = b.prev_pcs, r->prev_nodes = b.prev_nodes;
	}
	pthread_mutex_unlock(&sd_w.lock);
	if (!r->buf) {
		r->cap_bytes = ring_bytes_for(tid, name);
		r->buf = sd_mem_room(r->cap_bytes) ? sd_mem_map(r->cap_bytes, 0) : MAP_FAILED;
		r->prev_pcs = sd_mem_alloc((sd_w.cfg.max_depth + 1) * sizeof *r->prev_pcs);
		r->prev_nodes = sd_mem_alloc((sd_w.cfg.max_depth + 1) * sizeof *r->prev_nodes);
		if (r->buf == MAP_FAILED || !r->prev_pcs || !r->prev_nodes) {
			sd_real_pthread_mutex_lock(&sd_w.lock);
			ring_free(r);
			pthread_mutex_unlock(&sd_w.lock);
			return NULL;
		}
	}
	r->tid = tid;
	r->t_begin_ns = sd_now_ns_sigsafe();
	r->begin_cpu_known = sd_kernel_thread_cpu_ns(tid, &r->begin_cpu_ns) == 0;
	snprintf(r->name_begin, sizeof r->name_begin, "%s", name ? name : "");
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (!sd_w.rings_tail)
		sd_w.rings_tail = &sd_w.rings;
	*sd_w.rings_tail = r;
	sd_w.rings_tail = &r->next;
	pthread_mutex_unlock(&sd_w.lock);
	drain_self();
	return r;
}

void sd_writer_ring_final(struct sd_ring *r, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu)
{
	if (!r || n > SD_MAX_COUNTERS)
		return;
	if (n)
		memcpy(r->final_deltas, final, n * sizeof *final);
	r->nfinal = n;
	if (cpu && cpu->known) {
		r->cpu_ns = cpu->cpu_ns;
		r->user_ns = cpu->user_ns;
		r->sys_ns = cpu->sys_ns;
		r->cpu_known = cpu->known;
	}
}

void sd_writer_ring_close(struct sd_ring *r, const char *name, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu)
{
	if (!r)
		return;
	sd_writer_ring_final(r, final, n, cpu);
	snprintf(r->name_end, sizeof r->name_end, "%s", name ? name : "");
	atomic_store(&r->t_end_ns, sd_now_ns_sigsafe());
	/* Closed by its own thread and drained already (a short thread, or one
	 * the writer just caught up with): its buffers go to the next thread
	 * now, not at the next tick. The writer reads a buffer only between tail
	 * and head, under the lock held here. */
	SD_ASSERT(!atomic_load(&r->closed));
	if (cpu && pthread_mutex_trylock(&sd_w.lock) == 0) {
		if (atomic_load_explicit(&r->head, memory_order_acquire) ==
		    atomic_load_explicit(&r->tail, memory_order_acquire))
			ring_bufs_release(r);
		pthread_mutex_unlock(&sd_w.lock);
	}
	atomic_store_explicit(&r->closed, 1, memory_order_release);
	if (cpu) /* its own thread, ordinary context, signals blocked */
		drain_self();
}

void sd_writer_ring_unsampled(struct sd_ring *r, enum sd_unsampled why, uint64_t cpu_ns)
{
	if (!r || (unsigned)why >= SD_UNSAMPLED_NREASONS)
		return;
	atomic_store(&r->unsampled_ns[why], cpu_ns);
	atomic_fetch_or(&r->unsampled_posted, 1u << why); /* after the value */
}

static void emit_unsampled(struct sd_ring *r)
{
	static const char *const names[SD_UNSAMPLED_NREASONS] = SD_UNSAMPLED_NAMES;
	uint32_t posted = atomic_load(&r->unsampled_posted); /* before the values */
	for (unsigned i = 0; i < SD_UNSAMPLED_NREASONS; i++) {
		uint64_t v = atomic_load(&r->unsampled_ns[i]);
		int first = (posted >> i & 1) && !(r->unsampled_written >> i & 1);
		if (v != r->unsampled_sent[i] || first) {
			r->unsampled_sent[i] = v;
			r->unsampled_written |= 1u << i;
			sd_stream_unsampled(r->idx, names[i], v);
		}
	}
}

void sd_writer_ring_regions(struct sd_ring *r, struct sd_rtable *rt)
{
	if (r)
		atomic_store_explicit(&r->regions, rt, memory_order_release);
}

/* An entry's totals if they changed, then its call still open (REGION_OPEN
 * after REGION_STATS: the reader takes a later REGION_STATS as the close). */
static void emit_region_stat(void *ring, const struct sd_region_stat *s)
{
	if (s->changed)
		sd_stream_region_stat(ring, s);
	if (s->open_begin_ns)
		sd_stream_region_open(ring, s);
}

/* REGION_STATS of the ring's thread: what changed, at most once a flush
 * period while it runs, and once more at its end or the process's. */
static void emit_regions(struct sd_ring *r, int last)
{
	struct sd_rtable *rt = atomic_load_explicit(&r->regions, memory_order_acquire);
	if (!rt || !r->idx)
		return; /* no regions timed in this thread: no clock read either */
	uint64_t now = sd_now_ns_sigsafe();
	if (!last && now - r->regions_written_ns < sd_w.cfg.flush_ms * 1000000ull)
		return;
	r->regions_written_ns = now;
	sd_annotate_rtable_collect(rt, emit_region_stat, r);
}

static void drain(int final);

/* Rings are drained: by the writer thread, or by the program's threads
 * (writerless, until the stream's END). */
static int drained(void)
{
	return atomic_load(&sd_w.inited) &&
	       (atomic_load(&sd_w.thread_running) ||
		(atomic_load(&sd_w.writerless) && !atomic_load(&sd_w.ended)));
}

/* A process without a writer thread (see the top of this file): the
 * calling thread drains every ring and writes when a flush period has
 * passed. Ordinary context, every signal blocked by the caller; nothing
 * waits (a busy lock means another thread is draining). */
static void drain_self(void)
{
	if (!atomic_load(&sd_w.writerless) || sd_mem_held_here_sigsafe() ||
	    pthread_mutex_trylock(&sd_w.lock) != 0)
		return;
	if (!atomic_load(&sd_w.ended)) {
		atomic_store(&sd_w.drained_ns, sd_now_ns_sigsafe());
		drain(0);
		if (sd_now_ns_sigsafe() - sd_w.last_flush_ns >= sd_w.cfg.flush_ms * 1000000ull)
			flush_file();
	}
	pthread_mutex_unlock(&sd_w.lock);
}

void sd_writer_drain_self(void)
{
	drain_self();
}

size_t sd_writer_leaf_pcs(struct sd_top_pc **out)
{
	*out = NULL;
	if (!drained())
		return 0;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	drain(0);
	size_t n = sd_stream_leaf_copy(out);
	pthread_mutex_unlock(&sd_w.lock);
	return n;
}

int sd_writer_flush_now(void)
{
	if (!drained())
		return -EAGAIN;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	for (struct sd_ring *r = sd_w.rings; r; r = r->next)
		r->regions_written_ns = 0; /* due now */
	drain(0);
	flush_file();
	pthread_mutex_unlock(&sd_w.lock);
	return 0;
}

static void emit_drops(struct sd_ring *r)
{
	int changed = 0;
	uint64_t now[SD_DROP_NREASONS];
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		now[i] = atomic_load_explicit(&r->drops[i], memory_order_relaxed);
		changed |= now[i] != r->drops_sent[i];
	}
	if (!changed)
		return;
	memcpy(r->drops_sent, now, sizeof now);
	sd_stream_drops(r->idx, now);
}

/* Drains every ring into records. Writer lock held. `all`: also rings of
 * threads that are still running when the process ends. */
static void drain(int final)
{
	emit_notes();
	emit_children();
	struct sd_ring **p;
	for (p = &sd_w.rings; *p;) {
		struct sd_ring *r = *p;
		int closed = atomic_load_explicit(&r->closed, memory_order_acquire);
		if (!r->idx)
			sd_stream_thread(r);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		while (tail != head) {
			const struct sd_rec *rec = (const void *)(r->buf + (tail & (r->cap_bytes - 1)));
			SD_ASSERT(rec->len_bytes >= sizeof *rec && rec->len_bytes <= head - tail &&
				  (rec->kind == SD_REC_PAD || rec->len_bytes <= r->max_rec_bytes));
			if (rec->kind == SD_REC_SAMPLE)
				sd_stream_sample(r, rec);
			else if (rec->kind == SD_REC_REGION)
				sd_stream_region(r, rec);
			tail += rec->len_bytes;
			if (sd_w.sbuf.size > (1u << 20)) {
				atomic_store_explicit(&r->tail, tail, memory_order_release);
				flush_file();
			}
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		emit_drops(r);
		if (!closed) {
			sd_offcpu_tick(r);
			uint64_t now_ns = sd_now_ns_sigsafe(), cpu;
			if (r->idx && now_ns - r->cpu_written_ns >= sd_w.cfg.flush_ms * 1000000ull &&
			    sd_kernel_thread_cpu_ns(r->tid, &cpu) == 0) {
				sd_stream_thread_cpu(r, now_ns, cpu);
				r->cpu_written_ns = now_ns;
			}
		}
		emit_unsampled(r);
		emit_regions(r, closed || final);
		if (closed || final) {
			sd_offcpu_final(r); /* time kept for want of a stack */
			if (!closed && !r->cpu_known && sd_kernel_thread_cpu_ns(r->tid, &r->cpu_ns) == 0)
				r->cpu_known = sd_kernel_thread_cpu_split(r->tid, r->cpu_ns, &r->user_ns,
									  &r->sys_ns) == 0 ? 2 : 1;
			if (!closed) {
				char path[64];
				memcpy(r->name_end, r->name_begin, sizeof r->name_end);
				int fd = -1;
				if (r->tid == gettid()) { /* the exiting thread's own: no file */
					char name[16] = "";
					if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
						memcpy(r->name_end, name, sizeof name);
				} else { /* not stdio: no malloc on the writer thread (mem.h) */
					snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)r->tid);
					fd = open(path, O_RDONLY | O_CLOEXEC);
				}
				if (fd >= 0) {
					char name[sizeof r->name_end];
					ssize_t n = sd_sys_read(fd, name, sizeof name - 1);
					sd_sys_close(fd);
					if (n > 0) {
						name[n] = 0;
						name[strcspn(name, "\n")] = 0;
						memcpy(r->name_end, name, sizeof name);
					}
				}
				atomic_store(&r->t_end_ns, sd_now_ns_sigsafe());
			}
			sd_stream_thread_end(r);
		}
		if (closed) {
			for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
				sd_w.n_dropped_gone += r->drops_sent[i];
			*p = r->next;
			sd_annotate_rtable_free(atomic_load(&r->regions));
			ring_free(r);
		} else {
			p = &r->next;
		}
	}
	sd_w.rings_tail = p;
	uint64_t now[SD_DROP_NREASONS];
	int changed = 0;
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		now[i] = atomic_load(&sd_w.global_drops[i]);
		changed |= now[i] != sd_w.global_drops_sent[i];
	}
	if (changed) {
		memcpy(sd_w.global_drops_sent, now, sizeof now);
		sd_stream_drops(0, now);
	}
}

/* Drain everything, END, flush. Writer lock held. */
static void finish(const char *reason, int signo)
{
	if (atomic_exchange(&sd_w.ended, 1))
		return;
	if (sd_w.file_pending && !strcmp(reason, "exec")) {
		drain(0);
		if (!file_due())
			return; /* no file: the new image writes this pid's stream (if
				 * exec fails, buffering simply goes on) */
	}
	drain(1);
	sd_stream_end(reason, signo);
	flush_file_at(1);
}

/* ---- the thread --------------------------------------------------------- */

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
	if (sd_w.dir_pinned && dir_fd_ours()) /* its path may name another directory */
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

static void *writer_main(void *unused)
{
	(void)unused;
	unsigned tick = sd_w.cfg.flush_ms < 10 ? sd_w.cfg.flush_ms : 10;
	uint64_t single_since = 0; /* the program down to one thread since */
	unsigned seq = 0;          /* sd_w.create_seq then */
	int tasks = -1;            /* what the last tick listed */
	int rest = 0;
	sd_slots_enter();
	for (;;) {
		sleep_ms(tick);
		if (atomic_load(&sd_w.final_req)) {
			sd_real_pthread_mutex_lock(&sd_w.lock);
			finish(final_reason, atomic_load(&sd_w.final_signo));
			pthread_mutex_unlock(&sd_w.lock);
			atomic_store(&sd_w.final_done, 1);
			break;
		}
		if (atomic_load(&sd_w.stop_req) || atomic_load(&sd_w.rest_req))
			break;
		/* The program's threads have ended: after a flush period of one
		 * thread, sonde's leaves too (drained first; it starts again with
		 * the program's next thread). */
		if (!sd_w.cfg.thread_always) {
			uint64_t now = sd_now_ns_sigsafe();
			if (tasks != 2) {
				single_since = 0;
			} else if (!single_since) {
				single_since = now;
				seq = atomic_load(&sd_w.create_seq);
			} else if (now - single_since >= sd_w.cfg.flush_ms * 1000000ull) {
				/* Leaving, unless the program began a thread since: its
				 * pthread_create bumps create_seq, then looks at deferred
				 * (sd_writer_thread_wanted); here deferred is set, then
				 * create_seq read: one of the two sees the other. */
				sd_real_pthread_mutex_lock(&sd_w.lock);
				atomic_store(&sd_w.writerless, 1);
				atomic_store(&sd_w.deferred, 1);
				rest = atomic_load(&sd_w.create_seq) == seq;
				if (!rest) {
					atomic_store(&sd_w.deferred, 0);
					atomic_store(&sd_w.writerless, 0);
					single_since = 0;
				}
				pthread_mutex_unlock(&sd_w.lock);
				if (rest)
					break;
			}
		}
		struct sd_slots_why why;
		int leave = sd_slots_leave_due(&why); /* its slot is the program's */
		if (leave) {
			go_writerless("stopped", &why, 0);
			break;
		}
		if (sd_w.cfg.tick) {
			/* Our descriptor gone behind our back means the program closed
			 * descriptors with a raw system call: the sampler checks its own
			 * before anything is read or written through them. */
			sd_real_pthread_mutex_lock(&sd_w.lock);
			int lost = out_fd_lost();
			dir_fd_check();
			pthread_mutex_unlock(&sd_w.lock);
			tasks = sd_w.cfg.tick(lost);
			atomic_store(&sd_w.last_tasks, tasks);
		}
		sd_real_pthread_mutex_lock(&sd_w.lock);
		drain(0);
		if (sd_now_ns_sigsafe() - sd_w.last_flush_ns >= sd_w.cfg.flush_ms * 1000000ull)
			flush_file();
		pthread_mutex_unlock(&sd_w.lock);
	}
	if (rest) { /* deferred and writerless set: joined by whoever starts it again */
		sd_real_pthread_mutex_lock(&sd_w.lock);
		drain(0);
		flush_file();
		atomic_store(&sd_w.thread_running, 0);
		pthread_mutex_unlock(&sd_w.lock);
	} else {
		atomic_store(&sd_w.thread_running, 0);
	}
	/* a final flush asked of it as it left: done here */
	if (atomic_load(&sd_w.final_req) && !atomic_load(&sd_w.final_done)) {
		sd_real_pthread_mutex_lock(&sd_w.lock);
		finish(final_reason, atomic_load(&sd_w.final_signo));
		pthread_mutex_unlock(&sd_w.lock);
		atomic_store(&sd_w.final_done, 1);
	}
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
 * where sonde already runs (drain_self), and as the process ends. The writer
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
static int start_thread(void)
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
		drain(0);
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

int sd_writer_drain_due_sigsafe(const struct sd_ring *own)
{
	return sd_writer_drain_after_sigsafe(own, 1);
}

int sd_writer_drain_after_sigsafe(const struct sd_ring *own, unsigned periods)
{
	if (!atomic_load(&sd_w.writerless) || !atomic_load(&sd_w.inited) ||
	    atomic_load(&sd_w.ended))
		return 0;
	uint64_t now = sd_now_ns_sigsafe(), period = sd_w.cfg.flush_ms * 1000000ull;
	uint64_t used = atomic_load_explicit(&own->head, memory_order_relaxed) -
			atomic_load_explicit(&own->tail, memory_order_relaxed);
	return used >= own->cap_bytes / 4 ||
	       now - atomic_load(&sd_w.drained_ns) >= periods * period;
}

void sd_writer_drain_sigsafe(const struct sd_ring *own)
{
	if (!sd_writer_drain_due_sigsafe(own))
		return;
	uint64_t now = sd_now_ns_sigsafe(), period = sd_w.cfg.flush_ms * 1000000ull;
	if (sd_mem_held_here_sigsafe() || pthread_mutex_trylock(&sd_w.lock) != 0)
		return; /* this thread was inside sonde, or another thread drains */
	if (atomic_load(&sd_w.writerless) && !atomic_load(&sd_w.ended)) {
		int e = errno;
		atomic_store(&sd_w.drained_ns, now);
		if (atomic_load(&sd_w.deferred) && sd_w.cfg.drain_hook) {
			/* one thread, this one: the loader's lists are this thread's,
			 * and whole unless the hook finds them changing */
			sd_w.in_drain_hook = 1;
			sd_w.cfg.drain_hook();
			sd_w.in_drain_hook = 0;
		}
		drain(0);
		if (now - sd_w.last_flush_ns >= period)
			flush_file();
		errno = e;
	}
	pthread_mutex_unlock(&sd_w.lock);
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

static void read_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", sd_w.exe, sizeof sd_w.exe - 1);
	sd_w.exe[n > 0 ? n : 0] = 0;
	if (n <= 0)
		snprintf(sd_w.exe, sizeof sd_w.exe, "unknown");
}

static void clock_origin(void)
{
	struct timespec r;
	sd_w.t0_mono = sd_now_ns_sigsafe();
	clock_gettime(CLOCK_REALTIME, &r);
	sd_w.t0_real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
}

/* The packer's sink: msgpack_sbuffer_write's, over sonde's memory (mem.h:
 * msgpack's would realloc, and give the writer thread a malloc arena),
 * except when the buffer cannot grow. Then the record being packed is taken
 * back (stream.c, rec_begin), so the buffer and the file hold whole records
 * only, and every later record is dropped: the FRAME or CONTEXT records a
 * later one refers to may be among those lost. Said once; the stream ends
 * without END (incomplete). Writer lock held. */
static int sbuf_write(void *data, const char *buf, size_t len)
{
	msgpack_sbuffer *sb = data;
	if (sd_w.pack_oom)
		return -1;
	if (sb->alloc - sb->size >= len) {
		memcpy(sb->data + sb->size, buf, len);
		sb->size += len;
		return 0;
	}
	size_t cap = sb->alloc ? sb->alloc : MSGPACK_SBUFFER_INIT_SIZE;
	while (cap - sb->size < len && cap < SIZE_MAX / 2)
		cap *= 2;
	char *grown = cap - sb->size >= len ? sd_mem_realloc(sb->data, cap) : NULL;
	if (grown) {
		sb->data = grown;
		sb->alloc = cap;
		memcpy(sb->data + sb->size, buf, len);
		sb->size += len;
		return 0;
	}
	sd_w.pack_oom = 1;
	sd_w.sbuf.size = sd_w.rec_start;
	sd_msg("sonde: stream: out of memory for its buffer: %s (profiling data from now on is "
	    "discarded; lower SONDE_FLUSH_MS)", strerror(ENOMEM));
	return -1;
}

/* Header, modules, and the first flush: the file is a valid stream as soon
 * as it exists. Writer lock held. */
static void begin_stream(void)
{
	msgpack_sbuffer_init(&sd_w.sbuf);
	sd_w.rec_start = 0;
	sd_w.pack_oom = 0;
	msgpack_packer_init(&sd_w.pk, &sd_w.sbuf, sbuf_write);
	clock_origin();
	sd_stream_header();
	if (sd_w.loader_suspect)
		sd_modules_reemit(sd_w.t0_mono);
	else
		sd_modules_scan(sd_w.t0_mono, sd_w.t0_mono);
	flush_file();
}

int sd_writer_open_dir(const struct sd_writer_config *cfg)
{
	sd_w.cfg = *cfg;
	snprintf(sd_w.dir, sizeof sd_w.dir, "%s", cfg->dir);
	return prepare_dir();
}

int sd_writer_init(const struct sd_writer_config *cfg)
{
	sd_w.cfg = *cfg;
	if (sd_w.cfg.nsources > 8)
		sd_w.cfg.nsources = 8;
	memcpy(sd_w.sources, cfg->sources, sd_w.cfg.nsources * sizeof *sd_w.sources);
	if (sd_w.dir_fd < 0) /* else sd_writer_open_dir made it absolute already */
		snprintf(sd_w.dir, sizeof sd_w.dir, "%s", cfg->dir);
	read_exe();
	sd_w.tmp_nodes = sd_mem_alloc((cfg->max_depth + 1) * sizeof *sd_w.tmp_nodes);
	sd_w.tmp_pcs = sd_mem_alloc((cfg->max_depth + 1) * sizeof *sd_w.tmp_pcs);
	if (!sd_w.tmp_nodes || !sd_w.tmp_pcs) {
		drop_dir_fd();
		sd_msg("sonde: writer: cannot start: %s (this run is not profiled)", strerror(ENOMEM));
		return -ENOMEM;
	}
	int err = sd_w.dir_fd >= 0 ? 0 : prepare_dir();
	if (err)
		return err;
	sd_slots_init();
	sd_w.file_pending = 1;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	begin_stream();
	pthread_mutex_unlock(&sd_w.lock);
	atomic_store(&sd_w.inited, 1);
	return 0;
}

int sd_writer_start(void)
{
	return start_thread();
}

void sd_writer_stop(const char *reason, int signo)
{
	if (!atomic_load(&sd_w.inited))
		return;
	if (sd_w.joinable) { /* running, or left by itself (its slot given back) */
		atomic_store(&sd_w.stop_req, 1);
		wake_writer_sigsafe();
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		if (sd_real_pthread_timedjoin_np(sd_w.thread, NULL, &until) != 0)
			return; /* the writer is stuck: leave the valid prefix as it is */
		sd_w.joinable = 0;
	}
	sd_real_pthread_mutex_lock(&sd_w.lock);
	finish(reason, signo);
	pthread_mutex_unlock(&sd_w.lock);
}

void sd_writer_resume(void)
{
	if (!atomic_load(&sd_w.inited))
		return;
	atomic_store(&sd_w.ended, 0);
	start_thread();
}

void sd_writer_modules_changed(uint64_t t_ns)
{
	if (!atomic_load(&sd_w.inited))
		return;
	if (sd_w.in_drain_hook) { /* a sample's drain (writer.c, single thread): lock held */
		sd_modules_apply(sd_modules_collect(), t_ns, sd_now_ns_sigsafe());
		return;
	}
	struct sd_scan *scan = sd_modules_collect(); /* before our lock: lock order */
	sd_real_pthread_mutex_lock(&sd_w.lock);
	sd_w.loader_suspect = 0; /* the program's own dlopen/dlclose returned */
	sd_modules_apply(scan, t_ns, sd_now_ns_sigsafe());
	pthread_mutex_unlock(&sd_w.lock);
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
		finish(reason, signo);
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

/* ---- fork --------------------------------------------------------------- */

void sd_writer_fork_prepare(void)
{
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (atomic_load(&sd_w.inited))
		sd_slots_fork_prepare();
}

void sd_writer_fork_parent(void)
{
	pthread_mutex_unlock(&sd_w.lock);
}

int sd_writer_fork_child(struct sd_ring *keep)
{
	pthread_mutex_init(&sd_w.lock, NULL);
	if (!atomic_load(&sd_w.inited))
		return -EINVAL;
	/* The parent flushes what it had; nothing of it is written twice. */
	pid_t parent = getppid();
	sd_mem_free(sd_w.sbuf.data);
	msgpack_sbuffer_init(&sd_w.sbuf);
	for (struct sd_ring *r = sd_w.rings, *next; r; r = next) {
		next = r->next;
		if (r != keep)
			ring_free(r);
	}
	sd_w.rings = NULL;
	sd_w.rings_tail = &sd_w.rings;
	sd_w.loader_suspect = 1;
	sd_stream_intern_reset();
	sd_w.next_thread = 0;
	sd_w.n_samples = sd_w.n_frames = sd_w.n_bytes = sd_w.n_threads = 0;
	sd_w.n_dropped = sd_w.n_dropped_gone = 0;
	memset(sd_w.global_drops_sent, 0, sizeof sd_w.global_drops_sent);
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		atomic_store(&sd_w.global_drops[i], 0);
	atomic_store(&sd_w.notes_head, 0);
	atomic_store(&sd_w.notes_done, 0);
	sd_w.notes_sent = 0;
	children_reset(); /* the parent's events are the parent's to write */
	atomic_store(&sd_w.ended, 0);
	atomic_store(&sd_w.final_req, 0);
	atomic_store(&sd_w.final_done, 0);
	atomic_store(&sd_w.thread_running, 0);
	atomic_store(&sd_w.writerless, 0);
	sd_w.joinable = 0; /* the parent's thread: not in this process */
	sd_slots_fork_child();
	if (!keep) {
		sd_modules_free();
		drop_fd(1);
		drop_dir_fd();
		atomic_store(&sd_w.inited, 0);
		return 0;
	}
	atomic_store(&keep->tail, atomic_load(&keep->head));
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		atomic_store(&keep->drops[i], 0);
		keep->drops_sent[i] = 0;
	}
	for (unsigned i = 0; i < SD_UNSAMPLED_NREASONS; i++) {
		atomic_store(&keep->unsampled_ns[i], 0);
		keep->unsampled_sent[i] = 0;
	}
	atomic_store(&keep->unsampled_posted, 0);
	keep->unsampled_written = 0;
	keep->idx = 0;
	keep->prev_depth = 0;
	keep->last_node = 0;
	keep->last_trunc = 0;
	keep->wall_init = 0;
	keep->cpu_known = 0;
	keep->cpu_written_ns = 0;
	keep->acc_off_ns = keep->acc_kernel_ns = 0;
	atomic_store(&keep->wall_periods, 0);
	keep->next = NULL;
	keep->tid = gettid();
	keep->t_begin_ns = sd_now_ns_sigsafe();
	keep->begin_cpu_known = sd_kernel_thread_cpu_ns(keep->tid, &keep->begin_cpu_ns) == 0;
	sd_w.rings = keep;
	sd_w.rings_tail = &keep->next;
	sd_w.fork_of = parent;
	sd_w.reopened = sd_w.lost_pending = 0;
	sd_w.file_ok = 0;
	atomic_store(&sd_w.discarding, 0); /* a stream of its own, made lazily */
	drop_fd(1); /* the parent's file */
	sd_w.file_pending = 1; /* made lazily: a child that only execs leaves none */
	/* The parent's directory descriptor, if it kept one, is ours too; else the
	 * directory is opened again (sd_w.dir, absolute) when the file is made:
	 * a child that only execs never walks the path. */
	sd_real_pthread_mutex_lock(&sd_w.lock);
	begin_stream();
	pthread_mutex_unlock(&sd_w.lock);
	return start_thread();
}
