/*
 * defs.c: the views and the formats of `sonde report`, one row each. The CLI reads names,
 * help lines and what goes with what from these rows; the dispatcher (output.c) calls a
 * view's producer from its row. Adding a view is a file in views/ and a row here.
 */
#include "analyze/output/output.h"

#include <string.h>

/* The views' producers, all of one type: those that only read the profile take it as
 * const, and the row calls them through an adapter. */
#define ROW_OF(fn)                                                                        \
	static int fn##_row(FILE *out, struct sd_profile *p, const struct sd_report_opts *o) \
	{                                                                                 \
		return fn(out, p, o);                                                     \
	}
ROW_OF(sd_out_flat)
ROW_OF(sd_out_sources)
ROW_OF(sd_out_counters)
ROW_OF(sd_out_streams)
ROW_OF(sd_out_coverage)
ROW_OF(sd_out_processes)

#define F(x) (1u << SD_FMT_##x)
/* text, csv and json: every view's rows */
#define ROWS (F(TEXT) | F(CSV) | F(JSON))
/* call paths: the flat and tree views */
#define PATHS (F(FOLDED) | F(SVG) | F(PPROF))
/* the views of their own rows: no --group-by or --stats (the flat view's) */
#define OTHERS (SD_TAKES_ALL & ~(SD_TAKES_GROUP_BY | SD_TAKES_STATS))

const struct sd_view_def sd_view_defs[] = {
	{ "flat", SD_VIEW_FLAT, ROWS | PATHS | F(HTML) | F(SPEEDSCOPE) | F(TRACE), 0, SD_TAKES_ALL,
	  sd_out_flat_row, "one row per function (the default)" },
	{ "threads", SD_VIEW_THREADS, ROWS, 0, OTHERS, sd_out_threads,
	  "one row per thread of every process" },
	{ "sources", SD_VIEW_SOURCES, ROWS, 0, OTHERS, sd_out_sources_row,
	  "one row per sampling source" },
	{ "counters", SD_VIEW_COUNTERS, ROWS, 0, OTHERS, sd_out_counters_row,
	  "one row per counter (and per unavailable counter)" },
	{ "tree", SD_VIEW_TREE, ROWS | PATHS, 0, OTHERS, sd_out_tree,
	  "the call tree under the annotation context values" },
	{ "callers", SD_VIEW_CALLERS, ROWS, 1, OTHERS, sd_out_callers,
	  "the callers of function NAME, with the samples through each" },
	{ "callees", SD_VIEW_CALLEES, ROWS, 1, OTHERS, sd_out_callers,
	  "the callees of function NAME, and its self" },
	{ "regions", SD_VIEW_REGIONS, ROWS, 0, SD_TAKES_ALL & ~SD_TAKES_STATS, sd_out_regions,
	  "exact region timing (SONDE_REGIONS=on or trace)" },
	{ "streams", SD_VIEW_STREAMS, ROWS, 0, OTHERS, sd_out_streams_row,
	  "one row per stream: how it ended, what it dropped" },
	{ "coverage", SD_VIEW_COVERAGE, ROWS, 0, OTHERS, sd_out_coverage_row,
	  "CPU time measured against what the samples stand for, per thread" },
	{ "processes", SD_VIEW_PROCESSES, ROWS, 0, OTHERS, sd_out_processes_row,
	  "one row per process image, and how it ended" },
	{ "model", SD_VIEW_MODEL, ROWS, 0, OTHERS, sd_out_model,
	  "a region's time as a law of its parameters (--region, --param)" },
	{ "imbalance", SD_VIEW_IMBALANCE, ROWS, 0, OTHERS, sd_out_imbalance,
	  "each region and function across the ranks: spread, imbalance, slowest rank" },
	{ "mpi", SD_VIEW_MPI, ROWS, 0, OTHERS, sd_out_mpi,
	  "each rank's wall time split into MPI calls and compute" },
	{ "comm", SD_VIEW_COMM, ROWS, 0, OTHERS, sd_out_comm,
	  "the rank x rank matrix of MPI messages and bytes sent" },
	/* --group-by's table: chosen by that option, not by --view */
	{ NULL, SD_VIEW_GROUP, ROWS, 0, SD_TAKES_ALL & ~SD_TAKES_GROUP_BY, sd_out_group, NULL },
};
const size_t sd_nview_defs = sizeof sd_view_defs / sizeof sd_view_defs[0];

