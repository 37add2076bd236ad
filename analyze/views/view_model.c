/*
 * view_model.c: `sonde report --view model --region R --param n[,m...]`, a performance
 * model of one region's time as a function of the program's own parameters, the CCA
 * case study's table and Extra-P's models (model.c).
 *
 * The program annotates its parameters around the region (sonde_set_int("n", n), then
 * sonde_region_begin("R")); the streams' region timings (SONDE_REGIONS=on) are grouped
 * by the values of the parameters found above R in each path (so under any iteration or
 * phase), over every thread and process. One row per combination of values: calls,
 * mean and stddev of R's inclusive time, the model's prediction and its error. Then the
 * model: its formula, R^2 and the cross-validated error that chose it. Calls of R with a
 * parameter missing or not a number are left out, and said.
 */
#include "analyze/views/views.h"
#include "common/common.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct point { double x[SD_MODEL_MAXPARAMS]; uint64_t calls; double incl, sumsq, min; };

static int point_cmp(const void *a, const void *b)
{
	const struct point *p = a, *q = b;
	for (size_t d = 0; d < SD_MODEL_MAXPARAMS; d++)
		if (p->x[d] != q->x[d])
			return p->x[d] < q->x[d] ? -1 : 1;
	return 0;
}

/* Is merged context node c the region: R is "NAME" (attribute region) or "ATTR=VALUE". */
static int is_region(const struct sd_profile *p, uint32_t c, const char *r)
{
	const char *eq = strchr(r, '=');
	const char *attr = eq ? r : "region", *value = eq ? eq + 1 : r;
	size_t alen = eq ? (size_t)(eq - r) : strlen("region");
	const char *a = p->attr_names[p->ctx[c].attr];
	return strlen(a) == alen && !strncmp(a, attr, alen) &&
	       !strcmp(p->value_strs[p->ctx[c].value], value);
}

/* The parameters' values above node c: 0, or -1 when one is missing or not a number. */
static int params_of(const struct sd_profile *p, const struct sd_report_opts *o, uint32_t c,
		     double *x)
{
	for (size_t d = 0; d < o->nparams; d++) {
		uint32_t y = p->ctx[c].parent;
		while (y && strcmp(p->attr_names[p->ctx[y].attr], o->params[d]))
			y = p->ctx[y].parent;
		char *end;
		if (!y)
			return -1;
		x[d] = strtod(p->value_strs[p->ctx[y].value], &end);
		if (end == p->value_strs[p->ctx[y].value] || *end || !isfinite(x[d]))
			return -1;
	}
	return 0;
}

/* The points (one per combination of values, sorted), and the calls left out. */
static int collect(const struct sd_profile *p, const struct sd_report_opts *o,
		   struct point **pts, size_t *n, uint64_t *left_out, uint64_t *found)
{
	struct point *v = calloc(p->nregions + 1, sizeof(*v));
	size_t k = 0;
	if (!v)
		return -ENOMEM;
	*left_out = *found = 0;
	for (size_t i = 0; i < p->nregions; i++) {
		const struct sd_region_row *g = &p->regions[i];
		struct point q;
		memset(&q, 0, sizeof(q));
		if (!g->calls || !is_region(p, g->ctx, o->region))
			continue;
		*found += g->calls;
		if (params_of(p, o, g->ctx, q.x)) {
			*left_out += g->calls;
			continue;
		}
		size_t j = 0;
		while (j < k && point_cmp(&v[j], &q))
			j++;
		if (j == k) {
			q.min = (double)g->min_ns;
			v[k++] = q;
		}
		if ((double)g->min_ns < v[j].min)
			v[j].min = (double)g->min_ns;
		v[j].calls += g->calls;
		v[j].incl += (double)g->incl_ns;
		v[j].sumsq += g->sumsq;
	}
	qsort(v, k, sizeof(*v), point_cmp);
	*pts = v;
	*n = k;
	return 0;
}

static int say_why_not(const struct sd_report_opts *o, uint64_t found, uint64_t left_out,
		       size_t n)
{
	if (!found)
		return sd_error(SD_EXIT_BADINPUT, "report: --view model: no calls of %s%s in the "
				"streams (check --region: a region NAME, or ATTR=VALUE)",
				strchr(o->region, '=') ? "" : "region=", o->region);
	return sd_error(SD_EXIT_BADINPUT, "report: --view model: %s has %zu distinct value%s of "
			"--param (%" PRIu64 " of its %" PRIu64 " calls had every parameter set above "
			"it); a model needs at least 3 (run more sizes, or check --param)", o->region,
			n, n == 1 ? "" : "s", found - left_out, found);
}

/* The model fitted to a region's points, and what its printing says about them. */
struct fitted {
	struct sd_model m;
	size_t n;                 /* points: distinct combinations of values */
	uint64_t found, left_out; /* calls of the region; those without every parameter */
	char formula[512];
	const char *fit;          /* good, fair or poor */
};

/* The table's columns: the parameters, then calls, times and the model's error (the
 * caller frees them), or NULL. */
static struct sd_col *model_cols(const struct sd_report_opts *o)
{
	size_t np = o->nparams;
	struct sd_col *cols = calloc(np + 6, sizeof(*cols));
	if (!cols)
		return NULL;
	for (size_t d = 0; d < np; d++)
		cols[d] = (struct sd_col){ .name = o->params[d], .width = 8, .group = "params" };
	cols[np] = (struct sd_col){ .name = "calls", .width = 8 };
	cols[np + 1] = (struct sd_col){ .name = "mean_ms", .width = 12 };
	cols[np + 2] = (struct sd_col){ .name = "stddev_ms", .width = 12 };
	cols[np + 3] = (struct sd_col){ .name = "min_ms", .width = 12 };
	cols[np + 4] = (struct sd_col){ .name = "model_ms", .width = 12 };
	cols[np + 5] = (struct sd_col){ .name = "error_pct", .width = 9 };
	return cols;
}

