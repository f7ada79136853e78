/* Layer stats: Welford/Chan accumulators, the variance-law fit, observer selection by name. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nhens/pcg.h"
#include "nhens/stats.h"
#include "nhens/system.h"

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
}

Test(accum, statistics_of_too_few_values_are_missing_not_zero)
{
    /* an empty accumulator (no live trajectory) has no variance or rms; one value has no variance */
    nh_accum a;
    nh_accum_reset(&a);
    cr_assert(isnan(nh_accum_variance(&a)) && isnan(nh_accum_rms(&a)) && isnan(nh_accum_mean_stderr(&a)));
    nh_accum_add(&a, 2.0);
    cr_assert(isnan(nh_accum_variance(&a)) && isnan(nh_accum_mean_stderr(&a)));
    cr_assert(eq(dbl, nh_accum_rms(&a), 2.0));
    nh_accum_add(&a, 4.0);
    cr_assert(eq(dbl, nh_accum_variance(&a), 2.0));
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
/* n random walks x(t) = sqrt(A) xi_0 + sqrt(C) W(t) in NH_FIT_GROUPS groups, trajectory i in group
 * (i / 8) mod NH_FIT_GROUPS (blocks of 8, `by_block`) or i mod NH_FIT_GROUPS: the groups' accumulators
 * (NH_FIT_GROUPS x SYN_OUT), the times and the ensemble's variance. */
static void random_walks(uint64_t seed, int n, int by_block, nh_accum *groups, double *t, double *var)
{
    const double A = 2.0, C = 0.5, dt = 0.25;
    nh_accum total[SYN_OUT];
    for (int i = 0; i < NH_FIT_GROUPS * SYN_OUT; ++i)
        nh_accum_reset(&groups[i]);
    for (int k = 0; k < SYN_OUT; ++k) {
        nh_accum_reset(&total[k]);
        t[k] = k * dt;
    }
    for (int i = 0; i < n; ++i) {
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, seed, (uint64_t)i);
        double x = sqrt(A) * nh_pcg32_gaussian(&rng);
        nh_accum *g = &groups[((by_block ? i / 8 : i) % NH_FIT_GROUPS) * SYN_OUT];
        for (int k = 0; k < SYN_OUT; ++k) {
            if (k)
                x += sqrt(C * dt) * nh_pcg32_gaussian(&rng);
            nh_accum_add(&g[k], x);
            nh_accum_add(&total[k], x);
        }
    }
    for (int k = 0; k < SYN_OUT; ++k)
        var[k] = nh_accum_variance(&total[k]);
}

/* The 160-trajectory ensemble in blocks of 8, as the ensemble driver groups it */
static void synthetic_ensemble(uint64_t seed, nh_accum *groups, double *t, double *var)
{
    random_walks(seed, SYN_TRAJ, 1, groups, t, var);
}

