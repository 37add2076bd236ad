/*
 * output.c: the dispatcher of `sonde report` (sd_output): the notes and the coverage
 * block (notes.c, coverage.c), then one view in one format. A view prints its rows
 * (views/) or, for the tree formats (svg, pprof), returns a neutral tree
 * (struct sd_tree_src) that is handed here to an exporter (export_*.c); views and
 * exporters never call each other, nor this file. The html page (html.c) and the
 * timeline formats (speedscope, trace) are whole files of their own.
 *
 * JSON output is one object per view: the notes go in as its first keys.
 */

#include "analyze/output/output.h"

#include <stdlib.h>
#include <string.h>

/* Say how writing the pprof file `path` went (err: 0, -ENOMEM, or said by the writer,
 * outfile.c; the line on stdout when written). Returns err. */
static int pprof_said(const char *path, int err)
{
	if (err == 0 && strcmp(path, "-")) /* -o -: the bytes are on stdout, nothing else */
		printf("sonde: pprof profile written to %s (go tool pprof -top %s)\n", path, path);
	return err;
}

/* The tree view handed to a tree exporter: --format svg (on out or into o->output) or
 * pprof (into o->output, said on stdout). */
static int out_tree_as(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_tree_view *tv = sd_tree_view_new(p, o);
	int err;

	if (!tv)
		return -ENOMEM;
	if (o->format == SD_FMT_SVG) {
		struct sd_tree_src s = sd_tree_view_src(tv, o->top);
		err = sd_out_svg(out, &s, o);
	} else {
		struct sd_tree_src s = sd_tree_view_src(tv, 0);
		err = pprof_said(o->output, sd_out_pprof_tree(o->output, &s, o));
	}
	sd_tree_view_free(tv);
	return err;
}

/* --format speedscope|trace: the notes (on stderr, as for csv), then the file. */
static int out_timeline(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	if (!sd_timeline_of(p))
		return -ENODATA;
	sd_notes(out, p, o); /* the notes on stderr, as for csv */
	struct sd_outfile of;
	FILE *f = sd_out_open(out, o->output, &of);
	if (!f)
		return SD_SAID(SD_EXIT_IO);
	int trace = o->format == SD_FMT_TRACE;
	int err = trace ? sd_tl_trace(f, p, o) : sd_tl_speedscope(f, p, o);
	return sd_out_close(f, &of, err, trace ? "trace" : "speedscope profile",
			    trace ? "open it in https://ui.perfetto.dev, chrome://tracing or "
				    "speedscope" : "open it with speedscope FILE or at "
				    "https://www.speedscope.app");
}

/* A view's JSON head (sd_report_opts.json_head): the notes and the coverage keys. */
static void json_head(FILE *out, const struct sd_report_opts *o, const void *arg)
{
	const struct sd_profile *p = arg;
	sd_notes(out, p, o);
	sd_cov_json(out, p, o->view == SD_VIEW_COVERAGE);
}

int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (sd_sym_finish(p->sym))
		return -ENOMEM;
	/* the notes come before the rows: the flat view puts them under its header lines;
	 * json gets them as keys of its object, first */
	if (o->format == SD_FMT_PPROF && o->view == SD_VIEW_FLAT)
		return pprof_said(o->output, sd_out_pprof(o->output, p));
	if (o->format == SD_FMT_PPROF) /* --view tree */
		return sd_output_view(out, p, o);
	if (o->format == SD_FMT_HTML)
		return sd_out_html(out, p, o);
	if (sd_format_timeline(o->format)) /* the notes, then the file */
		return out_timeline(out, p, o);
	if (o->view == SD_VIEW_STREAMS) {
		if (o->format == SD_FMT_JSON)
			putc('{', out);
		sd_notes(out, p, o);
		if (o->format == SD_FMT_JSON)
			sd_cov_json(out, p, 0);
		else if (o->format == SD_FMT_TEXT && !o->quiet)
			sd_cov_block(out, p);
		return sd_out_streams(out, p, o);
	}
	if (o->format == SD_FMT_JSON) {
		/* every view's json is one object: the notes go in as its first keys, written
		 * when the view opens it (sd_json_open) */
		struct sd_report_opts oj = *o;
		oj.json_head = json_head;
		oj.json_head_arg = p;
		return sd_output_view(out, p, &oj);
	}
	if (!(o->view == SD_VIEW_FLAT && o->format == SD_FMT_TEXT))
		sd_notes(out, p, o);
	/* every text report states the coverage account in its header (the flat view
	 * under its header lines; -q: none); --view coverage is the whole account */
	if (o->format == SD_FMT_TEXT && o->view != SD_VIEW_FLAT && o->view != SD_VIEW_COVERAGE &&
	    !o->quiet)
		sd_cov_block(out, p);
	return sd_output_view(out, p, o);
}

int sd_output_view(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	/* the call-path formats of the flat and tree views: an exporter, or folded lines */
	if ((o->format == SD_FMT_SVG || o->format == SD_FMT_PPROF) && o->view == SD_VIEW_TREE)
		return out_tree_as(out, p, o); /* the tree view's flame graph or pprof file */
	if (o->format == SD_FMT_SVG) /* the flat view's flame graph (export/svg.c) */
		return sd_out_svg_flat(out, p, o);
	if (o->format == SD_FMT_FOLDED && o->view == SD_VIEW_FLAT)
		return sd_out_folded(out, p, o);
	return sd_view_def_of(o->view)->out(out, p, o);
}
