/* outdir.c - the output directory and the stream file, made safely on a
 * shared machine.
 *
 * Who calls: the writer (outfile.c, create_file: at start and in a forked
 * child) and `sonde run` (analyze/cmd_run.c) before it starts the program, so
 * both apply the same rule; `sonde run` holds DIR.old to it too
 * (sd_outdir_open_at, analyze/run_old.c), and `sonde report -o FILE` opens
 * FILE's directory by the rule of the components before the last
 * (sd_outdir_open_dir, analyze/outfile.c). Ordinary context, any thread; no state: results go
 * through the arguments only.
 *
 * The rule (docs/ENV.md, "Output directory and permissions"):
 *  - The path is walked one component at a time from `/` (absolute) or the
 *    working directory (relative), each opened relative to the directory
 *    before it with O_NOFOLLOW, so no name is resolved twice.
 *  - A missing component is created (mkdirat, the dir mode less the umask),
 *    then opened the same way and must be owned by the user (nobody swapped
 *    it in between).
 *  - The last component (the directory the streams go into) is never a
 *    symbolic link; it must be owned by the effective user and must not be
 *    writable by others (S_IWOTH) unless it has the sticky bit.
 *  - A symbolic link among the components before it (/scratch -> /lustre/..)
 *    is followed only when the link is owned by root or the user and sits in
 *    a directory only they can change (owned by root or the user, and not
 *    group- or other-writable unless sticky): nobody else can have planted
 *    it, nor replace it between the check and the open.
 *  - Existing real directories before the last are not checked: they are
 *    opened by descriptor, never by name again, and what lands in the last
 *    one is private to the user whatever happens to its parents.
 * The stream file is then made with openat(dirfd, name,
 * O_CREAT|O_EXCL|O_NOFOLLOW): never an existing file, never through a link.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"
#include "writer/writer.h"

#define WALK_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int sd_outdir_mode_parse(const char *v, mode_t *file_mode, mode_t *dir_mode)
{
	mode_t f, d;
	if (!v || !*v || !strcmp(v, "private")) {
		f = 0600;
		d = 0700;
	} else if (!strcmp(v, "group")) {
		f = 0640;
		d = 0750;
	} else if (!strcmp(v, "world")) {
		f = 0644;
		d = 0755;
	} else {
		return -EINVAL;
	}
	*file_mode = f;
	*dir_mode = d;
	return 0;
}

/* The knob that names the directory, for hints: SONDE_OUTPUT or -o. */
static const char *knob_name(const struct sd_outdir_why *why)
{
	return why->knob ? why->knob : "SONDE_OUTPUT";
}

static void tell(struct sd_outdir_why *why, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why->what, sizeof why->what, fmt, ap);
	va_end(ap);
	snprintf(why->hint, sizeof why->hint, hint, knob_name(why));
}

/* Can only root and the user change the entries of directory st? */
static int only_ours(const struct stat *st, uid_t me)
{
	if (st->st_uid != me && st->st_uid != 0)
		return 0;
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX);
}

#define HINT_WRITABLE "set %s to a writable directory"
#define HINT_PLANTED "sonde follows no link another user could have planted: give %s a path " \
		     "without it"

/* Opens component `name` of directory `fd`, following it only when it is a
 * trusted link before the last component; a missing one is made when
 * `create`. `shown` is the path up to it. */
