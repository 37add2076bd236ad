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
 * Columns and formats: docs/REPORT.md. Runs in the CLI's only thread (loading may use
 * --jobs threads, load.c). Exit codes as `sonde report`.
 */
#include "analyze/analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: sonde diff [--format text|csv|json] [--metric samples|weight|COUNTER]\n"
	"                  [--group-by KEY[,KEY...]] [--where FILTER]... [--top N]\n"
	"                  [--source NAME] [--jobs N] [--strict] [--addresses] [--absolute] A B\n"
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

/* Load one side: 0 (SD_EXIT_OK) or an exit code after printing why; -ENOMEM. */
static int load_side(const struct sd_cli *c, struct side *s)
{
	char *one[1] = { (char *)s->path };
	int code = sd_cli_load(c, one, 1, s->path, &s->p, &s->filters);
	if (code == SD_EXIT_OK)
		code = sd_cli_resolve(c, s->path, &s->p, &s->filters, &s->o);
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
		struct sd_grouper *g = sd_grouper_new(&s->p, s->o.group_by, s->o.ngroup);
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
	size_t l = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, l);
	return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
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

/* absolute (--absolute): delta and ratio of the values, not of the shares */
static void put_ratio(FILE *out, int absolute, const struct drow *r, double a_pct, double b_pct,
		      int json, int width)
{
	double a = absolute ? r->v[0] : a_pct, b = absolute ? r->v[1] : b_pct;

	if (a > 0)
		fprintf(out, "%*.3f", width, b / a);
	else
		fprintf(out, "%*s", width, json ? "null" : "inf");
}

/* delta: percentage points, or with --absolute in the metric's unit */
static void put_delta(FILE *out, int absolute, const struct sd_report_opts *o,
		      const struct drow *r, int width)
{
	if (!absolute) {
		if (width)
			fprintf(out, "%+*.2f", width, r->delta);
		else
			fprintf(out, "%.2f", r->delta);
		return;
	}
	if (width && r->delta >= 0) {
		char b[64];
		FILE *m = fmemopen(b, sizeof(b), "w");
		if (m) {
			putc('+', m);
			sd_metric_put(m, o, r->delta, 0);
			fclose(m);
			fprintf(out, "%*s", width, b);
			return;
		}
	}
	sd_metric_put(out, o, r->delta, width);
}

