/*
 * model.c: performance models of a region's time as a function of the program's
 * parameters (`sonde report --view model`), in the performance-model normal form
 * of Extra-P (Calotoiu et al., SC13):
 *
 *     t(n) = c0 + c1 * n^i * log2(n)^j
 *
 * with i from I = {0, 1/4, 1/3, 1/2, 2/3, 3/4, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3,
 * 5/2, 8/3, 11/4, 3} and j from J = {0, 1, 2} (i = j = 0 is the constant model). Each
 * hypothesis is fitted by least squares of the relative error on the measured means (one
 * point per parameter value, weights 1/t^2: a 10 us region at the smallest size counts
 * as much as a 10 s one at the largest, as the times span orders of magnitude) and the
 * hypotheses are compared by leave-one-out cross-validation: each point
 * is predicted by the fit of the others, and the hypothesis with the smallest mean
 * relative error (SMAPE) wins, but a simpler term (no logarithm before one with it, then
 * the smaller exponent) within 10 % of the best error (plus 1 % of the constant model's)
 * is preferred: over a short range of sizes n and n^(3/4) log2(n)^2 are nearly one curve. With two or three parameters each gets its best single term, then the sum
 * c0 + c1 f1 + c2 f2 (+ ...) and the product c0 + c1 f1 f2 (...) are compared the same
 * way. R^2 of the chosen fit on all points says how well it explains them.
 *
 * Pure functions of their arguments (no I/O), for the model view and tests/unit.
 */
#include "analyze/util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double exps_i[] = { 0, 1.0 / 4, 1.0 / 3, 1.0 / 2, 2.0 / 3, 3.0 / 4, 1, 5.0 / 4,
				 4.0 / 3, 3.0 / 2, 5.0 / 3, 7.0 / 4, 2, 9.0 / 4, 7.0 / 3, 5.0 / 2,
				 8.0 / 3, 11.0 / 4, 3 };
static const char *const exps_i_text[] = { "0", "1/4", "1/3", "1/2", "2/3", "3/4", "1", "5/4",
					   "4/3", "3/2", "5/3", "7/4", "2", "9/4", "7/3", "5/2",
					   "8/3", "11/4", "3" };
#define NI (sizeof(exps_i) / sizeof(exps_i[0]))
#define NJ 3

static double model_term(const struct sd_term *t, double n)
{
	if (t->i == 0 && t->j == 0)
		return 1;
	double l = n > 1 ? log2(n) : 0;
	return pow(n, exps_i[t->i]) * (t->j == 1 ? l : t->j == 2 ? l * l : 1);
}

/* The value of the hypothesis' basis function k (0: the constant) at point p. */
static double basis(const struct sd_model *m, size_t k, const double *x)
{
	if (k == 0)
		return 1;
	if (m->product) {
		double v = 1;
		for (size_t d = 0; d < m->nparams; d++)
			v *= model_term(&m->terms[d], x[d]);
		return v;
	}
	return model_term(&m->terms[k - 1], x[k - 1]);
}

static size_t nbasis(const struct sd_model *m)
{
	return m->product ? 2 : 1 + m->nparams;
}

/* Least squares of y on the basis, points in [0, n) but `skip`: coefficients into m->c.
 * Solves the normal equations (at most 4 x 4) by Gaussian elimination with pivoting.
 * 0, or -1 when they are singular. */
static int fit(struct sd_model *m, const double *x, const double *y, size_t n, size_t skip)
{
	size_t nb = nbasis(m);
	double a[4][5] = { { 0 } };
	for (size_t p = 0; p < n; p++) {
		if (p == skip)
			continue;
		double b[4], w = y[p] != 0 ? 1 / (y[p] * y[p]) : 1;
		for (size_t k = 0; k < nb; k++)
			b[k] = basis(m, k, x + p * m->nparams);
		for (size_t r = 0; r < nb; r++) {
			for (size_t c = 0; c < nb; c++)
				a[r][c] += w * b[r] * b[c];
			a[r][nb] += w * b[r] * y[p];
		}
	}
	for (size_t col = 0; col < nb; col++) {
		size_t piv = col;
		for (size_t r = col + 1; r < nb; r++)
			if (fabs(a[r][col]) > fabs(a[piv][col]))
				piv = r;
		if (fabs(a[piv][col]) < 1e-300)
			return -1;
		if (piv != col)
			for (size_t c = 0; c <= nb; c++) {
				double t = a[col][c];
				a[col][c] = a[piv][c];
				a[piv][c] = t;
			}
		for (size_t r = 0; r < nb; r++) {
			if (r == col)
				continue;
			double f = a[r][col] / a[col][col];
			for (size_t c = col; c <= nb; c++)
				a[r][c] -= f * a[col][c];
		}
	}
	for (size_t k = 0; k < nb; k++)
		m->c[k] = a[k][nb] / a[k][k];
	return 0;
}

