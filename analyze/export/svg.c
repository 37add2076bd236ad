/*
 * export/svg.c: `sonde report --format svg` and `sonde diff --format svg`: a flame graph
 * as one self-contained SVG file (no network, no external script, style or font), for
 * users who have only a browser. Called by the dispatcher (output.c) with the flat view's
 * call tree or the tree view's merged tree (a neutral struct sd_tree_src: this file
 * calls no view), and by `sonde diff` (cmd_diff.c); runs in the CLI's only thread.
 *
 * Design:
 * - The frames are built from the very tree folded output prints (struct sd_folded_tree,
 *   --top included): one line per node with a positive value, its value rounded as
 *   sd_folded_print rounds it (rint, as "%.0f"), merged by name along the path
 *   (flamegraph.pl's merging of equal prefixes). So every frame's value (data-v) is the
 *   sum of the folded counts of the lines through it, exactly, and the root's is their
 *   sum. Children are sorted by name (strcmp, the folded lines' order); x is each
 *   frame's offset in value units, width = value * (1200 - 20) / root value.
 * - Frames under SVG_MIN_SHARE (0.1 %) of the total are not drawn (nor their subtrees);
 *   their value stays in their parent's width. A drawn frame is a <g class="f"> with
 *   data-i (its id), data-u (its parent's), data-d (depth), data-x, data-v, data-n (the
 *   name), a <title> (name, value in the metric's unit, percent of all), a <rect> and a
 *   <text> label cut to fit (7.2 px a character: 12 px monospace).
 * - Colours are deterministic: by default a warm hue per module (FNV-1a of its name,
 *   lightness varied by the function's name), annotation levels (tree view) in cool
 *   hues per attribute, pseudo frames grey. --color-by ATTR: a hue per value of ATTR;
 *   each frame takes the value that carries most of its samples (the flat view: each
 *   sample row's innermost value of ATTR, sd_ctx_value; the tree view: the nearest ATTR
 *   level at or above the line's node), "(none)" grey; data-c holds it. The diff: B's
 *   widths, red where the frame's self grew from A to B, blue where it shrank,
 *   saturation by |delta| over the largest |delta| drawn (self shares in percentage
 *   points as `sonde diff` compares them, or values with --absolute).
 * - One inline script (CDATA) reads the frames back from the DOM: click zooms (the
 *   frame to full width, its ancestors dimmed, the rest hidden; the root or "Reset
 *   Zoom" resets), "Search" (or Ctrl-F) prompts for a regular expression (a plain
 *   substring when it is not one), paints the matches and shows "matched: X (Y%)", the
 *   value of the matched frames that have no matched ancestor (nested matches are not
 *   counted twice); "Icicle"/"Flame" flips the layout. Hovering shows the title in the
 *   details line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/export/export.h"
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SVG_W = 1200, SVG_PAD = 10, SVG_ROW = 16, SVG_TOP = 72, SVG_BOT = 28 };
#define SVG_CHAR_PX 7.2     /* advance of a 12 px monospace character */
#define SVG_MIN_SHARE 0.001 /* frames under 0.1 % of the total are not drawn */

struct fnode {
	uint32_t parent, kid, next, depth; /* kid, next: 0 = none (the root is no child) */
	const char *name;           /* borrowed from the source tree */
	double v[2], self[2];       /* total and self: [0] the graph's (B's), [1] A's (diff) */
	double x;                   /* left edge in value units */
	int level;                  /* 1: an annotation level (id, val: attribute, value) */
	uint32_t id, val;           /* else id: the function */
	long cval;                  /* --color-by: the value with most of the frame, -1 none */
	double cshare;              /* that value's share of the frame's weight */
};

struct svg {
	struct fnode *n; size_t nn, cap;
	struct sd_strmap kids;      /* parent id (4 bytes) + name -> node */
	char *key; size_t keycap;
	const struct sd_profile *p; /* the graph's (B's) */
	const struct sd_report_opts *o;
	long cattr;                 /* --color-by attribute id, -1: by module */
	int diff, absolute;
	double maxd;                /* diff: the largest |delta| drawn */
};

/* ---- the tree --------------------------------------------------------------------- */

