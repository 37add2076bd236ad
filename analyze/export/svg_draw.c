/*
 * export/svg_draw.c: the flame graph's document, for svg.c: the frames of a laid-out
 * struct svg (svg_int.h) written as SVG: the title lines and buttons, the --color-by
 * legend, one <g> per frame drawn (its colour, <title> and cut label), the style and the
 * inline script that zooms and searches. The design, and what the script reads back
 * from the DOM, is described at the top of svg.c. Runs in the CLI's only thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/export/svg_int.h"
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SVG_W = 1200, SVG_PAD = 10, SVG_ROW = 16, SVG_TOP = 72, SVG_BOT = 28 };
#define SVG_CHAR_PX 7.2     /* advance of a 12 px monospace character */
#define SVG_MIN_SHARE 0.001 /* frames under 0.1 % of the total are not drawn */

/* ---- colours ---------------------------------------------------------------------- */

/* rgb() of hue h (degrees), saturation s and lightness l (0..1) into buf (24 bytes). */
static void hsl(char *buf, double h, double s, double l)
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360) / 60;
	double x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;

	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	snprintf(buf, 24, "rgb(%d,%d,%d)", (int)lround((r + m) * 255), (int)lround((g + m) * 255),
		 (int)lround((b + m) * 255));
}

/* The self delta of a diff frame: shares in percentage points, or values. */
static double delta(const struct svg *g, const struct fnode *f)
{
	if (g->absolute)
		return f->self[0] - f->self[1];
	return sd_pct(f->self[0], g->n[0].v[0]) - sd_pct(f->self[1], g->n[0].v[1]);
}

