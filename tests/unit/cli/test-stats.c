/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host-cli/analysis/stats.c against independent reference values.
 *
 * Source of every expected p-value and I_x(a, b) below: SciPy 1.10.1 (NumPy 1.24.2, Debian 12
 * package python3-scipy 1.10.1-2), computed once by the Python expression in the comment above
 * each row, after `import math, scipy.special, scipy.stats`, and written here with repr() (the
 * shortest decimal that reads back as the same double). The test needs no SciPy to run. The same
 * constants were cross-checked against mpmath 1.2.1 at 50 digits: SciPy is within 7.4e-13 of it
 * on every row.
 *
 * Tolerance: 1e-9 relative, except one deliberately huge-df case (see there). Why 1e-9: the
 * continued fraction is summed to a few ulps, but the factor x^a (1 - x)^b / B(a, b) in front of
 * it is exp() of a sum of lgamma() values of size ~a log a, so their rounding (~1e-16 of each
 * term) becomes the relative error of the result: measured against mpmath it stays near 1e-12
 * for a, b, df up to 1e3 and below 1e-10 up to 1e4. SciPy's own error on these rows is below
 * 7.4e-13, and the raw-sample cases sum in a different order than NumPy (1e-16 in the inputs).
 * The worst row here is off by 5e-12, so 1e-9 leaves two orders of magnitude for other libm
 * versions, while a real mistake (a wrong coefficient, a fraction stopped early at 1e-9, the
 * wrong tail) fails it.
 */
#include <math.h>

#include "analysis/stats.h"

#define REL_TOL 1e-9

static void assert_rel(double got, double want, double tol)
{
	g_assert_false(isnan(got));
	g_assert_cmpfloat_with_epsilon(got, want, tol * fabs(want));
}

/* ---- I_x(a, b) -------------------------------------------------------------------------- */

typedef struct {
	double a, b, x, want;
} BetaCase;

static const BetaCase beta_cases[] = {
	/* scipy.special.betainc(0.5, 0.5, 0.3) */
	{ 0.5, 0.5, 0.3, 0.3690101195655454 },
	/* scipy.special.betainc(1.0, 1.0, 0.42) */
	{ 1.0, 1.0, 0.42, 0.42 },
	/* scipy.special.betainc(2.0, 3.0, 0.4) */
	{ 2.0, 3.0, 0.4, 0.5247999999999999 },
	/* scipy.special.betainc(7.5, 7.5, 0.35) */
	{ 7.5, 7.5, 0.35, 0.12101893949791842 },
	/* scipy.special.betainc(50.0, 60.0, 0.45) */
	{ 50.0, 60.0, 0.45, 0.4642352914306064 },
	/* scipy.special.betainc(20.0, 0.3, 0.9) */
	{ 20.0, 0.3, 0.9, 0.02014384110961457 },
};

/* a and b very small or very large */
static const BetaCase beta_extreme_cases[] = {
	/* scipy.special.betainc(0.01, 0.02, 0.7) */
	{ 0.01, 0.02, 0.7, 0.6722370802006247 },
	/* scipy.special.betainc(0.1, 10.0, 0.001) */
	{ 0.1, 10.0, 0.001, 0.6596666602208243 },
	/* scipy.special.betainc(0.5, 200.0, 0.002) */
	{ 0.5, 200.0, 0.002, 0.6288470843267808 },
	/* scipy.special.betainc(500.0, 500.0, 0.52) */
	{ 500.0, 500.0, 0.52, 0.8970824726930482 },
	/* scipy.special.betainc(1000.0, 0.5, 0.999) */
	{ 1000.0, 0.5, 0.999, 0.15724727426683946 },
};

/* x close to 0 and to 1 */
static const BetaCase beta_tail_cases[] = {
	/* scipy.special.betainc(2.0, 5.0, 1e-10) */
	{ 2.0, 5.0, 1e-10, 1.4999999996000002e-19 },
	/* scipy.special.betainc(3.0, 4.0, 0.999999999) */
	{ 3.0, 4.0, 0.999999999, 0.9999999999999999 },
};

