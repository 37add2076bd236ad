/*
 * outfile.c: the file of `sonde report -o FILE` and `sonde diff -o FILE` (pprof, svg,
 * html, speedscope, trace), made safely on a shared machine (docs/REPORT.md, "Output
 * files"). Called by emit.c (sd_out_open/sd_out_close) and export/pprof.c, in the CLI's
 * one thread.
 *
 * A report holds the command line and paths of the run, and root may write one into
 * /tmp, where any user can plant a name first. So:
 *  - FILE's directory is opened as the output directory's parents are
 *    (writer/outdir.c, sd_outdir_open_dir): a link on the way is followed only when
 *    root or the user owns it, in a directory only they can change.
 *  - A new FILE, or an existing regular file of the user's, is written into a
 *    temporary file of that directory (O_CREAT|O_EXCL|O_NOFOLLOW: a new file, never
 *    through a link), mode 0600 by SONDE_MODE less the umask, and renamed into place
 *    when complete (a new name with RENAME_NOREPLACE): the name is replaced, nothing
 *    behind it is written, and a failed report leaves no half file.
 *  - An existing FILE of another user (a file, a link, a fifo) is refused.
 *  - A link of root's or the user's at FILE is followed only in a directory only they
 *    can change, by no group or other write at all (/dev/stdout), and what it leads to
 *    is written in place, provided it is not another user's regular file.
 *  - A device, fifo or socket of root's or the user's (/dev/null) is written in place:
 *    it is never replaced by a file.
 */
#define _GNU_SOURCE /* renameat2 */
#include "analyze/report/report.h"
#include "writer/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HINT_OWNER "sonde writes through no link and over no file of another user: give -o " \
		   "another path"

/* Says that path cannot be written, why (errno e), and returns it said. */
static int said_errno(const char *path, int e)
{
	return sd_error(SD_EXIT_IO, "%s: cannot write: %s (check the path and its directory)",
			path, strerror(e));
}

/* May only root and the user change the entries of directory st (no sticky exception:
 * in a sticky directory anyone may add a name)? */
static int private_dir(const struct stat *st, uid_t me)
{
	return (st->st_uid == me || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The file mode by SONDE_MODE (a bad value: said, and private). */
static mode_t file_mode(void)
{
	mode_t f, d;
	const char *v = getenv("SONDE_MODE");
	if (sd_outdir_mode_parse(v, &f, &d) == 0)
		return f;
	sd_msg("sonde: SONDE_MODE: '%s' is not private, group or world (keeping private: "
		"files 0600)", v);
	return 0600;
}

/* A new temporary file beside of->name: its fd, of->tmp named; or -errno. */
static int make_tmp(struct sd_outfile *of, mode_t mode)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned r;
		if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
			r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ (unsigned)tries;
		snprintf(of->tmp, sizeof of->tmp, ".%.200s.%08x.tmp", of->name, r);
		int fd = openat(of->dirfd, of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				mode);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* FILE's last component into of->name, its directory into dir (size dsize): 0, or said
 * (no name, ".", "..", or too long). */
static int split_path(struct sd_outfile *of, const char *path, char *dir, size_t dsize)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || strlen(base) >= sizeof of->name) {
		return said_errno(path, *base && strlen(base) >= sizeof of->name ? ENAMETOOLONG
										: EISDIR);
	}
	snprintf(of->name, sizeof of->name, "%s", base);
	if (!slash)
		snprintf(dir, dsize, ".");
	else if (slash == path)
		snprintf(dir, dsize, "/");
	else if ((size_t)(slash - path) < dsize)
		snprintf(dir, dsize, "%.*s", (int)(slash - path), path);
	else
		return said_errno(path, ENAMETOOLONG);
	return 0;
}

/* FILE's directory, opened as the output directory's parents are: its fd, or said. */
static int open_dir(const char *path, const char *dir)
{
	struct sd_outdir_why why = { .knob = "-o" };
	int dfd = sd_outdir_open_dir(dir, &why);
	if (dfd == -ELOOP)
		return sd_error(SD_EXIT_IO, "%s: cannot write: %s (%s)", path, why.what, why.hint);
	if (dfd < 0)
		return said_errno(path, -dfd);
	return dfd;
}

/* A new temporary file beside of->name, renamed into place when complete: its fd, or
 * said. */
static int open_tmp(struct sd_outfile *of, const char *path, mode_t mode)
{
	int fd = make_tmp(of, mode);
	return fd >= 0 ? fd : said_errno(path, -fd);
}

/* Existing FILE (st, of the name itself) that is neither another user's nor the user's
 * regular file nor a directory: a link of root's or the user's, followed only in a
 * directory only they can change, or a device, fifo or socket. Opened to be written in
 * place, then checked to be what was looked at and not another user's regular file: its
 * fd, or said. */