static void frame_fill(const struct svg *g, const struct fnode *f, char *buf)
{
	const struct sd_profile *p = g->p;

	if (f == g->n) {
		snprintf(buf, 24, "rgb(200,200,200)");
	} else if (g->diff) { /* white to red (grew) or blue (shrank) */
		double d = delta(g, f), s = g->maxd > 0 ? fabs(d) / g->maxd : 0;
		int c = (int)lround(240 - 190 * s);
		if (d > 0)
			snprintf(buf, 24, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			snprintf(buf, 24, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, 24, "rgb(240,240,240)");
	} else if (g->cattr >= 0) { /* a hue per value */
		if (f->cval < 0)
			snprintf(buf, 24, "rgb(210,210,210)");
		else
			hsl(buf, sd_fnv1a32_str(p->value_strs[f->cval]) % 360, 0.65, 0.68);
	} else if (f->level) { /* cool: a hue per attribute, lightness per value */
		hsl(buf, 170 + sd_fnv1a32_str(p->attr_names[f->id]) % 90, 0.55,
		    0.62 + (sd_fnv1a32_str(p->value_strs[f->val]) % 16) / 100.0);
	} else {
		const struct sd_func *fn = sd_sym_func(p->sym, f->id);
		if (!fn->module[0]) /* pseudo frames and raw addresses */
			snprintf(buf, 24, "rgb(190,190,180)");
		else /* warm: a hue per module, lightness per function */
			hsl(buf, sd_fnv1a32_str(fn->module) % 56, 0.78, 0.55 + (sd_fnv1a32_str(fn->name) % 16) / 100.0);
	}
}

/* ---- output ----------------------------------------------------------------------- */

/* s as XML character data or attribute value, at most max bytes (emit.c). */
static void xml_put(FILE *out, const char *str, size_t max)
{
	sd_xml_put(out, str, strlen(str), max);
}

/* The label of a frame w px wide: the name, or its first bytes and "..", or nothing
 * (the script's label() computes the same after a zoom). */
static void put_label(FILE *out, const char *name, double w)
{
	double c = floor((w - 6) / SVG_CHAR_PX);
	size_t len = strlen(name);

	if (c < 3)
		return;
	if ((double)len <= c) {
		xml_put(out, name, len);
		return;
	}
	xml_put(out, name, (size_t)c - 2);
	fputs("..", out);
}

static const char *unit_of(const struct sd_report_opts *o)
{
	return o->counter || !o->weight ? sd_metric_name(o) : o->weight_unit ? o->weight_unit
										     : "ms";
}

/* v as the metric shows it, and its unit. */
static void put_value(FILE *out, const struct sd_report_opts *o, double v)
{
	sd_metric_put(out, o, v, 0);
	putc(' ', out);
	xml_put(out, unit_of(o), SIZE_MAX);
}

/* The inline script: the frames are read back from the DOM (module comment). No "]]>". */
static const char script[] =
"'use strict';\n"
"(function () {\n"
"var svg = document.documentElement;\n"
"function A(e, k) { return e.getAttribute(k); }\n"
"var W = +A(svg, 'width'), H = +A(svg, 'height'), TOP = +A(svg, 'data-top');\n"
"var BOT = +A(svg, 'data-bottom'), DIV = +A(svg, 'data-div'), UNIT = A(svg, 'data-unit');\n"
"var PAD = 10, ROW = 16, CW = 7.2;\n"
"var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
"var unzoom = document.getElementById('unzoom'), sbtn = document.getElementById('search');\n"
"var flip = document.getElementById('flip');\n"
"var frames = [], byId = {}, gs = document.querySelectorAll('g.f');\n"
"function zoomer(f) { return function () { zoom(f); }; }\n"
"function shower(f) { return function () { details.textContent = f.tip.replace(/\\n/g, ' | '); }; }\n"
"for (var k = 0; k < gs.length; k++) {\n"
"  var g = gs[k], f = { g: g, r: g.querySelector('rect'), t: g.querySelector('text'),\n"
"    i: +A(g, 'data-i'), u: g.hasAttribute('data-u') ? +A(g, 'data-u') : -1,\n"
"    n: A(g, 'data-n'), v: +A(g, 'data-v'), x: +A(g, 'data-x'), d: +A(g, 'data-d'),\n"
"    tip: g.querySelector('title').textContent, hit: false };\n"
"  f.fill = A(f.r, 'fill');\n"
"  frames.push(f);\n"
"  byId[f.i] = f;\n"
"  g.addEventListener('click', zoomer(f));\n"
"  g.addEventListener('mouseover', shower(f));\n"
"  g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"}\n"
"var root = byId[0], zoomed = root, icicle = false, term = null;\n"
"function num(v) { return (DIV > 1 ? (v / DIV).toFixed(3) : String(Math.round(v))) + ' ' + UNIT; }\n"
"function pct(v) { return (root && root.v > 0 ? 100 * v / root.v : 0).toFixed(2) + '%'; }\n"
"function label(n, w) {\n"
"  var c = Math.floor((w - 6) / CW);\n"
"  if (c < 3) return '';\n"
"  return n.length <= c ? n : n.slice(0, c - 2) + '..';\n"
"}\n"
"function draw() {\n"
"  if (!root) return;\n"
"  var z = zoomed, scale = (W - 2 * PAD) / z.v;\n"
"  for (var k = 0; k < frames.length; k++) {\n"
"    var f = frames[k];\n"
"    var inside = f.d >= z.d && f.x >= z.x && f.x + f.v <= z.x + z.v;\n"
"    var anc = f.d < z.d && f.x <= z.x && f.x + f.v >= z.x + z.v;\n"
"    if (!inside && !anc) { f.g.style.display = 'none'; continue; }\n"
"    f.g.style.display = '';\n"
"    var x = anc ? PAD : PAD + (f.x - z.x) * scale, w = anc ? W - 2 * PAD : f.v * scale;\n"
"    var y = icicle ? TOP + f.d * ROW : H - BOT - (f.d + 1) * ROW;\n"
"    f.r.setAttribute('x', x.toFixed(2));\n"
"    f.r.setAttribute('y', y);\n"
"    f.r.setAttribute('width', w.toFixed(2));\n"
"    f.t.setAttribute('x', (x + 3).toFixed(2));\n"
"    f.t.setAttribute('y', y + ROW - 4);\n"
"    f.t.textContent = label(f.n, w);\n"
"    f.g.setAttribute('class', anc ? 'f anc' : 'f');\n"
"  }\n"
"  unzoom.setAttribute('opacity', z === root ? '0.3' : '1');\n"
"}\n"
"function zoom(f) { if (f) { zoomed = f; draw(); } }\n"
"function clear() {\n"
"  for (var k = 0; k < frames.length; k++) {\n"
"    frames[k].hit = false;\n"
"    frames[k].r.setAttribute('fill', frames[k].fill);\n"
"  }\n"
"  term = null;\n"
"  sbtn.textContent = 'Search';\n"
"  matched.textContent = ' ';\n"
"}\n"
"function search(s) {\n"
"  var re = null, sum = 0, hits = 0, k, f, a;\n"
"  try { re = new RegExp(s); } catch (e) { re = null; }\n"
"  for (k = 0; k < frames.length; k++) {\n"
"    f = frames[k];\n"
"    f.hit = f !== root && (re ? re.test(f.n) : f.n.indexOf(s) >= 0);\n"
"    f.r.setAttribute('fill', f.hit ? 'rgb(230,0,230)' : f.fill);\n"
"  }\n"
"  for (k = 0; k < frames.length; k++) {\n"
"    f = frames[k];\n"
"    if (!f.hit) continue;\n"
"    hits++;\n"
"    for (a = byId[f.u]; a && !a.hit; a = byId[a.u]) {}\n"
"    if (!a) sum += f.v;\n"
"  }\n"
"  term = s;\n"
"  sbtn.textContent = 'Clear';\n"
"  matched.textContent = 'matched: ' + num(sum) + ' (' + pct(sum) + ')';\n"
"  matched.setAttribute('data-hits', String(hits));\n"
"}\n"
"sbtn.addEventListener('click', function () {\n"
"  if (term !== null) { clear(); return; }\n"
"  var s = window.prompt('Search frames (a regular expression, else a substring)', '');\n"
"  if (s) search(s);\n"
"});\n"
"unzoom.addEventListener('click', function () { zoom(root); });\n"
"flip.addEventListener('click', function () {\n"
"  icicle = !icicle;\n"
"  flip.textContent = icicle ? 'Flame' : 'Icicle';\n"
"  draw();\n"
"});\n"
"window.addEventListener('keydown', function (e) {\n"
"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
"    e.preventDefault();\n"
"    sbtn.dispatchEvent(new MouseEvent('click'));\n"
"  } else if (e.key === 'Escape') {\n"
"    zoom(root);\n"
"  }\n"
"});\n"
"window.sonde = { zoom: function (i) { zoom(byId[i]); }, search: search, clear: clear };\n"
"/* a graph taller than the window opens where the weight is: the deepest level that\n"
" * still holds half of it, mid-window (a deep interpreter's stack: not its thin tips) */\n"
"(function () {\n"
"  if (!root || !(window.innerHeight < H)) return;\n"
"  var d = 0;\n"
"  for (var k = 0; k < frames.length; k++)\n"
"    if (2 * frames[k].v >= root.v && frames[k].d > d) d = frames[k].d;\n"
"  var y = H - BOT - (d + 1) * ROW;\n"
"  window.scrollTo(0, Math.max(0, y - window.innerHeight / 2));\n"
"})();\n"
"})();\n";