static void check_beta_cases(const BetaCase *cases, gsize n)
{
	for (gsize i = 0; i < n; i++) {
		const BetaCase *c = &cases[i];

		g_test_message("I_x(a, b) at x = %.17g, a = %g, b = %g", c->x, c->a, c->b);
		assert_rel(cli_stats_incomplete_beta(c->a, c->b, c->x), c->want, REL_TOL);
	}
}

static void test_beta_scipy(void)
{
	check_beta_cases(beta_cases, G_N_ELEMENTS(beta_cases));
}

static void test_beta_extreme(void)
{
	check_beta_cases(beta_extreme_cases, G_N_ELEMENTS(beta_extreme_cases));
}

static void test_beta_tails(void)
{
	check_beta_cases(beta_tail_cases, G_N_ELEMENTS(beta_tail_cases));
}

/* Identities that need no reference: DLMF 8.17.4, I_x(a, a) at 1/2, and closed forms. */
static void test_beta_identities(void)
{
	/* x with an exact 1 - x, so both sides see the same point */
	static const double xs[] = { 0.0625, 0.25, 0.375, 0.5, 0.8125, 0.96875 };
	static const double params[][2] = {
		{ 0.5, 0.5 }, { 2.0, 3.0 }, { 0.2, 40.0 }, { 30.0, 7.5 }
	};

	for (gsize i = 0; i < G_N_ELEMENTS(xs); i++) {
		double x = xs[i];

		for (gsize j = 0; j < G_N_ELEMENTS(params); j++) {
			double a = params[j][0], b = params[j][1];
			double sum = cli_stats_incomplete_beta(a, b, x) +
			             cli_stats_incomplete_beta(b, a, 1.0 - x);

			assert_rel(sum, 1.0, REL_TOL);
		}
		/* I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b */
		assert_rel(cli_stats_incomplete_beta(3.5, 1.0, x), pow(x, 3.5), REL_TOL);
		assert_rel(cli_stats_incomplete_beta(1.0, 4.0, x), 1.0 - pow(1.0 - x, 4.0),
		           REL_TOL);
	}
	/* symmetric case: I_(1/2)(a, a) = 1/2 */
	assert_rel(cli_stats_incomplete_beta(5.0, 5.0, 0.5), 0.5, REL_TOL);
	assert_rel(cli_stats_incomplete_beta(0.3, 0.3, 0.5), 0.5, REL_TOL);
	assert_rel(cli_stats_incomplete_beta(250.0, 250.0, 0.5), 0.5, REL_TOL);
}

/* ---- Student's t ------------------------------------------------------------------------ */

typedef struct {
	double t, df, want;
} StudentCase;

static const StudentCase student_cases[] = {
	/* 2 * scipy.stats.t.sf(abs(0.0), 10.0) */
	{ 0.0, 10.0, 1.0 },
	/* 2 * scipy.stats.t.sf(abs(1.0), 1.0) */
	{ 1.0, 1.0, 0.49999999999999956 },
	/* 2 * scipy.stats.t.sf(abs(2.228138851986274), 10.0) */
	{ 2.228138851986274, 10.0, 0.049999999999999975 },
	/* 2 * scipy.stats.t.sf(abs(-3.0), 5.0) */
	{ -3.0, 5.0, 0.03009924789746257 },
	/* 2 * scipy.stats.t.sf(abs(0.5), 2.5) */
	{ 0.5, 2.5, 0.6576979198697148 },
	/* 2 * scipy.stats.t.sf(abs(1e-4), 7.0) */
	{ 1e-4, 7.0, 0.9999230017099803 },
	/* 2 * scipy.stats.t.sf(abs(0.1), 0.5) */
	{ 0.1, 0.5, 0.9463316211286064 },
	/* 2 * scipy.stats.t.sf(abs(1.96), 1000.0) */
	{ 1.96, 1000.0, 0.05027318495574871 },
};

