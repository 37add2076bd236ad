/*
 * cmd_archive.c: `sonde archive DIR [-o FILE]`, a profile packed into one file for
 * another machine (as `perf archive`): DIR's streams, their kept JIT maps, and the
 * archived symbols of every module the streams name (pack.c writes the ustar file;
 * docs/REPORT.md "Packs"). Also the pass that `sonde run` makes after CMD so that the
 * build-id archive holds every address of the profile (sd_archive_after_run). Both read
 * the streams as a report does, with every module file's raw locations archived
 * (sd_sym_archive_all). Runs in the CLI's only thread.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/cli/cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] = "usage: sonde archive [-o FILE] DIR";

static void help(void)
{
	printf("%s\n\n"
	       "Packs the profile in DIR (what 'sonde run' wrote) into one file that 'sonde\n"
	       "report FILE' reads on another machine, without the profiled binaries: DIR's\n"
	       "streams (*.sonde, its subdirectories' too), the JIT perf maps kept beside them\n"
	       "(*.perf.map), and the symbols of every module the streams name, from the\n"
	       "build-id archive (filled first from the modules' files where they are still the\n"
	       "ones profiled). The file is a plain tar file: 'tar xf FILE' gives a directory\n"
	       "that 'sonde report' reads the same way.\n\n"
	       "  -o, --output FILE   the pack (default DIR.tar; never through another user's\n"
	       "                      link; replaced whole)\n"
	       "  -h, --help          this text\n\n"
	       "A module whose symbols cannot be packed (its file is gone and was never\n"
	       "archived, it has no build-id, or no symbols) is said; its frames show as\n"
	       "module+0xADDR wherever the pack is read. SONDE_ARCHIVE, SONDE_ARCHIVE_MAX and\n"
	       "SONDE_CACHE: docs/ENV.md. Exit: 0, 2 usage, 3 I/O, 4 no stream in DIR.\n", usage);
}

/* Read paths (jobs threads) into p with every module file's raw locations archived. */
static int archive_pass(struct sd_profile *p, char *const *paths, size_t npaths, int jobs,
			char ***files, size_t *nfiles)
{
	size_t used = 0, skipped = 0;
	char **un = NULL;
	if (sd_profile_init(p, 0))
		return -ENOMEM;
	sd_sym_archive_all(p->sym);
	int code = sd_pack_paths(paths, npaths, p->sym, &un);
	if (code == SD_EXIT_OK)
		code = sd_cli_expand_paths(un, npaths, files, nfiles, &skipped);
	for (size_t i = 0; un && i < npaths; i++)
		free(un[i]);
	free(un);
	if (code == SD_EXIT_OK)
		code = sd_load_files(p, *files, *nfiles, jobs, 0, &used);
	if (code == SD_EXIT_OK && sd_sym_finish(p->sym)) /* saves the archive */
		code = -ENOMEM;
	if (code == SD_EXIT_OK && !used)
		code = sd_error(SD_EXIT_BADINPUT, "archive: %s: no stream could be read (nothing "
				"to pack)", paths[0]);
	return code;
}

static void null_sink(const char *line, size_t len)
{
	(void)line, (void)len;
}

void sd_archive_after_run(const char *out)
{
	char dir[PATH_MAX];
	struct sd_profile p;
	char **files = NULL, *paths[] = { (char *)out };
	size_t n = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!sd_sym_archive_dir(dir, sizeof(dir)))
		return;
	sd_log_set(null_sink, 1); /* a report says what it meets; this pass is quiet */
	archive_pass(&p, paths, 1, ncpu > 1 ? (int)(ncpu > 8 ? 8 : ncpu) : 1, &files, &n);
	sd_profile_fini(&p);
	sd_log_set(sd_stderr_sink, 1);
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/* The pack's top directory: DIR's last component (of its real path for "." and the
 * like), "profile" when that is no name to make. */
static void top_name(const char *dir, char *top, size_t len)
{
	char real[PATH_MAX];
	const char *b = realpath(dir, real) ? real : dir;
	const char *s = strrchr(b, '/');
	const char *t = s && s[1] ? s + 1 : b;
	if (!t[0] || t[0] == '.' || strchr(t, '/') || strlen(t) >= len || strlen(t) > 100)
		t = "profile";
	memcpy(top, t, strlen(t) + 1);
}

