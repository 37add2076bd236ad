/*
 * views.c: the annotation context views of `sonde report`, called by sd_output():
 *   --group-by KEY[,KEY...]  one row per distinct combination of the keys' values
 *   --view tree              merged tree: context values (attr=value) above call paths
 *
 * Input is the loaded profile: its sample rows (struct sd_crow, one per stream, thread,
 * source, context pair and call node, never one per sample) and the merged context
 * tree (the regions view is view_regions.c). --where filters were applied while loading. Output is
 * deterministic (every list sorted with a total order); columns and shapes are in
 * docs/REPORT.md and checked by tests/analyze. Each view declares its columns once and
 * prints its rows in all three formats through table.c (the tree's rows through
 * view_tree_fmt.c). Runs in the CLI's only thread.
 */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/* A growing byte buffer. */
struct buf { char *p; size_t n, cap; };

static int buf_add(struct buf *b, const char *s, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + len + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
	return 0;
}

static int buf_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

/* ---- group-by ---------------------------------------------------------------------- */

enum key_kind { K_ATTR, K_FUNCTION, K_THREAD, K_PROCESS, K_MODULE, K_SOURCE, K_FILE, K_LINE,
		K_RANK, K_HOST };
struct key { enum key_kind kind; uint32_t attr; int known; };
/* names of the built-in keys, indexed by enum key_kind */
static const char *const builtins[] = { "", "function", "thread", "process", "module",
					"source", "file", "line", "rank", "host", NULL };
struct group { char *key; size_t klen; double v; uint32_t id; /* before sorting */ };

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	double vx = x->v, vy = y->v;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return sd_natcmp_keys(x->key, x->klen, y->key, y->klen);
}

/* Append the value of key k for row r (then a NUL) to b. */
static int key_value(struct buf *b, const struct sd_profile *p, const struct key *k,
		     const struct sd_crow *r, int text)
{
	char tmp[64] = "";
	const char *s = tmp;
	uint32_t v;

	switch (k->kind) {
	case K_ATTR:
		s = k->known && sd_ctx_value(p, r->ctx, r->pctx, k->attr, &v) ? p->value_strs[v]
									    : "(none)";
		break;
	case K_FUNCTION:
		s = sd_sym_func(p->sym, p->nodes[r->cnode].func)->display;
		break;
	case K_MODULE:
		s = sd_sym_func(p->sym, p->nodes[r->cnode].func)->module;
		break;
	case K_SOURCE:
		s = r->thread_end ? "(none)" : p->sources[r->source].name; /* deltas of no sample */
		break;
	case K_FILE: /* the innermost frame's source (inlined code: the inlined function's) */
	case K_LINE:
		s = r->file ? sd_sym_file(p->sym, r->file) : "(unknown)";
		if (r->file && k->kind == K_LINE) {
			if (buf_str(b, s))
				return -ENOMEM;
			snprintf(tmp, sizeof(tmp), ":%" PRIu32, r->line);
			s = tmp;
		}
		break;
	case K_PROCESS: /* NAME[PID]: one row per process image (docs/REPORT.md) */
		if (r->stream < p->nsinfo && p->sinfo[r->stream].label)
			s = p->sinfo[r->stream].label;
		else
			snprintf(tmp, sizeof(tmp), "?[%" PRIu64 "]", r->pid);
		break;
	case K_RANK:
		if (r->rank >= 0)
			snprintf(tmp, sizeof(tmp), "%" PRId64, r->rank);
		else
			s = "(none)";
		break;
	case K_HOST:
		s = r->host < p->nvalue_strs ? p->value_strs[r->host] : "?";
		break;
	case K_THREAD:
		snprintf(tmp, sizeof(tmp), "%" PRIu64, r->tid);
		if (text) {
			if (buf_str(b, tmp) || buf_str(b, " (") || buf_str(b, r->tname) ||
			    buf_add(b, ")", 1))
				return -ENOMEM;
			b->n++; /* keep the NUL as separator */
			return 0;
		}
		break;
	}
	if (buf_str(b, s))
		return -ENOMEM;
	b->n++;
	return 0;
}

/* The grouped rows of --group-by, sorted, and what printing them needs. */
struct grouped {
	struct group *groups;
	size_t ngroups, n; /* n: printed (--top) */
	double all;        /* the metric's total */
	const char *metric;
	char mbuf[64];
	struct sd_stats *st; /* --stats: columns after the usual ones */
};