static int open_component(int fd, const char *name, int last, int create, mode_t dir_mode,
			  const char *path, const char *shown, struct sd_outdir_why *why)
{
	uid_t me = geteuid();
	int created = 0;
	int sub = openat(fd, name, WALK_FLAGS);
	if (sub < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, name, dir_mode) == 0)
			created = 1;
		else if (errno != EEXIST) {
			int e = errno;
			tell(why, HINT_WRITABLE, "cannot create directory '%s': %s", path,
			     strerror(e));
			return -e;
		}
		sub = openat(fd, name, WALK_FLAGS);
	}
	if (sub < 0 && errno == ENOTDIR) {
		struct stat ls, ds;
		if (fstatat(fd, name, &ls, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(ls.st_mode)) {
			tell(why, HINT_WRITABLE, "cannot create directory '%s': %s", path,
			     strerror(ENOTDIR));
			return -ENOTDIR;
		}
		if (last) {
			tell(why, "sonde never writes into a symbolic link: give %s the real directory",
			     "'%s' is a symbolic link", shown);
			return -ELOOP;
		}
		if (ls.st_uid != me && ls.st_uid != 0) {
			tell(why, HINT_PLANTED, "'%s' is a symbolic link owned by uid %u, not by you (uid %u) "
			     "or root", shown, (unsigned)ls.st_uid, (unsigned)me);
			return -ELOOP;
		}
		if (fstat(fd, &ds) != 0 || !only_ours(&ds, me)) {
			tell(why, HINT_PLANTED, "'%s' is a symbolic link in a directory that other users "
			     "can change", shown);
			return -ELOOP;
		}
		sub = openat(fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC); /* trusted: follow */
	}
	if (sub < 0) {
		int e = errno;
		tell(why, HINT_WRITABLE, "'%s': %s", shown, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(sub, &st) != 0) {
		int e = errno;
		sd_sys_close(sub);
		tell(why, HINT_WRITABLE, "'%s': %s", shown, strerror(e));
		return -e;
	}
	if ((created || last) && st.st_uid != me) {
		sd_sys_close(sub);
		tell(why, "sonde writes only into directories of the user it runs as: set %s to one "
		     "of yours",
		     "'%s' is owned by uid %u, not by you (uid %u)", shown, (unsigned)st.st_uid,
		     (unsigned)me);
		return -EPERM;
	}
	if (last && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		sd_sys_close(sub);
		tell(why, "chmod o-w it, or set %s to another directory",
		     "'%s' is writable by every user and has no sticky bit", shown);
		return -EPERM;
	}
	return sub;
}

/* The walk of sd_outdir_open (check: the last component is the output
 * directory, made when missing and checked) and of sd_outdir_open_dir (every
 * component is one before the last: nothing made, links followed only when
 * trusted, no owner required). */
static int walk(const char *path, int check, mode_t dir_mode, struct sd_outdir_why *why)
{
	char shown[4096];
	size_t len = strlen(path);
	if (!len || len >= sizeof shown) {
		tell(why, "give %s a shorter directory", "'%s': %s", path,
		     len ? "path too long" : "empty path");
		return -ENAMETOOLONG;
	}
	int fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		tell(why, HINT_WRITABLE, "'%s': %s", path, strerror(e));
		return -e;
	}
	const char *p = path;
	int any = 0;
	while (*p) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		if (end == p)
			break;
		const char *rest = end;
		while (*rest == '/')
			rest++;
		size_t n = (size_t)(end - p);
		char name[256];
		if (n >= sizeof name) {
			sd_sys_close(fd);
			tell(why, "give %s shorter names", "'%s': %s", path, strerror(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		memcpy(name, p, n);
		name[n] = 0;
		p = rest;
		if (!strcmp(name, ".") && *rest)
			continue;
		memcpy(shown, path, (size_t)(end - path));
		shown[end - path] = 0;
		int sub = open_component(fd, name, check && !*rest, check, dir_mode, path, shown,
					 why);
		sd_sys_close(fd);
		if (sub < 0)
			return sub;
		fd = sub;
		any = 1;
	}
	if (!any) {
		/* "/" or "./": the directory itself is the last component. */
		sd_sys_close(fd);
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0) {
			int e = errno;
			if (fd >= 0)
				sd_sys_close(fd);
			tell(why, HINT_WRITABLE, "'%s': %s", path, strerror(e));
			return -e;
		}
		if (check &&
		    (st.st_uid != geteuid() || ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)))) {
			sd_sys_close(fd);
			tell(why, "sonde writes only into directories of the user it runs as, not "
			     "writable by every user: set %s to one", "'%s' is owned by uid %u (you are uid %u), "
			     "mode %04o", path, (unsigned)st.st_uid, (unsigned)geteuid(),
			     (unsigned)(st.st_mode & 07777));
			return -EPERM;
		}
	}
	return fd;
}

int sd_outdir_open(const char *path, mode_t dir_mode, struct sd_outdir_why *why)
{
	return walk(path, 1, dir_mode, why);
}

int sd_outdir_open_dir(const char *path, struct sd_outdir_why *why)
{
	return walk(path, 0, 0, why);
}

int sd_outdir_open_at(int dirfd, const char *name, mode_t dir_mode, const char *shown,
		      struct sd_outdir_why *why)
{
	return open_component(dirfd, name, 1, 1, dir_mode, shown, shown, why);
}

int sd_outdir_create_file(int dirfd, const char *name, mode_t file_mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			file_mode);
	return fd < 0 ? -errno : fd;
}

int sd_outdir_path(int dirfd, char *buf, size_t len)
{
	char proc[64], got[4096];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
	ssize_t n = readlink(proc, got, sizeof got);
	if (n < 0)
		return -errno;
	if (n == 0 || (size_t)n >= sizeof got || (size_t)n >= len || got[0] != '/')
		return -ENAMETOOLONG; /* cut short, or not a path ("(deleted)" aside) */
	memcpy(buf, got, (size_t)n);
	buf[n] = 0;
	return 0;
}