static int open_in_place(struct sd_outfile *of, const char *path, const struct stat *st,
			 mode_t mode, uid_t me)
{
	struct stat ds, fs;
	int fd;
	if (S_ISLNK(st->st_mode)) {
		if (fstat(of->dirfd, &ds) != 0)
			return said_errno(path, errno);
		if (!private_dir(&ds, me))
			return sd_error(SD_EXIT_IO, "%s: cannot write: it is a symbolic link in a "
					"directory other users can change (sonde follows no link "
					"another user could have planted there: give -o the file's "
					"real path)", path);
		fd = openat(of->dirfd, of->name, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
	} else { /* a device, fifo or socket: written as it is */
		fd = openat(of->dirfd, of->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return said_errno(path, errno);
	if (fstat(fd, &fs) != 0) {
		close(fd);
		return said_errno(path, errno);
	}
	if (!S_ISLNK(st->st_mode) && (fs.st_dev != st->st_dev || fs.st_ino != st->st_ino)) {
		close(fd);
		return sd_error(SD_EXIT_IO, "%s: cannot write: it was replaced while sonde opened "
				"it (run again, or give -o another path)", path);
	}
	if (S_ISREG(fs.st_mode) && fs.st_uid != me) { /* where the user's link leads */
		close(fd);
		return sd_error(SD_EXIT_IO, "%s: cannot write: it is a link to a file owned by uid "
				"%u, not by you (uid %u) (" HINT_OWNER ")", path,
				(unsigned)fs.st_uid, (unsigned)me);
	}
	if (S_ISREG(fs.st_mode) && ftruncate(fd, 0) != 0) {
		close(fd);
		return said_errno(path, errno);
	}
	return fd; /* in place: of->tmp empty */
}

/* Existing FILE (st, of the name itself): refused when another user's (a file, a link, a
 * fifo) or a directory; the user's regular file is replaced through a temporary file;
 * anything else is written in place. Its fd, or said. */
static int open_existing(struct sd_outfile *of, const char *path, const struct stat *st,
			 mode_t mode, uid_t me)
{
	if (st->st_uid != me && (S_ISREG(st->st_mode) || st->st_uid != 0))
		return sd_error(SD_EXIT_IO, "%s: cannot write: it is %sowned by uid %u, not by you "
				"(uid %u) (" HINT_OWNER ")", path,
				S_ISLNK(st->st_mode) ? "a symbolic link " : "",
				(unsigned)st->st_uid, (unsigned)me);
	if (S_ISREG(st->st_mode)) { /* the user's own: replaced when the new one is whole */
		of->replace = 1;
		return open_tmp(of, path, mode);
	}
	if (S_ISDIR(st->st_mode))
		return said_errno(path, EISDIR);
	return open_in_place(of, path, st, mode, me);
}

int sd_outfile_open(struct sd_outfile *of, const char *path)
{
	uid_t me = geteuid();
	*of = (struct sd_outfile){ .path = path, .dirfd = -1 };
	if (!strcmp(path, "-")) { /* standard output (-o -): nothing to make or rename */
		int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : said_errno("standard output", errno);
	}
	char dir[4096];
	int r = split_path(of, path, dir, sizeof dir);
	if (r)
		return r;
	int dfd = open_dir(path, dir);
	if (dfd < 0)
		return dfd;
	of->dirfd = dfd;
	mode_t mode = file_mode();
	struct stat st;
	int fd;
	if (fstatat(dfd, of->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		fd = open_existing(of, path, &st, mode, me);
	else if (errno == ENOENT)
		fd = open_tmp(of, path, mode); /* a new name */
	else
		fd = said_errno(path, errno);
	if (fd < 0) { /* said */
		close(dfd);
		of->dirfd = -1;
		return SD_SAID(SD_EXIT_IO);
	}
	return fd;
}

int sd_outfile_done(struct sd_outfile *of, int ok)
{
	int err = 0;
	if (of->dirfd < 0)
		return 0;
	if (of->tmp[0] && !ok) {
		unlinkat(of->dirfd, of->tmp, 0);
	} else if (of->tmp[0]) {
		int r;
		if (of->replace) {
			r = renameat(of->dirfd, of->tmp, of->dirfd, of->name);
		} else if ((r = renameat2(of->dirfd, of->tmp, of->dirfd, of->name, RENAME_NOREPLACE)) &&
			   (errno == EINVAL || errno == ENOSYS)) {
			/* no RENAME_NOREPLACE here: a link fails on an existing name */
			r = linkat(of->dirfd, of->tmp, of->dirfd, of->name, 0);
			if (r == 0)
				unlinkat(of->dirfd, of->tmp, 0);
		}
		if (r) {
			int e = errno;
			unlinkat(of->dirfd, of->tmp, 0);
			if (e == EEXIST)
				err = sd_error(SD_EXIT_IO, "%s: cannot write: another file took that "
					       "name while the report was made (nothing was replaced: "
					       "run again, or give -o another path)", of->path);
			else
				err = said_errno(of->path, e);
		}
	}
	close(of->dirfd);
	of->dirfd = -1;
	return err;
}
