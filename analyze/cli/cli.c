/*
 * cli.c: what `sonde report` and `sonde diff` share: their options (one table, one
 * parser, one set of messages), and loading PATHs (cli_paths.c expands them into stream
 * files) into a profile with the --where filters, --source and --metric applied.
 *
 * A command parses with sd_cli_parse (its own options are in the table, marked with the
 * commands that take them), then per profile sd_cli_load and sd_cli_resolve. Errors are
 * said by sd_error (`sonde: CMD: ...` on stderr) where they are found; functions return
 * 0, a said code or -ENOMEM (util.h: sd_exit_code says it). Runs in the CLI's only
 * thread.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/cli/cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

/* ---- options -------------------------------------------------------------------- */

enum opt_id {
	O_FORMAT, O_VIEW, O_METRIC, O_TOP, O_SOURCE, O_GROUP_BY, O_WHERE, O_MIN_PERCENT,
	O_STATS, O_JOBS, O_REGION, O_PARAM, O_FIT, O_OUTPUT, O_COLOR_BY, /* with a value */
	O_ADDRESSES, O_STRICT, O_PROGRESS,
	O_BY_THREAD, O_CONTEXT_ABOVE, O_INLINE, O_NO_INLINE, O_DEMANGLE, O_NO_DEMANGLE,
	O_LINES, O_SHORT, O_NO_SHORT, O_QUIET, O_ABSOLUTE, /* flags */
};

#define R SD_CLI_REPORT
#define D SD_CLI_DIFF
static const struct opt {
	const char *name;
	enum opt_id id;
	int value;     /* takes a value (--opt V or --opt=V) */
	unsigned cmds; /* SD_CLI_REPORT | SD_CLI_DIFF */
	const char *arg, *help; /* --help: the value's name, what the option does */
} opts[] = {
	{ "--format", O_FORMAT, 1, R | D, "NAME", "the output format (default text)" },
	{ "--view", O_VIEW, 1, R, "NAME", "what the rows are (below; default flat)" },
	{ "--metric", O_METRIC, 1, R | D, "M", "what the rows add up: periods (the samples, each "
	  "counted by the periods it stands for; the default), samples, weight or time (ms of "
	  "cpu-time and wall-time samples), or a COUNTER's deltas" },
	{ "--top", O_TOP, 1, R | D, "N", "only the first N rows (0: all)" },
	{ "--source", O_SOURCE, 1, R | D, "NAME", "only the samples of one source (see --view "
	  "sources; with several, the views that add samples show cpu-time)" },
	{ "--group-by", O_GROUP_BY, 1, R | D, "KEY[,KEY...]", "a row per combination of the "
	  "KEYs' values (with --view regions: the levels kept)" },
	{ "--where", O_WHERE, 1, R | D, "FILTER", "only the samples that match (repeatable: "
	  "all must match); one that matches nothing is said" },
	{ "--min-percent", O_MIN_PERCENT, 1, R, "P", "tree, svg, html: leave out nodes under "
	  "P % of the total (default 0.5); given, the flat view drops such rows too" },
	{ "--stats", O_STATS, 1, R, "KEY", "min, mean and max of each row across threads, "
	  "processes or ranks, naming which has the min and the max" },
	{ "--jobs", O_JOBS, 1, R | D, "N", "read the streams with N threads (-j N; default: "
	  "the CPUs); the output is the same for every N" },
	{ "--region", O_REGION, 1, R, "NAME", "--view model: the region (NAME or ATTR=VALUE)" },
	{ "--param", O_PARAM, 1, R, "NAME[,NAME...]", "--view model: the attributes that are "
	  "the parameters of the law" },
	{ "--fit", O_FIT, 1, R, "mean|min", "--view model: fit each value's mean call (the "
	  "default) or its shortest" },
	{ "-o", O_OUTPUT, 1, R | D, "FILE", NULL },
	{ "--output", O_OUTPUT, 1, R | D, "FILE", "where pprof, svg, html, speedscope and trace "
	  "go (-: standard output; a file is replaced whole, never through another user's "
	  "link)" },
	{ "--color-by", O_COLOR_BY, 1, R, "ATTR", "svg, html: colour frames by an annotation "
	  "attribute's value (default: by module)" },
	{ "--addresses", O_ADDRESSES, 0, R | D, NULL, "frames as module+offset, never named" },
	{ "--strict", O_STRICT, 0, R | D, NULL, "a bad or incomplete stream fails the report "
	  "(exit 4) instead of being said and left out" },
	{ "--progress", O_PROGRESS, 0, R | D, NULL, "a progress line on stderr in batch jobs "
	  "too (a terminal gets one after a second of reading)" },
	{ "--by-thread", O_BY_THREAD, 0, R, NULL, "--view regions: a row per thread" },
	{ "--context-above", O_CONTEXT_ABOVE, 0, R, NULL, "--view tree: annotation levels "
	  "above the call stack instead of spliced into it" },
	{ "--inline", O_INLINE, 0, R, NULL, "inlined functions as frames of their own (the "
	  "default)" },
	{ "--no-inline", O_NO_INLINE, 0, R, NULL, "inlined functions folded into their caller" },
	{ "--demangle", O_DEMANGLE, 0, R, NULL, "C++ names demangled (the default)" },
	{ "--no-demangle", O_NO_DEMANGLE, 0, R, NULL, "names as the symbol table has them" },
	{ "--lines", O_LINES, 0, R, NULL, "functions at their source lines (FUNC file:line)" },
	{ "--short-names", O_SHORT, 0, R | D, NULL, "C++ names without template arguments and "
	  "parameters (the default of text on a terminal)" },
	{ "--no-short-names", O_NO_SHORT, 0, R | D, NULL, "C++ names whole on a terminal too" },
	{ "-q", O_QUIET, 0, R, NULL, NULL },
	{ "--quiet", O_QUIET, 0, R, NULL, "no coverage block above the view (the notes "
	  "stay)" },
	{ "--absolute", O_ABSOLUTE, 0, D, NULL, "delta = b - a and ratio = b / a in the "
	  "metric's values (for runs of equal length), not shares" },
};
#undef R
#undef D