/* The --group-by names resolved: a built-in key, or an annotation attribute. */
static struct key *group_keys(const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct key *keys = calloc(o->ngroup, sizeof(*keys));
	for (size_t i = 0; keys && i < o->ngroup; i++) {
		keys[i].kind = K_ATTR;
		for (int k = 1; builtins[k]; k++)
			if (!strcmp(o->group_by[i], builtins[k]))
				keys[i].kind = (enum key_kind)k;
		if (keys[i].kind == K_ATTR) {
			uint32_t id;
			keys[i].known = sd_strmap_get(&p->attr_map, o->group_by[i],
						      strlen(o->group_by[i]), &id);
			keys[i].attr = id;
		}
	}
	return keys;
}

/* Every row's metric summed per combination of key values, into g->groups. */
static int group_rows(struct grouped *g, const struct sd_profile *p,
		      const struct sd_report_opts *o, const struct key *keys)
{
	struct sd_strmap map = { 0 };
	struct buf b = { 0 };
	size_t capgroups = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		uint32_t id;
		b.n = 0;
		for (size_t k = 0; k < o->ngroup; k++)
			if (key_value(&b, p, &keys[k], r, o->format == SD_FMT_TEXT))
				goto out;
		if (!sd_strmap_get(&map, b.p, b.n, &id)) {
			if (g->ngroups == capgroups) {
				size_t cap = capgroups ? capgroups * 2 : 64;
				struct group *ng = realloc(g->groups, cap * sizeof(*ng));
				if (!ng)
					goto out;
				g->groups = ng;
				capgroups = cap;
			}
			id = (uint32_t)g->ngroups;
			if (sd_strmap_put(&map, b.p, b.n, id) || !(g->groups[id].key = malloc(b.n)))
				goto out;
			memcpy(g->groups[id].key, b.p, b.n);
			g->groups[id].klen = b.n;
			g->groups[id].v = 0;
			g->groups[id].id = id;
			g->ngroups++;
		}
		g->groups[id].v += sd_metric_row(o, r);
		if (g->st && sd_stats_add(g->st, id, r, sd_metric_row(o, r)))
			goto out;
	}
	err = 0;
out:
	free(b.p);
	sd_strmap_fini(&map);
	return err;
}

/* One table for the three formats: the key columns (JSON: the "values" array), the
 * metric, its share and the --stats columns. Text shows the thread key as "TID (NAME)"
 * (key_value built the keys for o->format). */
static int print_group(FILE *out, const struct grouped *g, const struct sd_profile *p,
		       const struct sd_report_opts *o)
{
	size_t nc = o->ngroup;
	struct sd_col *cols = calloc(nc + 2 + SD_STATS_NCOLS, sizeof(*cols));
	struct sd_table *t = NULL;
	int err = -ENOMEM;

	if (!cols)
		return -ENOMEM;
	for (size_t k = 0; k < o->ngroup; k++)
		cols[k] = (struct sd_col){ .name = o->group_by[k], .left = 1, .group = "values" };
	cols[nc++] = (struct sd_col){ .name = g->metric, .width = 10 };
	cols[nc++] = (struct sd_col){ .name = "percent", .width = 8, .gap = " " };
	for (size_t i = 0; g->st && i < SD_STATS_NCOLS; i++)
		cols[nc++] = sd_stats_cols[i];
	if (!(t = sd_table_new(o, cols, nc)))
		goto out;
	for (size_t i = 0; i < g->n; i++) {
		const char *v = g->groups[i].key;
		for (size_t k = 0; k < o->ngroup; k++, v += strlen(v) + 1)
			sd_table_str(t, v);
		sd_table_metric(t, g->groups[i].v);
		sd_table_pct(t, sd_pct(g->groups[i].v, g->all));
		if (g->st)
			sd_stats_cells(t, g->st, o, g->groups[i].id);
	}
	if (o->format == SD_FMT_JSON) {
		sd_json_head(out, p, o, sd_metric_name(o));
		fputs(",\"group_by\":[", out);
		for (size_t k = 0; k < o->ngroup; k++) {
			if (k)
				putc(',', out);
			sd_json_str(out, o->group_by[k], strlen(o->group_by[k]));
		}
		fputs("],", out);
		if (g->st)
			sd_stats_json_key(out, g->st);
	}
	err = sd_table_print_view(out, t, "rows", 1);
out:
	sd_table_free(t);
	free(cols);
	return err;
}