static void print(FILE *out, struct side *sd, struct table *t, size_t n, enum sd_format fmt,
		  int absolute)
{
	const struct sd_report_opts *o = &sd[0].o;
	size_t nk = o->ngroup ? o->ngroup : 1;
	const char *const fn[] = { "function" };
	char *const *keys = o->ngroup ? o->group_by : (char *const *)fn;
	const char *metric = o->counter ? o->counter : o->weight ? "weight" : "samples";
	const char *nx;

	if (fmt == SD_FMT_TEXT) {
		for (size_t s = 0; s < 2; s++) {
			fprintf(out, "%s: %s: ", s ? "b" : "a", sd[s].path);
			sd_metric_put(out, &sd[s].o, sd[s].total, 0);
			fprintf(out, " %s\n", o->counter ? o->counter : !o->weight ? "samples"
					      : o->weight_unit ? o->weight_unit : "ms");
		}
		int mw = 12;
		fprintf(out, "\n%*s %8s %*s %8s %9s %9s", mw, "a", "a%", mw, "b", "b%", "delta", "ratio");
		for (size_t k = 0; k < nk; k++)
			fprintf(out, "  %s", keys[k]);
		putc('\n', out);
		for (size_t i = 0; i < n; i++) {
			const struct drow *r = &t->rows[i];
			double ap = sd_pct(r->v[0], sd[0].total), bp = sd_pct(r->v[1], sd[1].total);
			sd_metric_put(out, &sd[0].o, r->v[0], mw);
			fprintf(out, " %7.2f%% ", ap);
			sd_metric_put(out, &sd[1].o, r->v[1], mw);
			fprintf(out, " %7.2f%% ", bp);
			put_delta(out, absolute, o, r, 9);
			putc(' ', out);
			put_ratio(out, absolute, r, ap, bp, 0, 9);
			for (size_t k = 0; k < nk; k++)
				fprintf(out, "  %s", col_value(r, k, &nx));
			putc('\n', out);
		}
	} else if (fmt == SD_FMT_CSV) {
		for (size_t k = 0; k < nk; k++) {
			sd_csv_str(out, keys[k]);
			putc(',', out);
		}
		fputs("a,a_pct,b,b_pct,delta,ratio\n", out);
		for (size_t i = 0; i < n; i++) {
			const struct drow *r = &t->rows[i];
			double ap = sd_pct(r->v[0], sd[0].total), bp = sd_pct(r->v[1], sd[1].total);
			for (size_t k = 0; k < nk; k++) {
				sd_csv_str(out, col_value(r, k, &nx));
				putc(',', out);
			}
			sd_metric_put(out, &sd[0].o, r->v[0], 0);
			fprintf(out, ",%.2f,", ap);
			sd_metric_put(out, &sd[1].o, r->v[1], 0);
			fprintf(out, ",%.2f,", bp);
			put_delta(out, absolute, o, r, 0);
			putc(',', out);
			put_ratio(out, absolute, r, ap, bp, 0, 0);
			putc('\n', out);
		}
	} else {
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
		fputs("],\"rows\":[", out);
		for (size_t i = 0; i < n; i++) {
			const struct drow *r = &t->rows[i];
			double ap = sd_pct(r->v[0], sd[0].total), bp = sd_pct(r->v[1], sd[1].total);
			fputs(i ? ",\n{\"values\":[" : "\n{\"values\":[", out);
			for (size_t k = 0; k < nk; k++) {
				const char *v = col_value(r, k, &nx);
				if (k)
					putc(',', out);
				sd_json_str(out, v, strlen(v));
			}
			fputs("],\"a\":", out);
			sd_metric_put(out, &sd[0].o, r->v[0], 0);
			fprintf(out, ",\"a_pct\":%.2f,\"b\":", ap);
			sd_metric_put(out, &sd[1].o, r->v[1], 0);
			fprintf(out, ",\"b_pct\":%.2f,\"delta\":", bp);
			put_delta(out, absolute, o, r, 0);
			fputs(",\"ratio\":", out);
			put_ratio(out, absolute, r, ap, bp, 1, 0);
			putc('}', out);
		}
		fputs("]}\n", out);
	}
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
		fprintf(stderr, "sonde: diff: give two PATHs, A and B (%s)\n", see);
		code = SD_EXIT_USAGE;
		goto out;
	}
	for (int s = 0; s < 2; s++) {
		sd[s].path = c.paths[s];
		sd[s].o = (struct sd_report_opts){ .format = c.format, .weight = c.weight,
						   .counter = c.counter, .group_by = c.group_by,
						   .ngroup = c.ngroup };
		code = load_side(&c, &sd[s]);
		if (code != SD_EXIT_OK)
			goto out;
	}
	if (c.weight && (sd[0].o.weight_unit || sd[1].o.weight_unit) &&
	    (!sd[0].o.weight_unit || !sd[1].o.weight_unit ||
	     strcmp(sd[0].o.weight_unit, sd[1].o.weight_unit))) {
		fprintf(stderr, "sonde: diff: --metric weight: A and B count in different units "
			"(pick one source with --source NAME)\n");
		code = SD_EXIT_USAGE;
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
	print(stdout, sd, &t, c.top && c.top < t.n ? c.top : t.n, c.format, c.absolute);
	code = SD_EXIT_OK;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sonde: diff: stdout: %s\n", strerror(errno));
		code = SD_EXIT_IO;
	}
out:
	if (code == -ENOMEM) {
		fprintf(stderr, "sonde: diff: out of memory\n");
		code = SD_EXIT_IO;
	}
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
