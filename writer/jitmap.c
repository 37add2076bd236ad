/* jitmap.c - JIT code's perf map kept with the profile (docs/FORMAT.md,
 * "Files"; docs/ENV.md, "JIT code").
 *
 * A runtime that compiles code as it runs (node --perf-basic-prof, Python
 * 3.12 -X perf, a Java agent, LuaJIT) names that code in /tmp/perf-PID.map
 * (`START SIZE NAME` lines); `sonde report` names samples in it from that file.
 * Files in /tmp do not last, and a later process may reuse the pid, so the
 * map of each profiled process is copied beside its stream, as
 * STREAM.perf.map (STREAM: the stream's name without .sonde), when the
 * process's image ends: exit, _exit, exec (outfile.c's sd_jitmap_keep, from
 * sd_drain_finish: ordinary context, writer lock held; never from a signal
 * handler: a process killed by a signal leaves its map to `sonde run`, which
 * copies what remains after the command, analyze/cli/run_jit.c). Both copy
 * with sd_jitmap_copy, here, which uses no runtime state. A forked child has
 * its own pid, map and stream, and copies its own.
 *
 * /tmp is everybody's: the map is opened without following a symbolic link
 * (O_NOFOLLOW: one planted there by another user names some other file), must
 * be a regular file owned by the effective user, no larger than
 * SD_JITMAP_MAX_BYTES, and written since the image started (an older file is
 * an earlier process's of the same pid). The copy is made under a temporary
 * name in the output directory (O_CREAT|O_EXCL|O_NOFOLLOW, the streams' mode)
 * and renamed, so a report never reads half a copy, and never lands in
 * another user's file. Failures are one line; a missing map is none.
 * System calls only, a buffer on the stack: no allocation, no lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sys.h"
#include "writer/writer.h"

/* Says why in why (at most len bytes) and returns err. */
static int refuse(int err, char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return err;
}

/* Copies from `in` to `out` at most max bytes. 0 or -errno. */
static int copy_bytes(int in, int out, uint64_t max)
{
	char buf[16384];
	while (max) {
		/* raw system calls: libsonde's own read/write wrappers are the program's */
		ssize_t r = sd_sys_read(in, buf, max < sizeof buf ? (size_t)max : sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		max -= (uint64_t)r;
		for (ssize_t off = 0; off < r;) {
			ssize_t w = sd_sys_write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -ENOSPC;
			off += w;
		}
	}
	return 0;
}

/* The map opened and checked (see the top): fd, 0 when there is nothing to
 * copy, or -errno with why. */
static int open_map(pid_t pid, int64_t since_ns, char *why, size_t len)
{
	char src[48];
	snprintf(src, sizeof src, "/tmp/perf-%d.map", (int)pid);
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (in < 0) {
		int e = errno;
		if (e == ENOENT)
			return 0;
		return refuse(-e, why, len, e == ELOOP ? "a symbolic link (sonde follows none in "
			      "/tmp: another user may have planted it)" : strerror(e));
	}
	struct stat st;
	int err = 0;
	if (fstat(in, &st) != 0)
		err = refuse(-errno, why, len, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		err = refuse(-EMEDIUMTYPE, why, len, "not a regular file");
	else if (st.st_uid != geteuid()) {
		char w[96];
		snprintf(w, sizeof w, "owned by uid %u, not by you (uid %u)", (unsigned)st.st_uid,
			 (unsigned)geteuid());
		err = refuse(-EPERM, why, len, w);
	} else if ((uint64_t)st.st_size > SD_JITMAP_MAX_BYTES) {
		char w[96];
		snprintf(w, sizeof w, "larger than %u MiB", (unsigned)(SD_JITMAP_MAX_BYTES >> 20));
		err = refuse(-EFBIG, why, len, w);
	} else if ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < since_ns) {
		err = 1; /* an earlier process's: nothing to say */
	}
	if (err) {
		sd_sys_close(in);
		return err > 0 ? 0 : err;
	}
	return in;
}

int sd_jitmap_copy(pid_t pid, int dirfd, const char *name, int64_t since_ns, mode_t mode,
		   char *why, size_t len)
{
	int in = open_map(pid, since_ns, why, len);
	if (in <= 0)
		return in;
	char tmp[300];
	int n = snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
	if (n < 0 || n >= (int)sizeof tmp) {
		sd_sys_close(in);
		return refuse(-ENAMETOOLONG, why, len, strerror(ENAMETOOLONG));
	}
	int out = sd_outdir_create_file(dirfd, tmp, mode ? mode : 0600);
	if (out == -EEXIST && unlinkat(dirfd, tmp, 0) == 0) /* a copy of ours cut short */
		out = sd_outdir_create_file(dirfd, tmp, mode ? mode : 0600);
	if (out < 0) {
		sd_sys_close(in);
		return refuse(out, why, len, strerror(-out));
	}
	int err = copy_bytes(in, out, SD_JITMAP_MAX_BYTES);
	sd_sys_close(in);
	if (sd_sys_close(out) != 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) != 0)
		err = -errno;
	if (err) {
		unlinkat(dirfd, tmp, 0);
		return refuse(err, why, len, strerror(-err));
	}
	return 1;
}
