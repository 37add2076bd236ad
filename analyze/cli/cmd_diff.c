/*
 * cmd_diff.c: `sonde diff [OPTIONS] A B`: two profiles side by side. A and B are each a
 * stream file or a directory of streams (as `sonde report` reads a PATH); each side is
 * loaded into its own profile, with the same --where filters, --source and --metric, and
 * aggregated into flat rows: per function (its self value, as the flat view) or per
 * combination of the --group-by keys (as the group-by view). Rows are matched by name
 * (a function by its name and module) and compared by share, so that runs of different
 * lengths compare: delta = b_pct - a_pct (percentage points), ratio = b_pct / a_pct
 * (inf when the row is absent from A). With --absolute, delta = b - a and ratio = b / a
 * of the values themselves. Sorted by |delta| (descending), then by name.
 *
 * Columns and formats: docs/REPORT.md; the rows print through table.c. Runs in the CLI's only thread (loading may use
 * --jobs threads, load.c). Exit codes as `sonde report`.
 */
#include "analyze/cli/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: sonde diff [--format text|csv|json] [--format svg [-o FILE]]\n"
	"                  [--metric periods|samples|weight|COUNTER]\n"
	"                  [--group-by KEY[,KEY...]] [--where FILTER]... [--top N]\n"
	"                  [--source NAME] [--jobs N] [--strict] [--progress] [--addresses]\n"
	"                  [--[no-]short-names] [--absolute] A B\n"
	"A, B: a stream file or a directory of streams (as for 'sonde report')\n"
	"rows: per function (self) or per --group-by combination; a_pct, b_pct: share of\n"
	"each side's total; delta = b_pct - a_pct; ratio = b_pct / a_pct; sorted by |delta|;\n"
	"--absolute: delta = b - a, ratio = b / a (the metric's values, for runs of equal length)";

static const char see[] = "see 'sonde diff --help'";

struct side {
	struct sd_profile p;
	struct sd_report_opts o;
	struct sd_filters filters;
	const char *path;
	double total;
};

struct drow { char *key; size_t klen; const char *disp; double v[2], delta, sortkey; };

struct table { struct drow *rows; size_t n, cap; struct sd_strmap map; };

static int table_add(struct table *t, const void *key, size_t klen, const char *disp, int side,
		     double v)
{
	uint32_t i;

	if (!sd_strmap_get(&t->map, key, klen, &i)) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct drow *nr = realloc(t->rows, cap * sizeof(*nr));
			if (!nr)
				return -ENOMEM;
			t->rows = nr;
			t->cap = cap;
		}
		i = (uint32_t)t->n;
		struct drow *r = &t->rows[i];
		*r = (struct drow){ malloc(klen + 1), klen, disp, { 0, 0 }, 0, 0 };
		if (!r->key || sd_strmap_put(&t->map, key, klen, i)) {
			free(r->key);
			return -ENOMEM;
		}
		memcpy(r->key, key, klen);
		r->key[klen] = 0;
		t->n++;
	}
	t->rows[i].v[side] += v;
	if (!t->rows[i].disp)
		t->rows[i].disp = disp;
	return 0;
}

/* Load one side: 0 (SD_EXIT_OK), said, or -ENOMEM. */
static int load_side(const struct sd_cli *c, struct side *s)
{
	char *one[1] = { (char *)s->path };
	int code = sd_cli_load(c, one, 1, s->path, &s->p, &s->filters);
	if (code == SD_EXIT_OK)
		code = sd_cli_resolve(c, s->path, &s->p, &s->filters, &s->o);
	if (code == SD_EXIT_OK)
		code = sd_cli_counter_by_code(c, &s->o);
	if (code == SD_EXIT_OK && sd_sym_finish(s->p.sym))
		code = -ENOMEM;
	s->total = sd_metric_total(&s->p, &s->o);
	return code;
}