/* A row per point: its values, calls and times, the model's prediction for its values
 * (x) and the error against what was fitted (y). */
static void add_rows(struct sd_table *t, const struct sd_report_opts *o,
		     const struct point *pts, const double *x, const double *y,
		     const struct fitted *f)
{
	size_t np = o->nparams;
	for (size_t i = 0; i < f->n; i++) {
		const struct point *q = &pts[i];
		double mean = q->incl / (double)q->calls;
		double pred = sd_model_eval(&f->m, x + i * np);
		for (size_t d = 0; d < np; d++)
			sd_table_num(t, "%.15g", q->x[d]);
		sd_table_u64(t, q->calls);
		sd_table_num(t, "%.6f", mean / 1e6);
		sd_table_num(t, "%.6f", sd_stddev(q->calls, q->incl, q->sumsq) / 1e6);
		sd_table_num(t, "%.6f", q->min / 1e6);
		sd_table_num(t, "%.6f", pred / 1e6);
		sd_table_num(t, "%.2f", y[i] > 0 ? 100 * (pred - y[i]) / y[i] : 0);
	}
}

/* Before the rows: in text, a line of what is modelled over what; in JSON, the model's
 * keys. */
static void print_head(FILE *out, const struct sd_report_opts *o, const struct fitted *f)
{
	if (o->format == SD_FMT_TEXT) {
		fprintf(out, "model of %s%s over %s", strchr(o->region, '=') ? "" : "region=",
			o->region, o->params[0]);
		for (size_t d = 1; d < o->nparams; d++)
			fprintf(out, ", %s", o->params[d]);
		fprintf(out, " (%zu values, %" PRIu64 " calls; the model is of the %s time per call)\n",
			f->n, f->found - f->left_out, o->fit_min ? "shortest" : "mean");
	} else if (o->format == SD_FMT_JSON) {
		sd_json_open(out, o);
		fputs("\"region\":", out);
		sd_json_str(out, o->region, strlen(o->region));
		fputs(",\"model\":", out);
		sd_json_str(out, f->formula, strlen(f->formula));
		fprintf(out, ",\"of\":\"%s\",\"r2\":%.6f,\"cv_smape_pct\":%.3f,\"fit\":\"%s\","
			"\"left_out_calls\":%" PRIu64 ",", o->fit_min ? "min" : "mean", f->m.r2,
			f->m.cv_smape, f->fit, f->left_out);
	}
}

/* After the rows: in text, the model and how well it fits; the calls left out (on
 * stderr but in text). */
static void print_tail(FILE *out, const struct sd_report_opts *o, const struct fitted *f)
{
	if (o->format == SD_FMT_TEXT) {
		fprintf(out, "model: t = %s\n", f->formula);
		fprintf(out, "fit: R^2 %.4f, leave-one-out error %.2f %% (%s)%s\n", f->m.r2,
			f->m.cv_smape, f->fit, strcmp(f->fit, "good") ? ": the means do not follow "
			"one model of the normal form closely (noise: see stddev_ms; or too few "
			"sizes); do not extrapolate" : "");
	}
#define LEFT_OUT "%" PRIu64 " calls of %s left out: a parameter was not set above them, or " \
	"not a number"
	if (f->left_out && o->format == SD_FMT_TEXT)
		fprintf(out, LEFT_OUT "\n", f->left_out, o->region);
	else if (f->left_out)
		sd_msg("sonde: " LEFT_OUT, f->left_out, o->region);
#undef LEFT_OUT
}

int sd_out_model(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	struct point *pts = NULL;
	size_t np = o->nparams;
	struct fitted f = { .n = 0 };
	int err = collect(p, o, &pts, &f.n, &f.left_out, &f.found);
	if (err)
		return err;
	size_t n = f.n;
	double *x = malloc((n + 1) * np * sizeof(*x)), *y = malloc((n + 1) * sizeof(*y));
	if (!x || !y) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(x + i * np, pts[i].x, np * sizeof(*x));
		y[i] = o->fit_min ? pts[i].min : pts[i].incl / (double)pts[i].calls;
	}
	if (n < 3 || sd_model_fit(x, y, n, np, &f.m) != 0) {
		err = say_why_not(o, f.found, f.left_out, n);
		goto out;
	}
	err = -ENOMEM;
	struct sd_col *cols = model_cols(o);
	struct sd_table *t = cols ? sd_table_new(o, cols, np + 6) : NULL;
	if (!t) {
		free(cols);
		goto out;
	}
	add_rows(t, o, pts, x, y, &f);
	sd_model_text(f.formula, sizeof(f.formula), &f.m, o->params, "ms", 1e-6);
	/* good: explains the points and predicts each from the others within 10 % */
	f.fit = f.m.r2 >= 0.95 && f.m.cv_smape <= 10 ? "good"
	      : f.m.r2 >= 0.8 && f.m.cv_smape <= 25 ? "fair" : "poor";
	print_head(out, o, &f);
	err = sd_table_print_view(out, t, "values", 1);
	print_tail(out, o, &f);
	sd_table_free(t);
	free(cols);
out:
	free(pts);
	free(x);
	free(y);
	return err;
}
