/*
 * view_callers.c: `sonde report --view callers NAME` and `--view callees NAME`, called by
 * sd_output() after sd_sym_finish().
 *
 * NAME is a function's display name (as in the flat view, "name [module]" when the name
 * is in two modules), else its plain name, which then takes every function of that name.
 * Over the merged call tree, every sample whose stack contains NAME counts once for
 * NAME's total; once for each distinct caller (the frame directly above an occurrence of
 * NAME; `[root]` when NAME is the outermost frame) and once for each distinct callee (the
 * frame directly below an occurrence), or for `[self]` when NAME is the innermost frame.
 * So with recursion a sample is counted at most once per row, and rows may add up to
 * more than NAME's total; without recursion callers add up to the total, and callees
 * plus self too. Percentages are of NAME's total.
 *
 * Cost: one walk up the path of each merged call node that has samples. Runs in the
 * CLI's only thread; output sorted (value desc, then name).
 */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct crow { const char *name, *module; double v; };

static int crow_cmp(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

/* The function's totals and its callers' (or callees') rows, sorted. */
struct sums {
	const struct crow *rows;
	size_t n;
	double total, self, all;
};

/* The rows as one table: text shows the name last (left-aligned), CSV and JSON first,
 * with the module last. */
static int print_rows(FILE *out, const struct sd_report_opts *o, const struct sums *sm,
		      const char *col, const char *metric)
{
	enum { TXT = SD_IN_TEXT, DATA = SD_IN_CSV | SD_IN_JSON };
	const struct sd_col cols[] = {
		{ .name = col, .in = DATA },
		{ .name = metric, .width = 10 },
		{ .name = "percent", .width = 8, .gap = " " },
		{ .name = col, .in = TXT, .left = 1 },
		{ .name = "module", .in = DATA },
	};
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));
	char key[16];
	int err;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < sm->n; i++) {
		const struct crow *r = &sm->rows[i];
		sd_table_str(t, r->name);
		sd_table_metric(t, r->v);
		sd_table_pct(t, sd_pct(r->v, sm->total));
		sd_table_str(t, r->name);
		sd_table_str(t, r->module);
	}
	if (o->format == SD_FMT_TEXT) {
		fprintf(out, "function %s: total ", o->func);
		sd_metric_put(out, o, sm->total, 0);
		fprintf(out, " (%.2f%% of all), self ", sd_pct(sm->total, sm->all));
		sd_metric_put(out, o, sm->self, 0);
		fprintf(out, " (%.2f%%)\n", sd_pct(sm->self, sm->all));
	} else if (o->format == SD_FMT_JSON) {
		sd_json_open(out, o);
		fputs("\"metric\":", out);
		sd_json_str(out, metric, strlen(metric));
		fputs(",\"function\":", out);
		sd_json_str(out, o->func, strlen(o->func));
		fputs(",\"total\":", out);
		sd_metric_put(out, o, sm->total, 0);
		fprintf(out, ",\"total_pct\":%.2f,\"self\":", sd_pct(sm->total, sm->all));
		sd_metric_put(out, o, sm->self, 0);
		fprintf(out, ",\"self_pct\":%.2f,", sd_pct(sm->self, sm->all));
	}
	snprintf(key, sizeof(key), "%ss", col);
	err = sd_table_print_view(out, t, key, 1);
	sd_table_free(t);
	return err;
}

int sd_out_callers(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	size_t nf = sd_sym_nfuncs(p->sym), nrows = 0;
	const size_t ROOT = nf, SELF = nf + 1;
	int callers = o->view == SD_VIEW_CALLERS, err = -ENOMEM, any = 0;
	unsigned char *target = calloc(nf + 2, 1);
	size_t *stamp = calloc(nf + 2, sizeof(*stamp));
	double *sum = calloc(nf + 2, sizeof(*sum)), *nv = sd_node_values(p, o);
	double total = 0, self = 0, all = sd_metric_total(p, o);
	struct crow *rows = NULL;
	char mbuf[64];

	if (!target || !stamp || !sum || !nv)
		goto out;
	for (int pass = 0; pass < 2 && !any; pass++)
		for (size_t f = 0; f < nf; f++) {
			const struct sd_func *fn = sd_sym_func(p->sym, (uint32_t)f);
			if (!strcmp(pass ? fn->name : fn->display, o->func))
				target[f] = 1, any = 1;
		}
	if (!any) {
		err = sd_error(SD_EXIT_USAGE, "report: --view %s %s: no function of that name in "
			       "these samples (give a name of the flat view)",
			       callers ? "callers" : "callees", o->func);
		goto out;
	}
	for (size_t i = 1; i < p->nnodes; i++) {
		double v = nv[i];
		int in = 0;
		if (v == 0)
			continue;
		/* x: frames from the innermost (i) outwards; below: the frame under x */
		for (uint32_t x = (uint32_t)i, below = 0; x; below = x, x = p->nodes[x].parent) {
			if (!target[p->nodes[x].func])
				continue;
			in = 1;
			uint32_t up = p->nodes[x].parent;
			size_t k = callers ? (up ? p->nodes[up].func : ROOT)
					   : (below ? p->nodes[below].func : SELF);
			if (stamp[k] != i) {
				stamp[k] = i;
				sum[k] += v;
			}
		}
		if (in)
			total += v;
		if (target[p->nodes[i].func])
			self += v;
	}
	if (!(rows = malloc((nf + 2) * sizeof(*rows))))
		goto out;
	for (size_t k = 0; k < nf + 2; k++) {
		if (sum[k] == 0)
			continue;
		const struct sd_func *fn = k < nf ? sd_sym_func(p->sym, (uint32_t)k) : NULL;
		rows[nrows++] = (struct crow){ fn ? fn->display : k == ROOT ? "[root]" : "[self]",
					       fn ? fn->module : "", sum[k] };
	}
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), crow_cmp);
	size_t n = o->top && o->top < nrows ? o->top : nrows;
	const char *col = callers ? "caller" : "callee";
	const char *metric = o->counter ? o->counter : o->weight
			   ? sd_metric_col(o, "weight", mbuf, sizeof(mbuf)) : sd_metric_name(o);
	err = print_rows(out, o, &(struct sums){ rows, n, total, self, all }, col, metric);
out:
	free(target), free(stamp), free(sum), free(nv), free(rows);
	return err;
}
