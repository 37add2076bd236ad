/*
 * output/html.c - `sonde report --format html [-o FILE]`: one self-contained page a user
 * can send (no network, no external file): what the run was, where its time went, and
 * what the program's own annotations say.
 *
 * The page is made of the report's own views, so it says exactly what `sonde report`
 * says: each table is a view's own table (the table printer hands it over whole through
 * the options' table sink instead of printing it; report/table.c), rendered cell by
 * cell as an HTML table; the flame graph is the svg view (export/svg.c) in an <iframe> of its own
 * (a data: URL, so its script runs in its own document, unchanged); the header is built
 * from the profile and the same notes and coverage lines a text report starts with.
 *
 * Sections, in order (a section with nothing to show is left out):
 *   run          programs, hosts, processes, threads, streams, samples, duration,
 *                sources, counters, and what degraded (the notes and the coverage
 *                account)
 *   flame graph  the flat view's (--where, --source, --metric apply)
 *   functions    the flat view's top rows (self, total); counters are not charged
 *                to functions (cli.c, sd_cli_counter_by_code)
 *   threads      the threads view
 *   regions      the regions view, and a timeline of the region calls (REGION
 *                records: SONDE_REGIONS=trace) when the streams hold them: the
 *                timeline's event list of region calls only (sd_timeline_new_regions,
 *                no sample kept), drawn as an inline SVG without script
 *   annotations  one group-by table per attribute the streams recorded
 *   ranks        with MPI calls timed (sonde run's MPI wrapper): each rank's wall time
 *                as a bar, compute and MPI (sd_mpi_ranks, the rows of --view mpi), the
 *                mpi view's table and the imbalance view's (the slowest ranks)
 *   spread       the flat view's rows with --stats thread (and process, rank when the
 *                run has several)
 * --top N sets how many rows each table keeps (default 30).
 */
#define _GNU_SOURCE /* memmem */
#include "analyze/output/output.h"
#include "common/common.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HTML_TOP = 30, FLAME_MAX_PX = 720 };

/* HTML text (emit.c's escaping) of the n bytes at s. */
static void esc(FILE *out, const char *s, size_t n)
{
	sd_xml_put(out, s, n, n);
}

static void escs(FILE *out, const char *s)
{
	esc(out, s ? s : "", s ? strlen(s) : 0);
}

/* A number as text (an int attribute's value is a string cell): aligned right. */
static int numeric(const char *f)
{
	char *e;
	if (!*f)
		return 0;
	strtod(f, &e);
	return *e == '\0' || (*e == '%' && e[1] == '\0');
}

/* A column of nanoseconds (csv's first_ns, last_ns): the page shows it in ms. */
static int in_ns(const char *name)
{
	size_t l = strlen(name);
	return l > 3 && !strcmp(name + l - 3, "_ns");
}

/* Where a view's table goes: a heading, a note, then the table itself (sink). */
struct html_table { FILE *out; const char *title, *note; size_t top; };

/* The table sink (sd_report_opts.table_sink): a view's table as an HTML table of at
 * most `top` rows under its heading, from its cells as the view made them (no text
 * round trip: names of any length); nothing when the view has no rows. */