/* Add side k's rows to t: per function (self) or per group. */
static int side_rows(struct table *t, struct side *s, int k)
{
	int err = -ENOMEM;

	if (s->o.ngroup) {
		struct sd_grouper *g = sd_grouper_new(&s->p, s->o.group_by, s->o.ngroup, 0);
		if (!g)
			return -ENOMEM;
		err = 0;
		for (size_t i = 0; i < s->p.nrows && !err; i++) {
			const char *key;
			size_t len;
			err = sd_grouper_key(g, &s->p.rows[i], &key, &len);
			if (!err)
				err = table_add(t, key, len, NULL, k, sd_metric_row(&s->o, &s->p.rows[i]));
		}
		sd_grouper_free(g);
		return err;
	}
	double *nv = sd_node_values(&s->p, &s->o);
	char *key = NULL;
	size_t cap = 0;
	if (!nv)
		return -ENOMEM;
	for (size_t i = 1; i < s->p.nnodes; i++) {
		if (nv[i] == 0)
			continue;
		const struct sd_func *f = sd_sym_func(s->p.sym, s->p.nodes[i].func);
		size_t ln = strlen(f->name), lm = strlen(f->module);
		if (ln + lm + 2 > cap) {
			char *nk = realloc(key, cap = ln + lm + 64);
			if (!nk)
				goto out;
			key = nk;
		}
		memcpy(key, f->name, ln + 1); /* name \0 module: two modules, two rows */
		memcpy(key + ln + 1, f->module, lm);
		if (table_add(t, key, ln + 1 + lm, f->display, k, nv[i]))
			goto out;
	}
	err = 0;
out:
	free(key);
	free(nv);
	return err;
}

static int drow_cmp(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	if (x->sortkey != y->sortkey)
		return x->sortkey > y->sortkey ? -1 : 1;
	return sd_natcmp_keys(x->key, x->klen, y->key, y->klen);
}

/* The values of a row, one per column (a function: its display name). */
static const char *col_value(const struct drow *r, size_t k, const char **next)
{
	const char *v = r->key;

	if (r->disp) {
		*next = NULL;
		return r->disp;
	}
	for (size_t i = 0; i < k; i++)
		v += strlen(v) + 1;
	*next = v;
	return v;
}

/* Values joined by "  " into *b (grown as needed): text shows the keys of a row in one
 * unaligned column. NULL on ENOMEM. */
static const char *joined(const char *const *v, size_t n, char **b, size_t *cap)
{
	size_t len = 1;

	for (size_t k = 0; k < n; k++)
		len += strlen(v[k]) + 2;
	char *nb = len > *cap ? realloc(*b, len) : *b;
	if (!nb)
		return NULL;
	*b = nb, *cap = len > *cap ? len : *cap;
	*nb = 0;
	for (size_t k = 0; k < n; k++) /* a few keys: strcat is fine */
		strcat(strcat(nb, k ? "  " : ""), v[k]);
	return nb;
}

/* delta: percentage points, or with --absolute in the metric's unit (as sd_table_metric);
 * text shows its sign */
static void delta_cell(struct sd_table *t, const struct sd_report_opts *o, int absolute,
		       double d)
{
	int text = o->format == SD_FMT_TEXT;

	if (!absolute)
		sd_table_num(t, text ? "%+.2f" : "%.2f", d);
	else if (o->weight && !o->counter && !o->weight_unit)
		sd_table_num(t, text ? "%+.3f" : "%.3f", d / 1e6);
	else
		sd_table_num(t, text ? "%+.0f" : "%.0f", d);
}

/* The printf widths of the text the columns replaced: fixed, a long value pushes its row. */
static const struct sd_col num_cols[6] = {
	{ .name = "a", .width = 12, .fixed = 1 },
	{ .name = "a_pct", .text = "a%", .width = 8, .gap = " ", .fixed = 1 },
	{ .name = "b", .width = 12, .gap = " ", .fixed = 1 },
	{ .name = "b_pct", .text = "b%", .width = 8, .gap = " ", .fixed = 1 },
	{ .name = "delta", .width = 9, .gap = " ", .fixed = 1 },
	{ .name = "ratio", .width = 9, .gap = " ", .fixed = 1 },
};

/* The rows: the key values (the function or the --group-by keys) first in csv, as one
 * "values" array in json, last in text and unaligned. Both sides' metrics are in one unit
 * (sd_cmd_diff refused different weight units), so sd[0].o formats both. 0 or -ENOMEM. */
