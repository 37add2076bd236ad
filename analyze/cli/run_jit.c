/*
 * run_jit.c - what `sonde run` does for JIT code (docs/ENV.md, "JIT code"): with --jit
 * (or SONDE_JIT=on in its environment) it turns on the runtimes' perf maps in the
 * command's environment before CMD starts, and after CMD has ended it keeps the maps of
 * the run's processes that could not keep their own.
 *
 * The switches: Python 3.12 and later write /tmp/perf-PID.map with PYTHONPERFSUPPORT=1
 * (earlier Pythons ignore it); node with --perf-basic-prof-only-functions added to
 * NODE_OPTIONS (functions only: --perf-basic-prof also names V8's stubs, but then writes
 * a v8.log file into the working directory, which the program never asked for). A
 * variable the user set already is left as it is. Java needs an agent (docs only).
 *
 * The sweep: libsonde.so copies a process's map beside its stream as it exits or execs
 * (writer/jitmap.c); a process killed by a signal cannot. So after CMD, for every
 * stream of this host (its pid in its name, run_old.c) written during the run (modified
 * since CMD started) that has no NAME.perf.map beside it, /tmp/perf-PID.map is copied by
 * the same rule (sd_jitmap_copy: no symbolic link, the user's own regular file, bounded,
 * and last written since CMD started (less a second: file times are taken from a clock
 * that lags by up to a tick), so not a map of an earlier process of that pid).
 * Quietly: a map refused here was said by the process itself when it could say it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/cli/cli.h"
#include "common/common.h"
#include "writer/writer.h"

/* Appends flag to NODE_OPTIONS unless a perf map option is there. 0 or -ENOMEM. */
static int node_options(const char *flag)
{
	const char *old = getenv("NODE_OPTIONS");
	if (old && (strstr(old, "--perf-basic-prof") || strstr(old, "--perf-prof")))
		return 0;
	size_t n = (old ? strlen(old) : 0) + strlen(flag) + 2;
	char *v = malloc(n);
	if (!v)
		return -ENOMEM;
	snprintf(v, n, "%s%s%s", old && *old ? old : "", old && *old ? " " : "", flag);
	int r = setenv("NODE_OPTIONS", v, 1) ? -ENOMEM : 0;
	free(v);
	return r;
}

int sd_run_jit_env(int jit)
{
	const char *v = getenv("SONDE_JIT");
	if (!jit && v && *v) {
		if (!strcmp(v, "on") || !strcmp(v, "1"))
			jit = 1;
		else if (strcmp(v, "off") && strcmp(v, "0"))
			sd_msg("sonde: run: SONDE_JIT: '%s' is not on or off (keeping off)", v);
	}
	if (!jit)
		return 0;
	if (!getenv("PYTHONPERFSUPPORT") && setenv("PYTHONPERFSUPPORT", "1", 1))
		return -ENOMEM;
	return node_options("--perf-basic-prof-only-functions");
}

/* Stream `name` of dirfd (a regular file modified since since_ns): its map copied
 * when it has none beside it. */
static void sweep_one(int dirfd, const char *name, const char *host, int64_t since_ns,
		      mode_t fmode)
{
	char map[NAME_MAX + 16], why[160];
	size_t n = strlen(name);
	struct stat st;
	long pid = sd_run_stream_pid(name, host);
	if (!pid || n - 6 + sizeof ".perf.map" > sizeof map ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < since_ns)
		return;
	memcpy(map, name, n - 6);
	memcpy(map + n - 6, ".perf.map", sizeof ".perf.map");
	if (fstatat(dirfd, map, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return; /* kept by the process (or something is there: left alone) */
	sd_jitmap_copy((pid_t)pid, dirfd, map, since_ns, fmode, why, sizeof why);
}

void sd_run_jit_sweep(int dirfd, int64_t since_ns)
{
	char host[256] = "host";
	mode_t fmode, dmode;
	gethostname(host, sizeof host - 1);
	if (sd_outdir_mode_parse(getenv("SONDE_MODE"), &fmode, &dmode) != 0)
		sd_outdir_mode_parse(NULL, &fmode, &dmode);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (e->d_name[0] != '.' && n > 6 && !strcmp(e->d_name + n - 6, ".sonde"))
			sweep_one(dirfd, e->d_name, host, since_ns, fmode);
	}
	closedir(d);
}