static const char style[] =
	".f rect { stroke: #fff; stroke-width: 0.5; cursor: pointer }\n"
	".f:hover rect { stroke: #000 }\n"
	".f text { pointer-events: none; fill: #000 }\n"
	".anc { opacity: 0.55 }\n"
	".btn { cursor: pointer; fill: #1a4f9c }\n"
	".sub { fill: #555 }\n";

static void put_program(FILE *out, const struct sd_profile *p)
{
	size_t more = 0;

	for (size_t i = 1; i < p->nsinfo; i++) {
		size_t j = 0;
		while (j < i && strcmp(p->sinfo[j].name, p->sinfo[i].name))
			j++;
		more += j == i;
	}
	xml_put(out, p->nsinfo ? p->sinfo[0].name : "(no streams)", SIZE_MAX);
	if (more)
		fprintf(out, " and %zu more", more);
}

static void put_head(FILE *out, const struct svg *g, int height, const struct head *h)
{
	const struct sd_report_opts *o = g->o;
	int ns_weight = o->weight && !o->counter && !o->weight_unit;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-top=\"%d\" data-bottom=\"%d\" "
		"data-div=\"%d\" data-unit=\"", SVG_W, height, SVG_W, height, SVG_TOP, SVG_BOT,
		ns_weight ? 1000000 : 1);
	xml_put(out, unit_of(o), SIZE_MAX);
	fprintf(out, "\" font-family=\"monospace\" font-size=\"12\">\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf6\"/>\n"
		"<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">", style, SVG_W,
		height, SVG_W / 2);
	if (g->diff) {
		fputs("sonde diff: ", out);
		xml_put(out, h->a, SIZE_MAX);
		fputs(" \xe2\x86\x92 ", out);
		xml_put(out, h->b, SIZE_MAX);
	} else {
		fputs("sonde flame graph: ", out);
		put_program(out, g->p);
	}
	fputs(" \xc2\xb7 ", out);
	xml_put(out, sd_metric_name(o), SIZE_MAX);
	fputs(" \xc2\xb7 total ", out);
	put_value(out, o, g->n[0].v[0]);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"42\" text-anchor=\"middle\" class=\"sub\">view: ",
		SVG_W / 2);
	xml_put(out, h->view, SIZE_MAX);
	if (g->diff) {
		fprintf(out, " \xc2\xb7 widths: B \xc2\xb7 red: self grew, blue: self shrank (%s)",
			g->absolute ? "values" : "share of each side's total");
	} else if (g->o->color_by) {
		fputs(" \xc2\xb7 colour: ", out);
		xml_put(out, g->o->color_by, SIZE_MAX);
		fputs(" (the value with most of each frame)", out);
	} else {
		fputs(" \xc2\xb7 colour: module", out);
	}
	fprintf(out, " \xc2\xb7 click: zoom</text>\n"
		"<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"62\" opacity=\"0.3\">Reset Zoom</text>\n"
		"<text id=\"flip\" class=\"btn\" x=\"%d\" y=\"62\" text-anchor=\"end\">Icicle</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"62\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		SVG_PAD, SVG_W - SVG_PAD - 70, SVG_W - SVG_PAD, SVG_PAD, height - 10,
		SVG_W - SVG_PAD, height - 10);
}