static int print_rows(FILE *out, const struct side *sd, const struct table *dt, size_t n,
		      int absolute, const char *const *keys, size_t nk)
{
	const struct sd_report_opts *o = &sd[0].o;
	struct sd_col *cols = calloc(nk + 7, sizeof(*cols));
	const char **v = malloc(nk * sizeof(*v)), *nx, *head;
	char *hb = NULL, *b = NULL;
	size_t hcap = 0, cap = 0;
	struct sd_table *t = NULL;
	int err = -ENOMEM;

	if (!cols || !v || !(head = joined(keys, nk, &hb, &hcap)))
		goto out;
	for (size_t k = 0; k < nk; k++)
		cols[k] = (struct sd_col){ .name = keys[k], .in = SD_IN_CSV | SD_IN_JSON,
					   .group = "values" };
	memcpy(cols + nk, num_cols, sizeof(num_cols));
	cols[nk + 6] = (struct sd_col){ .name = "keys", .text = head, .in = SD_IN_TEXT, .left = 1 };
	if (!(t = sd_table_new(o, cols, nk + 7)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct drow *r = &dt->rows[i];
		double ap = sd_pct(r->v[0], sd[0].total), bp = sd_pct(r->v[1], sd[1].total);
		double a = absolute ? r->v[0] : ap, bv = absolute ? r->v[1] : bp;
		for (size_t k = 0; k < nk; k++)
			sd_table_str(t, v[k] = col_value(r, k, &nx));
		sd_table_metric(t, r->v[0]);
		sd_table_pct(t, ap);
		sd_table_metric(t, r->v[1]);
		sd_table_pct(t, bp);
		delta_cell(t, o, absolute, r->delta);
		if (a > 0)
			sd_table_num(t, "%.3f", bv / a);
		else if (o->format == SD_FMT_JSON)
			sd_table_null(t);
		else
			sd_table_num(t, "inf");
		if (o->format != SD_FMT_TEXT)
			sd_table_str(t, "");
		else if (joined(v, nk, &b, &cap))
			sd_table_str(t, b);
		else
			goto out;
	}
	err = sd_table_print(out, t, 0, "rows");
out:
	sd_table_free(t);
	free(cols);
	free(v);
	free(hb);
	free(b);
	return err;
}

/* The sides above the rows (text: each one's path and total; json: the same, the metric
 * and the keys), the rows, and json's closing brace. 0 or -ENOMEM. */
static int print(FILE *out, const struct side *sd, const struct table *t, size_t n,
		 int absolute)
{
	const struct sd_report_opts *o = &sd[0].o;
	size_t nk = o->ngroup ? o->ngroup : 1;
	const char *const fn[] = { "function" };
	const char *const *keys = o->ngroup ? (const char *const *)o->group_by : fn;
	const char *metric = sd_metric_name(o);

	if (o->format == SD_FMT_TEXT) {
		for (size_t s = 0; s < 2; s++) {
			fprintf(out, "%s: %s: ", s ? "b" : "a", sd[s].path);
			sd_metric_put(out, &sd[s].o, sd[s].total, 0);
			fprintf(out, " %s\n", o->counter || !o->weight ? sd_metric_name(o)
					      : o->weight_unit ? o->weight_unit : "ms");
		}
		putc('\n', out);
	} else if (o->format == SD_FMT_JSON) {
		fputs("{\"metric\":", out);
		sd_json_str(out, metric, strlen(metric));
		for (size_t s = 0; s < 2; s++) {
			fprintf(out, ",\"%s\":{\"path\":", s ? "b" : "a");
			sd_json_str(out, sd[s].path, strlen(sd[s].path));
			fputs(",\"total\":", out);
			sd_metric_put(out, &sd[s].o, sd[s].total, 0);
			putc('}', out);
		}
		fputs(",\"keys\":[", out);
		for (size_t k = 0; k < nk; k++) {
			if (k)
				putc(',', out);
			sd_json_str(out, keys[k], strlen(keys[k]));
		}
		fputs("],", out);
	}
	int err = print_rows(out, sd, t, n, absolute, keys, nk);
	if (o->format == SD_FMT_JSON)
		fputs("}\n", out);
	return err;
}

/* --format svg draws B's call paths, all of them; -o goes with it only. */
static int check_svg(const struct sd_cli *c)
{
	if (c->o.output && strcmp(c->o.output, "-") && c->o.format != SD_FMT_SVG)
		return sd_error(SD_EXIT_USAGE, "diff: -o FILE: only --format svg writes a file (add "
				"--format svg, or leave -o out)");
	if (c->o.format == SD_FMT_SVG && (c->o.ngroup || c->o.top))
		return sd_error(SD_EXIT_USAGE, "diff: --format svg draws every call path of B "
				"(leave --group-by and --top out)");
	return 0;
}

int sd_cmd_diff(int argc, char **argv)
{
	struct sd_cli c = { 0 };
	struct side sd[2] = { 0 };
	struct table t = { 0 };
	int code = sd_cli_parse(&c, SD_CLI_DIFF, usage, argc, argv);

	if (code != SD_EXIT_OK || c.help)
		goto out;
	if (c.npaths != 2) {
		code = sd_error(SD_EXIT_USAGE, "diff: give two PATHs, A and B (%s)", see);
		goto out;
	}
	if ((code = check_svg(&c)))
		goto out;
	for (int s = 0; s < 2; s++) {
		sd[s].path = c.paths[s];
		sd[s].o = c.o; /* each side resolves its metric */
		code = load_side(&c, &sd[s]);
		if (code != SD_EXIT_OK)
			goto out;
	}
	if (c.o.weight && (sd[0].o.weight_unit || sd[1].o.weight_unit) &&
	    (!sd[0].o.weight_unit || !sd[1].o.weight_unit ||
	     strcmp(sd[0].o.weight_unit, sd[1].o.weight_unit))) {
		code = sd_error(SD_EXIT_USAGE, "diff: --metric weight: A and B count in different "
				"units (pick one source with --source NAME)");
		goto out;
	}
	if (c.o.format == SD_FMT_SVG) {
		/* -o -: standard output, as without -o */
		const char *out_file = c.o.output && strcmp(c.o.output, "-") ? c.o.output : NULL;
		int err = sd_out_svg_diff(&sd[0].p, &sd[0].o, sd[0].path, &sd[1].p, &sd[1].o,
					  sd[1].path, c.absolute, out_file);
		code = err;
		if (!err && !out_file && (fflush(stdout) || ferror(stdout)))
			code = sd_error(SD_EXIT_IO, "diff: stdout: %s", strerror(errno));
		goto out;
	}
	code = -ENOMEM;
	for (int s = 0; s < 2; s++)
		if (side_rows(&t, &sd[s], s))
			goto out;
	for (size_t i = 0; i < t.n; i++)
		t.rows[i].delta = c.absolute ? t.rows[i].v[1] - t.rows[i].v[0]
			: sd_pct(t.rows[i].v[1], sd[1].total) - sd_pct(t.rows[i].v[0], sd[0].total);
	for (size_t i = 0; i < t.n; i++) /* shares: |delta| as printed, equal ones by name */
		t.rows[i].sortkey = c.absolute ? fabs(t.rows[i].delta)
					       : fabs(round(t.rows[i].delta * 100) / 100);
	if (t.n > 1)
		qsort(t.rows, t.n, sizeof(*t.rows), drow_cmp);
	if (print(stdout, sd, &t, c.o.top && c.o.top < t.n ? c.o.top : t.n, c.absolute))
		goto out; /* -ENOMEM */
	code = SD_EXIT_OK;
	if (fflush(stdout) || ferror(stdout))
		code = sd_error(SD_EXIT_IO, "diff: stdout: %s", strerror(errno));
out:
	for (int s = 0; s < 2; s++) {
		sd_metric_fini(&sd[s].o);
		sd_filters_fini(&sd[s].filters);
		if (sd[s].p.sym)
			sd_profile_fini(&sd[s].p);
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.rows[i].key);
	free(t.rows);
	sd_strmap_fini(&t.map);
	sd_cli_fini(&c);
	return code;
}