int sd_format_alias(const char *name, const char **to, const char **what)
{
	static const char *const alias[][3] = {
		{ "flamegraph", "svg", "an interactive flame graph" },
		{ "flame", "svg", "an interactive flame graph" },
		{ "collapsed", "folded", "one line per call path, as stackcollapse writes" },
		{ "proto", "pprof", "a profile.proto file" },
		{ "pb", "pprof", "a profile.proto file" },
		{ "chrome", "trace", "a Chrome JSON trace" },
		{ "perfetto", "trace", "a Chrome JSON trace Perfetto opens" },
	};
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (!strcmp(name, alias[i][0])) {
			*to = alias[i][1];
			*what = alias[i][2];
			return 1;
		}
	return 0;
}

const struct sd_format_def sd_format_defs[] = {
	{ "text", SD_FMT_TEXT, SD_FILE_NO, 1, SD_TAKES_ALL, 0, NULL, "aligned columns (the default)" },
	{ "folded", SD_FMT_FOLDED, SD_FILE_NO, 0, OTHERS, 0,
	  "--format folded shows call paths (use it without --view, or pick text, csv or json)",
	  "one line per call path, for flame graph tools" },
	{ "csv", SD_FMT_CSV, SD_FILE_NO, 1, SD_TAKES_ALL, 0, NULL, "comma-separated rows with a header" },
	{ "json", SD_FMT_JSON, SD_FILE_NO, 1, SD_TAKES_ALL, 0, NULL, "one object: the notes, then the rows" },
	{ "pprof", SD_FMT_PPROF, SD_FILE_MUST, 0, OTHERS, 0,
	  "--format pprof writes a file of the whole profile (give -o FILE, without --view or "
	  "with --view tree)", "a profile.proto file for go tool pprof" },
	{ "svg", SD_FMT_SVG, SD_FILE_MAY, 1, OTHERS, 0,
	  "--format svg draws call paths (use it without --view, or with --view tree)",
	  "an interactive flame graph" },
	{ "html", SD_FMT_HTML, SD_FILE_MAY, 0, OTHERS, 1,
	  "--format html is a page of its own views (use it without --view, --group-by or "
	  "--stats; --where, --source, --metric and --top apply)",
	  "one page: header, notes, flame graph, the main views as tables" },
	{ "speedscope", SD_FMT_SPEEDSCOPE, SD_FILE_MAY, 0,
	  SD_TAKES_GROUP_BY | SD_TAKES_METRIC, 1,
	  "--format speedscope makes a profile of every sample per thread, or per --group-by "
	  "value (use it without --view, --top, --stats or --min-percent)",
	  "every sample, a profile per thread, for speedscope" },
	{ "trace", SD_FMT_TRACE, SD_FILE_MAY, 0, 0, 1,
	  "--format trace draws every sample, region and counter on a timeline (use it "
	  "without --view, --group-by, --metric, --top, --stats or --min-percent)",
	  "a Chrome JSON trace for Perfetto" },
};
const size_t sd_nformat_defs = sizeof sd_format_defs / sizeof sd_format_defs[0];

const struct sd_view_def *sd_view_def_of(enum sd_view id)
{
	for (size_t i = 0; i < sd_nview_defs; i++)
		if (sd_view_defs[i].id == id)
			return &sd_view_defs[i];
	return &sd_view_defs[0];
}

const struct sd_format_def *sd_format_def_of(enum sd_format id)
{
	for (size_t i = 0; i < sd_nformat_defs; i++)
		if (sd_format_defs[i].id == id)
			return &sd_format_defs[i];
	return &sd_format_defs[0];
}

int sd_view_shows(enum sd_view v, enum sd_format f)
{
	return (sd_view_def_of(v)->formats >> f) & 1u;
}