static int legend_cmp(const void *a, const void *b, void *ctx)
{
	const struct sd_profile *p = ctx;
	long x = *(const long *)a, y = *(const long *)b;
	if (x < 0 || y < 0)
		return (x < 0) - (y < 0); /* "(none)" last */
	return sd_natcmp(p->value_strs[x], p->value_strs[y]);
}

/* --color-by: a swatch and the name of each value the drawn frames are coloured by, in
 * the row of the buttons, as many as fit. 0 or -ENOMEM. */
static int put_legend(FILE *out, const struct svg *g, const uint8_t *drawn)
{
	size_t nv = g->p->nvalue_strs, n = 0;
	uint8_t *seen = calloc(nv + 1, 1);
	long *v = malloc((nv + 1) * sizeof(*v));
	double x = SVG_PAD + 100;
	int err = -ENOMEM;

	if (!seen || !v)
		goto out;
	for (size_t i = 1; i < g->nn; i++)
		if (drawn[i] && !seen[g->n[i].cval + 1]++)
			v[n++] = g->n[i].cval;
	qsort_r(v, n, sizeof(*v), legend_cmp, (void *)g->p);
	for (size_t k = 0; k < n; k++) {
		const char *name = v[k] >= 0 ? g->p->value_strs[v[k]] : "(none)";
		double w = 16 + SVG_CHAR_PX * (double)strlen(name) + 14;
		struct fnode f = { .cval = v[k] };
		char fill[24];
		if (x + w > SVG_W - SVG_PAD - 150) {
			fprintf(out, "<text x=\"%.1f\" y=\"62\">...</text>\n", x);
			break;
		}
		frame_fill(g, &f, fill);
		fprintf(out, "<rect x=\"%.1f\" y=\"52\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text class=\"legend\" x=\"%.1f\" y=\"62\">", x, fill, x + 16);
		xml_put(out, name, SIZE_MAX);
		fputs("</text>\n", out);
		x += w;
	}
	err = 0;
out:
	free(seen);
	free(v);
	return err;
}

/* The <title> of a frame: name, value and percent (a diff: both sides and the change;
 * --color-by: the value it is coloured by). */