/* The child of `parent` named `name`, created if needed: 0 and *out, or -ENOMEM. */
static int child(struct svg *g, uint32_t parent, const char *name, uint32_t *out)
{
	size_t len = strlen(name);
	if (len + 4 > g->keycap) {
		char *k = realloc(g->key, len + 64);
		if (!k)
			return -ENOMEM;
		g->key = k, g->keycap = len + 64;
	}
	memcpy(g->key, &parent, 4);
	memcpy(g->key + 4, name, len);
	if (sd_strmap_get(&g->kids, g->key, len + 4, out))
		return 0;
	if (g->nn == g->cap && sd_grow(&g->n, &g->cap, g->nn + 1, sizeof(*g->n)))
		return -ENOMEM;
	*out = (uint32_t)g->nn;
	g->n[g->nn] = (struct fnode){ .parent = parent, .name = name, .cval = -1,
				      .depth = g->n[parent].depth + 1 };
	if (sd_strmap_put(&g->kids, g->key, len + 4, *out))
		return -ENOMEM;
	g->nn++;
	return 0;
}

/* Node i of s into g (its ancestors first), smap[i] = 1 + its frame. 0 or -ENOMEM. */
static int add_path(struct svg *g, const struct sd_tree_src *s, uint32_t i, uint32_t *smap,
		    uint32_t *chain)
{
	size_t depth = 0;
	uint32_t cur = 0;

	for (uint32_t c = i; c && !smap[c]; c = s->f.parent(s->f.ctx, c))
		chain[depth++] = c;
	if (depth && s->f.parent(s->f.ctx, chain[depth - 1]))
		cur = smap[s->f.parent(s->f.ctx, chain[depth - 1])] - 1;
	while (depth--) {
		uint32_t c = chain[depth], id = 0, val = 0;
		size_t before = g->nn;
		if (child(g, cur, s->f.name(s->f.ctx, c), &cur))
			return -ENOMEM;
		if (g->nn > before) { /* new: colour it as its first source node */
			g->n[cur].level = s->what(s->f.ctx, c, &id, &val);
			g->n[cur].id = id, g->n[cur].val = val;
		}
		smap[c] = cur + 1;
	}
	return 0;
}

struct line { uint32_t i; double v; char *path; };