double sd_model_eval(const struct sd_model *m, const double *x)
{
	if (m->constant)
		return m->c[0];
	double v = 0;
	for (size_t k = 0; k < nbasis(m); k++)
		v += m->c[k] * basis(m, k, x);
	return v;
}

/* Leave-one-out SMAPE (percent) of hypothesis m over the points; HUGE_VAL if a fit fails. */
static double loo_error(struct sd_model *m, const double *x, const double *y, size_t n)
{
	double e = 0;
	for (size_t p = 0; p < n; p++) {
		if (fit(m, x, y, n, p) != 0)
			return HUGE_VAL;
		double pred = sd_model_eval(m, x + p * m->nparams);
		double den = fabs(pred) + fabs(y[p]);
		e += den > 0 ? 200 * fabs(pred - y[p]) / den : 0;
	}
	return e / (double)n;
}

/* Leave-one-out SMAPE (percent) of the constant model (each point predicted by the mean
 * of the others). */
static double loo_const(const double *y, size_t n)
{
	double sum = 0, e = 0;
	for (size_t p = 0; p < n; p++)
		sum += y[p];
	for (size_t p = 0; p < n; p++) {
		double pred = (sum - y[p]) / (double)(n - 1), den = fabs(pred) + fabs(y[p]);
		e += den > 0 ? 200 * fabs(pred - y[p]) / den : 0;
	}
	return e / (double)n;
}

/* Fits m on all points and fills r2 and the cross-validated error. */
static int finish(struct sd_model *m, const double *x, const double *y, size_t n)
{
	m->cv_smape = loo_error(m, x, y, n);
	if (fit(m, x, y, n, (size_t)-1) != 0)
		return -1;
	double mean = 0, ss_tot = 0, ss_res = 0;
	for (size_t p = 0; p < n; p++)
		mean += y[p] / (double)n;
	for (size_t p = 0; p < n; p++) {
		double d = y[p] - sd_model_eval(m, x + p * m->nparams);
		ss_res += d * d;
		ss_tot += (y[p] - mean) * (y[p] - mean);
	}
	m->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
	return 0;
}

/* Do points p and q have the same values of every parameter but d? */
static int same_others(const double *x, size_t nparams, size_t d, size_t p, size_t q)
{
	for (size_t k = 0; k < nparams; k++)
		if (k != d && x[p * nparams + k] != x[q * nparams + k])
			return 0;
	return 1;
}

/* The leave-one-out error of hypothesis m (NULL: the constant model) summed over the lines
 * of points (line[q]: the first point of q's line; all points as one line when no line
 * has 3 of them, nlines 0), each line's x of parameter d and y gathered in x1, y1. */
static double lines_error(struct sd_model *m, size_t d, size_t nparams, const double *x,
			  const double *y, size_t n, const size_t *line, size_t nlines, double *x1,
			  double *y1)
{
	double e = 0;
	for (size_t l = 0; l < n; l++) {
		size_t k = 0;
		for (size_t q = 0; q < n; q++)
			if (!nlines || line[q] == l)
				x1[k] = x[q * nparams + d], y1[k++] = y[q];
		if (k >= 3)
			e += m ? loo_error(m, x1, y1, k) : loo_const(y1, k);
		if (!nlines)
			break;
	}
	return e;
}

/* The best single term for parameter d: the lowest leave-one-out error over I x J, summed
 * over the lines of points where the other parameters are fixed (as Extra-P does for
 * several parameters; all points when no such line has 3 of them). */
