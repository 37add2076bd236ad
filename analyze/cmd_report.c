/*
 * cmd_report.c: `sonde report [OPTIONS] PATH...`: expands PATHs (files, or directories
 * of *.sonde files, one level of subdirectories deep, names sorted), loads every stream
 * into one profile (profile.c) and prints one view of it (output.c).
 *
 * Error policy: a missing PATH or a directory without streams is fatal (3 / 4). A bad
 * file (unreadable, foreign, corrupt) is reported on stderr and skipped, or fatal with
 * --strict; a truncated stream is a warning and its valid prefix is used; a stream without
 * an END record is said before the view's rows (fatal with --strict). When no file could
 * be used the exit code is 4. Only regular files are read: a PATH that is a FIFO, a device
 * or a socket is a bad file like the others (one line, skipped; stream.c opens it without
 * blocking and checks the descriptor), and a directory's *.sonde entry that is not a
 * regular file (a symlink to /dev/zero) is named and skipped without being opened, with
 * or without --strict.
 */
#include "analyze/analyze.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static const char usage[] =
	"usage: sonde report [--format text|folded|csv|json]\n"
	"                    [--view flat|threads|sources|counters|tree|regions|streams|\n"
	"                           coverage|processes]\n"
	"                    [--view callers|callees NAME]\n"
	"                    [--group-by KEY[,KEY...]] [--where FILTER]...\n"
	"                    [--metric samples|weight|COUNTER] [--top N]\n"
	"                    [--stats thread|process|rank]\n"
	"                    [--source NAME] [--min-percent P] [--by-thread] [--addresses]\n"
	"                    [--no-inline] [--no-demangle] [--lines]\n"
	"                    [--strict] [--jobs N] PATH...\n"
	"KEY: an annotation attribute, or function, file, line, thread, process, module,\n"
	"     source\n"
	"FILTER: attr=value, attr!=value, attr~REGEX, attr!~REGEX, attr (present), !attr\n"
	"        (absent); attr may be an annotation attribute or function, module, thread,\n"
	"        process, source\n"
	"COUNTER: a counter of the streams' headers (context-switches.voluntary) or a group\n"
	"         (context-switches: the sum of its parts); see --view counters";

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
	DIR *d = opendir(dir);
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		struct stat st;
		char path[PATH_MAX];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth > 0)
			err = add_file(&sub, dir, e->d_name);
		else if (S_ISREG(st.st_mode) && is_stream_name(e->d_name))
			err = add_file(f, dir, e->d_name);
		else if (!S_ISDIR(st.st_mode) && is_stream_name(e->d_name))
			sd_notreg_perror(path, (unsigned)st.st_mode), (*skipped)++;
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

static const char see[] = "see 'sonde report --help'";

/* Expand PATHs into files in f (appended; the caller frees them). */
static int expand(struct files *f, char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		size_t before = f->n;
		if (stat(paths[i], &st) < 0) {
			fprintf(stderr, "sonde: %s: %s\n", paths[i], strerror(errno));
			return SD_EXIT_IO;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (add_file(f, NULL, paths[i]))
				return -ENOMEM;
			continue;
		}
		size_t skipped = 0;
		int err = scan_dir(f, paths[i], 1, &skipped);
		if (err == -ENOMEM)
			return -ENOMEM;
		if (err) {
			fprintf(stderr, "sonde: %s: %s\n", paths[i], strerror(-err));
			return SD_EXIT_IO;
		}
		if (f->n == before && skipped) {
			fprintf(stderr, "sonde: %s: none of its .sonde entries is a regular file "
				"(nothing to read; see the lines above)\n", paths[i]);
			return SD_EXIT_BADINPUT;
		}
		if (f->n == before) {
			fprintf(stderr, "sonde: %s: no .sonde files in this directory (give the output "
				"directory of 'sonde run', or stream files)\n", paths[i]);
			return SD_EXIT_BADINPUT;
		}
		qsort(f->v + before, f->n - before, sizeof(*f->v), cmp_str);
	}

	return SD_EXIT_OK;
}