static nh_variance_fit synthetic_fit(uint64_t seed)
{
    nh_accum *groups = malloc(NH_FIT_GROUPS * SYN_OUT * sizeof *groups);
    double t[SYN_OUT], var[SYN_OUT];
    cr_assert_not_null(groups);
    synthetic_ensemble(seed, groups, t, var);
    nh_variance_fit fit;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    cr_assert(eq(int, nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    cr_assert(eq(int, fit.groups, NH_FIT_GROUPS));
    free(groups);
    return fit;
}

Test(fit, jackknife_leaves_out_each_group_once)
{
    /* Against the definition: each group left out in turn, the others merged in group order, the fit
     * redone. The jackknife merges in another order (before and after the group left out), which moves
     * each variance by round-off (~1e-15 relative); the fitted C and its error follow to far below the
     * 1e-9 allowed here, while leaving out the wrong group (or none) moves C_err by O(1). */
    nh_accum *groups = malloc(NH_FIT_GROUPS * SYN_OUT * sizeof *groups);
    double t[SYN_OUT], var[SYN_OUT], theta[NH_FIT_GROUPS], mean = 0, ss = 0;
    cr_assert_not_null(groups);
    synthetic_ensemble(7, groups, t, var);
    for (int left_out = 0; left_out < NH_FIT_GROUPS; ++left_out) {
        for (int k = 0; k < SYN_OUT; ++k) {
            nh_accum rest;
            nh_accum_reset(&rest);
            for (int g = 0; g < NH_FIT_GROUPS; ++g)
                if (g != left_out)
                    nh_accum_merge(&rest, &groups[g * SYN_OUT + k]);
            var[k] = nh_accum_variance(&rest);
        }
        nh_variance_fit part;
        cr_assert(eq(int, nh_variance_fit_compute(t, var, SYN_OUT, 0.0, 0.1, 2, &part), 0));
        theta[left_out] = part.C;
        mean += part.C / NH_FIT_GROUPS;
    }
    for (int g = 0; g < NH_FIT_GROUPS; ++g)
        ss += (theta[g] - mean) * (theta[g] - mean);
    const double expected = sqrt((NH_FIT_GROUPS - 1.0) / NH_FIT_GROUPS * ss);
    nh_variance_fit fit;
    cr_assert(eq(int, nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    free(groups);
    cr_assert(fabs(fit.C_err - expected) <= 1e-9 * expected, "C_err %.17g, by definition %.17g", fit.C_err, expected);
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

/* A synthetic ensemble of n trajectories of the same law as synthetic_ensemble, grouped as the engine
 * groups a run of n <= 152 trajectories (trajectory i in group i mod NH_FIT_GROUPS) or, with `by_block`,
 * as it grouped them before (block of 8 b in group b mod NH_FIT_GROUPS: 2 groups for 16). The fit with
 * its jackknife errors. */
static nh_variance_fit small_ensemble_fit(uint64_t seed, int n, int by_block)
{
    nh_accum groups[NH_FIT_GROUPS * SYN_OUT];
    double t[SYN_OUT], var[SYN_OUT];
    random_walks(seed, n, by_block, groups, t, var);
    nh_variance_fit fit;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, SYN_OUT, 0.0, 0.1, 2, &fit), 0));
    nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, SYN_OUT, 0.0, 0.1, 2, &fit);
    return fit;
}

Test(fit, sixteen_trajectories_give_an_error_with_fifteen_degrees_of_freedom)
{
    /* 400 independent ensembles of 16 trajectories. Grouped by trajectory, the jackknife has 16 groups and 15
     * degrees of freedom. Measured: the mean C_err is 0.99 x the scatter of C over the ensembles (the
     * tolerance, 20 %, is 4 x the scatter's own sampling error of 3.5 % plus the jackknife's small bias); C +-
     * t95 C_err covers the true C = 0.5 in 91 % of them (nominal 95 %: the delete-one jackknife of a variance
     * of 16 values is somewhat liberal; binomial sd over 400 is 1.4 %, the range allows 3.5 sd either way).
     * The old grouping (2 blocks of 8, one degree of freedom) gives a mean error of 0.82 x the scatter
     * (sqrt(2/pi) for one degree of freedom) and errors whose relative spread over the ensembles is 0.84,
     * against 0.42 with 16 groups; the sampling error of each spread is about 5 %, so 1.5x is a safe floor. */
    enum { R = 400 };
    double c[R], err[R], err_block[R], mean_c = 0, mean_err = 0, mean_block = 0;
    int covered = 0;
    for (int r = 0; r < R; ++r) {
        const nh_variance_fit fit = small_ensemble_fit(5000 + (uint64_t)r, 16, 0);
        const nh_variance_fit old = small_ensemble_fit(5000 + (uint64_t)r, 16, 1);
        cr_assert(fit.groups == 16 && fit.dof == 15 && old.groups == 2 && old.dof == 1);
        cr_assert(eq(dbl, fit.t95, nh_student_t95(15)));
        c[r] = fit.C;
        err[r] = fit.C_err;
        err_block[r] = old.C_err;
        mean_c += fit.C / R;
        mean_err += fit.C_err / R;
        mean_block += old.C_err / R;
        covered += fabs(fit.C - 0.5) <= fit.t95 * fit.C_err;
    }
    double ss = 0, ss_err = 0, ss_block = 0;
    for (int r = 0; r < R; ++r) {
        ss += (c[r] - mean_c) * (c[r] - mean_c);
        ss_err += (err[r] - mean_err) * (err[r] - mean_err);
        ss_block += (err_block[r] - mean_block) * (err_block[r] - mean_block);
    }
    const double spread = sqrt(ss / (R - 1)), cv = sqrt(ss_err / (R - 1)) / mean_err;
    const double cv_block = sqrt(ss_block / (R - 1)) / mean_block;
    cr_log_info("16 trajectories: mean C_err / scatter = %.3f (2 groups: %.3f), coverage of C +- t95 C_err %.3f, "
                "relative spread of C_err %.2f (2 groups: %.2f)", mean_err / spread, mean_block / spread,
                covered / (double)R, cv, cv_block);
    cr_assert(fabs(mean_err / spread - 1) < 0.2, "mean jackknife error %g vs scatter %g", mean_err, spread);
    cr_assert(covered >= 0.86 * R && covered <= 0.96 * R, "coverage %d of %d", covered, R);
    cr_assert(cv_block > 1.5 * cv, "relative spread of the errors: %g with 2 groups, %g with 16", cv_block, cv);
}

Test(fit, student_t_quantiles_match_the_tables)
{
    /* t_0.975 from standard tables (Abramowitz & Stegun 26.10; 4 decimals, so within 5e-5 plus the
     * expansion's own error, under 2e-5 from 11 degrees of freedom on) */
    const int dof[] = {1, 2, 5, 10, 11, 15, 19, 20, 30, 60, 120};
    const double t[] = {12.7062, 4.3027, 2.5706, 2.2281, 2.2010, 2.1314, 2.0930, 2.0860, 2.0423, 2.0003, 1.9799};
    for (size_t i = 0; i < sizeof dof / sizeof dof[0]; ++i)
        cr_assert(fabs(nh_student_t95(dof[i]) - t[i]) < 7e-5, "dof %d: %.6f, table %.4f", dof[i],
                  nh_student_t95(dof[i]), t[i]);
    cr_assert(isnan(nh_student_t95(0)));
}

Test(fit, missing_variances_are_left_out_and_no_data_is_no_fit)
{
    /* A NAN variance (fewer than two live trajectories) is missing data: the fit over the rows that have one
     * equals the fit of those rows alone, bit for bit; before, such rows entered as 0 and pulled C down. */
    double t[12], var[12], t_kept[12], var_kept[12];
    int kept = 0;
    for (int i = 0; i < 12; ++i) {
        t[i] = i;
        var[i] = i % 4 == 3 ? NAN : 1.0 + 0.25 * i + 0.01 * sin(i);
        if (!isnan(var[i])) {
            t_kept[kept] = t[i];
            var_kept[kept++] = var[i];
        }
    }
    nh_variance_fit with_gaps, alone;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, 12, 0.0, 0.1, 2, &with_gaps), 0));
    cr_assert(eq(int, nh_variance_fit_compute(t_kept, var_kept, kept, 0.0, 0.1, 2, &alone), 0));
    cr_assert(eq(int, with_gaps.points, kept));
    cr_assert(with_gaps.C == alone.C && with_gaps.a == alone.a && with_gaps.p == alone.p, "C %.17g vs %.17g",
              with_gaps.C, alone.C);
    for (int i = 0; i < 12; ++i)
        var[i] = i < 10 ? var[i] : NAN;   /* the window [9, 11] keeps one variance */
    nh_variance_fit none;
    cr_assert(eq(int, nh_variance_fit_compute(t, var, 12, 9.0, 0.1, 2, &none), 1));
    cr_assert(isnan(none.a) && isnan(none.C) && isnan(none.p) && isnan(none.C_over_h4) && none.points == 1);
    cr_assert(eq(u32, nh_variance_fit_caveats(&none), NH_FIT_NO_FIT));
}