/* large |t|: tiny p */
static const StudentCase student_tail_cases[] = {
	/* 2 * scipy.stats.t.sf(abs(10.0), 3.0) */
	{ 10.0, 3.0, 0.0021283990584141494 },
	/* 2 * scipy.stats.t.sf(abs(5.5), 100.0) */
	{ 5.5, 100.0, 2.9234214544293797e-07 },
	/* 2 * scipy.stats.t.sf(abs(-250.0), 4.0) */
	{ -250.0, 4.0, 1.5358361737615057e-09 },
	/* 2 * scipy.stats.t.sf(abs(40.0), 30.0) */
	{ 40.0, 30.0, 1.3726045194406362e-27 },
};

static void check_student_cases(const StudentCase *cases, gsize n)
{
	for (gsize i = 0; i < n; i++) {
		const StudentCase *c = &cases[i];

		g_test_message("t = %g, df = %g", c->t, c->df);
		assert_rel(cli_stats_student_t_p(c->t, c->df), c->want, REL_TOL);
		/* two-sided: the sign of t does not matter, to the bit */
		g_assert_cmpfloat(cli_stats_student_t_p(-c->t, c->df), ==,
		                  cli_stats_student_t_p(c->t, c->df));
	}
}

static void test_student_scipy(void)
{
	check_student_cases(student_cases, G_N_ELEMENTS(student_cases));
}

static void test_student_tails(void)
{
	check_student_cases(student_tail_cases, G_N_ELEMENTS(student_tail_cases));
}

/*
 * A df no benchmark comparison reaches (it is at most the number of runs): the lgamma()
 * rounding described at the top grows to ~2e-9 here (the code compare.c had: ~4e-9), so this
 * case gets the loosest tolerance allowed, 1e-7.
 */
static void test_student_huge_df(void)
{
	/* 2 * scipy.stats.t.sf(abs(1.7), 1e6) */
	assert_rel(cli_stats_student_t_p(1.7, 1e6), 0.08913123649034872, 1e-7);
}

/* ---- Welch ------------------------------------------------------------------------------ */

typedef struct {
	double m1, s1;
	guint n1;
	double m2, s2;
	guint n2;
	double want;
} WelchCase;

static void test_welch_from_stats(void)
{
	const WelchCase cases[] = {
		/* scipy.stats.ttest_ind_from_stats(3.0, math.sqrt(2.5), 5, 6.0, math.sqrt(10.0),
		 *                                  5, equal_var=False).pvalue */
		{ 3.0, sqrt(2.5), 5, 6.0, sqrt(10.0), 5, 0.10753119493062718 },
		/* scipy.stats.ttest_ind_from_stats(128.88e6, 1.2e6, 10, 127.3e6, 0.9e6, 8,
		 *                                  equal_var=False).pvalue */
		{ 128.88e6, 1.2e6, 10, 127.3e6, 0.9e6, 8, 0.005704962202429461 },
		/* scipy.stats.ttest_ind_from_stats(1.5e-6, 2e-8, 3, 1.45e-6, 5e-8, 12,
		 *                                  equal_var=False).pvalue */
		{ 1.5e-6, 2e-8, 3, 1.45e-6, 5e-8, 12, 0.023974258854591996 },
		/* scipy.stats.ttest_ind_from_stats(100.0, 15.0, 30, 100.5, 1.0, 2,
		 *                                  equal_var=False).pvalue */
		{ 100.0, 15.0, 30, 100.5, 1.0, 2, 0.8609030623762199 },
		/* scipy.stats.ttest_ind_from_stats(42.0, 0.5, 4, 42.1, 0.5, 4,
		 *                                  equal_var=False).pvalue */
		{ 42.0, 0.5, 4, 42.1, 0.5, 4, 0.7868019447714061 },
		/* one side without spread: Student's t on the other, df = n2 - 1
		 * scipy.stats.ttest_ind_from_stats(5.0, 0.0, 3, 6.0, 1.0, 4,
		 *                                  equal_var=False).pvalue */
		{ 5.0, 0.0, 3, 6.0, 1.0, 4, 0.1393259685588431 },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		const WelchCase *c = &cases[i];

		g_test_message("case %" G_GSIZE_FORMAT, i);
		assert_rel(cli_stats_welch_p(c->m1, c->s1, c->n1, c->m2, c->s2, c->n2), c->want,
		           REL_TOL);
		/* the test is symmetric in its two samples */
		assert_rel(cli_stats_welch_p(c->m2, c->s2, c->n2, c->m1, c->s1, c->n1), c->want,
		           REL_TOL);
	}
}

