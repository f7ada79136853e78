/* Layer stats: Welford/Chan accumulators, the variance-law fit, observer selection by name. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

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