/* Text wrapped at 79 columns, its lines after the first indented by `in` (the first
 * goes on from column `at`). */
static void put_wrapped(const char *s, int at, int in)
{
	int col = at;
	while (*s) {
		size_t w = strcspn(s, " ");
		if (col > in && col + 1 + (int)w > 79) {
			printf("\n%*s", in, "");
			col = in;
		} else if (col > in) {
			putchar(' ');
			col++;
		}
		printf("%.*s", (int)w, s);
		col += (int)w;
		s += w + (s[w] == ' ');
	}
	putchar('\n');
}

/* --help's options: each of the command's options with what it does (an alias row
 * without help text joins the row after it: "-o, --output FILE"). */
static void help_options(unsigned cmd_bit)
{
	printf("\noptions:\n");
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		const struct opt *o = &opts[k], *alias = k && !opts[k - 1].help ? &opts[k - 1] : NULL;
		if (!(o->cmds & cmd_bit) || !o->help)
			continue;
		char head[64];
		int n = snprintf(head, sizeof head, "  %s%s%s%s%s", alias ? alias->name : "",
				 alias ? ", " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		printf("%s", head);
		if (n >= 26)
			printf("\n%26s", "");
		else
			printf("%*s", 26 - n, "");
		put_wrapped(o->help, 26, 26);
	}
	printf("  -h, --help%14sthis text\n", "");
}

/* The row of `val` among the n rows at `rows` (stride bytes apart, each beginning with its
 * name, NULL for a row no option names: output/defs.c), or NULL after saying it is
 * unknown, with the nearest name. */
static const void *parse_row(const struct sd_cli *c, const char *opt, const char *val,
			     const void *rows, size_t n, size_t stride)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)((const char *)rows + i * stride);
		if (name && !strcmp(val, name))
			return (const char *)rows + i * stride;
	}
	const char *to, *what, *near; /* to: sonde's name for a name other tools give a format */
	if (!strcmp(opt, "--format") && sd_format_alias(val, &to, &what))
		return sd_error(SD_EXIT_USAGE, "%s: %s: unknown value '%s' (--format %s makes %s; %s)",
				c->cmd, opt, val, to, what, c->see), NULL;
	near = sd_nearest(val, rows, n, stride);
	if (near)
		sd_error(SD_EXIT_USAGE, "%s: %s: unknown value '%s' (did you mean '%s'? %s)", c->cmd,
			 opt, val, near, c->see);
	else
		sd_error(SD_EXIT_USAGE, "%s: %s: unknown value '%s' (%s)", c->cmd, opt, val, c->see);
	return NULL;
}