#define MAX_RUNS 8

/* Runs of two samples; a sample ends at its first 0.0 (no run below is zero). */
typedef struct {
	double a[MAX_RUNS + 1];
	double b[MAX_RUNS + 1];
	double want;
} SampleCase;

/* Mean and sample standard deviation (n - 1), two passes, as compare.c summarizes runs. */
static guint summarize(const double *runs, double *mean, double *stddev)
{
	double sum = 0.0, sumsq = 0.0;
	guint n = 0;

	while (runs[n] != 0.0)
		sum += runs[n++];
	*mean = sum / n;
	for (guint i = 0; i < n; i++)
		sumsq += (runs[i] - *mean) * (runs[i] - *mean);
	*stddev = n > 1 ? sqrt(sumsq / (n - 1)) : 0.0;
	return n;
}

static void test_welch_from_samples(void)
{
	static const SampleCase cases[] = {
		/* scipy.stats.ttest_ind([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0],
		 *                       equal_var=False).pvalue */
		{ { 1.0, 2.0, 3.0, 4.0, 5.0 }, { 2.0, 4.0, 6.0, 8.0, 10.0 }, 0.10753119493062718 },
		/* scipy.stats.ttest_ind([1234.5, 1241.2, 1229.8, 1238.1, 1236.6],
		 *                       [1250.3, 1247.9, 1255.1, 1249.4],
		 *                       equal_var=False).pvalue */
		{ { 1234.5, 1241.2, 1229.8, 1238.1, 1236.6 },
		  { 1250.3, 1247.9, 1255.1, 1249.4 },
		  0.0005757082325485896 },
		/* scipy.stats.ttest_ind([12.7, 13.1, 12.9],
		 *                       [14.2, 13.0, 15.8, 13.9, 14.4, 13.6, 14.9],
		 *                       equal_var=False).pvalue */
		{ { 12.7, 13.1, 12.9 },
		  { 14.2, 13.0, 15.8, 13.9, 14.4, 13.6, 14.9 },
		  0.006932361369283093 },
		/* scipy.stats.ttest_ind([100.0, 101.0, 99.5, 100.2], [100.1, 100.9, 99.8, 100.4],
		 *                       equal_var=False).pvalue */
		{ { 100.0, 101.0, 99.5, 100.2 },
		  { 100.1, 100.9, 99.8, 100.4 },
		  0.7604039731368738 },
		/* scipy.stats.ttest_ind([3.2e9, 3.3e9], [2.9e9, 3.0e9, 2.95e9],
		 *                       equal_var=False).pvalue */
		{ { 3.2e9, 3.3e9 }, { 2.9e9, 3.0e9, 2.95e9 }, 0.049691460552342304 },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		const SampleCase *c = &cases[i];
		double m1, s1, m2, s2;
		guint n1 = summarize(c->a, &m1, &s1);
		guint n2 = summarize(c->b, &m2, &s2);

		g_test_message("case %" G_GSIZE_FORMAT ": mean %g sd %g n %u vs mean %g sd %g n %u",
		               i, m1, s1, n1, m2, s2, n2);
		assert_rel(cli_stats_welch_p(m1, s1, n1, m2, s2, n2), c->want, REL_TOL);
	}
}

