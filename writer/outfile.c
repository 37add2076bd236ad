/* outfile.c - the stream file's life: the output directory, the file made
 * in it, its descriptor lost and found again, and the writes.
 *
 * Writer lock held throughout, but for the atomics the program's threads
 * touch (out_fd, out_fd_dead through sd_writer_fd_closed, discarding read
 * by the handler). The output directory is opened when the runtime starts
 * (sd_outfile_prepare_dir); the stream file is made lazily (docs/FORMAT.md,
 * Files; sd_outfile_flush_at) and its descriptor kept; before every write,
 * and at every writer tick, the number is checked to still name the file we
 * created (device and inode), so a program that closes every descriptor or
 * reuses fd numbers can never receive our bytes: a number found gone is
 * forgotten (never closed) and the file opened again by its path. Only
 * whole records are written: a killed process leaves a valid prefix.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/real.h"
#include "common/sys.h"
#include "writer/writer_int.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

const char *sd_stream_rank(void)
{
	return sd_mpi_is_launcher(base_name(sd_w.exe)) ? NULL : sd_mpi_rank_env();
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

void sd_outfile_drop_fd(int close_it)
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
 * although the stream file is made lazily (sd_outfile_flush_at). sd_w.dir becomes
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
int sd_outfile_prepare_dir(void)
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
int sd_outfile_dir_ours(void)
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
	int fd = sd_w.dir_fd, ours = sd_outfile_dir_ours();
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
	if (fd < 0 && sd_outfile_prepare_dir() == 0)
		fd = release_dir_fd();
	return fd;
}

/* At every writer tick while the file is not made yet. Writer lock held. */
void sd_outfile_dir_check(void)
{
	if (sd_w.dir_fd >= 0 && !sd_outfile_dir_ours())
		release_dir_fd();
}

/* Closes the kept directory descriptor, if it still names the directory. */
void sd_outfile_drop_dir(void)
{
	int fd = release_dir_fd();
	if (fd >= 0)
		sd_sys_close(fd);
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

/* Creates a new file for this process, <exe>.<host>.[r<rank>.]<pid>[.<seq>].sonde, in
 * the output directory (sd_outfile_prepare_dir); sd_w.path is the file's absolute path,
 * by which it is opened again (checked by device and inode). */
static int create_file(void)
{
	mode_t fmode = sd_w.cfg.file_mode ? sd_w.cfg.file_mode : 0600;
	int pinned = sd_w.dir_pinned;
	int dirfd = !pinned ? take_dir_fd() : sd_outfile_dir_ours() ? sd_w.dir_fd : -1;
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
	/* an MPI rank names its stream: .r<rank>, digits only (the variable is the
	 * launcher's, but nothing from the environment goes into a path unchecked) */
	char rank[24] = "";
	const char *rv = sd_stream_rank();
	if (rv && *rv && strlen(rv) < 20 && strspn(rv, "0123456789") == strlen(rv))
		snprintf(rank, sizeof rank, "r%s.", rv);
	int err = -EEXIST;
	for (int seq = 0; seq < 1000; seq++) {
		char suffix[16] = "";
		if (seq)
			snprintf(suffix, sizeof suffix, ".%d", seq);
		int len = snprintf(sd_w.path, sizeof sd_w.path, "%s/%s.%s.%s%d%s.sonde", sd_w.dir,
				   base_name(sd_w.exe), host, rank, (int)getpid(), suffix);
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

void sd_writer_pin_output(void)
{
	if (!atomic_load(&sd_w.inited))
		return;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (!sd_w.dir_pinned) {
		if (!sd_outfile_dir_ours()) {
			release_dir_fd();
			sd_outfile_prepare_dir();
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
int sd_outfile_fd_lost(void)
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
		 : sd_outfile_dir_ours() ? openat(sd_w.dir_fd, base_name(sd_w.path), flags) : -1;
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
		sd_outfile_drop_fd(0); /* the number is the program's now: never close it */
		atomic_store(&sd_w.out_fd_dead, 0);
	}
	sd_outfile_fd_lost();
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
		sd_outfile_drop_fd(0);
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

int sd_outfile_due(void)
{
	return sd_w.n_samples > 0 || sd_w.sbuf.size >= SD_LAZY_BYTES ||
	       sd_now_ns_sigsafe() - sd_w.t0_mono >= sd_w.cfg.flush_ms * 1000000ull;
}

/* Appends the encoded records to the file (made first if it is due, or if
 * final). Writer lock held. */
void sd_outfile_flush_at(int final)
{
	if (sd_w.file_pending) {
		if (!final && !sd_outfile_due())
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
		/* by name, as the messages (sd_writer_log, notes.c): tests/fault fails it */
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

void sd_outfile_flush(void)
{
	sd_outfile_flush_at(0);
}

/* ---- JIT perf maps kept with the stream (jitmap.c) ---------------------- */

/* The output directory for the copy: the pinned descriptor, or the directory
 * opened again by its path when it is still the one the stream is in. */
static int dir_fd(int *own)
{
	*own = 0;
	if (sd_w.dir_pinned)
		return sd_outfile_dir_ours() ? sd_w.dir_fd : -1;
	int fd = open(sd_w.dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != sd_w.dir_dev ||
			st.st_ino != sd_w.dir_ino)) {
		sd_sys_close(fd);
		fd = -1;
	}
	*own = fd >= 0;
	return fd;
}

/* writer_int.h; the rule is jitmap.c's. */
void sd_jitmap_keep(void)
{
	const char *base = strrchr(sd_w.path, '/');
	size_t bl = base ? strlen(++base) : 0;
	if (!sd_w.file_ok || bl <= 6 || strcmp(base + bl - 6, ".sonde"))
		return;
	char name[256], why[160];
	if (bl - 6 + sizeof ".perf.map" > sizeof name)
		return;
	memcpy(name, base, bl - 6);
	memcpy(name + bl - 6, ".perf.map", sizeof ".perf.map");
	int own, dirfd = dir_fd(&own);
	if (dirfd < 0)
		return; /* the directory is gone or another now: no stream either */
	int r = sd_jitmap_copy(getpid(), dirfd, name, (int64_t)sd_w.t0_real - 1000000000, sd_w.cfg.file_mode,
			       why, sizeof why);
	if (own)
		sd_sys_close(dirfd);
	if (r < 0)
		sd_msg("sonde: /tmp/perf-%d.map: %s (not kept with the profile: its JIT code "
		       "shows as addresses; docs/ENV.md, JIT code)", (int)getpid(), why);
}