static int parse_enum(const struct sd_cli *c, const char *opt, const char *val,
		      const char *const *names, int *out)
{
	size_t n = 0;
	while (names[n])
		n++;
	const char *const *r = parse_row(c, opt, val, names, n, sizeof *names);
	if (!r)
		return SD_SAID(SD_EXIT_USAGE);
	*out = (int)(r - names);
	return 0;
}

/* NAME[,NAME...] of option `opt` into *list (pointers into *copy; the last one given
 * wins); `eg` is an example for the message about an empty name. */
static int parse_list(struct sd_cli *c, const char *opt, const char *eg, const char *val,
		      char **copy, char ***list, size_t *n)
{
	free(*copy);
	free(*list);
	*n = 0;
	if (!(*copy = strdup(val)) || !(*list = calloc(strlen(val) + 1, sizeof(**list))))
		return -ENOMEM;
	for (char *q = *copy, *e;; q = e + 1) {
		if ((e = strchr(q, ',')))
			*e = 0;
		if (!*q)
			return sd_error(SD_EXIT_USAGE, "%s: %s: empty key (give names separated by "
					"commas, e.g. %s %s)", c->cmd, opt, opt, eg);
		(*list)[(*n)++] = q;
		if (!e)
			return 0;
	}
}

/* sonde report --help: the views and formats, from their rows (output/defs.c). */
static void help_tables(void)
{
	printf("\nviews (--view NAME):\n");
	for (size_t i = 0; i < sd_nview_defs; i++)
		if (sd_view_defs[i].name)
			printf("  %-11s%s%s\n", sd_view_defs[i].name, sd_view_defs[i].func ? "NAME: " : "",
			       sd_view_defs[i].what);
	printf("formats (--format NAME):\n");
	for (size_t i = 0; i < sd_nformat_defs; i++)
		printf("  %-11s%s%s\n", sd_format_defs[i].name, sd_format_defs[i].what,
		       sd_format_defs[i].file == SD_FILE_MUST  ? " (-o FILE)"
		       : sd_format_defs[i].file == SD_FILE_MAY ? " (stdout or -o FILE)"
							  : "");
}

/* An option of the table that no case of set_opt sets: a bug of sonde's, said. */
static int not_handled(const struct sd_cli *c, const struct opt *o)
{
	return sd_error(SD_EXIT_USAGE, "%s: %s: not handled (a bug of sonde's option table)",
			c->cmd, o->name);
}

/* --format NAME: of every format for report, of those that compare two profiles for diff. */
static int set_format(struct sd_cli *c, const struct opt *o, const char *val)
{
	const struct sd_format_def *f = NULL;
	if (c->cmd_bit == SD_CLI_DIFF) {
		for (size_t k = 0; k < sd_nformat_defs && !f; k++)
			if (sd_format_defs[k].diff && !strcmp(sd_format_defs[k].name, val))
				f = &sd_format_defs[k];
		if (!f) {
			char list[256] = "";
			for (size_t k = 0, m = 0; k < sd_nformat_defs; k++)
				if (sd_format_defs[k].diff)
					snprintf(list + strlen(list), sizeof list - strlen(list),
						 "%s%s", m++ ? ", " : "", sd_format_defs[k].name);
			return sd_error(SD_EXIT_USAGE, "diff: --format: unknown value '%s' (%s)",
					val, list);
		}
	} else if (!(f = parse_row(c, o->name, val, sd_format_defs, sd_nformat_defs,
				   sizeof *sd_format_defs))) {
		return SD_SAID(SD_EXIT_USAGE);
	}
	c->o.format = f->id;
	return 0;
}

/* --view NAME, and the function name after it for the views of one function (*i
 * advances past it). */
static int set_view(struct sd_cli *c, const struct opt *o, const char *val, int argc,
		    char **argv, int *i)
{
	const struct sd_view_def *d = parse_row(c, o->name, val, sd_view_defs, sd_nview_defs,
						sizeof *sd_view_defs);
	if (!d)
		return SD_SAID(SD_EXIT_USAGE);
	c->o.view = d->id;
	if (d->func) {
		if (*i + 1 >= argc)
			return sd_error(SD_EXIT_USAGE, "%s: --view %s needs a function name "
					"(e.g. --view %s main)", c->cmd, val, val);
		c->o.func = argv[++*i];
	}
	return 0;
}

/* The options whose value is a number: --top, --min-percent and --jobs (val NULL: -j or
 * --jobs last on the line, said here). */
