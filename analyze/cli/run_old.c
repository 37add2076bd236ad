/*
 * run_old.c - what `sonde run` does with an earlier run's streams in its output
 * directory, before the command starts (docs/ENV.md, "sonde run").
 *
 * A report merges every stream of a directory, so a second `sonde run` into the same
 * directory would silently add the new run to the old one. Like perf record, which
 * keeps perf.data.old, the earlier run is moved aside to DIR.old (its streams only;
 * the user's streams in a DIR.old of the run before are removed first), and sonde says
 * so, with the command that compares the two runs. A stream's JIT perf map
 * (NAME.perf.map, run_jit.c) goes with it.
 *
 * DIR.old is made or checked by the rule of the output directory (writer/outdir.c): a
 * DIR.old that is a symbolic link, another user's or writable by every user without the
 * sticky bit is refused in one line and nothing is moved, so one user's streams never
 * land in another's directory and root never deletes another user's file there. In a
 * DIR.old of the user's that others may add to (sticky, or group-writable), only the
 * user's own regular files are removed and no file is ever replaced (RENAME_NOREPLACE).
 *
 * Moving is safe only when the streams are over. A stream is named
 * NAME.HOST.PID[.SEQ].sonde (writer/outfile.c), so a stream of this host whose process
 * is still alive is being written: nothing is moved then (a run already going into the
 * same directory, make -j of profiled jobs). Streams of other hosts (a shared file
 * system) cannot be told apart from this job's ranks elsewhere: nothing is moved
 * either. Under an MPI launcher every rank runs `sonde run -o DIR` at the same time,
 * and a rank that moved streams could move the others' new ones: nothing is moved,
 * and rank 0 says what the directory already held. Whatever is kept is said in one
 * line, so a merged report never comes as a surprise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/cli/cli.h"
#include "common/common.h"
#include "writer/writer.h"

struct old_scan {
	char **ended;           /* names of this host's streams whose process is gone */
	size_t nended, cap;
	size_t live, foreign;   /* streams still written here; streams of other hosts */
};

/* Launched by an MPI launcher: -1 when not, else the rank (sd_mpi_rank_env, or Intel
 * MPI's node-local rank, which says only that it is an MPI launch). */
static long mpi_rank(void)
{
	const char *v = sd_mpi_rank_env();
	if (!v && (v = getenv("MPI_LOCALRANKID")) && !*v)
		v = NULL;
	return v ? strtol(v, NULL, 10) : -1;
}

long sd_run_stream_pid(const char *name, const char *host)
{
	size_t hl = strlen(host);
	for (const char *q = strstr(name, host); q; q = strstr(q + 1, host)) {
		if (q == name || q[-1] != '.' || q[hl] != '.')
			continue;
		char *end;
		const char *at = q + hl + 1;
		if (*at == 'r' && at[1] >= '0' && at[1] <= '9') { /* an MPI rank's: .r<rank>. */
			at += 1 + strspn(at + 1, "0123456789");
			if (*at++ != '.')
				continue;
		}
		long pid = strtol(at, &end, 10);
		if (pid > 0 && end != at && *end == '.')
			return pid;
	}
	return 0;
}

static int is_stream(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 6 && !strcmp(name + n - 6, ".sonde");
}

/* The JIT perf map kept beside stream `name` (run_jit.c, writer/jitmap.c): NAME.perf.map
 * into map (len bytes), 0; -1 when name is no stream or too long. */
static int map_of(const char *name, char *map, size_t len)
{
	size_t n = strlen(name);
	if (!is_stream(name) || n - 6 + sizeof ".perf.map" > len)
		return -1;
	memcpy(map, name, n - 6);
	memcpy(map + n - 6, ".perf.map", sizeof ".perf.map");
	return 0;
}

static int add_ended(struct old_scan *s, const char *name)
{
	if (s->nended == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->ended, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->ended = v, s->cap = cap;
	}
	if (!(s->ended[s->nended] = strdup(name)))
		return -ENOMEM;
	s->nended++;
	return 0;
}

/* The regular *.sonde files of dirfd, sorted into ended, live and foreign. */
static int scan_old(int dirfd, struct old_scan *s)
{
	char host[256] = "host";
	gethostname(host, sizeof host - 1);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0; /* nothing can be told: nothing is moved */
	}
	struct dirent *e;
	int err = 0;
	while (!err && (e = readdir(d))) {
		struct stat st;
		if (!is_stream(e->d_name) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		long pid = sd_run_stream_pid(e->d_name, host);
		if (!pid)
			s->foreign++;
		else if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
			s->live++;
		else
			err = add_ended(s, e->d_name);
	}
	closedir(d);
	return err;
}

/* DIR.old, the sibling `name` of directory dirfd, made or checked by the rule of the
 * output directory (writer/outdir.c: never a symbolic link, the user's, not writable by
 * others unless sticky) and emptied of the user's own streams (another user's file, in
 * a sticky or group-writable DIR.old, stays): its O_PATH descriptor, or -errno with
 * *why filled. */