/* n_traj synthetic trajectories x_i(t) = sqrt(a) z_i + s_i f(t), z and s standard normal, f = 0 (bounded),
 * sqrt(C t) realised as a random walk (random walk) or v t (drift, Var ~ t^2), in trajectory groups. */
enum { SHAPE_BOUNDED, SHAPE_WALK, SHAPE_DRIFT };
static unsigned synthetic_caveats(int shape, uint64_t seed, nh_variance_fit *fit)
{
    nh_accum groups[NH_FIT_GROUPS * SYN_OUT], total[SYN_OUT];
    double t[SYN_OUT], var[SYN_OUT];
    for (int i = 0; i < NH_FIT_GROUPS * SYN_OUT; ++i)
        nh_accum_reset(&groups[i]);
    for (int k = 0; k < SYN_OUT; ++k) {
        nh_accum_reset(&total[k]);
        t[k] = 1.0 + k;
    }
    for (int i = 0; i < 100; ++i) {
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, seed, (uint64_t)i);
        const double z = nh_pcg32_gaussian(&rng), v = nh_pcg32_gaussian(&rng);
        double w = 0;
        for (int k = 0; k < SYN_OUT; ++k) {
            w += nh_pcg32_gaussian(&rng);
            const double x = z + (shape == SHAPE_WALK ? 0.3 * w : shape == SHAPE_DRIFT ? 0.3 * v * t[k] : 0.0);
            nh_accum_add(&groups[(i % NH_FIT_GROUPS) * SYN_OUT + k], x);
            nh_accum_add(&total[k], x);
        }
    }
    for (int k = 0; k < SYN_OUT; ++k)
        var[k] = nh_accum_variance(&total[k]);
    nh_variance_fit_compute(t, var, SYN_OUT, 10.0, 0.1, 2, fit);
    nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, SYN_OUT, 10.0, 0.1, 2, fit);
    return nh_variance_fit_caveats(fit);
}