int sd_out_group(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct grouped g = { .all = sd_metric_total(p, o) };
	struct key *keys = group_keys(p, o);
	int err = -ENOMEM;

	if (!keys || (o->stats && !(g.st = sd_stats_new(p, o->stats))) ||
	    group_rows(&g, p, o, keys))
		goto out;
	if (g.ngroups > 1)
		qsort(g.groups, g.ngroups, sizeof(*g.groups), group_cmp);
	g.n = o->top && o->top < g.ngroups ? o->top : g.ngroups;
	g.metric = o->counter ? o->counter : o->weight
		 ? sd_metric_col(o, "weight", g.mbuf, sizeof(g.mbuf)) : sd_metric_name(o);
	err = print_group(out, &g, p, o);
	if (!err && o->counter)
		sd_nocounters_warning(o->format == SD_FMT_TEXT ? out : stderr, p);
out:
	for (size_t i = 0; i < g.ngroups; i++)
		free(g.groups[i].key);
	free(g.groups);
	free(keys);
	sd_stats_free(g.st);
	return err;
}

/* The group-by keys of rows, for `sonde diff` and --stats (analyze.h). */
struct sd_grouper { const struct sd_profile *p; struct key *keys; size_t n; struct buf b; };

struct sd_grouper *sd_grouper_new(const struct sd_profile *p, char *const *names, size_t n)
{
	struct sd_grouper *g = calloc(1, sizeof(*g));

	if (!g || !(g->keys = calloc(n + 1, sizeof(*g->keys)))) {
		free(g);
		return NULL;
	}
	g->p = p;
	g->n = n;
	for (size_t i = 0; i < n; i++) {
		g->keys[i].kind = K_ATTR;
		for (int k = 1; builtins[k]; k++)
			if (!strcmp(names[i], builtins[k]))
				g->keys[i].kind = (enum key_kind)k;
		if (g->keys[i].kind == K_ATTR) {
			uint32_t id;
			g->keys[i].known = sd_strmap_get(&p->attr_map, names[i], strlen(names[i]), &id);
			g->keys[i].attr = id;
		}
	}
	return g;
}

int sd_grouper_key(struct sd_grouper *g, const struct sd_crow *r, const char **key, size_t *len)
{
	g->b.n = 0;
	for (size_t k = 0; k < g->n; k++)
		if (key_value(&g->b, g->p, &g->keys[k], r, 0))
			return -ENOMEM;
	*key = g->b.p ? g->b.p : "";
	*len = g->b.n;
	return 0;
}

void sd_grouper_free(struct sd_grouper *g)
{
	if (!g)
		return;
	free(g->keys);
	free(g->b.p);
	free(g);
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
		struct buf b = { 0 };
		if (n->kind == 0 ? buf_str(&b, sd_sym_func(p->sym, n->a)->display)
				 : buf_str(&b, p->attr_names[n->a]) || buf_add(&b, "=", 1) ||
				   buf_str(&b, p->value_strs[n->b])) {
			free(b.p);
			goto out;
		}
		n->name = b.p;
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

static const struct tnode *sort_nodes;

/* Children grouped by parent; within a parent by inclusive value desc, then name. */
static int child_cmp(const void *a, const void *b)
{
	const struct tnode *x = &sort_nodes[*(const uint32_t *)a];
	const struct tnode *y = &sort_nodes[*(const uint32_t *)b];

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

/* The tree's paths for the svg and pprof writers (top: --top, 0 for all). */
static struct sd_svg_src tree_src(const struct tree *t, const struct sd_profile *p, size_t top)
{
	return (struct sd_svg_src){ { (uint32_t)t->nn, top, t, tnode_parent, tnode_name,
				      tnode_self }, p, tnode_what, 0,
				    "tree (annotation levels as frames)" };
}

static int tree_svg(FILE *out, const struct tree *t, const struct sd_profile *p,
		    const struct sd_report_opts *o)
{
	struct sd_svg_src s = tree_src(t, p, o->top);
	return sd_svg_print(out, &s, o);
}

/* --format pprof: the file, and its line on stdout (or why it could not be written). */
static int tree_pprof(const struct tree *t, const struct sd_profile *p,
		      const struct sd_report_opts *o)
{
	struct sd_svg_src s = tree_src(t, p, 0);
	return sd_pprof_said(o->output, sd_out_pprof_tree(o->output, &s, o));
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
	if (o->format == SD_FMT_FOLDED || o->format == SD_FMT_SVG) {
		err = o->format == SD_FMT_SVG ? tree_svg(out, &t, p, o) : tree_folded(out, &t, o->top);
		goto out;
	}
	if (o->format == SD_FMT_PPROF) {
		err = tree_pprof(&t, p, o);
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
	sort_nodes = t.n;
	if (n > 1)
		qsort(order, n, sizeof(*order), child_cmp);
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