static int old_dir(int dirfd, const char *name, mode_t dmode, const char *shown,
		   struct sd_outdir_why *why)
{
	int up = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0) {
		int err = -errno;
		snprintf(why->what, sizeof why->what, "'%s': %s", shown, strerror(-err));
		return err;
	}
	int fd = sd_outdir_open_at(up, name, dmode, shown, why);
	close(up);
	if (fd < 0)
		return fd;
	int rd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rd >= 0 ? fdopendir(rd) : NULL;
	if (!d) {
		int err = -errno;
		if (rd >= 0)
			close(rd);
		close(fd);
		snprintf(why->what, sizeof why->what, "'%s': %s", shown, strerror(-err));
		return err;
	}
	struct dirent *e;
	struct stat st;
	size_t n;
	while ((e = readdir(d)))
		if ((is_stream(e->d_name) || ((n = strlen(e->d_name)) > 9 &&
					      !strcmp(e->d_name + n - 9, ".perf.map"))) &&
		    !fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid())
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	return fd;
}

/* Moves stream `name` of dirfd into ofd under the same name, never over a file there
 * (one of another user's in a sticky DIR.old). 0 or -errno. */
static int move_one(int dirfd, int ofd, const char *name)
{
	if (renameat2(dirfd, name, ofd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* a file system without RENAME_NOREPLACE: a link fails on an existing name */
	if (linkat(dirfd, name, ofd, name, 0) != 0)
		return -errno;
	return unlinkat(dirfd, name, 0) ? -errno : 0;
}

/* What the user calls DIR.old: their name for DIR with ".old", or the absolute path
 * when their name is . or .. (or ends in them). */
static void old_names(const char *out, const char *abs_out, char *path, size_t plen,
		      char *shown, size_t slen)
{
	char mine[PATH_MAX];
	snprintf(mine, sizeof mine, "%s", out);
	for (size_t n = strlen(mine); n > 1 && mine[n - 1] == '/'; n--)
		mine[n - 1] = '\0';
	const char *base = strrchr(mine, '/');
	base = base ? base + 1 : mine;
	snprintf(path, plen, "%s.old", abs_out);
	if (!strcmp(base, ".") || !strcmp(base, ".."))
		snprintf(shown, slen, "%s", path);
	else
		snprintf(shown, slen, "%s.old", mine);
}

/* Move the ended streams into DIR.old; says what was done, or why not. */
static void move_old(int dirfd, const char *out, const char *abs_out, mode_t dmode,
		     const struct old_scan *s)
{
	char path[PATH_MAX + 8], shown[PATH_MAX + 8];
	old_names(out, abs_out, path, sizeof path, shown, sizeof shown);
	struct sd_outdir_why why = { .knob = "-o" };
	const char *name = strrchr(path, '/');
	int ofd = old_dir(dirfd, name ? name + 1 : path, dmode, shown, &why);
	if (ofd < 0) {
		sd_msg("sonde: run: %s holds an earlier run (%zu stream%s), and %s cannot "
			"be used: %s (nothing was moved: this run's report will merge them; give "
			"another -o, or remove %s)", out, s->nended, s->nended == 1 ? "" : "s",
			shown, why.what, shown);
		return;
	}
	size_t moved = 0;
	char map[NAME_MAX + 16];
	for (size_t i = 0; i < s->nended; i++)
		if (move_one(dirfd, ofd, s->ended[i]) == 0) {
			moved++;
			if (!map_of(s->ended[i], map, sizeof map)) /* its JIT map goes with it */
				move_one(dirfd, ofd, map);
		}
	close(ofd);
	if (moved == s->nended)
		sd_msg("sonde: run: %s held an earlier run (%zu stream%s): moved to %s "
			"(sonde diff %s %s compares the two)", out, moved, moved == 1 ? "" : "s",
			shown, shown, out);
	else
		sd_msg("sonde: run: %s held an earlier run (%zu stream%s): %zu moved to "
			"%s, %zu could not be (kept: this run's report will merge them; give another "
			"-o)", out, s->nended, s->nended == 1 ? "" : "s", moved, shown,
			s->nended - moved);
}

int sd_run_old_streams(int dirfd, const char *out, const char *abs_out, mode_t dmode)
{
	struct old_scan s = { 0 };
	int err = scan_old(dirfd, &s);
	long rank = mpi_rank();

	if (err || (!s.nended && !s.live && !s.foreign))
		;
	else if (rank >= 0) {
		if (rank == 0 && s.nended)
			sd_msg("sonde: run: %s already holds %zu stream%s of ended "
				"processes (kept: ranks started by an MPI launcher move nothing, they "
				"start together; if they are an earlier run, the report merges them: "
				"give each run its own -o)", out, s.nended, s.nended == 1 ? "" : "s");
	} else if (s.live || s.foreign) {
		sd_msg("sonde: run: %s already holds streams of %zu running processes and "
			"%zu of other hosts (kept: this run's streams are added beside them and a "
			"report merges them; give another -o for a profile of its own)", out,
			s.live, s.foreign);
	} else {
		move_old(dirfd, out, abs_out, dmode, &s);
	}
	for (size_t i = 0; i < s.nended; i++)
		free(s.ended[i]);
	free(s.ended);
	return err;
}
