/*
 * analyze/output/output.h: the dispatcher of `sonde report`: one view in one format
 * (output.c: the notes and the coverage block, then a view's rows, or a view's tree
 * handed to an exporter), and the html page of the run's views (html.c).
 */
#ifndef SONDE_ANALYZE_OUTPUT_H
#define SONDE_ANALYZE_OUTPUT_H

#include <stdio.h>

#include "analyze/views/views.h"
#include "analyze/export/export.h"

/* output.c: the report: the notes every view states first and, in text, the coverage
 * block, then view o->view of p on out in format o->format (a file format: into
 * o->output, said on stdout). 0, a said error of the view or exporter (util.h: the file could not be
 * written, a callers function or model region not found), or -ENOMEM. */
int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* html.c: --format html, one self-contained page of the run's views, on out or
 * into o->output (said on stdout). 0, said (SD_SAID) or -ENOMEM. */
int sd_out_html(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* output.c: one view of p on out in o's format, without the notes sd_output puts
 * first (html.c prints views as tables). 0 or an error of the view. */
int sd_output_view(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);

/* defs.c: one row per view and per format; the CLI's names, help lines and checks of
 * what goes with what, and the dispatcher's producers, come from them. */
/* Options a view or a format may not take (the CLI refuses them, from the rows). */
enum {
	SD_TAKES_GROUP_BY = 1,    /* --group-by */
	SD_TAKES_STATS = 2,       /* --stats */
	SD_TAKES_TOP = 4,         /* --top */
	SD_TAKES_MIN_PERCENT = 8, /* --min-percent */
	SD_TAKES_LAYOUT = 16,     /* --by-thread, --context-above */
	SD_TAKES_METRIC = 32,     /* --metric weight or a counter */
	SD_TAKES_ALL = 63,
};
struct sd_view_def {
	const char *name;  /* --view NAME; NULL: chosen otherwise (--group-by's table) */
	enum sd_view id;
	unsigned formats;  /* 1 << enum sd_format: the formats it is shown in */
	int func;          /* takes a function name: --view callers NAME */
	unsigned takes;    /* SD_TAKES_* */
	int (*out)(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
	const char *what;  /* one line of --help */
};
enum sd_file_use { SD_FILE_NO, SD_FILE_MAY, SD_FILE_MUST }; /* -o FILE */
struct sd_format_def {
	const char *name;  /* --format NAME */
	enum sd_format id;
	enum sd_file_use file;
	int diff;          /* sonde diff writes it too */
	unsigned takes;    /* SD_TAKES_* */
	int own;           /* a whole file of its own: an option it does not take is said
			    * in its words (only), not the option's */
	const char *only;  /* said (after "sonde: report: ") for a view not shown in it */
	const char *what;  /* one line of --help */
};
extern const struct sd_view_def sd_view_defs[];
extern const size_t sd_nview_defs;
/* A name other tools give a format (flamegraph, proto, chrome, ...): 1 with sonde's format
 * and what it makes, else 0. */
int sd_format_alias(const char *name, const char **to, const char **what);
extern const struct sd_format_def sd_format_defs[];
extern const size_t sd_nformat_defs;
const struct sd_view_def *sd_view_def_of(enum sd_view id);
const struct sd_format_def *sd_format_def_of(enum sd_format id);
/* Is view v shown in format f? */
int sd_view_shows(enum sd_view v, enum sd_format f);

#endif
