/* Layer stats: Welford/Chan accumulators, the variance-law fit, observer selection by name. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "nhens/pcg.h"
#include "nhens/stats.h"

Test(accum, welford_and_chan_match_two_pass)
{
    /* values with a large common offset: the naive sum-of-squares formula loses all digits here
     * (sums of 1e12 with ulp 1e-4), Welford/Chan keep about eps * offset / spread = 1e-10 relative */
    double x[101];
    nh_accum all, left, right;
    nh_accum_reset(&all);
    nh_accum_reset(&left);
    nh_accum_reset(&right);
    double mean = 0;
    for (int i = 0; i < 101; ++i) {
        x[i] = 1e6 + sin(i);
        mean += x[i];
        nh_accum_add(&all, x[i]);
        nh_accum_add(i < 37 ? &left : &right, x[i]);
    }
    mean /= 101;
    double m2 = 0;
    for (int i = 0; i < 101; ++i)
        m2 += (x[i] - mean) * (x[i] - mean);
    nh_accum_merge(&left, &right);
    cr_assert(epsilon_eq(dbl, nh_accum_variance(&all), m2 / 100, 1e-8 * m2 / 100));
    cr_assert(epsilon_eq(dbl, nh_accum_variance(&left), m2 / 100, 1e-8 * m2 / 100));
    cr_assert(eq(dbl, left.count, 101.0));
    cr_assert(eq(dbl, left.absmax, all.absmax));
    nh_accum empty;
    nh_accum_reset(&empty);
    nh_accum_merge(&left, &empty);
    cr_assert(eq(dbl, left.count, 101.0));
    cr_assert(eq(dbl, nh_accum_variance(&empty), 0.0));
}

Test(accum, rms)
{
    nh_accum a;
    nh_accum_reset(&a);
    nh_accum_add(&a, 3.0);
    nh_accum_add(&a, -4.0);
    cr_assert(ieee_ulp_eq(dbl, nh_accum_rms(&a), sqrt(12.5), 4));
}

Test(fit, recovers_offset_and_rate)
{
    double t[201], var[201];
    for (int i = 0; i < 201; ++i) {
        t[i] = i * 5.0;
        var[i] = 2e-5 + 3e-8 * t[i];
    }
    nh_variance_fit fit;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, 201, 500.0, 0.1, 2, &fit), 0));
    /* exact data: the least-squares fit recovers a and C to round-off */
    cr_assert(epsilon_eq(dbl, fit.a, 2e-5, 1e-15));
    cr_assert(epsilon_eq(dbl, fit.C, 3e-8, 1e-18));
    cr_assert(epsilon_eq(dbl, fit.C_over_h4, 3e-4, 1e-12));
    cr_assert(eq(int, fit.points, 101));
    cr_assert(eq(dbl, fit.t_start, 500.0));
    /* log-log slope of a + C t over [500, 1000] is between 0 and 1: about C t / (a + C t) = 0.5 */
    cr_assert(fit.p > 0.4 && fit.p < 0.7, "p = %g", fit.p);
    cr_assert(eq(int, nh_variance_fit_compute(t, var, 2, 0.0, 0.1, 2, &fit), 1));
}

/* One synthetic ensemble of 160 trajectories (20 merge blocks of 8, block b in group b mod 20):
 * X_i(t_k) = sqrt(A) z_i + W_i(t_k), z_i ~ N(0, 1), W_i a random walk with Var W(t) = C t, so
 * Var X(t) = A + C t exactly. Fills `groups` like the ensemble driver and returns the fit with errors. */