int sd_expand_paths(char *const *paths, size_t npaths, char ***files, size_t *nfiles)
{
	struct files f = { 0 };
	int code = expand(&f, paths, npaths);

	*files = f.v;
	*nfiles = f.n;
	return code;
}

static int parse_enum(const char *opt, const char *val, const char *const *names, int *out)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(val, names[i])) {
			*out = i;
			return 0;
		}
	fprintf(stderr, "sonde: report: %s: unknown value '%s' (%s)\n", opt, val, see);
	return -EINVAL;
}

int sd_cmd_report(int argc, char **argv)
{
	static const char *const formats[] = { "text", "folded", "csv", "json", NULL };
	static const char *const views[] = { "flat", "threads", "sources", "tree", "regions",
					     "counters", "callers", "callees", "streams", "coverage",
					     "processes", NULL };
	static const enum sd_view view_ids[] = { SD_VIEW_FLAT, SD_VIEW_THREADS, SD_VIEW_SOURCES,
						 SD_VIEW_TREE, SD_VIEW_REGIONS, SD_VIEW_COUNTERS,
						 SD_VIEW_CALLERS, SD_VIEW_CALLEES, SD_VIEW_STREAMS,
						 SD_VIEW_COVERAGE, SD_VIEW_PROCESSES };
	struct sd_filters filters = { 0 };
	char why[300] = "no attribute name (use attr=value, attr!=value, attr~regex, attr or !attr)";
	struct sd_report_opts o = { .min_percent = 0.5 };
	char *group_spec = NULL, *group_copy = NULL;
	const char **wheres = calloc((size_t)argc + 1, sizeof(*wheres));
	size_t nwheres = 0;
	struct sd_profile p = { 0 };
	struct files files = { 0 };
	const char *only_source = NULL;
	int addresses = 0, strict = 0, code = SD_EXIT_USAGE, used = 0, v;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	size_t nused = 0;
	char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0;

	if (!paths || !wheres) {
		fprintf(stderr, "sonde: report: out of memory\n");
		return SD_EXIT_IO;
	}
	for (int i = 1, opts = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (!opts || a[0] != '-' || !a[1]) {
			paths[npaths++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			opts = 0;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s\n\nColumns and formats: docs/REPORT.md.\n", usage);
			code = SD_EXIT_OK;
			goto out;
		}
		if (!strcmp(a, "--addresses")) {
			addresses |= SD_SYM_ADDRESSES;
			continue;
		}
		/* symbol flags (SD_SYM_*) in `addresses`: --[no-]inline, --[no-]demangle */
		if (!strcmp(a, "--no-inline") || !strcmp(a, "--inline") ||
		    !strcmp(a, "--no-demangle") || !strcmp(a, "--demangle")) {
			int fl = strstr(a, "inline") ? SD_SYM_NO_INLINE : SD_SYM_NO_DEMANGLE;
			addresses = a[2] == 'n' ? addresses | fl : addresses & ~fl;
			continue;
		}
		if (!strcmp(a, "--lines")) {
			addresses |= SD_SYM_LINES;
			continue;
		}
		if (!strcmp(a, "--strict")) {
			strict = 1;
			continue;
		}
		if (!strncmp(a, "--jobs", 6) || !strcmp(a, "-j")) {
			const char *jv = a[1] == 'j' ? (i + 1 < argc ? argv[++i] : NULL)
				       : a[6] == '=' ? a + 7 : a[6] ? NULL : (i + 1 < argc ? argv[++i] : NULL);
			char *end;
			long jn = jv ? strtol(jv, &end, 10) : 0;
			if (!jv || !*jv || *end || jn < 1 || jn > 256) {
				fprintf(stderr, "sonde: report: --jobs: '%s' is not a number of threads from 1 "
					"to 256 (%s)\n", jv ? jv : "", see);
				goto out;
			}
			jobs = (int)jn;
			continue;
		}
		if (!strcmp(a, "--by-thread")) {
			o.by_thread = 1;
			continue;
		}
		static const char *const with_val[] = { "--format", "--view", "--metric", "--top",
							"--source", "--group-by", "--where",
							"--min-percent", "--stats", NULL };
		size_t k, l = 0;
		for (k = 0; with_val[k]; k++) {
			l = strlen(with_val[k]);
			if (!strncmp(a, with_val[k], l) && (a[l] == 0 || a[l] == '='))
				break;
		}
		if (!with_val[k]) {
			fprintf(stderr, "sonde: report: unknown option '%s' (%s)\n", a, see);
			goto out;
		}
		if (a[l] == '=') {
			val = a + l + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "sonde: report: option '%s' needs a value (%s)\n", a, see);
			goto out;
		}
		if (k == 0 && parse_enum(a, val, formats, &v) == 0)
			o.format = (enum sd_format)v;
		else if (k == 1 && parse_enum(a, val, views, &v) == 0) {
			o.view = view_ids[v];
			if (o.view == SD_VIEW_CALLERS || o.view == SD_VIEW_CALLEES) {
				if (i + 1 >= argc) {
					fprintf(stderr, "sonde: report: --view %s needs a function name "
						"(e.g. --view %s main)\n", val, val);
					goto out;
				}
				o.func = argv[++i];
			}
		}
		else if (k == 2 && *val) {
			/* samples, weight, or a counter resolved once the streams are loaded */
			o.weight = !strcmp(val, "weight") || !strcmp(val, "time"); /* time: estimated from periods */
			o.counter = o.weight || !strcmp(val, "samples") ? NULL : val;
		} else if (k == 3) {
			char *end;
			unsigned long long n = strtoull(val, &end, 10);
			if (!*val || *end || val[0] == '-') {
				fprintf(stderr, "sonde: report: --top: '%s' is not a count (%s)\n", val,
					see);
				goto out;
			}
			o.top = (size_t)n;
		} else if (k == 4) {
			only_source = val;
		} else if (k == 5) {
			group_spec = (char *)val;
		} else if (k == 6) {
			wheres[nwheres++] = val;
		} else if (k == 7) {
			char *end;
			o.min_percent = strtod(val, &end);
			o.min_percent_given = 1;
			if (!*val || *end || o.min_percent < 0) {
				fprintf(stderr, "sonde: report: --min-percent: '%s' is not a percentage "
					"(%s)\n", val, see);
				goto out;
			}
		} else if (k == 8) {
			if (parse_enum(a, val, sd_stats_names + 1, &v))
				goto out;
			o.stats = v + 1; /* enum sd_stats_key */
		} else
			goto out;
	}
	if (group_spec) {
		if (o.view != SD_VIEW_FLAT || o.format == SD_FMT_FOLDED) {
			fprintf(stderr, "sonde: report: --group-by makes its own table (use it without "
				"--view and with --format text, csv or json)\n");
			goto out;
		}
		o.group_by = calloc(strlen(group_spec) + 1, sizeof(*o.group_by));
		if (!o.group_by || !(group_copy = strdup(group_spec)))
			goto nomem;
		for (char *q = group_copy, *c;; q = c + 1) {
			c = strchr(q, ',');
			if (c)
				*c = 0;
			if (!*q) {
				fprintf(stderr, "sonde: report: --group-by: empty key (give names "
					"separated by commas, e.g. --group-by phase,function)\n");
				goto out;
			}
			o.group_by[o.ngroup++] = q;
			if (!c)
				break;
		}
		o.view = SD_VIEW_GROUP;
	}
	if (o.stats && ((o.view != SD_VIEW_FLAT && o.view != SD_VIEW_GROUP) ||
			o.format == SD_FMT_FOLDED)) {
		fprintf(stderr, "sonde: report: --stats adds columns to the flat and --group-by "
			"views (use it without --view, and with --format text, csv or json)\n");
		goto out;
	}
	if (o.format == SD_FMT_FOLDED && o.view != SD_VIEW_FLAT && o.view != SD_VIEW_TREE) {
		fprintf(stderr, "sonde: report: --format folded shows call paths (use it without "
			"--view, or pick text, csv or json)\n");
		goto out;
	}
	if (!npaths) {
		fprintf(stderr, "sonde: report: no PATH given (%s)\n", see);
		goto out;
	}
	if (sd_profile_init(&p, addresses))
		goto nomem;
	p.only_source = only_source;
	for (size_t i = 0; i < nwheres; i++) {
		int r = sd_filters_add(&filters, wheres[i], why, sizeof(why));
		if (r == 0)
			r = sd_profile_where(&p, wheres[i]);
		if (r == -ENOMEM)
			goto nomem;
		if (r == -EINVAL) {
			fprintf(stderr, "sonde: report: --where '%s': %s\n", wheres[i], why);
			goto out;
		}
	}

	code = sd_expand_paths(paths, npaths, &files.v, &files.n);
	if (code == -ENOMEM)
		goto nomem;
	if (code != SD_EXIT_OK)
		goto out;

	code = sd_load_files(&p, files.v, files.n, jobs, strict, &nused);
	used = nused > 0;
	if (code == -ENOMEM)
		goto nomem;
	if (code != SD_EXIT_OK)
		goto out;
	if (!used) {
		fprintf(stderr, "sonde: report: no stream could be read (nothing to report)\n");
		code = SD_EXIT_BADINPUT;
		goto out;
	}
	if (o.view == SD_VIEW_REGIONS && !p.region_records && p.dropped_regions) {
		fprintf(stderr, "sonde: no region records: all %llu region events were dropped "
			"(a larger SONDE_BUFFER_KB makes the ring drop fewer)\n",
			(unsigned long long)p.dropped_regions);
		code = SD_EXIT_BADINPUT;
		goto out;
	}
	if (o.view == SD_VIEW_REGIONS && !p.region_records) {
		fprintf(stderr, "sonde: no region records (run with SONDE_REGIONS=on)\n");
		code = SD_EXIT_BADINPUT;
		goto out;
	}
	if (sd_filters_apply(&p, &filters))
		goto nomem;
	int mr = sd_metric_resolve(&p, &o);
	if (mr == -ENOMEM)
		goto nomem;
	if (mr == -ENOENT) {
		fprintf(stderr, "sonde: report: --metric %s: no counter or counter group of that name "
			"in these streams (use samples, weight, or a counter listed by --view "
			"counters)\n", o.counter);
		code = SD_EXIT_USAGE;
		goto out;
	}
	if (mr == -ENODATA) {
		for (size_t i = 0; i < p.nunavail; i++)
			if (!strcmp(p.unavail[i].name, o.counter)) {
				fprintf(stderr, "sonde: report: --metric %s: the counter was unavailable "
					"when the program ran (%s; see 'sonde events')\n", o.counter,
					p.unavail[i].reason);
				break;
			}
		code = SD_EXIT_BADINPUT;
		goto out;
	}
	if (mr == -EDOM) {
		fprintf(stderr, "sonde: report: --metric weight: the sources count in different "
			"units (pick one with --source NAME; see --view sources)\n");
		code = SD_EXIT_USAGE;
		goto out;
	}
	int orc = sd_output(stdout, &p, &o);
	if (orc == -ENOENT) {
		fprintf(stderr, "sonde: report: --view %s %s: no function of that name in these "
			"samples (give a name of the flat view)\n",
			o.view == SD_VIEW_CALLERS ? "callers" : "callees", o.func);
		code = SD_EXIT_USAGE;
		goto out;
	}
	if (orc)
		goto nomem;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sonde: report: stdout: %s\n", strerror(errno));
		code = SD_EXIT_IO;
		goto out;
	}
	code = SD_EXIT_OK;
	goto out;
nomem:
	fprintf(stderr, "sonde: report: out of memory\n");
	code = SD_EXIT_IO;
out:
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	free(paths);
	free(wheres);
	free(o.group_by);
	free(group_copy);
	sd_metric_fini(&o);
	sd_filters_fini(&filters);
	sd_profile_fini(&p);
	return code;
}