static int set_number(struct sd_cli *c, const struct opt *o, const char *val)
{
	char *end;
	switch (o->id) {
	case O_TOP: {
		unsigned long long n = strtoull(val, &end, 10);
		if (!*val || *end || val[0] == '-')
			return sd_error(SD_EXIT_USAGE, "%s: --top: '%s' is not a count (%s)", c->cmd,
					val, c->see);
		c->o.top = (size_t)n;
		return 0;
	}
	case O_MIN_PERCENT:
		c->o.min_percent = strtod(val, &end);
		c->o.min_percent_given = 1;
		if (!*val || *end || c->o.min_percent < 0)
			return sd_error(SD_EXIT_USAGE, "%s: --min-percent: '%s' is not a percentage "
					"(%s)", c->cmd, val, c->see);
		return 0;
	case O_JOBS: {
		long jn = val ? strtol(val, &end, 10) : 0;
		if (!val || !*val || *end || jn < 1 || jn > 256)
			return sd_error(SD_EXIT_USAGE, "%s: --jobs: '%s' is not a number of threads "
					"from 1 to 256 (%s)", c->cmd, val ? val : "", c->see);
		c->jobs = (int)jn;
		return 0;
	}
	default:
		return not_handled(c, o);
	}
}

/* A flag (an option without a value): it sets or clears one setting. */
static int set_flag(struct sd_cli *c, const struct opt *o)
{
	switch (o->id) {
	case O_ADDRESSES: c->sym |= SD_SYM_ADDRESSES; return 0;
	case O_STRICT: c->strict = 1; return 0;
	case O_PROGRESS: c->progress = 1; return 0;
	case O_BY_THREAD: c->o.by_thread = 1; return 0;
	case O_CONTEXT_ABOVE: c->o.context_above = 1; return 0;
	case O_INLINE: c->sym &= ~SD_SYM_NO_INLINE; return 0;
	case O_NO_INLINE: c->sym |= SD_SYM_NO_INLINE; return 0;
	case O_DEMANGLE: c->sym &= ~SD_SYM_NO_DEMANGLE; return 0;
	case O_NO_DEMANGLE: c->sym |= SD_SYM_NO_DEMANGLE; return 0;
	case O_LINES: c->sym |= SD_SYM_LINES; return 0;
	case O_SHORT: c->sym |= SD_SYM_SHORT; c->names_given = 1; return 0;
	case O_NO_SHORT: c->sym &= ~SD_SYM_SHORT; c->names_given = 1; return 0;
	case O_QUIET: c->o.quiet = 1; return 0;
	case O_ABSOLUTE: c->absolute = 1; return 0;
	default:
		return not_handled(c, o);
	}
}

/* One option with its value (NULL for a flag); *i may advance (--view callers NAME). */
static int set_opt(struct sd_cli *c, const struct opt *o, const char *val, int argc,
		   char **argv, int *i)
{
	int v, r;
	switch (o->id) {
	case O_FORMAT:
		return set_format(c, o, val);
	case O_VIEW:
		return set_view(c, o, val, argc, argv, i);
	case O_TOP: case O_MIN_PERCENT: case O_JOBS:
		return set_number(c, o, val);
	case O_METRIC:
		if (!*val)
			return sd_error(SD_EXIT_USAGE, "%s: --metric: empty (give periods, samples, "
					"weight or a counter; %s)", c->cmd, c->see);
		/* periods (the default), samples, weight (time: estimated from periods), or
		 * a counter resolved once the streams are loaded */
		c->o.weight = !strcmp(val, "weight") || !strcmp(val, "time");
		c->o.samples = !strcmp(val, "samples");
		c->o.metric_given = 1;
		c->o.counter = c->o.weight || c->o.samples || !strcmp(val, "periods") ? NULL : val;
		return 0;
	case O_SOURCE:
		c->source = val;
		return 0;
	case O_GROUP_BY:
		return parse_list(c, "--group-by", "phase,function", val, &c->group_copy,
				  &c->o.group_by, &c->o.ngroup);
	case O_PARAM:
		return parse_list(c, "--param", "n,m", val, &c->param_copy, &c->o.params,
				  &c->o.nparams);
	case O_REGION:
		c->o.region = val;
		return 0;
	case O_OUTPUT:
		c->o.output = val;
		return 0;
	case O_COLOR_BY:
		if (!*val)
			return sd_error(SD_EXIT_USAGE, "%s: --color-by: empty attribute name (give an "
					"annotation attribute, e.g. --color-by phase)", c->cmd);
		c->o.color_by = val;
		return 0;
	case O_FIT:
		if (strcmp(val, "mean") && strcmp(val, "min"))
			return sd_error(SD_EXIT_USAGE, "%s: --fit: '%s' is not mean or min (%s)", c->cmd,
					val, c->see);
		c->o.fit_min = !strcmp(val, "min");
		return 0;
	case O_WHERE:
		c->wheres[c->nwheres++] = val;
		return 0;
	case O_STATS:
		if ((r = parse_enum(c, o->name, val, sd_stats_names + 1, &v)))
			return r;
		c->o.stats = v + 1; /* enum sd_stats_key */
		return 0;
	case O_ADDRESSES: case O_STRICT: case O_PROGRESS: case O_BY_THREAD: case O_CONTEXT_ABOVE:
	case O_INLINE: case O_NO_INLINE: case O_DEMANGLE: case O_NO_DEMANGLE: case O_LINES: case O_SHORT:
	case O_NO_SHORT: case O_QUIET: case O_ABSOLUTE:
		return set_flag(c, o);
	}
	return not_handled(c, o);
}

