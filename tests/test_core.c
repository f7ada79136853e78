/* Building blocks: parameters, dense linear algebra, both solver backends, Welford/Chan
 * accumulators and the variance-law fit. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "nhens/linalg.h"
#include "nhens/params.h"
#include "nhens/solver.h"
#include "nhens/stats.h"

static const nh_param_def DEFS[] = {
    {"alpha", 0.5, 0.0, 1.0, 0, "a weight", NULL},
    {"n", 3, 2, 15, 1, "a count", NULL},
};

Test(params, overrides_and_messages)
{
    nh_param_set set;
    nh_error err;
    nh_params_defaults(&set, 2, DEFS);
    cr_assert(eq(int, nh_params_apply_list(&set, "alpha=0.25,n=4", "m", &err), NH_OK));
    cr_assert(eq(dbl, set.value[0], 0.25));
    cr_assert(eq(dbl, set.value[1], 4.0));
    cr_assert(eq(int, nh_params_apply(&set, "alpha=1.5", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "alpha=1.5") && strstr(err.msg, "[0, 1]"), "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "n=2.5", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "integer") != NULL, "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "beta=1", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "beta") && strstr(err.msg, "alpha, n"), "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "alpha=nan", "m", &err), NH_ERR_INPUT));
    cr_assert(eq(int, nh_params_apply(&set, "alpha", "m", &err), NH_ERR_INPUT));
}

Test(linalg, lu_solves_a_pivoting_system)
{
    /* exact answer (1, 2, 3); the zero leading entry forces a row exchange */
    double a[9] = {0, 2, 1, 1, 1, 1, 2, 1, 0}, b[3] = {7, 6, 4};
    int piv[3];
    cr_assert(eq(int, nh_lu_factor(3, a, piv), 0));
    nh_lu_solve(3, a, piv, b);
    for (int i = 0; i < 3; ++i)
        cr_assert(ieee_ulp_eq(dbl, b[i], i + 1.0, 8));
    double singular[4] = {1, 2, 2, 4};
    cr_assert(eq(int, nh_lu_factor(2, singular, piv), 1));
}

Test(linalg, spd_solve)
{
    double c[4] = {4, 2, 2, 3}, b[2] = {10, 8}; /* solution (1.75, 1.5) */
    cr_assert(eq(int, nh_spd_solve(2, c, b), 0));
    cr_assert(ieee_ulp_eq(dbl, b[0], 1.75, 8));
    cr_assert(ieee_ulp_eq(dbl, b[1], 1.5, 8));
    double notspd[4] = {1, 2, 2, 1}, r[2] = {1, 1};
    cr_assert(eq(int, nh_spd_solve(2, notspd, r), 1));
}

/* F(x) = (x0^2 + x1^2 - 4, x0 - x1): root (sqrt 2, sqrt 2). */
static int circle_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    r[0] = x[0] * x[0] + x[1] * x[1] - 4.0;
    r[1] = x[0] - x[1];
    return 0;
}

static int circle_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    j[0] = 2 * x[0];
    j[1] = 2 * x[1];
    j[2] = 1;
    j[3] = -1;
    return 0;
}

static void solve_circle(nh_solver_kind kind)
{
    nh_error err;
    nh_solver *s = nh_solver_create(kind, 2, &err);
    cr_assert(s != NULL, "%s", err.msg);
    nh_nonlinear_problem pb = {2, circle_residual, circle_jacobian, NULL, 4.0, 0};
    double x[2] = {1.0, 1.2};
    cr_assert(eq(int, nh_solver_solve(s, &pb, x), NH_OK));
    /* the convergence test stops at ~1e-15 relative residual: the root to a few ulp */
    cr_assert(ieee_ulp_eq(dbl, x[0], sqrt(2.0), 4));
    cr_assert(ieee_ulp_eq(dbl, x[1], sqrt(2.0), 4));
    nh_solver_stats st = nh_solver_get_stats(s);
    cr_assert(st.solves == 1 && st.iterations >= 3 && st.iterations <= 8, "iterations %ld", st.iterations);
    nh_solver_free(s);
}

Test(solver, kinsol_converges_to_round_off)
{
    solve_circle(NH_SOLVER_KINSOL);
}

Test(solver, newton_converges_to_round_off)
{
    solve_circle(NH_SOLVER_NEWTON);
}

/* No real root: x^2 + 1 = 0. Both backends must report failure, not hang or return garbage. */
static int no_root_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    r[0] = x[0] * x[0] + 1.0;
    return 0;
}

static int no_root_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    j[0] = 2 * x[0];
    return 0;
}

Test(solver, both_backends_report_no_convergence)
{
    for (int kind = 0; kind < 2; ++kind) {
        nh_error err;
        nh_solver *s = nh_solver_create((nh_solver_kind)kind, 1, &err);
        nh_nonlinear_problem pb = {1, no_root_residual, no_root_jacobian, NULL, 1.0, 0};
        double x[1] = {0.3};
        cr_assert(eq(int, nh_solver_solve(s, &pb, x), NH_STEP_NO_CONVERGENCE), "backend %d", kind);
        cr_assert(eq(long, nh_solver_get_stats(s).failures, 1L));
        nh_solver_free(s);
    }
}

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