/* Add the file at path (src fd opened here) as name: 1, 0 when it is not there, or
 * -errno. */
static int add_path(int fd, const char *top, int sub, const char *name, const char *path)
{
	int src = sd_open_path(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (src < 0)
		return errno == ENOENT ? 0 : -errno;
	int r = sd_pack_add(fd, top, sub, name, src);
	close(src);
	return r < 0 ? r : 1;
}

/* The streams, their maps and the modules' archived symbols written into the pack on fd:
 * 0 or -errno (*what: the file it failed on). Counts into n[3]. */
static int write_pack(int fd, const char *top, char **files, size_t nfiles,
		      struct sd_symbolizer *sy, size_t n[4], const char **what)
{
	struct sd_strmap seen = { 0 };
	char name[256];
	uint32_t dummy;
	int r = sd_pack_begin(fd, top);

	for (size_t i = 0; !r && i < nfiles; i++) {
		const char *b = strrchr(files[i], '/');
		b = b ? b + 1 : files[i];
		*what = files[i];
		if (sd_strmap_get(&seen, b, strlen(b), &dummy)) {
			sd_msg("sonde: archive: %s: a stream of that name is packed already (left "
				"out)", files[i]);
			continue;
		}
		if ((r = sd_strmap_put(&seen, b, strlen(b), 1)))
			break;
		if ((r = add_path(fd, top, 0, b, files[i])) < 0)
			break;
		n[0]++;
		size_t l = strlen(files[i]);
		char *map = malloc(l + 16);
		if (!map) {
			r = -ENOMEM;
			break;
		}
		snprintf(map, l + 16, "%.*s.perf.map", (int)(l - 6), files[i]);
		snprintf(name, sizeof(name), "%.*s.perf.map", (int)(strlen(b) - 6), b);
		r = add_path(fd, top, 0, name, map);
		free(map);
		n[1] += r > 0;
		r = r < 0 ? r : 0;
	}
	for (size_t i = 0; !r && i < sd_sym_nmodules(sy); i++) {
		const char *path, *base;
		const uint8_t *bid;
		size_t blen;
		sd_sym_module_info(sy, i, &path, &base, &bid, &blen);
		if (!sd_sym_module_used(sy, i) || !strcmp(base, SD_SYM_MPI_WRAPPER))
			continue; /* no frame of the profile is in it */
		if (!blen) {
			if (path[0] != '[')
				n[3]++;
			continue;
		}
		int src = sd_sym_archive_open(sy, bid, blen, name, sizeof(name));
		if (src < 0) {
			n[3]++;
			continue;
		}
		if (!sd_strmap_get(&seen, name, strlen(name), &dummy)) {
			*what = name;
			r = sd_strmap_put(&seen, name, strlen(name), 1);
			if (!r)
				r = sd_pack_add(fd, top, 1, name, src);
			n[2]++;
		}
		close(src);
	}
	if (!r)
		r = sd_pack_end(fd);
	sd_strmap_fini(&seen);
	return r;
}

/* The command line: SD_EXIT_OK with *dir and *out (NULL: default), 1 after --help, or
 * said. */
static int parse_args(int argc, char **argv, const char **dir, const char **out)
{
	for (int i = 1, opts = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = 0;
		} else if (opts && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			help();
			return 1;
		} else if (opts && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			if (++i == argc)
				return sd_error(SD_EXIT_USAGE, "archive: %s needs a FILE (%s)", a, usage);
			*out = argv[i];
		} else if (opts && !strncmp(a, "--output=", 9)) {
			*out = a + 9;
		} else if (opts && a[0] == '-' && a[1]) {
			return sd_error(SD_EXIT_USAGE, "archive: unknown option '%s' (%s)", a, usage);
		} else if (*dir) {
			return sd_error(SD_EXIT_USAGE, "archive: one DIR at a time (%s)", usage);
		} else {
			*dir = a;
		}
	}
	return SD_EXIT_OK;
}