/* Text on a terminal (docs/REPORT.md, "On a terminal"): names cut to its width, C++
 * names short unless --no-short-names, shares in colour unless NO_COLOR or TERM=dumb.
 * Pipes and files get every name whole and no colour. */
static int never_terminal; /* sd_cli_no_terminal: sonde-mpi */

void sd_cli_no_terminal(void)
{
	never_terminal = 1;
}

static void on_terminal(struct sd_cli *c)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS"), *nocolor = getenv("NO_COLOR"), *term = getenv("TERM");

	if (c->o.format != SD_FMT_TEXT || (c->o.output && strcmp(c->o.output, "-")) ||
	    never_terminal || !isatty(STDOUT_FILENO))
		return;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		c->o.width = ws.ws_col;
	else
		c->o.width = cols && atoi(cols) > 0 ? (unsigned)atoi(cols) : 80;
	c->o.color = !(nocolor && *nocolor) && !(term && !strcmp(term, "dumb"));
	if (!c->names_given)
		c->sym |= SD_SYM_SHORT;
}

int sd_cli_parse(struct sd_cli *c, unsigned cmd_bit, const char *usage, int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c->cmd_bit = cmd_bit;
	c->cmd = cmd_bit == SD_CLI_DIFF ? "diff" : "report";
	c->see = cmd_bit == SD_CLI_DIFF ? "see 'sonde diff --help'" : "see 'sonde report --help'";
	c->jobs = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	c->o.min_percent = 0.5;
	c->wheres = calloc((size_t)argc + 1, sizeof(*c->wheres));
	c->paths = calloc((size_t)argc + 1, sizeof(*c->paths));
	if (!c->wheres || !c->paths)
		return -ENOMEM;
	for (int i = 1, opts_on = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (!opts_on || a[0] != '-' || !a[1]) {
			c->paths[c->npaths++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			opts_on = 0;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s\n", usage);
			help_options(cmd_bit);
			if (cmd_bit == SD_CLI_REPORT)
				help_tables();
			printf("\nColumns, views and formats in full: docs/REPORT.md (installed in "
			       "share/doc/sonde).\n");
			c->help = 1;
			return SD_EXIT_OK;
		}
		if (!strcmp(a, "-j")) /* -j N, as --jobs N */
			a = "--jobs";
		const struct opt *o = NULL;
		size_t l = 0;
		for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
			l = strlen(opts[k].name);
			if ((opts[k].cmds & cmd_bit) && !strncmp(a, opts[k].name, l) &&
			    (a[l] == 0 || (opts[k].value && a[l] == '='))) {
				o = &opts[k];
				break;
			}
		}
		if (!o) {
			/* the options of this command (the others' names left NULL) */
			const char *names[sizeof(opts) / sizeof(opts[0])], *near;
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
			for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
				names[k] = opts[k].cmds & cmd_bit ? opts[k].name : NULL;
			near = sd_nearest(name, names, sizeof(opts) / sizeof(opts[0]), sizeof(*names));
			if (near)
				return sd_error(SD_EXIT_USAGE, "%s: unknown option '%s' (did you mean "
						"'%s'? %s)", c->cmd, a, near, c->see);
			return sd_error(SD_EXIT_USAGE, "%s: unknown option '%s' (%s)", c->cmd, a,
					c->see);
		}
		if (o->value) {
			if (a[l] == '=') {
				val = a + l + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else if (o->id == O_JOBS) {
				val = NULL; /* said by set_opt */
			} else {
				return sd_error(SD_EXIT_USAGE, "%s: option '%s' needs a value (%s)",
						c->cmd, a, c->see);
			}
		}
		int r = set_opt(c, o, val, argc, argv, &i);
		if (r)
			return r; /* said, or -ENOMEM */
	}
	on_terminal(c);
	return SD_EXIT_OK;
}

void sd_cli_fini(struct sd_cli *c)
{
	free(c->wheres);
	free(c->paths);
	free(c->o.group_by);
	free(c->group_copy);
	free(c->param_copy);
	free(c->o.params);
}

/* ---- loading -------------------------------------------------------------------- */

int sd_cli_load(const struct sd_cli *c, char *const *paths, size_t npaths, const char *label,
		struct sd_profile *p, struct sd_filters *filters)
{
	char why[300] = "no attribute name (use attr=value, attr!=value, attr~regex, attr or !attr)";
	struct { char **v; size_t n; } files = { 0 };
	size_t used = 0;
	int code;

	if (sd_profile_init(p, c->sym))
		return -ENOMEM;
	p->only_source = c->source;
	if (sd_format_timeline(c->o.format) && sd_timeline_attach(p, 0))
		return -ENOMEM; /* each sample in time: only for the timeline formats */
	if (c->o.format == SD_FMT_HTML && sd_timeline_attach(p, 1))
		return -ENOMEM; /* the page's region timeline */
	for (size_t i = 0; i < c->nwheres; i++) {
		int r = sd_filters_add(filters, c->wheres[i], why, sizeof(why));
		if (r == 0)
			r = sd_profile_where(p, c->wheres[i]);
		if (r == -ENOMEM)
			return -ENOMEM;
		if (r == -EINVAL)
			return sd_error(SD_EXIT_USAGE, "%s: --where '%s': %s", c->cmd, c->wheres[i],
					why);
	}
	size_t skipped = 0; /* a directory's .sonde entries that are no regular file (said) */
	char **unpacked = NULL; /* packs unpacked, their symbols an archive (pack.c) */
	code = sd_pack_paths(paths, npaths, p->sym, &unpacked);
	if (code == SD_EXIT_OK)
		code = sd_cli_expand_paths(unpacked, npaths, &files.v, &files.n, &skipped);
	for (size_t i = 0; unpacked && i < npaths; i++)
		free(unpacked[i]);
	free(unpacked);
	if (code == SD_EXIT_OK)
		code = sd_load_files(p, files.v, files.n, c->jobs,
				     (c->strict ? SD_LOAD_STRICT : 0) |
				     (c->progress ? SD_LOAD_PROGRESS : 0), &used);
	p->unreadable += skipped;
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	if (code != SD_EXIT_OK)
		return code;
	if (!used) {
		if (label)
			return sd_error(SD_EXIT_BADINPUT, "%s: %s: no stream could be read (nothing "
					"to compare)", c->cmd, label);
		return sd_error(SD_EXIT_BADINPUT, "%s: no stream could be read (nothing to "
				"report)", c->cmd);
	}
	return SD_EXIT_OK;
}

/* Says that NAME of OPT is no attribute of the streams, with near (NULL: none) and the
 * attributes in use (used[a]): the line is made first, then said once (not at all
 * without memory, as check_name). */
static void say_no_attr(const struct sd_cli *c, const struct sd_profile *p, const char *opt,
			const char *name, const char *near, const uint8_t *used)
{
	char *list = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);
	if (!m)
		return;
	int n = 0;
	for (size_t a = 0; a < p->nattr_names; a++)
		if (used[a])
			fprintf(m, "%s %s", n++ ? "," : "", p->attr_names[a]);
	if (fclose(m) == 0)
		sd_msg("sonde: %s: %s %s: no attribute of that name in the streams (%s%s%s"
		       "attributes:%s)", c->cmd, opt, name, near ? "did you mean '" : "",
		       near ? near : "", near ? "'? " : "", n ? list : " none");
	free(list);
}

