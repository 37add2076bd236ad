/*
 * analyze/report/report.h: what every view and exporter prints through: the report's options
 * (format, view, metric), percent, escaping of names into text, csv, json and xml, the
 * metric (emit.c), the one row printer (table.c), -o FILE made safely (outfile.c), the
 * notes every view states first (notes.c), the coverage block and view (coverage.c), and
 * the neutral trees (folded lines; struct sd_tree_src) that views hand to exporters.
 * Nothing here calls a view, an exporter or the dispatcher.
 */
#ifndef SONDE_ANALYZE_REPORT_H
#define SONDE_ANALYZE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <msgpack.h>

#include "analyze/profile/profile.h"

struct sd_report_opts;
struct sd_table;
/* ---- coverage.c: the coverage account printed ----------------------------------------- */

/* text: the coverage block of every text report's header (docs/REPORT.md, "Coverage"). */
void sd_cov_block(FILE *out, const struct sd_profile *p);
/* json: `"coverage":{...},` (the total; with threads, one object per thread too). */
void sd_cov_json(FILE *out, const struct sd_profile *p, int with_threads);
/* --view coverage: one row per thread and a total row (text, csv, json). 0 or -ENOMEM. */
int sd_out_coverage(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

/* ---- emit.c: the helpers every view and exporter prints through ------------------- */

/* 100 * v / all, 0 when all is not positive. */
double sd_pct(double v, double all);
/* strcmp, but runs of digits compare as the numbers they are ("iteration=2" before
 * "iteration=10"; "-" and "." stay characters): how every view orders names and values
 * when its metric ties. */
int sd_natcmp(const char *a, const char *b);
/* Levenshtein distance of two short strings (a typo's distance to a name; strings of
 * over 63 bytes count as far from everything: 64). */
unsigned sd_edit_distance(const char *a, const char *b);
/* The name nearest to s, at most 2 edits away ("did you mean"), or NULL: names are the
 * n `const char *` (NULL ones skipped) found `stride` bytes apart from `names` (an
 * array of strings, or the name field first in an array of structs). */
const char *sd_nearest(const char *s, const void *names, size_t n, size_t stride);
/* The same over keys of values each followed by a NUL (la, lb bytes), value by value. */
int sd_natcmp_keys(const char *a, size_t la, const char *b, size_t lb);

enum sd_format { SD_FMT_TEXT, SD_FMT_FOLDED, SD_FMT_CSV, SD_FMT_JSON, SD_FMT_PPROF, SD_FMT_SVG,
		 SD_FMT_HTML, SD_FMT_SPEEDSCOPE, SD_FMT_TRACE };
enum sd_view { SD_VIEW_FLAT, SD_VIEW_THREADS, SD_VIEW_SOURCES, SD_VIEW_TREE,
	       SD_VIEW_REGIONS, SD_VIEW_COUNTERS, SD_VIEW_GROUP, SD_VIEW_CALLERS,
	       SD_VIEW_CALLEES, SD_VIEW_STREAMS, SD_VIEW_COVERAGE, SD_VIEW_PROCESSES,
	       SD_VIEW_MODEL, SD_VIEW_IMBALANCE, SD_VIEW_MPI, SD_VIEW_COMM };

struct sd_report_opts {
	enum sd_format format;
	enum sd_view view;
	int weight;                 /* --metric weight */
	int samples;                /* --metric samples: a count of samples; without weight,
				     * samples or counter the metric is the periods (the sum
				     * of the samples' weights) */
	const char *counter;        /* --metric COUNTER: a counter name or group, else NULL */
	int metric_given;           /* --metric given (speedscope: time by default, else it) */
	/* set by sd_metric_resolve() once the streams are loaded: */
	const char *weight_unit;    /* --metric weight: NULL = ns (shown as ms), else the unit */
	uint32_t *cids; size_t ncids; /* --metric COUNTER: the counters it sums (owned) */
	size_t top;                 /* 0: all rows */
	char **group_by; size_t ngroup; /* SD_VIEW_GROUP: key names (not owned) */
	double min_percent;         /* tree: prune nodes below this share */
	int min_percent_given;      /* --min-percent given: the flat view drops rows too */
	int by_thread;              /* regions: one row per thread */
	int context_above;          /* tree: context levels above the stack, not spliced */
	const char *region;         /* model: the region (NAME, or ATTR=VALUE) */
	char **params; size_t nparams; /* model: the parameters' attribute names */
	int fit_min;                /* model: fit the shortest call per value, not the mean */
	const char *output;         /* -o FILE: where pprof (or svg, speedscope, trace; NULL:
				     * stdout) goes */
	const char *color_by;       /* svg: --color-by ATTR (NULL: colour by module) */
	const char *func;           /* callers/callees: the function NAME (not owned) */
	int stats;                  /* --stats: 0 none, else enum sd_stats_key */
	/* text on a terminal (the CLI decides): */
	unsigned width;             /* the terminal's columns: names cut to fit (0: whole) */
	int color;                  /* shares coloured, headings bold (NO_COLOR: off) */
	int quiet;                  /* -q: no coverage block above the view */
	/* Not an option: a view's table handed over whole instead of printed (the html
	 * page renders its cells; table.c). Returns 0 or -ENOMEM. */
	int (*table_sink)(void *arg, const struct sd_table *t);
	void *table_sink_arg;
	/* Not an option: what a view's JSON object holds first (the report's notes and
	 * coverage keys, each ended by a comma), written by sd_json_open. */
	void (*json_head)(FILE *out, const struct sd_report_opts *o, const void *arg);
	const void *json_head_arg;
};

/* Resolve o->counter and the weight unit against the loaded profile: 0, -ENOENT (no
 * counter or group of that name), -ENODATA (only listed as unavailable), -EDOM (--metric
 * weight over sources of different units), -ENOMEM. Frees nothing; see sd_metric_fini. */
int sd_metric_resolve(const struct sd_profile *p, struct sd_report_opts *o);
void sd_metric_fini(struct sd_report_opts *o);
/* The metric of one row, the total of the metric over all counted samples, and a value
 * printed as the metric shows it (ms with 3 decimals for ns weight, else an integer). */
double sd_metric_row(const struct sd_report_opts *o, const struct sd_crow *r);
double sd_metric_total(const struct sd_profile *p, const struct sd_report_opts *o);
void sd_metric_put(FILE *out, const struct sd_report_opts *o, double v, int width);
/* The metric's name: the counter's, "weight", "samples" or "periods" (the default). */
const char *sd_metric_name(const struct sd_report_opts *o);
/* Column name of the metric with prefix (e.g. "self" -> "self", "self_ms", "self_events"). */
const char *sd_metric_col(const struct sd_report_opts *o, const char *prefix, char *buf,
			  size_t len);
/* The footer warning about samples without counter values (nothing if there are none):
 * on out, or said through the log sink (common/log.h: stderr in the CLI) if out is NULL. */
void sd_nocounters_warning(FILE *out, const struct sd_profile *p);
/* outfile.c: -o FILE made safely (docs/REPORT.md, "Output files"): a new file or the
 * user's own regular file is written into a temporary file beside it (0600 by
 * SONDE_MODE, less the umask) that sd_outfile_done renames into place; another user's
 * file or link, or a link in a directory others can change, is refused; a device, or
 * where a trusted link leads, is written in place. */
struct sd_outfile {
	const char *path;       /* as given (messages); NULL: stdout, nothing to do */
	int dirfd;              /* FILE's directory, O_PATH; -1 when done */
	int replace;            /* the temporary file replaces the user's own file */
	char name[256];         /* FILE's last component */
	char tmp[224];          /* the temporary file ("": written in place) */
};
/* Opens path for writing: the descriptor (close-on-exec; the caller closes it, then
 * calls sd_outfile_done), or SD_SAID(SD_EXIT_IO) after one line on stderr (refused, or
 * why not). */
int sd_outfile_open(struct sd_outfile *of, const char *path);
/* After the descriptor is closed: ok, the temporary file renamed into place (0, or
 * SD_SAID(SD_EXIT_IO) after one line); not ok, it is removed (0). Closes of->dirfd. */
int sd_outfile_done(struct sd_outfile *of, int ok);
/* emit.c: -o FILE of the file formats (svg, html, speedscope, trace): sd_out_open
 * gives FILE opened for writing by sd_outfile_open into *of, or out when path is NULL
 * (NULL, said on stderr, when it cannot be opened); sd_out_close closes it, puts it in
 * place, says `sonde: WHAT written to PATH (HINT)` on stdout, or why it could not be
 * written. err: the writer's result; returns it, or SD_SAID(SD_EXIT_IO). */
FILE *sd_out_open(FILE *out, const char *path, struct sd_outfile *of);
int sd_out_close(FILE *f, struct sd_outfile *of, int err, const char *what, const char *hint);
/* emit.c: the n bytes of s as XML (svg) or HTML text or attribute value: &, <, >, ", '
 * escaped, control characters as '?', invalid UTF-8 as U+FFFD; at most max bytes of s
 * (whole characters). */
void sd_xml_put(FILE *out, const char *s, size_t n, size_t max);
/* What every view states before its rows (docs/REPORT.md, "Notes"): incomplete streams,
 * streams ended by a signal, dropped samples and region events, sources of different
 * periods counted together (views counting samples). text: the lines on out;
 * csv, folded: the lines said through the log sink (common/log.h: stderr in the CLI);
 * json: the lines said and `"warnings":[...],` on out (a key of the view's object, so the
 * caller prints it after the `{`). */
void sd_notes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* Says each line of text (lines ending in '\n'; NULL: none) through the log sink. */
void sd_say_lines(const char *text);
/* Number of incomplete streams (no END record). */
size_t sd_incomplete(const struct sd_profile *p);

/* The metric of each merged call node's own samples (index: node; caller frees). NULL on
 * ENOMEM. */
double *sd_node_values(const struct sd_profile *p, const struct sd_report_opts *o);
void sd_csv_str(FILE *out, const char *s);
/* Text output of a name from a stream (program names, argv, symbols, annotations): the
 * escaped form of s[0..len) into dst (NULL: only measured), its length returned.
 * Newline, tab, CR and backslash as \n \t \r \\; other control characters (C0, DEL, and
 * C1 as UTF-8) and bytes that are not UTF-8 as \xNN each; the rest as is. So a name
 * never moves the cursor, sets the terminal's title or breaks a row. */
size_t sd_text_esc(char *dst, const char *s, size_t len);
/* s (NUL-terminated) escaped so onto out. */
void sd_text_put(FILE *out, const char *s);
/* JSON helpers shared with `dump`. */
void sd_json_str(FILE *out, const char *s, size_t len);
void sd_json_obj(FILE *out, const msgpack_object *o);
/* The opening of a view's JSON object: {"metric":M,"samples":N,"weight_UNIT":W (or
 * "weight_ms"), without the closing brace. */
/* emit.c: opens a view's JSON object: `{`, then o->json_head's keys when it has one.
 * Every view opens its object here. */
void sd_json_open(FILE *out, const struct sd_report_opts *o);
void sd_json_head(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		  const char *metric);

/* ---- table.c: the one row printer of the tabular views ----------------------------- */

/* A column: its name (the CSV header and JSON key; text shows `text` when set), whether
 * text aligns it left (else right), its least text width, the text between it and the
 * column before ("  " when NULL), in which formats it appears (SD_IN_* bits, 0: all) and,
 * for JSON, the array it belongs to: consecutive columns of one group print as one array
 * `"group":[...]`. The names must outlive the table. A `fixed` column pads each text cell
 * to `width` on its own, as printf's "%*s" does (a wider cell shifts the rest of its row
 * only), instead of aligning the column to its widest cell (for views whose text was
 * printf columns). */
enum { SD_IN_TEXT = 1, SD_IN_CSV = 2, SD_IN_JSON = 4 };
struct sd_col {
	const char *name, *text, *gap, *group;
	unsigned char left, in, fixed;
	unsigned short width;
};
struct sd_table;
/* A table in o->format over ncols columns (not copied: they must outlive it). NULL on
 * ENOMEM. Cells are added row by row, one per column in order, shown or not. */
struct sd_table *sd_table_new(const struct sd_report_opts *o, const struct sd_col *cols,
			      size_t ncols);
void sd_table_str(struct sd_table *t, const char *s);      /* a string */
void sd_table_u64(struct sd_table *t, uint64_t v);         /* an integer */
void sd_table_num(struct sd_table *t, const char *fmt, ...) /* a printf number, < 64 chars */
	__attribute__((format(printf, 2, 3)));
void sd_table_metric(struct sd_table *t, double v);        /* the report's metric */
void sd_table_pct(struct sd_table *t, double pct);         /* text "12.34%", else 12.34 */
void sd_table_ms(struct sd_table *t, uint64_t ns);         /* ns as ms, 3 decimals */
void sd_table_null(struct sd_table *t);                    /* none: "-", empty, null */
/* In text only (CSV and JSON keep the cell): the cell added last shows the printf result
 * instead, of any length; with max > 0 (at least 3), escaped (sd_text_esc) and, when
 * longer than max bytes, cut to at most max - 3 and ended by "..." (arbitrary strings
 * kept on one line of bounded width). For a text-only column, add any cell first. */
void sd_table_text(struct sd_table *t, size_t max, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t sd_table_rows(const struct sd_table *t);
/* For a table sink (sd_report_opts.table_sink): the columns, whether column c shows in
 * the table's format, and the cell of row r, column c as formatted (*str: a string, not
 * a number; *null: no value). */
size_t sd_table_ncols(const struct sd_table *t);
const struct sd_col *sd_table_col(const struct sd_table *t, size_t c);
int sd_table_col_shown(const struct sd_table *t, size_t c);
const char *sd_table_cell(const struct sd_table *t, size_t r, size_t c, int *str, int *null);
/* Print the header and the first nrows rows (0: all): text aligned, CSV with a header
 * line, JSON as `"json_key":[{...},...]` (the caller writes the enclosing object); or,
 * when the options have a table sink, the whole table handed to it instead. 0, or
 * -ENOMEM when a cell could not be added. */
int sd_table_print(FILE *out, const struct sd_table *t, size_t nrows, const char *json_key);
/* All rows as the end of a view's output: in JSON, `"json_key":[...]}` and a newline, the
 * view's object opened here too unless the caller printed `{` and its head (opened). */
int sd_table_print_view(FILE *out, const struct sd_table *t, const char *json_key, int opened);
void sd_table_free(struct sd_table *t);

/* Folded stacks ("a;b;c V" a line, sorted by path; with top, the heaviest `top` lines) of a tree of n nodes, 0 the root
 * (never printed): one line per node whose own value is positive, its path the names
 * from below the root down to it. emit.c. 0 or -ENOMEM. */
struct sd_folded_tree {
	uint32_t n;
	size_t top; /* --top: only the `top` heaviest lines (0: all) */
	const void *ctx;
	uint32_t (*parent)(const void *ctx, uint32_t i);
	const char *(*name)(const void *ctx, uint32_t i);
	double (*value)(const void *ctx, uint32_t i);
};
int sd_folded_print(FILE *out, const struct sd_folded_tree *t);
/* The nodes of t on the paths sd_folded_print prints (with t->top, of the heaviest
 * lines: --top in the tree view's other formats): one flag per node (malloc'ed; NULL on
 * ENOMEM). */
uint8_t *sd_folded_keep(const struct sd_folded_tree *t);

/* ---- the neutral tree a view hands the dispatcher for a tree exporter (svg, pprof) -- */

/* The paths a flame graph is drawn from: the tree folded output prints (`f`, its --top
 * included: the frames are the merged prefixes of exactly the lines sd_folded_print
 * writes, each line's value rounded as it prints it), and what each node is, for its
 * colour: `what` gives 0 and *id = its function (sd_sym_func of p), or 1 with *id, *val
 * = the attribute and value (p->attr_names, p->value_strs) of an annotation level (the
 * tree view's context frames). call_nodes: f's node ids are p's call nodes (the flat
 * view), so --color-by can read the value of each sample row. `view` names the view in
 * the subtitle. */
struct sd_tree_src {
	struct sd_folded_tree f;
	const struct sd_profile *p;
	int (*what)(const void *ctx, uint32_t i, uint32_t *id, uint32_t *val);
	int call_nodes;
	const char *view;
};

/* Does format f draw a timeline (and so need sd_timeline_attach)? */
static inline int sd_format_timeline(enum sd_format f)
{
	return f == SD_FMT_SPEEDSCOPE || f == SD_FMT_TRACE;
}

#endif