/* The private directory of the symbols when the archive is off, and what it holds. */
static void remove_private(const char *tmpl)
{
	int dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dfd, de->d_name, 0);
	if (d)
		closedir(d);
	else if (dfd >= 0)
		close(dfd);
	rmdir(tmpl);
}

/* The pack written to out (sd_outfile: made safely, replaced whole): SD_EXIT_OK or said. */
static int pack_to(const char *out, const char *dir, char **files, size_t nfiles,
		   struct sd_symbolizer *sy, size_t n[4])
{
	struct sd_outfile of;
	char top[128];
	const char *what = out;
	int fd = sd_outfile_open(&of, out);
	if (fd < 0)
		return fd;
	top_name(dir, top, sizeof(top));
	int r = write_pack(fd, top, files, nfiles, sy, n, &what);
	if (close(fd) < 0 && !r)
		r = -errno;
	int done = sd_outfile_done(&of, r == 0);
	if (r)
		return sd_error(SD_EXIT_IO, "archive: %s: cannot pack %s: %s", out, what,
				strerror(-r));
	return done;
}

int sd_cmd_archive(int argc, char **argv)
{
	const char *dir = NULL, *out = NULL;
	char *defout = NULL, tmpl[PATH_MAX] = "", adir[PATH_MAX];
	struct sd_profile p;
	char **files = NULL;
	size_t nfiles = 0, n[4] = { 0 };
	int code;

	if ((code = parse_args(argc, argv, &dir, &out)) != SD_EXIT_OK)
		return code == 1 ? SD_EXIT_OK : code;
	if (!dir)
		return sd_error(SD_EXIT_USAGE, "archive: no DIR given (%s)", usage);
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return sd_error(stat(dir, &st) < 0 ? SD_EXIT_IO : SD_EXIT_USAGE, "archive: %s: %s "
				"(give the directory 'sonde run' wrote)", dir,
				stat(dir, &st) < 0 ? strerror(errno) : "not a directory");
	if (!out) {
		size_t l = strlen(dir);
		while (l > 1 && dir[l - 1] == '/')
			l--;
		if (!(defout = malloc(l + 8)))
			return -ENOMEM;
		snprintf(defout, l + 8, "%.*s.tar", (int)l, dir);
		out = defout;
	}
	/* with the archive off, the symbols go through a private directory of this run */
	if (!sd_sym_archive_dir(adir, sizeof(adir))) {
		const char *t = getenv("TMPDIR");
		snprintf(tmpl, sizeof(tmpl), "%s/sonde-archive-XXXXXX", t && t[0] == '/' ? t : "/tmp");
		if (!mkdtemp(tmpl) || setenv("SONDE_ARCHIVE", tmpl, 1)) {
			free(defout);
			return sd_error(SD_EXIT_IO, "archive: cannot make a directory for the "
					"symbols: %s (set TMPDIR)", strerror(errno));
		}
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *paths[] = { (char *)dir };
	code = archive_pass(&p, paths, 1, ncpu > 1 ? (int)(ncpu > 64 ? 64 : ncpu) : 1, &files,
			    &nfiles);
	if (code == SD_EXIT_OK)
		code = pack_to(out, dir, files, nfiles, p.sym, n);
	if (code == SD_EXIT_OK && n[3])
		sd_msg("sonde: archive: %zu module%s without archived symbols (gone since the "
			"run, no build-id, or no symbols: shown as module+0xADDR where the pack is "
			"read)", n[3], n[3] > 1 ? "s" : "");
	if (code == SD_EXIT_OK && !stat(out, &st))
		printf("sonde: pack written to %s: %zu stream%s, %zu JIT map%s, symbols of %zu "
		       "module%s, %lld KiB (sonde report %s)\n", out, n[0], n[0] == 1 ? "" : "s",
		       n[1], n[1] == 1 ? "" : "s", n[2], n[2] == 1 ? "" : "s",
		       (long long)(st.st_size + 1023) / 1024, out);
	sd_profile_fini(&p);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	free(defout);
	if (tmpl[0])
		remove_private(tmpl);
	return code;
}