static int html_sink(void *arg, const struct sd_table *t)
{
	const struct html_table *h = arg;
	FILE *out = h->out;
	size_t rows = sd_table_rows(t), n = h->top && h->top < rows ? h->top : rows;
	int str, null;

	if (!rows)
		return 0;
	fputs("<h3>", out);
	escs(out, h->title);
	fputs("</h3>\n", out);
	if (h->note) {
		fputs("<p class=\"note\">", out);
		escs(out, h->note);
		fputs("</p>\n", out);
	}
	fputs("<table class=\"t\">\n<thead><tr>", out);
	for (size_t c = 0; c < sd_table_ncols(t); c++)
		if (sd_table_col_shown(t, c)) {
			const char *name = sd_table_col(t, c)->name;
			size_t l = strlen(name);
			fputs("<th title=\"sort\">", out);
			if (in_ns(name)) /* shown in ms, as the text report shows it */
				fprintf(out, "%.*s_ms", (int)(l - 3), name);
			else
				escs(out, name);
			fputs("</th>", out);
		}
	fputs("</tr></thead>\n<tbody>\n", out);
	for (size_t r = 0; r < n; r++) {
		fputs("<tr>", out);
		for (size_t c = 0; c < sd_table_ncols(t); c++) {
			if (!sd_table_col_shown(t, c))
				continue;
			const char *s = sd_table_cell(t, r, c, &str, &null);
			fputs(!null && (!str || numeric(s)) ? "<td class=\"n\">" : "<td>", out);
			if (!null && !str && in_ns(sd_table_col(t, c)->name))
				fprintf(out, "%.3f", strtod(s, NULL) / 1e6);
			else if (!null)
				escs(out, s);
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (rows > n)
		fprintf(out, "<p class=\"more\">%zu more rows (sonde report --format csv shows "
			"them all)</p>\n", rows - n);
	return 0;
}

/* One view as a table under a heading; nothing when the view has no rows. */
static int view_table(FILE *out, struct sd_profile *p, const struct sd_report_opts *o,
		      const char *title, const char *note)
{
	struct html_table h = { out, title, note, o->top };
	struct sd_report_opts t = *o;
	t.table_sink = html_sink;
	t.table_sink_arg = &h;
	int err = sd_output_view(out, p, &t);
	return err == -ENOMEM ? err : 0; /* a view that cannot be made is left out */
}

/* Options for one table: csv of view v, the page's metric and filters, no -o. */
static struct sd_report_opts table_opts(const struct sd_report_opts *o, enum sd_view v)
{
	struct sd_report_opts t = *o;
	t.format = SD_FMT_CSV;
	t.view = v;
	t.top = o->top ? o->top : HTML_TOP;
	t.output = NULL;
	t.color_by = NULL;
	t.group_by = NULL, t.ngroup = 0;
	t.stats = 0;
	t.min_percent_given = 0;
	return t;
}

static const char *const page_css =
	"body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1240px;padding:0 "
	"16px 40px;color:#1d1d1d;background:#fff}\n"
	"h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:"
	"1px solid #ddd;padding-bottom:3px}h3{font-size:15px;margin:18px 0 6px}\n"
	"table{border-collapse:collapse;margin:4px 0 8px}th,td{padding:2px 10px;border-bottom:"
	"1px solid #eee;text-align:left;vertical-align:top}th{background:#f4f4f0;font-weight:"
	"600}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"table.kv th{width:160px}pre{background:#f7f7f4;padding:8px;overflow-x:auto;font-size:"
	"12px}.warn{color:#8a3b00}.note,.more{color:#666;font-size:12px;margin:2px 0}\n"
	"nav a{margin-right:12px}iframe{border:1px solid #ddd;width:100%}\n"
	"svg.tl text{font:11px monospace}\n"
	"table.t th{cursor:pointer}th[data-sort=desc]::after{content:\" \\25BC\"}"
	"th[data-sort=asc]::after{content:\" \\25B2\"}\n";

/* Sortable tables: a click on a heading sorts the rows by that column, numbers largest
 * first and names A to Z, a second click the other way. */
static const char *const page_script =
	"document.querySelectorAll('table.t').forEach(function (t) {\n"
	"  var ths = t.tHead.rows[0].cells;\n"
	"  [].forEach.call(ths, function (th, i) {\n"
	"    th.addEventListener('click', function () {\n"
	"      var b = t.tBodies[0], rows = [].slice.call(b.rows);\n"
	"      var txt = function (r) { return r.cells[i].textContent; };\n"
	"      var num = rows.every(function (r) { return txt(r) === '' || isFinite(parseFloat(txt(r))); });\n"
	"      var first = th.getAttribute('data-sort') ? th.getAttribute('data-sort') === (num ? 'asc' : 'desc')\n"
	"                                               : true;\n"
	"      var down = first ? num : !num;\n"
	"      rows.sort(function (x, y) {\n"
	"        var r = num ? (parseFloat(txt(x)) || 0) - (parseFloat(txt(y)) || 0)\n"
	"                    : txt(x).localeCompare(txt(y));\n"
	"        return down ? -r : r;\n"
	"      });\n"
	"      rows.forEach(function (r) { b.appendChild(r); });\n"
	"      [].forEach.call(ths, function (h) { h.removeAttribute('data-sort'); });\n"
	"      th.setAttribute('data-sort', down ? 'desc' : 'asc');\n"
	"    });\n"
	"  });\n"
	"});\n";

/* The page's sections: each 0 or -ENOMEM. */
static int sec_run(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
/* The flame graph (svg) of p into *buf (malloc'ed): 0, or an error of the view. */
static int capture(struct sd_profile *p, const struct sd_report_opts *o, char **buf,
		   size_t *len)
{
	*buf = NULL;
	*len = 0;
	FILE *m = open_memstream(buf, len);
	if (!m)
		return -ENOMEM;
	int err = sd_output_view(m, p, o);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

static int sec_flame(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);
static int sec_tables(FILE *out, struct sd_profile *p, const struct sd_report_opts *o);

/* The page's name: the program whose streams hold the most samples (a shell or a launcher
 * that started it has fewer), and how many other programs the streams hold. */
static const char *page_name(const struct sd_profile *p, size_t *others)
{
	struct sd_strmap map = { 0 };
	uint64_t *sum = calloc(p->nsinfo + 1, sizeof(*sum));
	const char *best = p->nsinfo && p->sinfo[0].name ? p->sinfo[0].name : "?";
	size_t n = 0;
	uint64_t most = 0;
	for (size_t i = 0; sum && i < p->nsinfo; i++) {
		const char *name = p->sinfo[i].name ? p->sinfo[i].name : "?";
		uint32_t k;
		if (!sd_strmap_get(&map, name, strlen(name), &k)) {
			if (sd_strmap_put(&map, name, strlen(name), (uint32_t)n))
				break; /* no memory: the first stream's name */
			k = (uint32_t)n++;
		}
		sum[k] += p->sinfo[i].samples;
		if (sum[k] > most || (i == 0 && !most))
			best = name, most = sum[k];
	}
	*others = n ? n - 1 : 0;
	sd_strmap_fini(&map);
	free(sum);
	return best;
}

static void page_head(FILE *out, const struct sd_profile *p)
{
	size_t others;
	const char *name = page_name(p, &others);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>sonde: ",
	      out);
	escs(out, name);
	if (others)
		fprintf(out, " and %zu more", others);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>sonde report: ",
		page_css);
	escs(out, name);
	if (others)
		fprintf(out, " <small>and %zu other program%s</small>", others, others == 1 ? "" : "s");
	fputs("</h1>\n<nav><a href=\"#run\">run</a><a href=\"#flame\">flame graph</a>"
	      "<a href=\"#functions\">functions</a><a href=\"#threads\">threads</a>", out);
	if (p->region_records || p->region_stats)
		fputs("<a href=\"#regions\">regions</a>", out);
	if (p->nattr_names)
		fputs("<a href=\"#annotations\">annotations</a>", out);
	fputs("<a href=\"#spread\">spread</a></nav>\n", out);
}

int sd_out_html(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_outfile of;
	FILE *f = sd_out_open(out, o->output, &of);
	if (!f)
		return SD_SAID(SD_EXIT_IO);
	page_head(f, p);
	int err = sec_run(f, p, o);
	if (!err)
		err = sec_flame(f, p, o);
	if (!err)
		err = sec_tables(f, p, o);
	fputs("<p class=\"note\">Made by sonde report --format html. Every table is a view of "
	      "sonde report (docs/REPORT.md); --format csv gives all of its rows; a click on a "
	      "column's heading sorts the table.</p>\n", f);
	fprintf(f, "<script>\n%s</script>\n</body></html>\n", page_script);
	return sd_out_close(f, &of, err, "report page", "open it in a browser");
}

/* ---- the run ------------------------------------------------------------------ */

/* Distinct values of a stream field, joined with ", " (at most 8, then "..."). */
static void distinct(FILE *out, const struct sd_profile *p, size_t off)
{
	size_t shown = 0;
	for (size_t i = 0; i < p->nsinfo; i++) {
		const char *v = *(char *const *)((const char *)&p->sinfo[i] + off);
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++) {
			const char *w = *(char *const *)((const char *)&p->sinfo[k] + off);
			seen = v && w && !strcmp(v, w);
		}
		if (!v || seen)
			continue;
		if (shown == 8) {
			fputs(", ...", out);
			break;
		}
		fputs(shown++ ? ", " : "", out);
		escs(out, v);
	}
}

static void kv_row(FILE *out, const char *k)
{
	fputs("<tr><th>", out);
	escs(out, k);
	fputs("</th><td>", out);
}

static void run_facts(FILE *out, const struct sd_profile *p)
{
	uint64_t last = 0;
	for (size_t i = 0; i < p->nsinfo; i++)
		if (p->sinfo[i].last_ns > last)
			last = p->sinfo[i].last_ns;
	fputs("<table class=\"kv\">\n", out);
	kv_row(out, "programs");
	distinct(out, p, offsetof(struct sd_stream_info, name));
	kv_row(out, "commands");
	distinct(out, p, offsetof(struct sd_stream_info, command));
	kv_row(out, "hosts");
	distinct(out, p, offsetof(struct sd_stream_info, host));
	kv_row(out, "processes");
	fprintf(out, "%zu</td></tr>\n", p->npids + p->children_nostream);
	kv_row(out, "threads");
	fprintf(out, "%zu</td></tr>\n", p->nthreads);
	kv_row(out, "streams");
	fprintf(out, "%" PRIu64 " (%zu incomplete)</td></tr>\n", p->streams, sd_incomplete(p));
	kv_row(out, "samples");
	fprintf(out, "%" PRIu64 " counted, %" PRIu64 " dropped</td></tr>\n", p->samples,
		p->dropped);
	kv_row(out, "longest stream");
	fprintf(out, "%.3f s</td></tr>\n", (double)last / 1e9);
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		kv_row(out, "source");
		escs(out, s->spec);
		fprintf(out, ": %" PRIu64 " samples (%s)</td></tr>\n", s->samples, s->mechanism);
	}
	for (size_t i = 0; i < p->ncounters; i++) {
		kv_row(out, "counter");
		escs(out, p->counters[i].name);
		fprintf(out, ": %" PRIu64 " total</td></tr>\n", p->counters[i].total);
	}
	for (size_t i = 0; i < p->nunavail; i++) {
		kv_row(out, "counter");
		escs(out, p->unavail[i].name);
		fputs(": unavailable (", out);
		escs(out, p->unavail[i].reason);
		fputs(")</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* The notes and the coverage account, as the text report starts with them. */
static int run_degraded(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	struct sd_report_opts t = *o;
	t.format = SD_FMT_TEXT;
	t.view = SD_VIEW_FLAT;
	sd_notes(m, p, &t);
	sd_cov_block(m, p);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	fputs("<h3>What the samples stand for, and what degraded</h3>\n<pre>", out);
	for (char *q = buf, *nl; q && q < buf + len; q = nl + 1) {
		nl = memchr(q, '\n', len - (size_t)(q - buf));
		if (!nl)
			nl = buf + len;
		int warn = !strncmp(q, "sonde:", 6);
		fputs(warn ? "<span class=\"warn\">" : "", out);
		esc(out, q, (size_t)(nl - q));
		fputs(warn ? "</span>\n" : "\n", out);
	}
	fputs("</pre>\n", out);
	free(buf);
	return 0;
}

static int sec_run(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	fputs("<section id=\"run\"><h2>Run</h2>\n", out);
	run_facts(out, p);
	int err = run_degraded(out, p, o);
	fputs("</section>\n", out);
	return err;
}

/* ---- the flame graph -------------------------------------------------------- */

static void base64(FILE *out, const unsigned char *d, size_t n)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		putc(t[v >> 18 & 63], out);
		putc(t[v >> 12 & 63], out);
		putc(i + 1 < n ? t[v >> 6 & 63] : '=', out);
		putc(i + 2 < n ? t[v & 63] : '=', out);
	}
}

/* The height the svg declares (its first height="N"), for the frame's size. */
static unsigned svg_height(const char *svg, size_t len)
{
	const char *h = memmem(svg, len, "height=\"", 8);
	return h ? (unsigned)strtoul(h + 8, NULL, 10) : 400;
}

static int sec_flame(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_report_opts t = table_opts(o, SD_VIEW_FLAT);
	t.format = SD_FMT_SVG;
	t.top = 0;
	t.color_by = o->color_by;
	char *buf;
	size_t len;
	int err = capture(p, &t, &buf, &len);
	if (err)
		return err;
	fputs("<section id=\"flame\"><h2>Flame graph</h2>\n<p class=\"note\">Click a frame to "
	      "zoom, Search to highlight; the same graph as sonde report --format svg.</p>\n", out);
	/* a deep graph scrolls in a frame of at most FLAME_MAX_PX, opened where the weight
	 * is (the svg's own script) */
	unsigned h = svg_height(buf, len) + 8;
	fprintf(out, "<iframe title=\"flame graph\" height=\"%u\" src=\"data:image/svg+xml;base64,",
		h < FLAME_MAX_PX ? h : FLAME_MAX_PX);
	base64(out, (const unsigned char *)buf, len);
	fputs("\"></iframe>\n</section>\n", out);
	free(buf);
	return 0;
}

/* ---- the tables ------------------------------------------------------------- */

static int sec_functions(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	fputs("<section id=\"functions\"><h2>Functions</h2>\n", out);
	struct sd_report_opts t = table_opts(o, SD_VIEW_FLAT);
	int err = view_table(out, p, &t, "Top functions (self, and total with callees)", NULL);
	/* Counters are not charged to functions: their deltas ride on whichever sample
	 * comes next (cli.c, sd_cli_counter_by_code); the threads section has them. */
	fputs("</section>\n", out);
	return err;
}

/* ---- the region timeline ---------------------------------------------------- */

enum { TL_W = 1160, TL_LABEL = 190, TL_ROW = 14 };

/* A colour of its own per region (a hash of its context node's value). */
static unsigned region_hue(const struct sd_profile *p, uint32_t ctx)
{
	const char *v = p->value_strs[p->ctx[ctx].value];
	return sd_fnv1a32_str(v) % 360;
}

/* One lane per (thread, depth): lane[i] of thread i's depth 0; *nl lanes in all. */
static uint32_t *tl_lanes(const struct sd_profile *p, const struct sd_timeline *tl, size_t *nl)
{
	uint32_t *depth = calloc(p->nthreads + 1, sizeof(*depth));
	uint32_t *lane = calloc(p->nthreads + 1, sizeof(*lane));
	if (!depth || !lane) {
		free(depth);
		free(lane);
		return NULL;
	}
	for (size_t i = 0; i < tl->nregions; i++)
		if (tl->regions[i].depth + 1 > depth[tl->regions[i].thread])
			depth[tl->regions[i].thread] = tl->regions[i].depth + 1;
	*nl = 0;
	for (size_t t = 0; t < p->nthreads; t++) {
		lane[t] = (uint32_t)*nl;
		*nl += depth[t];
	}
	lane[p->nthreads] = (uint32_t)*nl; /* thread t has lanes lane[t]..lane[t + 1] */
	free(depth);
	return lane;
}

/* The region calls of the streams (REGION records: SONDE_REGIONS=trace) as an SVG, one
 * lane per thread and nesting depth, x the run's time; calls narrower than a pixel are
 * counted, not drawn. */
static int region_timeline(FILE *out, const struct sd_profile *p)
{
	const struct sd_timeline *tl = sd_timeline_of(p);
	if (!tl || !tl->nregions)
		return 0;
	size_t nl;
	uint32_t *lane = tl_lanes(p, tl, &nl);
	if (!lane)
		return -ENOMEM;
	uint64_t run0 = sd_tl_run_start(p), tmax = 1;
	for (size_t i = 0; i < tl->nregions; i++) {
		const struct sd_tl_region *r = &tl->regions[i];
		uint64_t e = sd_tl_time(p, run0, tl->threads[r->thread].stream, r->end);
		tmax = e > tmax ? e : tmax;
	}
	double sx = (double)(TL_W - TL_LABEL) / (double)tmax;
	size_t hidden = 0;
	fprintf(out, "<h3>Timeline of the region calls</h3>\n<svg class=\"tl\" xmlns=\"http://www."
		"w3.org/2000/svg\" width=\"%d\" height=\"%zu\">\n", TL_W, (nl + 2) * TL_ROW);
	for (size_t t = 0; t < p->nthreads; t++) {
		if (lane[t + 1] == lane[t])
			continue; /* no region call */
		fprintf(out, "<text x=\"0\" y=\"%zu\">", (size_t)lane[t] * TL_ROW + 11);
		escs(out, p->threads[t].name);
		fprintf(out, " (%" PRIu64 ")</text>\n", p->threads[t].tid);
	}
	for (size_t i = 0; i < tl->nregions; i++) {
		const struct sd_tl_region *r = &tl->regions[i];
		uint32_t st = tl->threads[r->thread].stream;
		uint64_t b = sd_tl_time(p, run0, st, r->begin), e = sd_tl_time(p, run0, st, r->end);
		double x = TL_LABEL + (double)b * sx, w = (double)(e - b) * sx;
		if (w < 1) {
			hidden++;
			continue;
		}
		const struct sd_ctxnode *c = &p->ctx[r->ctx];
		fprintf(out, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" fill=\"hsl(%u,60%%,"
			"62%%)\"><title>", x, (size_t)(lane[r->thread] + r->depth) * TL_ROW, w,
			TL_ROW - 2, region_hue(p, r->ctx));
		escs(out, p->attr_names[c->attr]);
		putc('=', out);
		escs(out, p->value_strs[c->value]);
		fprintf(out, ": %.3f ms from %.3f ms%s</title></rect>\n", (double)(e - b) / 1e6,
			(double)b / 1e6, r->forced ? " (forced end)" : "");
	}
	fprintf(out, "<text x=\"%d\" y=\"%zu\">0</text><text x=\"%d\" y=\"%zu\" "
		"text-anchor=\"end\">%.3f s</text>\n</svg>\n", TL_LABEL, (nl + 1) * TL_ROW + 10, TL_W,
		(nl + 1) * TL_ROW + 10, (double)tmax / 1e9);
	fprintf(out, "<p class=\"note\">%zu region calls; %zu shorter than a pixel not drawn. "
		"Hover a call for its region, duration and start.</p>\n", tl->nregions, hidden);
	free(lane);
	return 0;
}

static int sec_regions(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (!p->region_records && !p->region_stats)
		return 0;
	fputs("<section id=\"regions\"><h2>Regions</h2>\n", out);
	struct sd_report_opts t = table_opts(o, SD_VIEW_REGIONS);
	int err = view_table(out, p, &t, "Regions (calls, inclusive and exclusive time)", NULL);
	if (!err)
		err = region_timeline(out, p);
	fputs("</section>\n", out);
	return err;
}

static int sec_annotations(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (!p->nattr_names)
		return 0;
	fputs("<section id=\"annotations\"><h2>Annotations</h2>\n", out);
	int err = 0;
	for (size_t a = 0; !err && a < p->nattr_names; a++) {
		struct sd_report_opts t = table_opts(o, SD_VIEW_GROUP);
		char *key = p->attr_names[a], title[512];
		t.group_by = &key, t.ngroup = 1;
		snprintf(title, sizeof title, "By %s", key);
		err = view_table(out, p, &t, title, NULL);
	}
	fputs("</section>\n", out);
	return err;
}

/* Each rank's wall time as a bar, its compute then its MPI time, to one scale; at most
 * RANK_BARS ranks (the table has them all). An inline SVG without script; each bar's
 * <title> gives its numbers. */
enum { RANK_BARS = 256, BAR_H = 16, BAR_X = 70, BAR_W = 760 };
static void rank_bars(FILE *out, const struct sd_mpi_rank *r, size_t n)
{
	size_t shown = n < RANK_BARS ? n : RANK_BARS;
	uint64_t max = 1;
	for (size_t i = 0; i < shown; i++)
		max = r[i].wall_ns > max ? r[i].wall_ns : max;
	fprintf(out, "<svg class=\"ranks\" width=\"%d\" height=\"%zu\" "
		"xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\n",
		BAR_X + BAR_W + 10, shown * BAR_H + 20);
	for (size_t i = 0; i < shown; i++) {
		double c = (double)sd_mpi_compute_ns(&r[i]), m = (double)r[i].mpi_ns;
		double wc = BAR_W * c / (double)max, wm = BAR_W * m / (double)max;
		size_t y = i * BAR_H;
		char name[40];
		if (r[i].rank >= 0)
			snprintf(name, sizeof name, "rank %" PRId64, r[i].rank);
		else
			snprintf(name, sizeof name, "pid %" PRIu64, r[i].pid);
		fprintf(out, "<g><title>%s: compute %.3f ms, MPI %.3f ms (%.1f%%)</title>"
			"<text x=\"0\" y=\"%zu\">%s</text>"
			"<rect class=\"compute\" x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"%d\" "
			"fill=\"#4a90d9\"/><rect class=\"mpi\" x=\"%.1f\" y=\"%zu\" "
			"width=\"%.1f\" height=\"%d\" fill=\"#e8a33d\"/></g>\n", name, c / 1e6,
			m / 1e6, c + m > 0 ? 100 * m / (c + m) : 0, y + BAR_H - 4, name, BAR_X, y, wc,
			BAR_H - 3, BAR_X + wc, y, wm, BAR_H - 3);
	}
	fprintf(out, "<text x=\"%d\" y=\"%zu\"><tspan fill=\"#4a90d9\">&#9632; compute"
		"</tspan> <tspan fill=\"#e8a33d\">&#9632; MPI</tspan></text>\n</svg>\n",
		BAR_X, shown * BAR_H + 14);
	if (shown < n)
		fprintf(out, "<p class=\"more\">%zu more ranks in the table</p>\n", n - shown);
}

/* The communication matrix as a heat map: a cell per (sender, receiver) pair with
 * messages, its colour the bytes on a log scale from the least (light) to the most (dark
 * red), its <title> the numbers. Jobs of up to HEAT_RANKS ranks; the pairs table follows. */
enum { HEAT_RANKS = 1024, HEAT_PX = 512, HEAT_X = 40, HEAT_Y = 34, HEAT_LABELS = 32 };
static int comm_heat(FILE *out, const struct sd_profile *p)
{
	struct sd_comm_pair *v;
	size_t n;
	uint32_t w = p->msg_world;
	if (sd_comm_pairs(p, &v, &n))
		return -ENOMEM;
	if (!n || w > HEAT_RANKS) {
		if (n)
			fprintf(out, "<p class=\"note\">%" PRIu32 " ranks: no heat map beyond %d (the "
				"table has the largest pairs).</p>\n", w, HEAT_RANKS);
		free(v);
		return 0;
	}
	double cell = (double)HEAT_PX / w, lo = 0, hi = 0;
	for (size_t i = 0; i < n; i++) {
		double b = log((double)v[i].bytes + 1);
		lo = !i || b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	fprintf(out, "<svg class=\"comm\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/"
		"2000/svg\" font-size=\"11\"><text x=\"0\" y=\"12\">rows: from rank, columns: to "
		"rank</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f4\" "
		"stroke=\"#ccc\"/>\n", HEAT_X + HEAT_PX + 10, HEAT_Y + HEAT_PX + 10, HEAT_X, HEAT_Y,
		HEAT_PX, HEAT_PX);
	for (uint32_t r = 0; w <= HEAT_LABELS && r < w; r++)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%" PRIu32 "</text>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%" PRIu32 "</text>\n",
			HEAT_X + (r + 0.5) * cell, HEAT_Y - 4, r, HEAT_X - 4,
			HEAT_Y + (r + 0.5) * cell + 4, r);
	for (size_t i = 0; i < n; i++) {
		double f = hi > lo ? (log((double)v[i].bytes + 1) - lo) / (hi - lo) : 1;
		fprintf(out, "<rect class=\"pair\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"fill=\"hsl(%.0f,85%%,%.0f%%)\"><title>rank %" PRIu32 " to rank %" PRIu32
			": %" PRIu64 " bytes in %" PRIu64 " messages</title></rect>\n",
			HEAT_X + v[i].dst * cell, HEAT_Y + v[i].src * cell, cell, cell, 45 - 45 * f,
			85 - 50 * f, v[i].src, v[i].dst, v[i].bytes, v[i].msgs);
	}
	fputs("</svg>\n", out);
	free(v);
	return 0;
}

static int sec_ranks(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_mpi_rank *r;
	size_t n;
	int err = sd_mpi_ranks(p, &r, &n);
	if (err || !n)
		return err;
	fputs("<section id=\"ranks\"><h2>MPI ranks</h2>\n<p class=\"note\">Each rank's wall "
	      "time: compute (outside MPI calls), then MPI (exact, from the MPI wrapper).</p>\n",
	      out);
	rank_bars(out, r, n);
	free(r);
	struct sd_report_opts t = table_opts(o, SD_VIEW_MPI);
	err = view_table(out, p, &t, "Compute and MPI per rank", NULL);
	if (!err) {
		t = table_opts(o, SD_VIEW_IMBALANCE);
		err = view_table(out, p, &t, "Imbalance across ranks (regions, then functions)",
				 NULL);
	}
	if (!err && p->nmsgs) {
		fputs("<h3>Communication: bytes sent, rank to rank</h3>\n<p class=\"note\">"
		      "Point-to-point messages (sends that returned); collectives are in the "
		      "regions' bytes.</p>\n", out);
		err = comm_heat(out, p);
		t = table_opts(o, SD_VIEW_COMM);
		if (!err)
			err = view_table(out, p, &t, "Messages per pair (rank order; the largest when more than the page shows)", NULL);
	}
	fputs("</section>\n", out);
	return err;
}

static int sec_spread(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	static const struct { int key; const char *title; } sp[] = {
		{ SD_STATS_THREAD, "Spread across threads (each function's self per thread)" },
		{ SD_STATS_PROCESS, "Spread across processes" },
		{ SD_STATS_RANK, "Spread across MPI ranks" },
	};
	size_t ranks = 0;
	for (size_t i = 0; i < p->nprocs; i++)
		ranks += p->procs[i].rank >= 0;
	size_t units[] = { p->nthreads, p->npids, ranks };
	fputs("<section id=\"spread\"><h2>Spread</h2>\n", out);
	int err = 0, any = 0;
	for (size_t k = 0; !err && k < sizeof sp / sizeof *sp; k++) {
		if (units[k] < 2)
			continue;
		struct sd_report_opts t = table_opts(o, SD_VIEW_FLAT);
		t.stats = sp[k].key;
		any = 1;
		err = view_table(out, p, &t, sp[k].title, NULL);
	}
	if (!any)
		fputs("<p class=\"note\">One thread: nothing to spread.</p>\n", out);
	fputs("</section>\n", out);
	return err;
}

static int sec_tables(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	int err = sec_functions(out, p, o);
	if (!err) {
		struct sd_report_opts t = table_opts(o, SD_VIEW_THREADS);
		fputs("<section id=\"threads\"><h2>Threads</h2>\n", out);
		err = view_table(out, p, &t, "Samples per thread", NULL);
		fputs("</section>\n", out);
	}
	if (!err)
		err = sec_regions(out, p, o);
	if (!err)
		err = sec_annotations(out, p, o);
	if (!err)
		err = sec_ranks(out, p, o);
	if (!err)
		err = sec_spread(out, p, o);
	return err;
}
