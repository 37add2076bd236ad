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
 * o->output, said on stdout). 0, or an error of the view or exporter (-ENOMEM, -EIO said,
 * -ENOENT said). */
int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* html.c: --format html, one self-contained page of the run's views, on out or
 * into o->output (said on stdout). 0, -EIO (said) or -ENOMEM. */
int sd_out_html(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* output.c: one view of p on out in o's format, without the notes sd_output puts
 * first (html.c prints views as tables). 0 or an error of the view. */
int sd_output_view(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);

#endif