/* A name that is neither a built-in key nor an attribute of the loaded streams: said,
 * with the nearest attribute when one is close, and the ones that exist. */
static void check_name(const struct sd_cli *c, const struct sd_profile *p, const char *opt,
		       const char *name, size_t len)
{
	static const char *const keys[] = { "function", "thread", "process", "module", "source",
					    "file", "line", "rank", "host", NULL };
	uint32_t id;
	char buf[128];
	/* (--where interns the names it is given: a name is known when a context has it) */
	if (len >= sizeof(buf))
		return;
	if (sd_strmap_get(&p->attr_map, name, len, &id))
		for (size_t x = 1; x < p->nctx; x++)
			if (p->ctx[x].attr == id)
				return;
	memcpy(buf, name, len);
	buf[len] = 0;
	const char *near = NULL;
	unsigned best = 3;
	for (int k = 0; keys[k]; k++) {
		if (!strcmp(buf, keys[k]))
			return;
		unsigned d = sd_edit_distance(buf, keys[k]);
		if (d < best)
			best = d, near = keys[k];
	}
	uint8_t *used = calloc(p->nattr_names + 1, 1);
	if (!used)
		return;
	for (size_t x = 1; x < p->nctx; x++)
		used[p->ctx[x].attr] = 1;
	for (size_t a = 0; a < p->nattr_names; a++) {
		unsigned d = used[a] ? sd_edit_distance(buf, p->attr_names[a]) : 64;
		if (d < best)
			best = d, near = p->attr_names[a];
	}
	say_no_attr(c, p, opt, buf, near, used);
	free(used);
}

