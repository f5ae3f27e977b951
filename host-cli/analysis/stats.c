/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Student's t and Welch's t-test p-values, on top of the regularized incomplete beta function.
 *
 * I_x(a, b) is evaluated from the NIST Digital Library of Mathematical Functions, §8.17
 * (https://dlmf.nist.gov/8.17):
 *   - eq. 8.17.22, the continued fraction
 *       I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...)))
 *     with the partial numerators given right after it in §8.17(v):
 *       d_2m   =  m (b - m) x / ((a + 2m - 1)(a + 2m)),
 *       d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1));
 *     it needs few terms for x below about the mean a / (a + b); this file switches at
 *     x = (a + 1) / (a + b + 2), the point compare.c used, so each input takes the same side;
 *   - eq. 8.17.4, I_x(a, b) = 1 - I_(1-x)(b, a), for x above that point.
 * The continued fraction, written in the b_0 + a_1/(b_1 + a_2/(b_2 + ...)) form of DLMF 3.10.1,
 * is summed by the modified Lentz method: W. J. Lentz, Appl. Opt. 15 (1976) 668-671, with the
 * zero-denominator guard of I. J. Thompson and A. R. Barnett, J. Comput. Phys. 64 (1986) 490-509.
 * B(a, b) = Γ(a)Γ(b)/Γ(a + b) (DLMF 5.12.1) is taken through lgamma().
 *
 * Student's t: substituting u = df / (df + s^2) in the t density gives the two-sided tail
 * P(|T| >= |t|) = I_(df/(df + t^2))(df / 2, 1 / 2).
 */
#include <float.h>
#include <math.h>

#include "analysis/stats.h"

/* Most partial numerators summed; a = b = 1e6 needs about 1000, 1e7 about 2100. */
#define CLI_STATS_CF_MAX_TERMS 20000
/* Stop once one more term moves the value by less than this, relative. */
#define CLI_STATS_CF_TOLERANCE (4 * DBL_EPSILON)
/* Lentz: a denominator that comes out exactly zero is replaced by this. */
#define CLI_STATS_CF_FLOOR (DBL_MIN / DBL_EPSILON)

/* d_k of DLMF 8.17.22 (k >= 1): even k = 2m, odd k = 2m + 1. */
static double cli_stats_beta_cf_numerator(double a, double b, double x, guint k)
{
	double m = (double)(k / 2);

	if (k % 2 == 0)
		return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
	return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
}

/* 1 + d_1 / (1 + d_2 / (1 + ...)): b_0 = b_k = 1, a_k = d_k, by modified Lentz. */
static double cli_stats_beta_cf(double a, double b, double x)
{
	double value = 1.0;   /* the approximant f_k = A_k / B_k; f_0 = b_0 */
	double ratio = 1.0;   /* C_k = A_k / A_(k-1); C_0 = f_0 */
	double inverse = 0.0; /* D_k = B_(k-1) / B_k; D_0 = 0 */

	for (guint k = 1; k <= CLI_STATS_CF_MAX_TERMS; k++) {
		double numerator = cli_stats_beta_cf_numerator(a, b, x, k);
		double step;

		inverse = 1.0 + numerator * inverse;
		if (inverse == 0.0)
			inverse = CLI_STATS_CF_FLOOR;
		inverse = 1.0 / inverse;
		ratio = 1.0 + numerator / ratio;
		if (ratio == 0.0)
			ratio = CLI_STATS_CF_FLOOR;
		step = ratio * inverse;
		value *= step;
		if (fabs(step - 1.0) <= CLI_STATS_CF_TOLERANCE)
			break;
	}
	return value;
}

/* I_x(a, b) straight from DLMF 8.17.22; accurate for x below (a + 1) / (a + b + 2). */
static double cli_stats_beta_by_fraction(double a, double b, double x)
{
	double log_beta = lgamma(a) + lgamma(b) - lgamma(a + b);
	double log_front = a * log(x) + b * log1p(-x) - log_beta;

	return exp(log_front) / (a * cli_stats_beta_cf(a, b, x));
}

double cli_stats_incomplete_beta(double a, double b, double x)
{
	if (x <= 0.0)
		return 0.0;
	if (x >= 1.0)
		return 1.0;
	if (isnan(x) || !(a > 0.0) || !(b > 0.0) || isinf(a) || isinf(b))
		return NAN;
	if (x < (a + 1.0) / (a + b + 2.0))
		return cli_stats_beta_by_fraction(a, b, x);
	/* DLMF 8.17.4: the same fraction from the other end converges fast here */
	return 1.0 - cli_stats_beta_by_fraction(b, a, 1.0 - x);
}

double cli_stats_student_t_p(double t, double df)
{
	if (isnan(t) || !(df > 0.0))
		return 1.0;
	if (isinf(t))
		return 0.0;
	/* an infinite df makes the argument NaN, and so the result: as compare.c always did */
	return cli_stats_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

/*
 * Neither side has spread: the difference, if any, is beyond the (absent) noise.
 * A NaN mean compares unequal, so it gives 0.0 here, as compare.c always did.
 */
static double cli_stats_p_without_spread(double x, double y)
{
	return x == y ? 1.0 : 0.0;
}

/* One side's share of the Welch-Satterthwaite denominator; a side without spread adds none. */
static double cli_stats_satterthwaite_share(double mean_var, guint n)
{
	return mean_var > 0.0 ? mean_var * mean_var / (n - 1) : 0.0;
}

double cli_stats_welch_p(double m1, double s1, guint n1, double m2, double s2, guint n2)
{
	double mean_var1, mean_var2, diff_var, t, df;

	if (n1 < 2 || n2 < 2)
		return 1.0;
	/* the variance of each sample mean, then of their difference */
	mean_var1 = s1 * s1 / n1;
	mean_var2 = s2 * s2 / n2;
	diff_var = mean_var1 + mean_var2;
	if (diff_var <= 0.0)
		return cli_stats_p_without_spread(m1, m2);
	t = (m1 - m2) / sqrt(diff_var);
	df = diff_var * diff_var /
	     (cli_stats_satterthwaite_share(mean_var1, n1) +
	      cli_stats_satterthwaite_share(mean_var2, n2));
	return cli_stats_student_t_p(t, df);
}

double cli_stats_single_p(double x, double mean, double stddev, guint n)
{
	double spread;

	if (n < 2)
		return 1.0;
	/* the spread of one new observation around the sample mean: s * sqrt(1 + 1/n) */
	spread = stddev * sqrt(1.0 + 1.0 / n);
	if (spread <= 0.0)
		return cli_stats_p_without_spread(x, mean);
	return cli_stats_student_t_p((x - mean) / spread, n - 1);
}
