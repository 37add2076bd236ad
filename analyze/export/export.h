/*
 * analyze/export/export.h: the file formats written from a profile or a neutral tree:
 * pprof (pprof.c), svg flame graphs (svg.c, drawn by svg_draw.c), speedscope and Chrome
 * trace (speedscope.c, trace.c) from the timeline's event list (timeline.c: what they
 * share). An exporter calls no view and not the dispatcher.
 */
#ifndef SONDE_ANALYZE_EXPORT_H
#define SONDE_ANALYZE_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/report/report.h"

/* pprof.c: the profile as a gzipped pprof Profile into path: 0 or -errno. */
int sd_out_pprof(const char *path, const struct sd_profile *p);

/* pprof.c: --view tree --format pprof, the tree view's paths (annotation levels
 * as functions) as a gzipped pprof Profile of one sample type, the metric, into path:
 * 0 or -errno. */
int sd_out_pprof_tree(const char *path, const struct sd_tree_src *src,
		      const struct sd_report_opts *o);
/* The flame graph of src on out or into o->output (said on stdout), then the warning
 * about samples without counter values (src->p's). 0, SD_SAID(SD_EXIT_IO) (the file
 * could not be written) or -ENOMEM. */
int sd_out_svg(FILE *out, const struct sd_tree_src *src, const struct sd_report_opts *o);
/* The same of the flat view: its merged call nodes. */
int sd_out_svg_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
/* `sonde diff --format svg`: B's flame graph coloured by each frame's change of self
 * from A (shares in percentage points, or values with absolute), on stdout or into
 * output. Each side: its profile, options (metric resolved) and path. 0,
 * SD_SAID(SD_EXIT_IO), -ENOMEM. */
int sd_out_svg_diff(struct sd_profile *pa, const struct sd_report_opts *oa, const char *patha,
		    struct sd_profile *pb, const struct sd_report_opts *ob, const char *pathb,
		    int absolute, const char *output);

/* ---- timeline.c: what the timeline exporters share (profile.h: the event list) ----- */

/* The run's start: the earliest HEADER clock of the streams (0 without any). */
uint64_t sd_tl_run_start(const struct sd_profile *p);
/* ns after the run's start of time t of stream `stream` (a stream without a clock is
 * taken to start with the run). */
uint64_t sd_tl_time(const struct sd_profile *p, uint64_t run0, uint32_t stream, uint64_t t);
/* Sample indices sorted by (key[i], run time, record order): key NULL sorts by thread.
 * *out is malloc'ed (caller frees); 0 or -ENOMEM. */
int sd_tl_order(const struct sd_profile *p, const uint32_t *key, size_t **out);
/* The functions of call node `cnode`, outermost first, into *path (grown as needed,
 * caller frees): their number, or -ENOMEM. */
long sd_tl_path(const struct sd_profile *p, uint32_t cnode, uint32_t **path, size_t *cap);
/* The metric of one sample as the report counts it (samples: 1; weight: weight x
 * period; a counter: the sum of its deltas). */
double sd_tl_value(const struct sd_profile *p, const struct sd_report_opts *o,
		   const struct sd_tl_sample *s);
/* ts as JSON µs with 3 decimals from ns. */
void sd_tl_put_us(FILE *out, uint64_t ns);

/* speedscope.c, trace.c: the file on out. 0 or -ENOMEM. */
int sd_tl_speedscope(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_tl_trace(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

#endif