/* The views that add up samples (and every file format, drawn from them): they never
 * add the samples of two sources, which measure different clocks (cpu-time's user
 * time, wall-time's elapsed time, a PAPI event's count), so without --source they
 * show one: cpu-time, else the first source with samples. A counter metric sums the
 * deltas of every sample (each covers the time since the previous one of its thread,
 * whatever its source), so it keeps them all; so do the views of the run's account and
 * --format trace, which adds nothing (each sample is a slice of its thread's time). */
static const char *pick_source(const struct sd_cli *c, const struct sd_profile *p,
			       const struct sd_report_opts *o)
{
	const char *first = NULL;
	int several = 0, cpu = 0;
	if (c->source || c->o.counter || o->format == SD_FMT_TRACE) /* trace: a slice per sample */
		return NULL;
	switch (o->view) {
	case SD_VIEW_FLAT: case SD_VIEW_TREE: case SD_VIEW_GROUP: case SD_VIEW_CALLERS:
	case SD_VIEW_CALLEES: case SD_VIEW_THREADS:
		break;
	default:
		return NULL;
	}
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->samples)
			continue;
		if (!first)
			first = s->name;
		else if (strcmp(first, s->name))
			several = 1;
		cpu |= !strcmp(s->name, "cpu-time");
	}
	return !several ? NULL : cpu ? "cpu-time" : first;
}

/* --where source=NAME after the user's filters (kept in *all, freed by the caller with
 * sd_filters_fini(one) and free(all->v)). 0 or -ENOMEM. */
static int add_source_filter(const struct sd_filters *filters, const char *name,
			     struct sd_filters *one, struct sd_filters *all)
{
	char expr[300], why[200];
	snprintf(expr, sizeof expr, "source=%s", name);
	if (sd_filters_add(one, expr, why, sizeof why) != 1)
		return -ENOMEM;
	if (!(all->v = malloc((filters->n + 1) * sizeof(*all->v))))
		return -ENOMEM;
	if (filters->n)
		memcpy(all->v, filters->v, filters->n * sizeof(*all->v));
	all->v[filters->n] = one->v[0];
	all->n = filters->n + 1;
	return 0;
}

