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
 *
 * This file builds the frames (the tree, its layout, --color-by's tints) and holds the
 * entry points; svg_draw.c writes the document; svg_int.h is what they share.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/export/svg_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	err = sd_svg_emit(out, &g, &h);
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
		sd_nocounters_warning(NULL, src->p);
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
	err = out_close(f, &of, sd_svg_emit(f, &g, &h));
out:
	svg_fini(&g);
	free(nva);
	free(nvb);
	for (int s = 0; s < 2; s++)
		free(smap[s]), free(keep[s]);
	return err;
}