/* What tests/unit/cli/test-compare.c asserts of the compare.c functions holds here too. */
static void test_welch_compare_expectations(void)
{
	g_assert_cmpfloat_with_epsilon(cli_stats_welch_p(3, sqrt(2.5), 5, 6, sqrt(10), 5), 0.1075,
	                               5e-4);
	g_assert_cmpfloat_with_epsilon(cli_stats_student_t_p(2.228139, 10), 0.05, 1e-5);
	g_assert_cmpfloat_with_epsilon(cli_stats_student_t_p(0, 10), 1.0, 1e-12);
	g_assert_cmpfloat(cli_stats_student_t_p(INFINITY, 3), ==, 0.0);
	g_assert_cmpfloat(cli_stats_student_t_p(NAN, 3), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 5, 0, 3), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 6, 0, 3), ==, 0.0);
	g_assert_cmpfloat(cli_stats_single_p(200, 100, 1, 3), <, 0.001);
	g_assert_cmpfloat(cli_stats_single_p(100.5, 100, 1, 3), >, 0.5);
	g_assert_cmpfloat(cli_stats_welch_p(1, 1, 1, 100, 1, 1), ==, 1.0);
}

/* ---- one value against a sample --------------------------------------------------------- */

static void test_single_scipy(void)
{
	static const struct {
		double x, mean, stddev;
		guint n;
		double want;
	} cases[] = {
		/* 2 * scipy.stats.t.sf(abs((200.0 - 100.0) / (1.0 * math.sqrt(1 + 1 / 3))),
		 *                      3 - 1) */
		{ 200.0, 100.0, 1.0, 3, 0.00013330667259121019 },
		/* 2 * scipy.stats.t.sf(abs((100.5 - 100.0) / (1.0 * math.sqrt(1 + 1 / 3))),
		 *                      3 - 1) */
		{ 100.5, 100.0, 1.0, 3, 0.7072299781154401 },
		/* 2 * scipy.stats.t.sf(abs((1.30e6 - 1.25e6) / (2.0e4 * math.sqrt(1 + 1 / 5))),
		 *                      5 - 1) */
		{ 1.30e6, 1.25e6, 2.0e4, 5, 0.08458320524109575 },
		/* 2 * scipy.stats.t.sf(abs((-7.25 - -3.5) / (1.25 * math.sqrt(1 + 1 / 12))),
		 *                      12 - 1) */
		{ -7.25, -3.5, 1.25, 12, 0.014909631604257099 },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_test_message("case %" G_GSIZE_FORMAT, i);
		assert_rel(
		    cli_stats_single_p(cases[i].x, cases[i].mean, cases[i].stddev, cases[i].n),
		    cases[i].want, REL_TOL);
	}
}

/* ---- edge cases: exact values, the same as compare.c gave ------------------------------- */

static void test_edge_zero_spread(void)
{
	/* no spread on either side: equal is noise, any difference is not */
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 5, 0, 3), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 6, 0, 3), ==, 0.0);
	g_assert_cmpfloat(cli_stats_welch_p(5, 0, 3, 5 + 1e-12, 0, 30), ==, 0.0);
	g_assert_cmpfloat(cli_stats_welch_p(-2.5, 0, 2, -2.5, -0.0, 2), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(100, 100, 0, 4), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(100.5, 100, 0, 4), ==, 0.0);
}

static void test_edge_few_runs(void)
{
	/* fewer than 2 runs on a side: never significant, however far apart */
	g_assert_cmpfloat(cli_stats_welch_p(1, 1, 1, 100, 1, 1), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(1, 1, 1, 1e9, 1, 50), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(1, 1, 50, 1e9, 1, 1), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(1, 0, 0, 2, 0, 0), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(1e9, 1, 1, 1), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(1e9, 1, 0, 0), ==, 1.0);
	/* df must be positive */
	g_assert_cmpfloat(cli_stats_student_t_p(3, 0), ==, 1.0);
	g_assert_cmpfloat(cli_stats_student_t_p(3, -2), ==, 1.0);
}

