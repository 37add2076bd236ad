/*
 * analyze/views/views.h: one file per view of `sonde report`: flat and folded
 * (view_flat.c), threads, sources, counters and streams (view_lists.c), --group-by
 * (view_group.c), tree (view_tree.c, its rows view_tree_fmt.c), regions, callers and
 * callees, processes, model, and the --stats columns (view_stats.c). A view prints rows
 * through the report's table printer or returns a neutral tree; it calls no exporter.
 */
#ifndef SONDE_ANALYZE_VIEWS_H
#define SONDE_ANALYZE_VIEWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/report/report.h"

/* view_flat.c: the flat view (its text header, the notes and coverage block under it)
 * and its folded call paths; view_lists.c: --view threads, sources, counters, streams
 * (the caller printed the notes; streams: the caller opens the JSON object). Called by
 * sd_output after sd_sym_finish: 0 or -ENOMEM. */
int sd_out_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_folded(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_threads(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_sources(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_counters(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_streams(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* view_group.c, view_tree.c, view_regions.c, called by sd_output after sd_sym_finish:
 * 0 or -ENOMEM. */
int sd_out_group(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_tree(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
int sd_out_regions(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* view_regions.c: "attr=value/..." of context node c's levels, outermost first, those
 * whose attribute kept[] marks (NULL: all). malloc'ed; NULL on ENOMEM. */
char *sd_ctx_path(const struct sd_profile *p, uint32_t c, const unsigned char *kept);

/* view_callers.c: --view callers|callees o->func: 0, said (no such function), -ENOMEM */
int sd_out_callers(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);

/* view_model.c: --view model: 0, said (no calls or too few values), -ENOMEM */
int sd_out_model(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* view_imbalance.c: --view imbalance, each region and function across the ranks */
int sd_out_imbalance(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* view_mpi.c: --view mpi, each rank's wall time split into MPI and compute */
int sd_out_mpi(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* Its rows, for the page's chart as for the view: one per rank (per process when no
 * stream has a rank; a launcher among ranks in none), in rank order. None when the
 * streams hold no MPI call. 0 or -ENOMEM; the caller frees *rows. */
struct sd_mpi_rank {
	int64_t rank;       /* -1: a process without a rank (no stream has one) */
	uint64_t pid;       /* the first process of the rank */
	const char *host;
	uint64_t wall_ns, mpi_ns, calls;
};
int sd_mpi_ranks(const struct sd_profile *p, struct sd_mpi_rank **rows, size_t *n);
static inline uint64_t sd_mpi_compute_ns(const struct sd_mpi_rank *r)
{
	return r->wall_ns > r->mpi_ns ? r->wall_ns - r->mpi_ns : 0;
}

/* view_comm.c: --view comm, the rank x rank matrix of MPI messages sent */
int sd_out_comm(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* Its pairs, for the page's heat map as for the view: (sender, receiver) world ranks
 * with the messages and bytes sent, summed over the sender's streams, in rank order.
 * 0 or -ENOMEM; the caller frees *v. */
struct sd_comm_pair { uint32_t src, dst; uint64_t msgs, bytes; };
int sd_comm_pairs(const struct sd_profile *p, struct sd_comm_pair **v, size_t *n);

/* view_processes.c: --view processes, one row per process image (stream): 0 or -ENOMEM */
int sd_out_processes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

/* ---- view_stats.c: --stats KEY, a row's spread across threads, processes or ranks ---- */

enum sd_stats_key { SD_STATS_NONE, SD_STATS_THREAD, SD_STATS_PROCESS, SD_STATS_RANK };
/* "thread", "process", "rank" by enum sd_stats_key (index 0: ""), NULL-terminated. */
extern const char *const sd_stats_names[];
/* Per-row sums of the metric per unit (thread (pid, tid), process pid, or rank: HEADER
 * rank, else the stream's pid), over every unit of the loaded profile (threads: its
 * thread rows; processes and ranks: its streams), rows with no samples in a unit
 * counting 0 there. Rows are ids chosen by the view (function id, group index). */
struct sd_stats;
/* NULL on ENOMEM. key: enum sd_stats_key, not NONE. */
struct sd_stats *sd_stats_new(const struct sd_profile *p, int key);
/* Add v (the metric of sample row r) to view row `row`: 0 or -ENOMEM. */
int sd_stats_add(struct sd_stats *s, uint32_t row, const struct sd_crow *r, double v);

/* The JSON key naming the unit of the stats, `"stats":"KEY",`, for the view's head. */
void sd_stats_json_key(FILE *out, const struct sd_stats *s);
/* The stats columns: min, mean, max and population stddev of the row's values over all
 * units, and n, the number of units: SD_STATS_NCOLS column specs (static) and one row's
 * cells. */
#define SD_STATS_NCOLS 7
extern const struct sd_col sd_stats_cols[SD_STATS_NCOLS];
void sd_stats_cells(struct sd_table *t, const struct sd_stats *s,
		    const struct sd_report_opts *o, uint32_t row);
void sd_stats_free(struct sd_stats *s);
/* A row's spread over the units: min, mean, max, population stddev, and the units of
 * the min and the max (the first loaded on a tie). Units without a value count as 0. */
struct sd_spread { double min, mean, max, sd; size_t min_at, max_at; };
struct sd_spread sd_stats_spread(const struct sd_stats *s, uint32_t row);
/* The name of unit u, as --where spells it: its rank, pid or PID/TID ("-": none). */
void sd_stats_unit_name(const struct sd_stats *s, size_t u, char *buf, size_t len);
size_t sd_stats_nunits(const struct sd_stats *s);
/* The flat view's stats: each sample row's metric added to its innermost function (the
 * function's self). NULL on ENOMEM. */
struct sd_stats *sd_stats_flat(const struct sd_profile *p, const struct sd_report_opts *o);

/* ---- view_tree_fmt.c: --view tree --format text|csv|json -------------------------- */

/* One printed node of the tree view, in depth-first order (depth 0: the outermost). */
struct sd_tree_line { uint32_t depth; const char *name; double total, self; };
/* Print lines[0..n) in o->format (not folded): text with indented names, csv or json
 * rows with their `;`-joined paths. 0 or -ENOMEM. */
int sd_out_tree_rows(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		     const struct sd_tree_line *lines, size_t n);

/* view_tree.c: --view tree's merged tree, for a tree exporter (svg, pprof): NULL on ENOMEM.
 * sd_tree_view_src: its paths (top: the heaviest `top` folded lines, 0: all), valid while
 * tv is. */
struct sd_tree_view;
struct sd_tree_view *sd_tree_view_new(const struct sd_profile *p, const struct sd_report_opts *o);
struct sd_tree_src sd_tree_view_src(const struct sd_tree_view *tv, size_t top);
void sd_tree_view_free(struct sd_tree_view *tv);

#endif