Test(fit, caveats_say_when_the_data_do_not_support_the_law)
{
    /* 100 trajectories over t in [10, 41]: a bounded variance (C = 0: a near-integrable run) has C within its
     * interval of 0 in about 95 % of seeds; a random walk (Var = 1 + 0.09 t, C / C_err about 8) has no caveat
     * but in the rare seed; a drift (Var = 1 + 0.09 t^2) grows faster than linearly. Counted over 40 seeds,
     * with margins of several binomial standard deviations (sd of a 95 % count over 40: 1.4). */
    int bounded = 0, walk = 0, drift = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
        nh_variance_fit fit;
        bounded += (synthetic_caveats(SHAPE_BOUNDED, seed, &fit) & NH_FIT_C_UNRESOLVED) != 0;
        walk += synthetic_caveats(SHAPE_WALK, seed, &fit) == 0;
        drift += (synthetic_caveats(SHAPE_DRIFT, seed, &fit) & NH_FIT_FASTER) != 0;
    }
    cr_log_info("caveats over 40 seeds: bounded flagged %d, random walk clean %d, drift flagged %d", bounded, walk,
                drift);
    cr_assert(bounded >= 32, "bounded variance flagged in %d of 40", bounded);
    cr_assert(walk >= 32, "random walk clean in %d of 40", walk);
    cr_assert(drift >= 38, "drift flagged in %d of 40", drift);
    cr_assert_str_not_empty(nh_variance_fit_caveat_text(NH_FIT_C_UNRESOLVED));
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

Test(fit, jackknife_needs_two_trajectories_outside_each_group)
{
    /* 9 trajectories fill a group of 8 and a group of 1: leaving out the 8 leaves one trajectory, whose
     * "variance" nh_accum_variance gives as 0; fitted, that made C_err about C itself (measured
     * 6.5e-7 for C = 1.2e-6 on a run of 9), an error estimate with no meaning. It must give none. With 2
     * trajectories in the second group each left-out set has a variance, and the errors are finite. */
    for (int second = 1; second <= 2; ++second) {
        enum { OUT = 6 };
        nh_accum groups[NH_FIT_GROUPS * OUT];
        double t[OUT], var[OUT];
        for (int i = 0; i < NH_FIT_GROUPS * OUT; ++i)
            nh_accum_reset(&groups[i]);
        for (int k = 0; k < OUT; ++k) {
            nh_accum all;
            nh_accum_reset(&all);
            t[k] = k;
            for (int j = 0; j < 8 + second; ++j) {
                const double x = (j % 3 - 1.0) * sqrt(1.0 + k) + 0.1 * j;   /* a variance growing with k */
                nh_accum_add(&groups[(j < 8 ? 0 : 1) * OUT + k], x);
                nh_accum_add(&all, x);
            }
            var[k] = nh_accum_variance(&all);
        }
        nh_variance_fit fit;
        cr_assert(eq(int, nh_variance_fit_compute(t, var, OUT, 0.0, 0.1, 2, &fit), 0));
        const int rc = nh_variance_fit_jackknife(t, groups, NH_FIT_GROUPS, OUT, 0.0, 0.1, 2, &fit);
        cr_assert(eq(int, fit.groups, 2));
        if (second == 1)
            cr_expect(rc == 1 && isnan(fit.C_err) && isnan(fit.a_err) && isnan(fit.p_err),
                      "a group of 1: rc %d, C_err %g, a_err %g, p_err %g", rc, fit.C_err, fit.a_err, fit.p_err);
        else
            cr_expect(rc == 0 && isfinite(fit.C_err) && isfinite(fit.a_err), "a group of 2: rc %d, C_err %g", rc,
                      fit.C_err);
    }
}