static void test_edge_nan(void)
{
	g_assert_cmpfloat(cli_stats_student_t_p(NAN, 3), ==, 1.0);
	g_assert_cmpfloat(cli_stats_student_t_p(2, NAN), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(1, NAN, 5, 2, 1, 5), ==, 1.0);
	g_assert_cmpfloat(cli_stats_welch_p(NAN, 1, 5, 2, 1, 5), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(NAN, 2, 1, 5), ==, 1.0);
	g_assert_cmpfloat(cli_stats_single_p(1, 2, NAN, 5), ==, 1.0);
	/* inherited from compare.c: without spread a NaN mean is "different", so 0.0 */
	g_assert_cmpfloat(cli_stats_welch_p(NAN, 0, 3, 5, 0, 3), ==, 0.0);
	g_assert_true(isnan(cli_stats_incomplete_beta(2, 3, NAN)));
	g_assert_true(isnan(cli_stats_incomplete_beta(NAN, 3, 0.5)));
	g_assert_true(isnan(cli_stats_incomplete_beta(2, NAN, 0.5)));
}

static void test_edge_limits(void)
{
	/* x outside (0, 1) is clamped before a and b are looked at */
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, 0.0), ==, 0.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, -0.5), ==, 0.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, -INFINITY), ==, 0.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, 1.0), ==, 1.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, 1.5), ==, 1.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(2, 3, INFINITY), ==, 1.0);
	g_assert_cmpfloat(cli_stats_incomplete_beta(NAN, 3, 0.0), ==, 0.0);
	/* parameters outside a, b > 0 */
	g_assert_true(isnan(cli_stats_incomplete_beta(0, 3, 0.5)));
	g_assert_true(isnan(cli_stats_incomplete_beta(2, -1, 0.5)));
	g_assert_true(isnan(cli_stats_incomplete_beta(INFINITY, 3, 0.5)));
	/* t = 0 is exactly 1, an infinite or overflowing t exactly 0 */
	for (double df = 0.25; df < 1e4; df *= 3) {
		g_assert_cmpfloat(cli_stats_student_t_p(0.0, df), ==, 1.0);
		g_assert_cmpfloat(cli_stats_student_t_p(-0.0, df), ==, 1.0);
		g_assert_cmpfloat(cli_stats_student_t_p(INFINITY, df), ==, 0.0);
		g_assert_cmpfloat(cli_stats_student_t_p(-INFINITY, df), ==, 0.0);
		g_assert_cmpfloat(cli_stats_student_t_p(1e200, df), ==, 0.0);
	}
	/* p falls as |t| grows and stays in [0, 1] */
	for (double df = 0.5; df < 2000; df *= 2) {
		double prev = 1.0;

		for (double t = 0.125; t < 100; t *= 1.5) {
			double p = cli_stats_student_t_p(t, df);

			g_assert_cmpfloat(p, >=, 0.0);
			g_assert_cmpfloat(p, <=, prev);
			prev = p;
		}
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/stats/incomplete-beta/scipy", test_beta_scipy);
	g_test_add_func("/stats/incomplete-beta/extreme-a-b", test_beta_extreme);
	g_test_add_func("/stats/incomplete-beta/x-near-0-and-1", test_beta_tails);
	g_test_add_func("/stats/incomplete-beta/identities", test_beta_identities);
	g_test_add_func("/stats/student-t/scipy", test_student_scipy);
	g_test_add_func("/stats/student-t/large-t", test_student_tails);
	g_test_add_func("/stats/student-t/huge-df", test_student_huge_df);
	g_test_add_func("/stats/welch/scipy", test_welch_from_stats);
	g_test_add_func("/stats/welch/scipy-samples", test_welch_from_samples);
	g_test_add_func("/stats/welch/compare-expectations", test_welch_compare_expectations);
	g_test_add_func("/stats/single/scipy", test_single_scipy);
	g_test_add_func("/stats/edge/zero-spread", test_edge_zero_spread);
	g_test_add_func("/stats/edge/few-runs", test_edge_few_runs);
	g_test_add_func("/stats/edge/nan", test_edge_nan);
	g_test_add_func("/stats/edge/limits", test_edge_limits);

	return g_test_run();
}