int sd_cli_resolve(const struct sd_cli *c, const char *label, struct sd_profile *p,
		   const struct sd_filters *filters, struct sd_report_opts *o)
{
	struct sd_filters one = { 0 }, all = { 0 };
	for (size_t k = 0; k < c->o.ngroup && c->o.view != SD_VIEW_REGIONS; k++)
		check_name(c, p, "--group-by", c->o.group_by[k], strlen(c->o.group_by[k]));
	if (c->o.color_by)
		check_name(c, p, "--color-by", c->o.color_by, strlen(c->o.color_by));
	for (size_t k = 0; k < c->nwheres; k++) {
		const char *w = c->wheres[k] + (c->wheres[k][0] == '!');
		check_name(c, p, "--where", w, strcspn(w, "=!~"));
	}
	const char *pick = pick_source(c, p, o);
	uint64_t *keep = NULL; /* the counters' totals: the run's, whatever source is shown */
	int fr = pick ? add_source_filter(filters, pick, &one, &all) : 0;
	if (!fr && pick && p->ncounters && !(keep = malloc(2 * p->ncounters * sizeof(*keep))))
		fr = -ENOMEM;
	for (size_t k = 0; keep && k < p->ncounters; k++)
		keep[2 * k] = p->counters[k].total, keep[2 * k + 1] = p->counters[k].end_total;
	if (!fr)
		fr = sd_filters_apply(p, pick ? &all : filters);
	for (size_t k = 0; !fr && keep && k < p->ncounters && !filters->n; k++)
		p->counters[k].total = keep[2 * k], p->counters[k].end_total = keep[2 * k + 1];
	free(keep);
	free(all.v);
	sd_filters_fini(&one);
	if (fr)
		return -ENOMEM;
	p->picked_source = pick; /* a source row's name: lives as long as p */
	int mr = sd_metric_resolve(p, o);
	const char *in = label ? label : "these streams";
	switch (mr) {
	case 0:
		return SD_EXIT_OK;
	case -ENOENT:
		return sd_error(SD_EXIT_USAGE, "%s: --metric %s: no counter or counter group of that "
				"name in %s (use periods, samples, weight, or a counter listed by %s)",
				c->cmd, o->counter, in,
				c->cmd_bit == SD_CLI_DIFF ? "'sonde report --view counters'"
							  : "--view counters");
	case -ENODATA: {
		const char *why = "not recorded";
		for (size_t i = 0; i < p->nunavail; i++)
			if (!strcmp(p->unavail[i].name, o->counter)) {
				why = p->unavail[i].reason;
				break;
			}
		return sd_error(SD_EXIT_BADINPUT, "%s: --metric %s: the counter was unavailable when "
				"the program ran (%s; see 'sonde events')", c->cmd, o->counter, why);
	}
	case -EDOM:
		if (label)
			return sd_error(SD_EXIT_USAGE, "%s: --metric weight: the sources of %s count "
					"in different units (pick one with --source NAME)", c->cmd,
					label);
		return sd_error(SD_EXIT_USAGE, "%s: --metric weight: the sources count in different "
				"units (pick one with --source NAME; see --view sources)", c->cmd);
	default:
		return mr; /* -ENOMEM: said by sd_exit_code */
	}
}

/* A counter of SONDE_COUNTERS (its deltas since a thread's previous sample) is not where
 * its events happened: the deltas ride on whichever sample comes next (page faults of the
 * loader charged to a compute loop, a sleeper's switches to its compute code). So the
 * views by code (functions, call paths, files, lines, modules) do not offer it; threads,
 * processes, contexts and regions do (docs/REPORT.md, "Counters"). After
 * sd_cli_resolve, so that a counter unknown or unavailable is said as such first. */
int sd_cli_counter_by_code(const struct sd_cli *c, const struct sd_report_opts *o)
{
	static const char *const code_keys[] = { "function", "file", "line", "module", NULL };
	const char *by = NULL;
	if (!c->o.counter)
		return 0;
	if (o->format == SD_FMT_FOLDED || o->format == SD_FMT_SVG || o->format == SD_FMT_PPROF ||
	    o->format == SD_FMT_SPEEDSCOPE || o->format == SD_FMT_HTML)
		by = "call path";
	for (size_t i = 0; i < c->o.ngroup && !by; i++)
		for (size_t k = 0; code_keys[k] && !by; k++)
			if (!strcmp(c->o.group_by[i], code_keys[k]))
				by = code_keys[k];
	if (!by && !c->o.ngroup &&
	    (o->view == SD_VIEW_FLAT || o->view == SD_VIEW_TREE || o->view == SD_VIEW_CALLERS ||
	     o->view == SD_VIEW_CALLEES))
		by = o->view == SD_VIEW_FLAT ? "function" : "call path";
	if (!by)
		return 0;
	return sd_error(SD_EXIT_USAGE, "%s: --metric %s: not offered by %s: a counter's events "
			"are charged to whichever sample comes next, not to the code where they "
			"happened (per thread, process, context or region: --group-by thread, "
			"process or an attribute, or --view regions; by code: sample on the event "
			"itself, e.g. SONDE_SAMPLE=cpu-time@1ms,perf::PAGE-FAULTS@1000 and --source "
			"perf::PAGE-FAULTS)", c->cmd, c->o.counter, by);
}
