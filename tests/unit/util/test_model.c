/* test_model.c - the performance-model fitting of analyze/util/model.c on exact data:
 * each law of the normal form it should find comes back with its term and
 * coefficients, a constant is found as one, two parameters as a product or a
 * sum, and too few points are refused. */
#include <math.h>
#include <string.h>

#include "analyze/analyze.h"
#include "tests/unit/unit.h"

static const double ns[] = { 512, 1024, 2048, 4096, 8192, 16384 };
#define N 6

static void one(double (*f)(double), unsigned want_i, unsigned want_j, int constant)
{
	double x[N], y[N];
	for (int k = 0; k < N; k++)
		x[k] = ns[k], y[k] = f(ns[k]);
	struct sd_model m;
	CHECK_EQ(sd_model_fit(x, y, N, 1, &m), 0);
	CHECK_EQ(m.constant, constant);
	if (!constant) {
		CHECK_EQ(m.terms[0].i, want_i);
		CHECK_EQ(m.terms[0].j, want_j);
	}
	CHECK(m.r2 > 0.9999);
	for (int k = 0; k < N; k++)
		CHECK(fabs(sd_model_eval(&m, &x[k]) - y[k]) <= 1e-6 * y[k]);
}

static double lin(double n) { return 3 + 2 * n; }
static double nlogn(double n) { return 5 + 0.5 * n * log2(n); }
static double quad(double n) { return 1 + 1e-3 * n * n; }
static double sqrtn(double n) { return 100 + 7 * sqrt(n); }
static double cubic(double n) { return 2e-6 * n * n * n; }
static double flat(double n) { (void)n; return 42; }

static void case_single(void)
{
	one(lin, 6, 0, 0);    /* I[6] = 1 */
	one(nlogn, 6, 1, 0);
	one(quad, 12, 0, 0);  /* I[12] = 2 */
	one(sqrtn, 3, 0, 0);  /* I[3] = 1/2 */
	one(cubic, 18, 0, 0); /* I[18] = 3 */
	one(flat, 0, 0, 1);
	char buf[200];
	double x[N], y[N];
	for (int k = 0; k < N; k++)
		x[k] = ns[k], y[k] = nlogn(ns[k]) * 1e6;
	struct sd_model m;
	CHECK_EQ(sd_model_fit(x, y, N, 1, &m), 0);
	char *names[] = { "n" };
	sd_model_text(buf, sizeof buf, &m, names, "ms", 1e-6);
	CHECK_STR(buf, "5 + 0.5 * n * log2(n) ms");
}

static void case_two(void)
{
	double x[2 * 30], y[30];
	int k = 0;
	for (int a = 0; a < N; a++)
		for (double m = 256; m <= 4096; m *= 2, k++) {
			x[2 * k] = ns[a], x[2 * k + 1] = m;
			y[k] = 10 + 0.25 * ns[a] * m;
		}
	struct sd_model md;
	CHECK_EQ(sd_model_fit(x, y, (size_t)k, 2, &md), 0);
	CHECK_EQ(md.product, 1);
	CHECK_EQ(md.terms[0].i, 6);
	CHECK_EQ(md.terms[1].i, 6);
	CHECK(md.r2 > 0.9999);
	for (int p = 0; p < k; p++)
		y[p] = 10 + 0.25 * x[2 * p] + 3 * x[2 * p + 1] * x[2 * p + 1];
	CHECK_EQ(sd_model_fit(x, y, (size_t)k, 2, &md), 0);
	CHECK_EQ(md.product, 0);
	CHECK_EQ(md.terms[0].i, 6);
	CHECK_EQ(md.terms[1].i, 12);
}

static void case_refused(void)
{
	double x[2] = { 1, 2 }, y[2] = { 1, 2 };
	struct sd_model m;
	CHECK_EQ(sd_model_fit(x, y, 2, 1, &m), -EINVAL);
	CHECK_EQ(sd_model_fit(x, y, 2, 4, &m), -EINVAL);
}

UNIT_MAIN({ "single", case_single }, { "two", case_two }, { "refused", case_refused })
