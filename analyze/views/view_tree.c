/*
 * view_tree.c: --view tree, the merged tree: context values (attr=value) above call paths,
 * called by the dispatcher. Input is the loaded profile: its sample rows (struct sd_crow,
 * one per stream, thread, source, context pair and call node, never one per sample) and
 * the merged context tree; --where filters were applied while loading. Output is
 * deterministic (every list sorted with a total order); columns and shapes are in
 * docs/REPORT.md and checked by tests/cli. Text, csv and json rows go through
 * view_tree_fmt.c, folded lines through the report's folded printer; for svg and pprof
 * the tree is returned (sd_tree_view_new, a neutral struct sd_tree_src) and the
 * dispatcher hands it to the exporter. Runs in the CLI's only thread.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* a, sep and b joined into a new string (NULL on ENOMEM). */
static char *join(const char *a, const char *sep, const char *b)
{
	size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
	char *s = malloc(la + ls + lb + 1);
	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, sep, ls);
		memcpy(s + la + ls, b, lb + 1);
	}
	return s;
}

/* ---- merged tree ------------------------------------------------------------------- */

/* kind 0: a function (a = func id); kind 1: a context value (a = attr, b = value). */
struct tnode { uint32_t parent, kind, a, b, depth; double self, incl; char *name; };
struct tree { struct tnode *n; size_t nn, cap; struct sd_strmap map; };

static int tree_child(struct tree *t, uint32_t parent, uint32_t kind, uint32_t a, uint32_t b,
		      uint32_t *out)
{
	uint32_t key[4] = { parent, kind, a, b };

	if (sd_strmap_get(&t->map, key, sizeof(key), out))
		return 0;
	if (t->nn == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct tnode *nn = realloc(t->n, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		t->n = nn;
		t->cap = cap;
	}
	t->n[t->nn] = (struct tnode){ parent, kind, a, b, t->n[parent].depth + 1, 0, 0, NULL };
	*out = (uint32_t)t->nn;
	if (sd_strmap_put(&t->map, key, sizeof(key), *out))
		return -ENOMEM;
	t->nn++;
	return 0;
}

/* A row's tree path: its context levels (process scope, then thread scope, outermost
 * first) and its call frames (outermost first), as growing arrays. */
struct tpath { uint32_t *lv, *fr; size_t nlv, nfr, caplv, capfr; };

static int push(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		uint32_t *na = realloc(*a, nc * sizeof(*na));
		if (!na)
			return -ENOMEM;
		*a = na;
		*cap = nc;
	}
	(*a)[(*n)++] = v;
	return 0;
}

/* Appends the context path ending in c, outermost first. */
static int levels_of(struct tpath *tp, const struct sd_profile *p, uint32_t c)
{
	size_t from = tp->nlv;
	for (uint32_t x = c; x; x = p->ctx[x].parent)
		if (push(&tp->lv, &tp->nlv, &tp->caplv, x))
			return -ENOMEM;
	for (size_t i = from, j = tp->nlv; i + 1 < j; i++, j--) { /* innermost first -> outermost */
		uint32_t t = tp->lv[i];
		tp->lv[i] = tp->lv[j - 1];
		tp->lv[j - 1] = t;
	}
	return 0;
}

/* The row's path into the tree: with the splice (the default), each context level goes
 * right under the first frame, at or below the previous level's, of the function that
 * opened it (CONTEXT site); a level whose function is not in the stack (or unknown)
 * stays where it is, under the previous level. --context-above: every level above the
 * whole stack. Returns the leaf in *cur. */
static int row_path(struct tree *t, const struct sd_profile *p, const struct sd_report_opts *o,
		    const struct tpath *tp, uint32_t *cur)
{
	size_t f = 0; /* frames placed so far */
	for (size_t l = 0; l < tp->nlv; l++) {
		const struct sd_ctxnode *x = &p->ctx[tp->lv[l]];
		if (!o->context_above && x->site)
			for (size_t j = f; j < tp->nfr; j++)
				if (p->nodes[tp->fr[j]].func == x->site - 1) {
					for (; f <= j; f++)
						if (tree_child(t, *cur, 0, p->nodes[tp->fr[f]].func, 0, cur))
							return -ENOMEM;
					break;
				}
		if (tree_child(t, *cur, 1, x->attr, x->value, cur))
			return -ENOMEM;
	}
	for (; f < tp->nfr; f++)
		if (tree_child(t, *cur, 0, p->nodes[tp->fr[f]].func, 0, cur))
			return -ENOMEM;
	return 0;
}

static int tree_build(struct tree *t, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct tpath tp = { 0 };
	int err = -ENOMEM;

	t->cap = 256;
	if (!(t->n = calloc(t->cap, sizeof(*t->n))))
		return -ENOMEM;
	t->nn = 1; /* root */
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		uint32_t cur = 0;
		tp.nlv = tp.nfr = 0;
		if (levels_of(&tp, p, r->pctx) || levels_of(&tp, p, r->ctx))
			goto out;
		for (uint32_t x = r->cnode; x; x = p->nodes[x].parent)
			if (push(&tp.fr, &tp.nfr, &tp.capfr, x))
				goto out;
		for (size_t a = 0, b = tp.nfr; a + 1 < b; a++, b--) {
			uint32_t s = tp.fr[a];
			tp.fr[a] = tp.fr[b - 1];
			tp.fr[b - 1] = s;
		}
		if (row_path(t, p, o, &tp, &cur))
			goto out;
		t->n[cur].self += sd_metric_row(o, r);
	}
	for (size_t i = t->nn; i-- > 1;) {
		t->n[i].incl += t->n[i].self;
		t->n[t->n[i].parent].incl += t->n[i].incl;
	}
	t->n[0].incl += t->n[0].self;
	for (size_t i = 1; i < t->nn; i++) {
		struct tnode *n = &t->n[i];
		n->name = n->kind == 0 ? join(sd_sym_func(p->sym, n->a)->display, "", "")
				       : join(p->attr_names[n->a], "=", p->value_strs[n->b]);
		if (!n->name)
			goto out;
	}
	err = 0;