/* Heaviest first, then by path (sd_folded_print's choice for --top). */
static int line_heavy(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The folded path of node i (outermost first, `;`-joined) into a fresh string; chain has
 * room for every node. NULL on ENOMEM. */
static char *path_of(const struct sd_folded_tree *t, uint32_t i, uint32_t *chain)
{
	size_t depth = 0, len = 0;

	for (uint32_t c = i; c; c = t->parent(t->ctx, c)) {
		chain[depth++] = c;
		len += strlen(t->name(t->ctx, c)) + 1;
	}
	char *s = malloc(len + 1), *q = s;
	if (!s)
		return NULL;
	*q = 0;
	while (depth--) {
		const char *name = t->name(t->ctx, chain[depth]);
		size_t l = strlen(name);
		memcpy(q, name, l);
		q += l;
		*q++ = depth ? ';' : 0;
	}
	return s;
}

/* keep[i] = 1 for the nodes folded output prints a line for (positive value; with
 * --top, the `top` heaviest as sd_folded_print picks them). 0 or -ENOMEM. */
static int keep_lines(const struct sd_folded_tree *t, uint8_t *keep, uint32_t *chain)
{
	struct line *l = NULL;
	size_t nl = 0;
	int err = -ENOMEM;

	for (uint32_t i = 1; i < t->n; i++)
		keep[i] = t->value(t->ctx, i) > 0;
	if (!t->top)
		return 0;
	if (!(l = calloc(t->n + 1, sizeof(*l))))
		return -ENOMEM;
	for (uint32_t i = 1; i < t->n; i++) {
		if (!keep[i])
			continue;
		l[nl] = (struct line){ i, t->value(t->ctx, i), path_of(t, i, chain) };
		if (!l[nl++].path)
			goto out;
	}
	if (nl > t->top) {
		qsort(l, nl, sizeof(*l), line_heavy);
		for (size_t k = t->top; k < nl; k++)
			keep[l[k].i] = 0;
	}
	err = 0;
out:
	for (size_t k = 0; k < nl; k++)
		free(l[k].path);
	free(l);
	return err;
}

/* Add the lines of s to side `side` of g; smap (s->f.n entries, zeroed): source node ->
 * 1 + frame; keep: as keep_lines. 0 or -ENOMEM. */
static int build(struct svg *g, const struct sd_tree_src *s, int side, uint32_t *smap,
		 uint8_t *keep)
{
	uint32_t *chain = malloc((s->f.n + 1) * sizeof(*chain));
	int err = -ENOMEM;

	if (!chain || keep_lines(&s->f, keep, chain))
		goto out;
	for (uint32_t i = 1; i < s->f.n; i++) {
		if (!keep[i])
			continue;
		if (add_path(g, s, i, smap, chain))
			goto out;
		g->n[smap[i] - 1].self[side] += rint(s->f.value(s->f.ctx, i));
	}
	err = 0;
out:
	free(chain);
	return err;
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct fnode *n = ctx;
	const struct fnode *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Totals (children were created after their parents), children linked in name order,
 * and each frame's x. 0 or -ENOMEM. */
static int layout(struct svg *g)
{
	uint32_t *ord = malloc(g->nn * sizeof(*ord));

	if (!ord)
		return -ENOMEM;
	for (size_t i = g->nn; i-- > 0;) {
		struct fnode *f = &g->n[i];
		for (int s = 0; s < 2; s++) {
			f->v[s] += f->self[s];
			if (i)
				g->n[f->parent].v[s] += f->v[s];
		}
	}
	for (size_t i = 1; i < g->nn; i++)
		ord[i - 1] = (uint32_t)i;
	if (g->nn > 2)
		qsort_r(ord, g->nn - 1, sizeof(*ord), by_name, g->n);
	for (size_t k = g->nn - 1; k-- > 0;) { /* backwards: push-front keeps the order */
		struct fnode *f = &g->n[ord[k]];
		f->next = g->n[f->parent].kid;
		g->n[f->parent].kid = ord[k];
	}
	for (size_t i = 0; i < g->nn; i++) { /* parents first: their x is known */
		double x = g->n[i].x;
		for (uint32_t c = g->n[i].kid; c; c = g->n[c].next) {
			g->n[c].x = x;
			x += g->n[c].v[0];
		}
	}
	free(ord);
	return 0;
}

/* ---- --color-by ------------------------------------------------------------------- */

struct tints { struct sd_u64map map; double *w; uint64_t *key; size_t n, cap; };

/* Add weight w of value val (-1: none) to frame f and its ancestors. 0 or -ENOMEM. */
static int tint_add(struct tints *t, const struct svg *g, uint32_t f, long val, double w)
{
	for (; f; f = g->n[f].parent) {
		uint64_t key = (uint64_t)f << 32 | (uint32_t)(val + 1);
		uint32_t k;
		if (!sd_u64map_get(&t->map, key, &k)) {
			if (sd_grow(&t->w, &t->cap, t->n + 1, sizeof(*t->w)))
				return -ENOMEM;
			size_t cap = t->cap - 1;
			if (sd_grow(&t->key, &cap, t->cap, sizeof(*t->key)))
				return -ENOMEM;
			k = (uint32_t)t->n++;
			t->key[k] = key;
			if (sd_u64map_put(&t->map, key, k))
				return -ENOMEM;
		}
		t->w[k] += w;
	}
	return 0;
}

/* The nearest level of attribute attr at or above source node i: its value, or -1. */
static long level_value(const struct sd_tree_src *s, uint32_t i, uint32_t attr)
{
	for (; i; i = s->f.parent(s->f.ctx, i)) {
		uint32_t a, v;
		if (s->what(s->f.ctx, i, &a, &v) && a == attr)
			return v;
	}
	return -1;
}

/* Each frame's cval: the value of g->cattr with the most weight in it (ties: the value
 * that sorts first; -1 for none). 0 or -ENOMEM. */
static int tint(struct svg *g, const struct sd_tree_src *s, const uint32_t *smap,
		const uint8_t *keep)
{
	struct tints t = { 0 };
	const struct sd_profile *p = s->p;
	int err = -ENOMEM;

	if (s->call_nodes) {
		for (size_t i = 0; i < p->nrows; i++) {
			const struct sd_crow *r = &p->rows[i];
			uint32_t v;
			long val = !r->thread_end &&
				   sd_ctx_value(p, r->ctx, r->pctx, (uint32_t)g->cattr, &v) ? (long)v : -1;
			if (r->cnode < s->f.n && keep[r->cnode] &&
			    tint_add(&t, g, smap[r->cnode] - 1, val, sd_metric_row(g->o, r)))
				goto out;
		}
	} else {
		for (uint32_t i = 1; i < s->f.n; i++)
			if (keep[i] && tint_add(&t, g, smap[i] - 1,
						level_value(s, i, (uint32_t)g->cattr),
						rint(s->f.value(s->f.ctx, i))))
				goto out;
	}
	double *best = malloc(g->nn * sizeof(*best));
	if (!best)
		goto out;
	for (size_t i = 0; i < g->nn; i++)
		best[i] = -1;
	for (size_t k = 0; k < t.n; k++) { /* most weight; ties: by value, "(none)" last */
		size_t f = (size_t)(t.key[k] >> 32);
		long val = (long)(uint32_t)t.key[k] - 1, cur = g->n[f].cval;
		int first = val >= 0 && (cur < 0 || sd_natcmp(p->value_strs[val],
							       p->value_strs[cur]) < 0);
		if (t.w[k] > best[f] || (t.w[k] == best[f] && first)) {
			best[f] = t.w[k];
			g->n[f].cval = val;
		}
	}
	for (size_t i = 1; i < g->nn; i++)
		g->n[i].cshare = g->n[i].v[0] > 0 && best[i] > 0 ? best[i] / g->n[i].v[0] : 0;
	free(best);
	err = 0;
out:
	sd_u64map_fini(&t.map);
	free(t.w);
	free(t.key);
	return err;
}

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
"})();\n";

static const char style[] =
	".f rect { stroke: #fff; stroke-width: 0.5; cursor: pointer }\n"
	".f:hover rect { stroke: #000 }\n"
	".f text { pointer-events: none; fill: #000 }\n"
	".anc { opacity: 0.55 }\n"
	".btn { cursor: pointer; fill: #1a4f9c }\n"
	".sub { fill: #555 }\n";

/* What the title line names: the program(s) of a report, or the two sides of a diff. */
struct head { const char *view, *a, *b; };

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
static int emit(FILE *out, struct svg *g, const struct head *h)
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

/* ---- entry points ----------------------------------------------------------------- */

static int svg_init(struct svg *g, const struct sd_profile *p, const struct sd_report_opts *o)
{
	*g = (struct svg){ .p = p, .o = o, .cattr = -1 };
	if (sd_grow(&g->n, &g->cap, 64, sizeof(*g->n)))
		return -ENOMEM;
	g->n[0] = (struct fnode){ .name = "all", .cval = -1 };
	g->nn = 1;
	return 0;
}

static void svg_fini(struct svg *g)
{
	free(g->n);
	free(g->key);
	sd_strmap_fini(&g->kids);
}

/* The flame graph of s on out (o: metric, --color-by). 0 or -ENOMEM. */
static int svg_print(FILE *out, const struct sd_tree_src *s, const struct sd_report_opts *o)
{
	struct svg g;
	uint32_t *smap = calloc(s->f.n + 1, sizeof(*smap));
	uint8_t *keep = calloc(s->f.n + 1, 1);
	struct head h = { s->view, NULL, NULL };
	int err = -ENOMEM;

	if (svg_init(&g, s->p, o) || !smap || !keep)
		goto out;
	if (o->color_by) { /* an attribute no stream has: every frame "(none)" */
		uint32_t id;
		g.cattr = sd_strmap_get(&s->p->attr_map, o->color_by, strlen(o->color_by), &id)
			? (long)id : (long)s->p->nattr_names;
	}
	if (build(&g, s, 0, smap, keep) || layout(&g) ||
	    (g.cattr >= 0 && tint(&g, s, smap, keep)))
		goto out;
	err = emit(out, &g, &h);
out:
	svg_fini(&g);
	free(smap);
	free(keep);
	return err;
}

/* ---- the flat view's tree: the merged call nodes (output.c's folded output) ------- */

struct flat { const struct sd_profile *p; const double *nv; };

static uint32_t flat_parent(const void *ctx, uint32_t i)
{
	return ((const struct flat *)ctx)->p->nodes[i].parent;
}

static const char *flat_name(const void *ctx, uint32_t i)
{
	const struct sd_profile *p = ((const struct flat *)ctx)->p;
	return sd_sym_func(p->sym, p->nodes[i].func)->display;
}

static double flat_value(const void *ctx, uint32_t i)
{
	return ((const struct flat *)ctx)->nv[i];
}

static int flat_what(const void *ctx, uint32_t i, uint32_t *id, uint32_t *val)
{
	*id = ((const struct flat *)ctx)->p->nodes[i].func;
	*val = 0;
	return 0;
}

static void flat_src(struct sd_tree_src *s, struct flat *fl, size_t top)
{
	*s = (struct sd_tree_src){ { (uint32_t)fl->p->nnodes, top, fl, flat_parent, flat_name,
				    flat_value }, fl->p, flat_what, 1, "flat (call paths)" };
}

/* The end of an svg: -o FILE closed and said (emit.c). */
static int out_close(FILE *f, struct sd_outfile *of, int err)
{
	return sd_out_close(f, of, err, "flame graph", "open it in a browser");
}

int sd_out_svg(FILE *out, const struct sd_tree_src *src, const struct sd_report_opts *o)
{
	struct sd_outfile of;
	FILE *f = sd_out_open(out, o->output, &of);

	if (!f)
		return SD_SAID(SD_EXIT_IO);
	int err = svg_print(f, src, o);
	if (!err)
		sd_nocounters_warning(stderr, src->p);
	return out_close(f, &of, err);
}

int sd_out_svg_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	double *nv = sd_node_values(p, o);
	struct flat fl = { p, nv };
	struct sd_tree_src s;

	if (!nv)
		return -ENOMEM;
	flat_src(&s, &fl, o->top);
	int err = sd_out_svg(out, &s, o);
	free(nv);
	return err;
}

int sd_out_svg_diff(struct sd_profile *pa, const struct sd_report_opts *oa, const char *patha,
		    struct sd_profile *pb, const struct sd_report_opts *ob, const char *pathb,
		    int absolute, const char *output)
{
	double *nva = sd_node_values(pa, oa), *nvb = sd_node_values(pb, ob);
	struct flat fa = { pa, nva }, fb = { pb, nvb };
	struct sd_tree_src sa, sb;
	uint32_t *smap[2] = { calloc(pb->nnodes + 1, sizeof(uint32_t)),
			      calloc(pa->nnodes + 1, sizeof(uint32_t)) };
	uint8_t *keep[2] = { calloc(pb->nnodes + 1, 1), calloc(pa->nnodes + 1, 1) };
	struct head h = { "flat (call paths)", patha, pathb };
	struct svg g;
	int err = -ENOMEM;
	FILE *f = NULL;
	struct sd_outfile of;

	if (svg_init(&g, pb, ob) || !nva || !nvb || !smap[0] || !smap[1] || !keep[0] || !keep[1])
		goto out;
	g.diff = 1, g.absolute = absolute;
	flat_src(&sa, &fa, 0);
	flat_src(&sb, &fb, 0);
	if (build(&g, &sb, 0, smap[0], keep[0]) || build(&g, &sa, 1, smap[1], keep[1]) ||
	    layout(&g))
		goto out;
	err = SD_SAID(SD_EXIT_IO);
	if (!(f = sd_out_open(stdout, output, &of)))
		goto out;
	err = out_close(f, &of, emit(f, &g, &h));
out:
	svg_fini(&g);
	free(nva);
	free(nvb);
	for (int s = 0; s < 2; s++)
		free(smap[s]), free(keep[s]);
	return err;
}