static int best_term(size_t d, size_t nparams, const double *x, const double *y, size_t n,
		     struct sd_term *out, double *err)
{
	double *x1 = malloc(n * sizeof(*x1)), *y1 = malloc(n * sizeof(*y1));
	size_t *line = malloc(n * sizeof(*line)), nlines = 0;
	int ret = -ENOMEM;
	if (!x1 || !y1 || !line)
		goto out;
	for (size_t p = 0; p < n; p++) { /* line[p]: the first point of p's line */
		line[p] = p;
		for (size_t q = 0; q < p; q++)
			if (same_others(x, nparams, d, p, q)) {
				line[p] = line[q];
				break;
			}
	}
	for (size_t p = 0; p < n; p++) {
		size_t k = 0;
		for (size_t q = 0; q < n; q++)
			k += line[q] == p;
		nlines += k >= 3;
	}
	double errs[NI][NJ]; /* and the constant model's error on the same lines: */
	double flat = lines_error(NULL, d, nparams, x, y, n, line, nlines, x1, y1);
	*err = HUGE_VAL;
	*out = (struct sd_term){ 0, 0 };
	for (unsigned i = 0; i < NI; i++)
		for (unsigned j = 0; j < NJ; j++) {
			struct sd_model m = { .nparams = 1, .terms = { { i, j } } };
			errs[i][j] = HUGE_VAL;
			if (i == 0 && j == 0)
				continue; /* the constant: c0 alone, tried by the caller */
			double e = lines_error(&m, d, nparams, x, y, n, line, nlines, x1, y1);
			errs[i][j] = e;
			if (e < *err)
				*err = e;
		}
	/* The simplest term within 10 % of the best error, plus 1 % of the constant model's
	 * (how much the data varies at all): no log before a log, then the smaller exponent
	 * (over a short range n^(3/4) log2(n)^2 and n are nearly one curve; the data must
	 * clearly ask for the more complex one). */
	for (unsigned j = 0; j < NJ; j++)
		for (unsigned i = 0; i < NI; i++)
			if (errs[i][j] <= *err * 1.1 + 0.01 * flat) {
				*out = (struct sd_term){ i, j };
				*err = errs[i][j];
				goto chosen;
			}
chosen:
	ret = 0;
out:
	free(x1);
	free(y1);
	free(line);
	return ret;
}

int sd_model_fit(const double *x, const double *y, size_t n, size_t nparams,
		 struct sd_model *out)
{
	if (nparams < 1 || nparams > SD_MODEL_MAXPARAMS || n < 3)
		return -EINVAL;
	struct sd_model best = { .nparams = nparams, .constant = 1 };
	/* the constant model: c0 = mean, its error the leave-one-out of the mean; R^2 0,
	 * or 1 when every point is that mean */
	double sum = 0, ss = 0;
	for (size_t p = 0; p < n; p++)
		sum += y[p];
	for (size_t p = 0; p < n; p++)
		ss += (y[p] - sum / (double)n) * (y[p] - sum / (double)n);
	best.cv_smape = loo_const(y, n);
	best.c[0] = sum / (double)n;
	best.r2 = ss > 0 ? 0 : 1;
	struct sd_model m = { .nparams = nparams };
	for (size_t d = 0; d < nparams; d++) {
		double err;
		int r = best_term(d, nparams, x, y, n, &m.terms[d], &err);
		if (r)
			return r;
	}
	for (int product = 0; product <= (nparams > 1); product++) {
		m.product = product;
		if (n < nbasis(&m) + 1)
			continue; /* not enough points to cross-validate */
		struct sd_model h = m;
		if (finish(&h, x, y, n) == 0 && h.cv_smape < best.cv_smape - 1e-9)
			best = h;
	}
	*out = best;
	return 0;
}

/* "n^2", "n^(3/2) * log2(n)", "1". */
static size_t term_text(char *buf, size_t len, const struct sd_term *t, const char *name)
{
	const char *e = exps_i_text[t->i];
	size_t k = 0;
	if (t->i == 0 && t->j == 0)
		return (size_t)snprintf(buf, len, "1");
	if (t->i)
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, strchr(e, '/') ? "%s^(%s)"
						   : !strcmp(e, "1") ? "%s" : "%s^%s", name, e);
	if (t->j)
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%slog2(%s)%s",
				      t->i ? " * " : "", name, t->j == 2 ? "^2" : "");
	return k;
}

void sd_model_text(char *buf, size_t len, const struct sd_model *m, char *const *names,
		   const char *unit, double scale)
{
	size_t k = (size_t)snprintf(buf, len, "%.4g", m->c[0] * scale);
	if (m->constant) {
		snprintf(buf + k, k < len ? len - k : 0, " %s", unit);
		return;
	}
	size_t nb = nbasis(m);
	for (size_t b = 1; b < nb && k < len; b++) {
		double c = m->c[b] * scale;
		k += (size_t)snprintf(buf + k, len - k, " %s %.4g * ", c < 0 ? "-" : "+", fabs(c));
		for (size_t d = 0; d < m->nparams && k < len; d++) {
			if (m->product || d == b - 1) {
				if (m->product && d)
					k += (size_t)snprintf(buf + k, len - k, " * ");
				k += term_text(buf + k, len - k, &m->terms[d], names[d]);
			}
		}
	}
	if (k < len)
		snprintf(buf + k, len - k, " %s", unit);
}