Test(observers, are_selected_by_name_and_role)
{
    unsigned mask;
    nh_error err;
    const int fitted = nh_observer_fitted(), event = nh_observer_event();
    cr_assert(fitted >= 0 && nh_observer_at(nh_observer_table_builtin(), fitted)->fitted);
    cr_assert(event >= 0 && nh_observer_at(nh_observer_table_builtin(), event)->event && event != fitted);
    const int reference = nh_observer_reference();
    cr_assert(reference >= 0 && nh_observer_at(nh_observer_table_builtin(), reference)->versus_reference && !nh_observer_at(nh_observer_table_builtin(), reference)->value);
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), NULL, &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, ((1u << nh_observer_count(nh_observer_table_builtin())) - 1u) & ~(1u << reference)), "all: but the costly global error");
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "all,error", &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_count(nh_observer_table_builtin())) - 1u), "all plus the global error by name");
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "constraint", &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_index(nh_observer_table_builtin(), "constraint")) | (1u << fitted)), "the fitted one is always on");
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "constraint,latitude", &mask, &err), NH_OK));
    cr_assert(eq(u32, mask, (1u << nh_observer_index(nh_observer_table_builtin(), "constraint")) | (1u << event) | (1u << fitted)));
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "constraint,", &mask, &err), NH_OK));
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "constrain", &mask, &err), NH_ERR_INPUT), "no prefix matches");
    cr_assert(strstr(err.msg, "unknown observer 'constrain' (did you mean 'constraint'?); known observers: all, ") !=
              NULL, "a prefix is suggested, not taken: %s", err.msg);
    cr_assert(eq(int, nh_observer_select(nh_observer_table_builtin(), "dH,,x", &mask, &err), NH_ERR_INPUT));
    for (int i = 0; i < nh_observer_count(nh_observer_table_builtin()); ++i) {
        const nh_observer *o = nh_observer_at(nh_observer_table_builtin(), i);
        cr_assert(o->label && o->extreme_key && o->n_columns >= 1, "%s", o->name);
        cr_assert(eq(int, nh_observer_index(nh_observer_table_builtin(), o->name), i));
    }
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Signed values spread over 12 decades (|x| = 10^U(-14, -2), random sign): the sketch's quantiles against
 * the exact order statistics. Tolerance: one bin, a factor 10^(1/8) = 1.334 in |x| (stats.h); the
 * interpolation inside a bin usually does better, so the mean error is also bounded (by half a bin). */
Test(sketch, quantiles_within_one_bin_of_the_exact_order_statistics)
{
    enum { N = 20001 };
    static double x[N];
    nh_sketch s, half_a, half_b;
    memset(&s, 0, sizeof s);
    memset(&half_a, 0, sizeof half_a);
    memset(&half_b, 0, sizeof half_b);
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 7, 3);
    for (int i = 0; i < N; ++i) {
        const double u = nh_pcg32_uniform(&rng), sign = nh_pcg32_uniform(&rng) < 0.3 ? -1.0 : 1.0;
        x[i] = sign * pow(10.0, -14.0 + 12.0 * u);
        nh_sketch_add(&s, x[i]);
        nh_sketch_add(i % 2 ? &half_a : &half_b, x[i]);
    }
    nh_sketch_merge(&half_a, &half_b);
    cr_assert(memcmp(&half_a, &s, sizeof s) == 0, "merging two halves gives the sketch of the whole");
    qsort(x, N, sizeof *x, compare_doubles);
    const double bin = pow(10.0, 1.0 / NH_SKETCH_PER_DECADE);
    double log_error_sum = 0.0;
    int n_levels = 0;
    for (double level = 0.01; level < 1.0; level += 0.02, ++n_levels) {
        const double exact = x[(int)llround(level * (N - 1))], estimate = nh_sketch_quantile(&s, level);
        cr_assert(exact * estimate > 0, "level %g: sign of %g vs exact %g", level, estimate, exact);
        const double ratio = fabs(estimate / exact);
        cr_assert(ratio < bin && ratio > 1.0 / bin, "level %g: %g vs exact %g", level, estimate, exact);
        log_error_sum += fabs(log10(ratio));
    }
    cr_assert(log_error_sum / n_levels < 0.5 / NH_SKETCH_PER_DECADE, "mean |log10 error| %g",
              log_error_sum / n_levels);
}

