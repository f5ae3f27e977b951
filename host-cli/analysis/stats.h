/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

/*
 * Significance tests behind `guestbench compare`. Every p-value is two-sided and lies in [0, 1];
 * an input that cannot support a verdict (too few runs, NaN) gives 1.0, "not significant".
 */

/*
 * The regularized incomplete beta function I_x(a, b) for a, b > 0.
 * x <= 0 gives 0 and x >= 1 gives 1 (whatever a and b are); a NaN x, or a or b that is NaN,
 * infinite or not positive (with x inside (0, 1)) gives NaN.
 */
double cli_stats_incomplete_beta(double a, double b, double x);

/*
 * P(|T| >= |t|) for Student's t with df degrees of freedom (df need not be an integer).
 * A NaN t, or a df that is NaN or not positive, gives 1.0; an infinite t gives 0.0.
 */
double cli_stats_student_t_p(double t, double df);

/*
 * Welch's unequal-variance t-test on two samples given as mean, sample standard deviation (n - 1
 * denominator) and count. Fewer than 2 runs on either side gives 1.0. With no spread on either
 * side the noise is zero: equal means give 1.0, any difference 0.0.
 */
double cli_stats_welch_p(double m1, double s1, guint n1, double m2, double s2, guint n2);

/*
 * Whether a single value x plausibly comes from a sample (mean, sample standard deviation,
 * n >= 2 runs): the t of the prediction interval for one new observation, with n - 1 degrees of
 * freedom. Fewer than 2 runs gives 1.0; no spread gives 1.0 if x equals the mean, else 0.0.
 */
double cli_stats_single_p(double x, double mean, double stddev, guint n);
