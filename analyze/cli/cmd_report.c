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
#include "analyze/cli/cli.h"

#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char usage[] =
	"usage: sonde report [--format text|folded|csv|json] [--format pprof -o FILE]\n"
	"                    [--format svg|html [-o FILE] [--color-by ATTR]]\n"
	"                    [--format speedscope|trace [-o FILE]]\n"
	"                    [--view flat|threads|sources|counters|tree|regions|streams|\n"
	"                           coverage|processes|imbalance|mpi|comm]\n"
	"                    [--view model --region NAME --param NAME[,NAME...] [--fit mean|min]]\n"
	"                    [--view callers|callees NAME]\n"
	"                    [--group-by KEY[,KEY...]] [--where FILTER]...\n"
	"                    [--metric periods|samples|weight|COUNTER] [--top N]\n"
	"                    [--stats thread|process|rank]\n"
	"                    [--source NAME] [--min-percent P] [--by-thread] [--context-above]\n"
	"                    [--addresses]\n"
	"                    [--no-inline] [--no-demangle] [--lines] [--[no-]short-names] [-q]\n"
	"                    [--strict] [--progress] [--jobs N] PATH...\n"
	"KEY: an annotation attribute, or function, file, line, thread, process, module,\n"
	"     source, rank, host (--view regions: attributes, and rank, host, process)\n"
	"FILTER: attr=value, attr!=value, attr~REGEX, attr!~REGEX, attr (present), !attr\n"
	"        (absent); attr may be an annotation attribute or function, module, thread,\n"
	"        process, source, rank, host\n"
	"COUNTER: a counter of the streams' headers (context-switches.voluntary) or a group\n"
	"         (context-switches: the sum of its parts); see --view counters";

/* The options given (SD_TAKES_* bits) that a view or format might not take. */
static unsigned options_given(const struct sd_report_opts *o)
{
	return (o->ngroup ? SD_TAKES_GROUP_BY : 0) | (o->stats ? SD_TAKES_STATS : 0) |
	       (o->top ? SD_TAKES_TOP : 0) | (o->min_percent_given ? SD_TAKES_MIN_PERCENT : 0) |
	       (o->by_thread || o->context_above ? SD_TAKES_LAYOUT : 0) |
	       (o->weight || o->counter ? SD_TAKES_METRIC : 0);
}

/* What an option a view or format does not take says, when the format does not speak
 * for itself (sd_format_def.own). */
static const struct { unsigned bit; const char *why; } option_why[] = {
	{ SD_TAKES_GROUP_BY, "--group-by makes its own table, or keeps levels of --view regions "
			     "(use it without --view or with --view regions, and with --format "
			     "text, csv or json)" },
	{ SD_TAKES_STATS, "--stats adds columns to the flat and --group-by views (use it "
			  "without --view, and with --format text, csv or json)" },
};

/* The options against the view's and the format's rows (output/defs.c): the option
 * says where it goes. --group-by turns the flat view into its table. */
static int check_takes(struct sd_report_opts *o)
{
	const struct sd_format_def *fd = sd_format_def_of(o->format);
	unsigned given = options_given(o);

	for (size_t k = 0; k < sizeof option_why / sizeof option_why[0]; k++) {
		unsigned bit = option_why[k].bit;
		if ((given & bit) && !(sd_view_def_of(o->view)->takes & fd->takes & bit))
			return sd_error(SD_EXIT_USAGE, "report: %s", option_why[k].why);
		if (bit == SD_TAKES_GROUP_BY && o->ngroup && o->view == SD_VIEW_FLAT)
			o->view = SD_VIEW_GROUP;
	}
	return 0;
}

/* -o goes with the file formats; --color-by goes with svg and html only, and names an attribute (or module,
 * the default). */
static int check_output(struct sd_report_opts *o)
{
	static const char *const builtin[] = { "function", "thread", "process", "source", "file",
					       "line", "rank", "host", NULL };
	/* -o -: standard output, as without -o; pprof (always a file) writes its bytes there */
	if (o->output && !strcmp(o->output, "-") && sd_format_def_of(o->format)->file != SD_FILE_MUST)
		o->output = NULL;
	if (o->output && sd_format_def_of(o->format)->file == SD_FILE_NO) {
		size_t n = 0, k = 0;
		char list[256] = "";
		for (size_t i = 0; i < sd_nformat_defs; i++)
			n += sd_format_defs[i].file != SD_FILE_NO;
		for (size_t i = 0; i < sd_nformat_defs; i++)
			if (sd_format_defs[i].file != SD_FILE_NO)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
					 k++ ? (k == n ? " and " : ", ") : "", sd_format_defs[i].name);
		return sd_error(SD_EXIT_USAGE, "report: -o FILE: only --format %s write a file (add "
				"one of them, or leave -o out)", list);
	}
	if (o->color_by && o->format != SD_FMT_SVG && o->format != SD_FMT_HTML)
		return sd_error(SD_EXIT_USAGE, "report: --color-by %s: colours a flame graph (add "
				"--format svg or html)", o->color_by);
	for (size_t k = 0; o->color_by && builtin[k]; k++)
		if (!strcmp(o->color_by, builtin[k]))
			return sd_error(SD_EXIT_USAGE, "report: --color-by %s: colours by an "
					"annotation attribute or by module (e.g. --color-by phase)",
					o->color_by);
	o->color_by = o->color_by && strcmp(o->color_by, "module") ? o->color_by : NULL;
	return 0;
}

