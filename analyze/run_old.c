/*
 * run_old.c - what `sonde run` does with an earlier run's streams in its output
 * directory, before the command starts (docs/ENV.md, "sonde run").
 *
 * A report merges every stream of a directory, so a second `sonde run` into the same
 * directory would silently add the new run to the old one. Like perf record, which
 * keeps perf.data.old, the earlier run is moved aside to DIR.old (its streams only;
 * a DIR.old of the run before is replaced), and sonde says so, with the command that
 * compares the two runs.
 *
 * Moving is safe only when the streams are over. A stream is named
 * NAME.HOST.PID[.SEQ].sonde (writer/writer.c), so a stream of this host whose process
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "common/common.h"

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

/* The pid of stream `name` when it was written on `host`, else 0. */
static long stream_pid(const char *name, const char *host)
{
	size_t hl = strlen(host);
	for (const char *q = strstr(name, host); q; q = strstr(q + 1, host)) {
		if (q == name || q[-1] != '.' || q[hl] != '.')
			continue;
		char *end;
		long pid = strtol(q + hl + 1, &end, 10);
		if (pid > 0 && end != q + hl + 1 && *end == '.')
			return pid;
	}
	return 0;
}

static int is_stream(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 6 && !strcmp(name + n - 6, ".sonde");
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
		long pid = stream_pid(e->d_name, host);
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

/* DIR.old made or emptied of its streams: its descriptor, or -errno. */
static int old_dir(const char *path, mode_t dmode)
{
	if (mkdir(path, dmode) < 0 && errno != EEXIST)
		return -errno;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int fd2 = dup(fd);
	DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
	if (!d) {
		int err = -errno;
		if (fd2 >= 0)
			close(fd2);
		close(fd);
		return err;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (is_stream(e->d_name))
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	return fd;
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
	int ofd = old_dir(path, dmode);
	if (ofd < 0) {
		fprintf(stderr, "sonde: run: %s holds an earlier run (%zu stream%s), and %s cannot "
			"be made: %s (kept: this run's report will merge them; give another -o)\n",
			out, s->nended, s->nended == 1 ? "" : "s", shown, strerror(-ofd));
		return;
	}
	size_t moved = 0;
	for (size_t i = 0; i < s->nended; i++)
		moved += renameat(dirfd, s->ended[i], ofd, s->ended[i]) == 0;
	close(ofd);
	if (moved == s->nended)
		fprintf(stderr, "sonde: run: %s held an earlier run (%zu stream%s): moved to %s "
			"(sonde diff %s %s compares the two)\n", out, moved, moved == 1 ? "" : "s",
			shown, shown, out);
	else
		fprintf(stderr, "sonde: run: %s held an earlier run (%zu stream%s): %zu moved to "
			"%s, %zu could not be (kept: this run's report will merge them; give another "
			"-o)\n", out, s->nended, s->nended == 1 ? "" : "s", moved, shown,
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
			fprintf(stderr, "sonde: run: %s already holds %zu stream%s of ended "
				"processes (kept: ranks started by an MPI launcher move nothing, they "
				"start together; if they are an earlier run, the report merges them: "
				"give each run its own -o)\n", out, s.nended, s.nended == 1 ? "" : "s");
	} else if (s.live || s.foreign) {
		fprintf(stderr, "sonde: run: %s already holds streams of %zu running processes and "
			"%zu of other hosts (kept: this run's streams are added beside them and a "
			"report merges them; give another -o for a profile of its own)\n", out,
			s.live, s.foreign);
	} else {
		move_old(dirfd, out, abs_out, dmode, &s);
	}
	for (size_t i = 0; i < s.nended; i++)
		free(s.ended[i]);
	free(s.ended);
	return err;
}