static void put_title(FILE *out, const struct svg *g, const struct fnode *f)
{
	const struct sd_report_opts *o = g->o;

	xml_put(out, f->name, SIZE_MAX);
	for (int s = 0; s <= g->diff; s++) {
		fputs(g->diff ? (s ? "\nbefore: " : "\nafter: ") : "\n", out);
		put_value(out, o, f->v[s]);
		fprintf(out, " (%.2f%%)", sd_pct(f->v[s], g->n[0].v[s]));
		if (f->self[s] > 0 || g->diff) {
			fputs(", self ", out);
			put_value(out, o, f->self[s]);
			if (g->diff)
				fprintf(out, " (%.2f%%)", sd_pct(f->self[s], g->n[0].v[s]));
		}
	}
	if (g->diff && g->absolute) {
		fputs("\nself delta: ", out);
		if (delta(g, f) >= 0)
			putc('+', out);
		put_value(out, o, delta(g, f));
	} else if (g->diff) {
		fprintf(out, "\nself delta: %+.2f percentage points", delta(g, f));
	} else if (g->cattr >= 0 && f != g->n) {
		fputc('\n', out);
		xml_put(out, o->color_by, SIZE_MAX);
		putc('=', out);
		xml_put(out, f->cval >= 0 ? g->p->value_strs[f->cval] : "(none)", SIZE_MAX);
		fprintf(out, ": %.1f%% of it", 100 * f->cshare);
	}
}

static void put_frame(FILE *out, const struct svg *g, uint32_t i, int height)
{
	const struct fnode *f = &g->n[i];
	double scale = (SVG_W - 2 * SVG_PAD) / g->n[0].v[0];
	double x = SVG_PAD + f->x * scale, w = f->v[0] * scale;
	int y = height - SVG_BOT - (int)(f->depth + 1) * SVG_ROW;
	char fill[24];

	fprintf(out, "<g class=\"f\" data-i=\"%u\"", i);
	if (i)
		fprintf(out, " data-u=\"%u\"", f->parent);
	fprintf(out, " data-d=\"%u\" data-x=\"%.0f\" data-v=\"%.0f\" data-n=\"", f->depth, f->x,
		f->v[0]);
	xml_put(out, f->name, SIZE_MAX);
	if (g->cattr >= 0 && i) {
		fputs("\" data-c=\"", out);
		xml_put(out, f->cval >= 0 ? g->p->value_strs[f->cval] : "(none)", SIZE_MAX);
	}
	fputs("\"><title>", out);
	put_title(out, g, f);
	frame_fill(g, f, fill);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>"
		"<text x=\"%.2f\" y=\"%d\">", x, y, w, SVG_ROW - 1, fill, x + 3, y + SVG_ROW - 4);
	put_label(out, f->name, w);
	fputs("</text></g>\n", out);
}

/* The whole document: frames of at least SVG_MIN_SHARE of the total (whose parents are
 * drawn), parents first. 0 or -ENOMEM. */
int sd_svg_emit(FILE *out, struct svg *g, const struct head *h)
{
	uint8_t *drawn = calloc(g->nn, 1);
	double all = g->n[0].v[0];
	uint32_t maxdepth = 0;

	if (!drawn)
		return -ENOMEM;
	drawn[0] = all > 0;
	for (size_t i = 1; i < g->nn; i++) {
		const struct fnode *f = &g->n[i];
		drawn[i] = drawn[f->parent] && f->v[0] > 0 && f->v[0] >= SVG_MIN_SHARE * all;
		if (drawn[i] && f->depth > maxdepth)
			maxdepth = f->depth;
		if (drawn[i] && g->diff && fabs(delta(g, f)) > g->maxd)
			g->maxd = fabs(delta(g, f));
	}
	int height = SVG_TOP + (int)(maxdepth + 1) * SVG_ROW + SVG_BOT;
	put_head(out, g, height, h);
	if (g->cattr >= 0 && put_legend(out, g, drawn)) {
		free(drawn);
		return -ENOMEM;
	}
	if (!drawn[0])
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n",
			SVG_W / 2, SVG_TOP + SVG_ROW);
	for (size_t i = 0; i < g->nn; i++)
		if (drawn[i])
			put_frame(out, g, (uint32_t)i, height);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
	free(drawn);
	return 0;
}