enum { SYN_TRAJ = 160, SYN_OUT = 41 };
static nh_variance_fit synthetic_fit(uint64_t seed)
{
    const double A = 2.0, C = 0.5, dt = 0.25;
    static nh_accum groups[NH_FIT_GROUPS * SYN_OUT];
    nh_accum total[SYN_OUT];
    double t[SYN_OUT], var[SYN_OUT];
    for (int i = 0; i < NH_FIT_GROUPS * SYN_OUT; ++i)
        nh_accum_reset(&groups[i]);
    for (int k = 0; k < SYN_OUT; ++k) {
        nh_accum_reset(&total[k]);
        t[k] = k * dt;
    }
    for (int i = 0; i < SYN_TRAJ; ++i) {
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, seed, (uint64_t)i);
        double x = sqrt(A) * nh_pcg32_gaussian(&rng);
        nh_accum *g = &groups[(i / 8 % NH_FIT_GROUPS) * SYN_OUT];
        for (int k = 0; k < SYN_OUT; ++k) {
            if (k)
                x += sqrt(C * dt) * nh_pcg32_gaussian(&rng);
            nh_accum_add(&g[k], x);
            nh_accum_add(&total[k], x);
        }
    }
    for (int k = 0; k < SYN_OUT; ++k)
        var[k] = nh_accum_variance(&total[k]);
    nh_variance_fit fit;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    cr_assert(eq(int, nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    cr_assert(eq(int, fit.groups, NH_FIT_GROUPS));
    return fit;
}

Test(fit, jackknife_errors_match_the_scatter_over_independent_ensembles)
{
    /* 400 independent ensembles: the mean jackknife error of C must match the standard deviation of C
     * over them. Tolerance: the spread's own sampling error is 1/sqrt(2 x 399) = 3.5 %, the mean error's
     * about 1 %, and the delete-one-group jackknife of a statistic this close to linear is nearly unbiased
     * (its 20 groups give each estimate +-16 %, averaged away here): 15 % covers 4 standard deviations. */
    enum { R = 400 };
    double c[R], mean_c = 0, mean_err = 0, mean_a_err = 0, ss = 0, ss_a = 0, mean_a = 0, a[R];
    for (int r = 0; r < R; ++r) {
        nh_variance_fit fit = synthetic_fit(1000 + (uint64_t)r);
        c[r] = fit.C;
        a[r] = fit.a;
        mean_c += fit.C / R;
        mean_a += fit.a / R;
        mean_err += fit.C_err / R;
        mean_a_err += fit.a_err / R;
    }
    for (int r = 0; r < R; ++r) {
        ss += (c[r] - mean_c) * (c[r] - mean_c);
        ss_a += (a[r] - mean_a) * (a[r] - mean_a);
    }
    const double spread = sqrt(ss / (R - 1)), spread_a = sqrt(ss_a / (R - 1));
    cr_log_info("C: mean jackknife error / scatter = %.3f; a: %.3f", mean_err / spread, mean_a_err / spread_a);
    cr_assert(fabs(mean_err / spread - 1) < 0.15, "C: mean jackknife error %g vs scatter %g", mean_err, spread);
    cr_assert(fabs(mean_a_err / spread_a - 1) < 0.15, "a: mean jackknife error %g vs scatter %g", mean_a_err, spread_a);
    /* and the estimates are unbiased within their error of the mean */
    cr_assert(fabs(mean_c - 0.5) < 4 * spread / sqrt(R), "mean C = %g, true 0.5", mean_c);
}

Test(fit, jackknife_needs_two_groups)
{
    nh_accum groups[NH_FIT_GROUPS * 4];
    double t[4] = {0, 1, 2, 3};
    for (int i = 0; i < NH_FIT_GROUPS * 4; ++i)
        nh_accum_reset(&groups[i]);
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 3; ++j)
            nh_accum_add(&groups[k], j * (k + 1.0)); /* only group 0 has trajectories */
    nh_variance_fit fit;
    double var[4];
    for (int k = 0; k < 4; ++k)
        var[k] = nh_accum_variance(&groups[k]);
    nh_variance_fit_compute(t, var, 4, 0.0, 0.1, 2, &fit);
    cr_assert(eq(int, nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, 4, 0.0, 0.1, 2, &fit), 1));
    cr_assert(isnan(fit.C_err) && fit.groups == 1, "one group gives no error estimate");
}

Test(observers, are_selected_by_name_and_role)
{
    unsigned mask;
    nh_error err;
    const int fitted = nh_observer_fitted(), event = nh_observer_event();
    cr_assert(fitted >= 0 && nh_observer_at(fitted)->fitted);
    cr_assert(event >= 0 && nh_observer_at(event)->event && event != fitted);
    cr_assert(eq(int, nh_observer_select(NULL, &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_count()) - 1u));
    cr_assert(eq(int, nh_observer_select("constraint", &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_index("constraint")) | (1u << fitted)), "the fitted one is always on");
    cr_assert(eq(int, nh_observer_select("constraint,latitude", &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_index("constraint")) | (1u << event) | (1u << fitted)));
    cr_assert(eq(int, nh_observer_select("constraint,", &mask, &err), NH_OK));
    cr_assert(eq(int, nh_observer_select("constrain", &mask, &err), NH_ERR_INPUT), "no prefix matches");
    cr_assert(strstr(err.msg, "unknown observer 'constrain'; known observers: all, ") != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_observer_select("dH,,x", &mask, &err), NH_ERR_INPUT));
    for (int i = 0; i < nh_observer_count(); ++i) {
        const nh_observer *o = nh_observer_at(i);
        cr_assert(o->label && o->extreme_key && o->n_columns >= 1, "%s", o->name);
        cr_assert(eq(int, nh_observer_index(o->name), i));
    }
}