out:
	free(tp.lv);
	free(tp.fr);
	return err;
}

static void tree_fini(struct tree *t)
{
	for (size_t i = 1; i < t->nn; i++)
		free(t->n[i].name);
	free(t->n);
	sd_strmap_fini(&t->map);
}

/* Children grouped by parent; within a parent by inclusive value desc, then name
 * (qsort_r: ctx is the nodes). */
static int child_cmp(const void *a, const void *b, void *ctx)
{
	const struct tnode *nodes = ctx;
	const struct tnode *x = &nodes[*(const uint32_t *)a];
	const struct tnode *y = &nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return sd_natcmp(x->name, y->name);
}

static uint32_t tnode_parent(const void *ctx, uint32_t i)
{
	return ((const struct tree *)ctx)->n[i].parent;
}

static const char *tnode_name(const void *ctx, uint32_t i)
{
	return ((const struct tree *)ctx)->n[i].name;
}

static double tnode_self(const void *ctx, uint32_t i)
{
	return ((const struct tree *)ctx)->n[i].self;
}

static int tree_folded(FILE *out, const struct tree *t, size_t top)
{
	struct sd_folded_tree f = { (uint32_t)t->nn, top, t, tnode_parent, tnode_name,
				    tnode_self };
	return sd_folded_print(out, &f);
}

/* --format svg: node i is a function (0, *id) or an annotation level (1, *id, *val). */
static int tnode_what(const void *ctx, uint32_t i, uint32_t *id, uint32_t *val)
{
	const struct tnode *n = &((const struct tree *)ctx)->n[i];
	*id = n->a;
	*val = n->b;
	return n->kind == 1;
}

/* The tree view for a tree exporter (the dispatcher hands it to svg or pprof). */
struct sd_tree_view { struct tree t; const struct sd_profile *p; };

struct sd_tree_view *sd_tree_view_new(const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_tree_view *tv = calloc(1, sizeof(*tv));
	if (!tv)
		return NULL;
	tv->p = p;
	if (tree_build(&tv->t, p, o)) {
		sd_tree_view_free(tv);
		return NULL;
	}
	return tv;
}

struct sd_tree_src sd_tree_view_src(const struct sd_tree_view *tv, size_t top)
{
	const struct tree *t = &tv->t;
	return (struct sd_tree_src){ { (uint32_t)t->nn, top, t, tnode_parent, tnode_name,
				       tnode_self }, tv->p, tnode_what, 0,
				     "tree (annotation levels as frames)" };
}

void sd_tree_view_free(struct sd_tree_view *tv)
{
	if (!tv)
		return;
	tree_fini(&tv->t);
	free(tv);
}

int sd_out_tree(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct tree t = { 0 };
	uint32_t *order = NULL, *start = NULL, *stack = NULL;
	uint8_t *keep = NULL; /* --top: the nodes kept */
	struct sd_tree_line *lines = NULL; /* the printed nodes, for view_tree_fmt.c */
	size_t nlines = 0;
	int err = -ENOMEM;
	double all = sd_metric_total(p, o);

	if (tree_build(&t, p, o))
		goto out;
	if (o->format == SD_FMT_FOLDED) {
		err = tree_folded(out, &t, o->top);
		goto out;
	}
	order = malloc(t.nn * sizeof(*order));
	start = malloc((t.nn + 1) * sizeof(*start));
	stack = malloc(t.nn * sizeof(*stack));
	lines = malloc(t.nn * sizeof(*lines));
	if (!order || !start || !stack || !lines)
		goto out;
	if (o->top) { /* the paths of the --top heaviest folded lines, as folded and svg */
		struct sd_folded_tree f = { (uint32_t)t.nn, o->top, &t, tnode_parent, tnode_name,
					    tnode_self };
		if (!(keep = sd_folded_keep(&f)))
			goto out;
	}
	size_t n = 0, sp = 0;
	for (size_t i = 1; i < t.nn; i++)
		order[n++] = (uint32_t)i;
	if (n > 1)
		qsort_r(order, n, sizeof(*order), child_cmp, t.n);
	/* start[q]..start[q+1]: children of q in order[] */
	for (size_t q = 0, k = 0; q <= t.nn; q++) {
		while (k < n && t.n[order[k]].parent < q)
			k++;
		start[q] = (uint32_t)k;
	}
	for (size_t k = start[1]; k-- > start[0];)
		stack[sp++] = order[k];
	while (sp) {
		const struct tnode *x = &t.n[stack[--sp]];
		uint32_t id = (uint32_t)(x - t.n);
		if (sd_pct(x->incl, all) < o->min_percent || (keep && !keep[id]))
			continue;
		for (size_t k = start[id + 1]; k-- > start[id];)
			stack[sp++] = order[k];
		lines[nlines++] = (struct sd_tree_line){ x->depth - 1, x->name, x->incl, x->self };
	}
	err = sd_out_tree_rows(out, p, o, lines, nlines);
out:
	free(lines);
	free(order);
	free(start);
	free(stack);
	free(keep);
	tree_fini(&t);
	return err;
}