Test(sketch, zero_nan_and_out_of_range_values)
{
    nh_sketch s;
    memset(&s, 0, sizeof s);
    cr_assert(isnan(nh_sketch_quantile(&s, 0.5)), "an empty sketch has no quantile");
    nh_sketch_add(&s, NAN);
    cr_assert(eq(long, (long)nh_sketch_total(&s), 0L), "NaN is not counted");
    nh_sketch_add(&s, 0.0);
    cr_assert(eq(dbl, nh_sketch_quantile(&s, 0.5), 0.0));
    nh_sketch_add(&s, 1e30);
    nh_sketch_add(&s, -1e30);
    cr_assert(nh_sketch_quantile(&s, 1.0) >= pow(10.0, NH_SKETCH_MAX_EXP), "above the range: its bound");
    cr_assert(nh_sketch_quantile(&s, 0.0) <= -pow(10.0, NH_SKETCH_MAX_EXP), "below the range: its bound");
    cr_assert(nh_sketch_bin(-1e30) == 0 && nh_sketch_bin(1e30) == NH_SKETCH_BINS - 1);
}

/* 37 states of the CVT (a driver, so every built-in observer applies), observed together (two batches) and one
 * by one: the same bits. */
Test(observers, a_batch_of_states_gives_the_bits_of_one_by_one)
{
    const nh_system_type *cvt = NULL;
    for (int i = 0; i < nh_builtin_system_count(); ++i)
        if (!strcmp(nh_builtin_system_at(i)->name, "cvt"))
            cvt = nh_builtin_system_at(i);
    cr_assert(cvt != NULL);
    nh_system s;
    nh_error err;
    cr_assert(eq(int, nh_system_init(&s, cvt, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    enum { STATES = 37 };
    const nh_observer_table *t = nh_observer_table_builtin();
    const unsigned applying = nh_observer_mask(t, &s);
    cr_assert(eq(u32, applying & (1u << nh_observer_index(t, "passenger_energy")), 1u << nh_observer_index(t, "passenger_energy")));
    static double state[STATES][2 * NH_MAX_DIM], batch[STATES][NH_MAX_OBSERVERS], single[STATES][NH_MAX_OBSERVERS];
    const double *q[STATES], *v[STATES];
    const nh_initial_values *init[STATES];
    nh_initial_values init_values[STATES];
    double *values[STATES];
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 3, 9);
    for (int j = 0; j < STATES; ++j) {
        for (int i = 0; i < 2 * s.n; ++i)
            state[j][i] = 4.0 * nh_pcg32_uniform(&rng) - 2.0;
        q[j] = state[j];
        v[j] = state[j] + s.n;
        nh_initial_values_compute(&s, q[j], v[j], &init_values[j]);
        init_values[j].energy += nh_pcg32_uniform(&rng);   /* a state later on its trajectory */
        init[j] = &init_values[j];
        values[j] = batch[j];
        nh_observe(t, &s, q[j], v[j], init[j], single[j]);
    }
    nh_observe_states(t, applying, &s, STATES, q, v, init, values);
    const int dH = nh_observer_index(t, "dH"), rel = nh_observer_index(t, "rel_energy"),
              passenger = nh_observer_index(t, "passenger_energy");
    for (int j = 0; j < STATES; ++j) {   /* the defining expressions, computed here */
        const double energy = nh_energy(&s, q[j], v[j]), driver = cvt->driver_energy(&s, q[j], v[j]);
        cr_assert(eq(dbl, batch[j][dH], energy - init[j]->energy));
        cr_assert(eq(dbl, batch[j][rel], (energy - init[j]->energy) / fabs(init[j]->energy)));
        cr_assert(eq(dbl, batch[j][passenger], (energy - driver) - (init[j]->energy - init[j]->driver_energy)));
    }
    for (int j = 0; j < STATES; ++j)
        for (int i = 0; i < nh_observer_count(t); ++i)
            cr_assert(memcmp(&batch[j][i], &single[j][i], sizeof(double)) == 0, "state %d, observer %s: %.17g vs %.17g",
                      j, nh_observer_at(t, i)->name, batch[j][i], single[j][i]);
}
