/*
 * cli_paths.c: the PATHs of `sonde report` and `sonde diff` expanded into the stream
 * files they read (a file as given; a directory's *.sonde files and its subdirectories',
 * names sorted). Called by sd_cli_load in the CLI's only thread; every path of any
 * length is opened through sd_open_path.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/cli/cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

struct files { char **v; size_t n, cap; };

static int add_file(struct files *f, const char *dir, const char *name)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		char **nv = realloc(f->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		f->v = nv;
		f->cap = cap;
	}
	size_t len = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
	char *p = malloc(len);
	if (!p)
		return -ENOMEM;
	if (dir)
		snprintf(p, len, "%s/%s", dir, name);
	else
		snprintf(p, len, "%s", name);
	f->v[f->n++] = p;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_stream_name(const char *n)
{
	size_t l = strlen(n);
	return l > 6 && !strcmp(n + l - 6, ".sonde");
}

/* Add the *.sonde files of dir (and, when depth > 0, of its subdirectories). An entry
 * whose name ends in .sonde but that is (or, through a symlink, leads to) anything but a
 * regular file or a directory, such as a FIFO or a device, is named on stderr and skipped,
 * never opened (sd_stream_open checks the descriptor again). */
static int scan_dir(struct files *f, const char *dir, int depth, size_t *skipped)
{
	struct files sub = { 0 };
	int fd = sd_open_path(dir, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	int err = 0;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		/* relative to the open directory: its path may be longer than PATH_MAX */
		if (fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth > 0)
			err = add_file(&sub, dir, e->d_name);
		else if (S_ISREG(st.st_mode) && is_stream_name(e->d_name))
			err = add_file(f, dir, e->d_name);
		else if (!S_ISDIR(st.st_mode) && is_stream_name(e->d_name)) {
			struct files one = { 0 };
			if (!(err = add_file(&one, dir, e->d_name)))
				sd_notreg_perror(one.v[0], (unsigned)st.st_mode), (*skipped)++;
			free(one.v ? one.v[0] : NULL);
			free(one.v);
		}
	}
	closedir(d);
	if (sub.n > 1)
		qsort(sub.v, sub.n, sizeof(*sub.v), cmp_str);
	for (size_t i = 0; i < sub.n; i++) {
		if (!err)
			err = scan_dir(f, sub.v[i], depth - 1, skipped);
		free(sub.v[i]);
	}
	free(sub.v);
	return err;
}

/* Expand PATHs into files in f (appended; the caller frees them). */
static int expand(struct files *f, char *const *paths, size_t npaths, size_t *unreadable)
{
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		size_t before = f->n;
		int fd = sd_open_path(paths[i], O_PATH); /* stat(2) of a path of any length */
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return sd_error(SD_EXIT_IO, "%s: %s", paths[i], strerror(e));
		}
		close(fd);
		if (!S_ISDIR(st.st_mode)) {
			if (add_file(f, NULL, paths[i]))
				return -ENOMEM;
			continue;
		}
		size_t skipped = 0;
		int err = scan_dir(f, paths[i], 1, &skipped);
		if (err == -ENOMEM)
			return -ENOMEM;
		if (err)
			return sd_error(SD_EXIT_IO, "%s: %s", paths[i], strerror(-err));
		*unreadable += skipped;
		if (f->n == before && skipped)
			return sd_error(SD_EXIT_BADINPUT, "%s: none of its .sonde entries is a regular "
					"file (nothing to read; see the lines above)", paths[i]);
		if (f->n == before)
			return sd_error(SD_EXIT_BADINPUT, "%s: no .sonde files in this directory (give "
					"the output directory of 'sonde run', or stream files)",
					paths[i]);
		qsort(f->v + before, f->n - before, sizeof(*f->v), cmp_str);
	}

	return SD_EXIT_OK;
}

int sd_cli_expand_paths(char *const *paths, size_t npaths, char ***files, size_t *nfiles,
			size_t *unreadable)
{
	struct files f = { 0 };
	int code = expand(&f, paths, npaths, unreadable);

	*files = f.v;
	*nfiles = f.n;
	return code;
}