/* What goes with what: the rows of the views and formats (output/defs.c), then the
 * model's own options. */
static int check_combination(struct sd_report_opts *o)
{
	const struct sd_format_def *fd = sd_format_def_of(o->format);
	int err;

	/* a format that is a whole file of its own says what it takes */
	if (fd->own && (options_given(o) & ~fd->takes))
		return sd_error(SD_EXIT_USAGE, "report: %s", fd->only);
	if ((err = check_output(o)))
		return err;
	/* a view in a format it is not shown in: the format says what it shows */
	if ((!sd_view_shows(o->view, o->format) && !(o->ngroup && o->view == SD_VIEW_FLAT)) ||
	    (fd->file == SD_FILE_MUST && !o->output))
		return sd_error(SD_EXIT_USAGE, "report: %s",
				fd->only ? fd->only : "no such combination");
	if ((err = check_takes(o)))
		return err;
	if ((o->view == SD_VIEW_MODEL) != (o->region || o->nparams) ||
	    (o->view == SD_VIEW_MODEL && (!o->region || !o->nparams)))
		return sd_error(SD_EXIT_USAGE, "report: --view model needs --region NAME and "
				"--param NAME[,NAME...], and they only go with it (e.g. --view "
				"model --region solve --param n)");
	if (o->nparams > SD_MODEL_MAXPARAMS)
		return sd_error(SD_EXIT_USAGE, "report: --param: %zu parameters (a model takes at "
				"most %d)", o->nparams, SD_MODEL_MAXPARAMS);
	return 0;
}

/* No PATH: the newest ./sonde-* directory (sonde run's default output; not a DIR.old),
 * said in one line. SD_EXIT_OK, or said. */
static int default_path(struct sd_cli *c)
{
	static char best[NAME_MAX + 3];
	struct timespec bt = { 0 };
	DIR *d = opendir(".");
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d))) {
		struct stat st;
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "sonde-", 6) || (n > 4 && !strcmp(e->d_name + n - 4, ".old")) ||
		    stat(e->d_name, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (!found || st.st_mtim.tv_sec > bt.tv_sec ||
		    (st.st_mtim.tv_sec == bt.tv_sec && st.st_mtim.tv_nsec > bt.tv_nsec)) {
			snprintf(best, sizeof best, "./%s", e->d_name);
			bt = st.st_mtim;
			found = 1;
		}
	}
	if (d)
		closedir(d);
	if (!found)
		return sd_error(SD_EXIT_USAGE, "report: no PATH given, and no ./sonde-* directory here "
				"(sonde run writes ./sonde-CMD by default; give the streams' files or "
				"directories; %s)", c->see);
	c->paths[c->npaths++] = best;
	sd_msg("sonde: report: reading %s (the newest ./sonde-* directory here; give a PATH to "
	       "read another)", best);
	return SD_EXIT_OK;
}

/* The regions view needs REGION records: say why there are none. */
static int check_regions(const struct sd_report_opts *o, const struct sd_profile *p)
{
	if ((o->view != SD_VIEW_REGIONS && o->view != SD_VIEW_MODEL) || p->region_records ||
	    p->region_stats)
		return SD_EXIT_OK;
	if (p->dropped_regions)
		return sd_error(SD_EXIT_BADINPUT, "no region records: all %llu region events were "
				"dropped (a larger SONDE_BUFFER_KB makes the ring drop fewer)",
				(unsigned long long)p->dropped_regions);
	return sd_error(SD_EXIT_BADINPUT, "no region records (run with SONDE_REGIONS=on)");
}

int sd_cmd_report(int argc, char **argv)
{
	struct sd_cli c = { 0 };
	struct sd_filters filters = { 0 };
	struct sd_profile p = { 0 };
	struct sd_report_opts o = { 0 };
	int code = sd_cli_parse(&c, SD_CLI_REPORT, usage, argc, argv);

	if (code != SD_EXIT_OK || c.help)
		goto out;
	o = c.o; /* the options as parsed; resolving fills the rest */
	if ((code = check_combination(&o)) || (!c.npaths && (code = default_path(&c))))
		goto out;
	code = sd_cli_load(&c, c.paths, c.npaths, NULL, &p, &filters);
	if (code == SD_EXIT_OK)
		code = check_regions(&o, &p);
	if (code == SD_EXIT_OK)
		code = sd_cli_resolve(&c, NULL, &p, &filters, &o);
	if (code == SD_EXIT_OK)
		code = sd_cli_counter_by_code(&c, &o);
	if (code != SD_EXIT_OK)
		goto out;
	if ((code = sd_output(stdout, &p, &o)))
		goto out; /* said, or -ENOMEM */
	if (fflush(stdout) || ferror(stdout))
		code = sd_error(SD_EXIT_IO, "report: stdout: %s", strerror(errno));
out:
	sd_metric_fini(&o);
	sd_filters_fini(&filters);
	sd_profile_fini(&p);
	sd_cli_fini(&c);
	return code;
}
