/* Layer solvers: both nonlinear solver backends converge to round-off and report failure, and the
 * shared finite-difference Jacobian rule. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "nhens/solver.h"

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
    nh_nonlinear_problem pb = {2, circle_residual, circle_jacobian, NULL, 4.0, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
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

/* The one-dimensional F(x) = x - root (root in ctx) with F' = 1, and, for two tests, the variants
 * below; solved once with each backend from the same guess. */
static int linear_residual(const double *x, double *r, void *ctx)
{
    r[0] = x[0] - *(const double *)ctx;
    return 0;
}

static int unit_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    (void)x;
    j[0] = 1.0;
    return 0;
}

/* nh_solver_solve with a fresh solver of the given kind; x is overwritten, iterations may be NULL. */
static int solve_once(nh_solver_kind kind, const nh_nonlinear_problem *pb, double *x, long *iterations)
{
    nh_error err;
    nh_solver *s = nh_solver_create(kind, pb->dim, &err);
    cr_assert(s != NULL, "%s", err.msg);
    const int rc = nh_solver_solve(s, pb, x);
    if (iterations)
        *iterations = nh_solver_get_stats(s).iterations;
    nh_solver_free(s);
    return rc;
}

/* From the guess 0 to the root 1e4: one Newton step of length 1e4. KINSOL's default cap on the Newton
 * step, max(1000 |x0|, 1) = 1 here, would cut it to 1, take five capped steps and give up
 * (KIN_MXNEWT_5X_EXCEEDED); the backends take the full step alike, as the Newton backend has no cap. */
Test(solver, both_backends_take_a_long_newton_step_whole)
{
    double root = 1e4;
    nh_nonlinear_problem pb = {1, linear_residual, unit_jacobian, &root, 1e4, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    for (int kind = 0; kind < 2; ++kind) {
        double x[1] = {0.0};
        long iterations = 0;
        const int rc = solve_once((nh_solver_kind)kind, &pb, x, &iterations);
        cr_assert(eq(int, rc, NH_OK), "backend %d", kind);
        cr_assert(eq(dbl, x[0], 1e4), "backend %d", kind);   /* exact: a linear residual, one full step */
        cr_assert(eq(long, iterations, 1L), "backend %d", kind);
    }
}

/* From 1 + 4.4e-15 (20 ulp) to the root 1 in a chord solve: |F| is above the FTOL test, so neither
 * backend may accept the guess (solver.h: a guess is accepted unchanged only below 0.01 FTOL).
 * KINSOL's own initial-guess test is 0.01 times its stopping tolerance, which for a chord solve is the
 * stall tolerance: it returned the guess. */
Test(solver, both_backends_iterate_from_a_guess_above_the_tolerance)
{
    double root = 1.0;
    nh_nonlinear_problem pb = {1, linear_residual, unit_jacobian, &root, 1.0, NH_JACOBIAN_EACH_SOLVE, 0, NULL};
    for (int kind = 0; kind < 2; ++kind) {
        double x[1] = {1.0 + 20 * 0x1p-52};
        const int rc = solve_once((nh_solver_kind)kind, &pb, x, NULL);
        cr_assert(eq(int, rc, NH_OK), "backend %d", kind);
        cr_assert(eq(dbl, x[0], 1.0), "backend %d", kind);   /* exact: one chord step of a linear F */
    }
}

/* F = (x0 - 1, x1 - 2) but with F1 = NaN near x0 = 1: one Newton step from (0, 2) lands on (1, 2), where
 * F = (0, NaN). A max norm that skips NaN (N_VMaxNorm's comparison does) would call that converged. */
static int nan_near_root_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    r[0] = x[0] - 1.0;
    r[1] = fabs(x[0] - 1.0) < 0.5 ? NAN : x[1] - 2.0;
    return 0;
}

static int identity_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    (void)x;
    j[0] = j[3] = 1.0;
    j[1] = j[2] = 0.0;
    return 0;
}

Test(solver, both_backends_refuse_a_residual_with_a_nan_entry)
{
    nh_nonlinear_problem pb = {2, nan_near_root_residual, identity_jacobian, NULL, 1.0, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    for (int kind = 0; kind < 2; ++kind) {
        double x[2] = {0.0, 2.0};
        const int rc = solve_once((nh_solver_kind)kind, &pb, x, NULL);
        cr_assert(eq(int, rc, NH_STEP_NO_CONVERGENCE), "backend %d", kind);
    }
}

/* F(x) = x - 1, which cannot be evaluated beyond x = 1.5; the Jacobian given is 0.5, so the first step
 * from 0 lands on 2. A failed evaluation ends the attempt in both backends (solver.h): KINSOL, told
 * the failure was recoverable, would halve the step and converge where the Newton backend fails. */
static int bounded_residual(const double *x, double *r, void *ctx)
{
    linear_residual(x, r, ctx);
    return x[0] > 1.5;
}

static int half_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    (void)x;
    j[0] = 0.5;   /* half the true derivative: the first step overshoots to 2 */
    return 0;
}

Test(solver, both_backends_stop_where_the_residual_cannot_be_evaluated)
{
    double root = 1.0;
    nh_nonlinear_problem pb = {1, bounded_residual, half_jacobian, &root, 1.0, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    for (int kind = 0; kind < 2; ++kind) {
        double x[1] = {0.0};
        const int rc = solve_once((nh_solver_kind)kind, &pb, x, NULL);
        cr_assert(eq(int, rc, NH_STEP_NO_CONVERGENCE), "backend %d", kind);
    }
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
        nh_nonlinear_problem pb = {1, no_root_residual, no_root_jacobian, NULL, 1.0, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
        double x[1] = {0.3};
        cr_assert(eq(int, nh_solver_solve(s, &pb, x), NH_STEP_NO_CONVERGENCE), "backend %d", kind);
        cr_assert(eq(long, nh_solver_get_stats(s).failures, 1L));
        nh_solver_free(s);
    }
}

/* The circle problem counting its calls; its residual_and_jacobian is the two calls in one (failing
 * when told to, which must send the backend back to the separate calls). */
typedef struct counted { int residuals, jacobians, combined, combined_fails; } counted;

static int counted_residual(const double *x, double *r, void *ctx)
{
    ((counted *)ctx)->residuals++;
    return circle_residual(x, r, NULL);
}

static int counted_jacobian(const double *x, double *j, void *ctx)
{
    ((counted *)ctx)->jacobians++;
    return circle_jacobian(x, j, NULL);
}

static int counted_combined(const double *x, double *r, double *j, void *ctx)
{
    counted *c = ctx;
    c->combined++;
    return c->combined_fails || circle_residual(x, r, NULL) || circle_jacobian(x, j, NULL);
}

/* Solve the counted circle from x (overwritten by the root) with the given backend and reuse. */
static void solve_counted(nh_solver_kind kind, int reuse, int with_combined, int combined_fails, double *x,
                          counted *calls, long *iterations)
{
    nh_error err;
    nh_solver *s = nh_solver_create(kind, 2, &err);
    cr_assert(s != NULL, "%s", err.msg);
    *calls = (counted){.combined_fails = combined_fails};
    nh_nonlinear_problem pb = {2, counted_residual, counted_jacobian, calls, 4.0, reuse, 0,
                               with_combined ? counted_combined : NULL};
    cr_assert(eq(int, nh_solver_solve(s, &pb, x), NH_OK), "backend %d, reuse %d", kind, reuse);
    *iterations = nh_solver_get_stats(s).iterations;
    nh_solver_free(s);
}

/* The same solve with one backend three ways (separate calls; with residual_and_jacobian; with one that
 * always fails): the iterates bit for bit and the iteration count must agree, the failing one falls back
 * to exactly the separate calls, and the counts of the plain and combined solves are returned for the
 * caller's contract. */
static void solve_three_ways(nh_solver_kind kind, int reuse, const double *from, counted *plain, counted *joint)
{
    double x_plain[2], x_joint[2], x_fallback[2];
    memcpy(x_plain, from, sizeof x_plain);
    memcpy(x_joint, from, sizeof x_joint);
    memcpy(x_fallback, from, sizeof x_fallback);
    counted fallback;
    long it_plain, it_joint, it_fallback;
    solve_counted(kind, reuse, 0, 0, x_plain, plain, &it_plain);
    solve_counted(kind, reuse, 1, 0, x_joint, joint, &it_joint);
    solve_counted(kind, reuse, 1, 1, x_fallback, &fallback, &it_fallback);
    const int same_bits = !memcmp(x_plain, x_joint, sizeof x_plain) && !memcmp(x_plain, x_fallback, sizeof x_plain);
    cr_assert(same_bits, "backend %d, reuse %d", kind, reuse);
    cr_assert(it_plain == it_joint && it_plain == it_fallback, "backend %d, reuse %d: iterations %ld %ld %ld", kind,
              reuse, it_plain, it_joint, it_fallback);
    cr_assert(plain->combined == 0 && fallback.combined == joint->combined, "backend %d, reuse %d", kind, reuse);
    cr_assert(fallback.residuals == plain->residuals && fallback.jacobians == plain->jacobians,
              "backend %d, reuse %d: fallback", kind, reuse);
    /* every matrix the combined call gave was used: one residual and one matrix call fewer per call */
    cr_assert(joint->residuals == plain->residuals - joint->combined &&
                  joint->jacobians == plain->jacobians - joint->combined,
              "backend %d, reuse %d: residuals %d -> %d, matrices %d -> %d, combined %d", kind, reuse,
              plain->residuals, joint->residuals, plain->jacobians, joint->jacobians, joint->combined);
}

/* Both backends take the first matrix of a solve (at the guess) from residual_and_jacobian with the
 * guess's residual (KINSOL asks for the matrix there, and the backend hands it the one that came with the
 * residual). From a guess this near the root (a first step of 2e-4 relative, below NH_SOLVER_FAR_STEP)
 * that is its only use, full Newton or chord. Counts are exact (no tolerance): they are the backends'
 * contract. */
Test(solver, both_backends_take_the_first_matrix_with_the_guess_residual)
{
    const int reuses[2] = {NH_JACOBIAN_EACH_ITERATION, NH_JACOBIAN_EACH_SOLVE};
    const double near_root[2] = {1.4140, 1.4145};
    for (int kind = 0; kind < 2; ++kind)
        for (int k = 0; k < 2; ++k) {
            counted plain, joint;
            solve_three_ways((nh_solver_kind)kind, reuses[k], near_root, &plain, &joint);
            cr_assert(eq(int, joint.combined, 1), "backend %d, reuse %d", kind, reuses[k]);
        }
}

/* Full Newton also takes the matrix of its next iteration with the residual after a step larger than
 * NH_SOLVER_FAR_STEP, after which it cannot have converged: from (1, 1.2) the relative steps are about
 * 0.3, 3e-2, 6e-4, 2e-7, so two such steps and the guess give three combined calls, every matrix of them
 * used (the chord iteration, which builds one matrix per solve, keeps to the guess's call: the test above).
 * The same for both backends. */
Test(solver, full_newton_takes_the_next_matrix_with_the_residual_after_a_far_step)
{
    const double far_from_root[2] = {1.0, 1.2};
    for (int kind = 0; kind < 2; ++kind) {
        counted plain, joint;
        solve_three_ways((nh_solver_kind)kind, NH_JACOBIAN_EACH_ITERATION, far_from_root, &plain, &joint);
        cr_assert(eq(int, joint.combined, 3), "backend %d: combined calls %d (iterations: %d matrices)", kind,
                  joint.combined, plain.jacobians);
    }
}

/* A scale that overstates the residual's terms a million times (as |z|/h does for the rows of a
 * coordinate that does not grow) puts FTOL * scale at 5e-10: full Newton from (1, 1.2) passes it after the
 * step of relative size 2e-7 with the root still ~1e-13 away (about 180 ulp), and a chord solve earlier.
 * The end of the solve (solver.h) takes both to the root to a few ulp, in every matrix policy. */
Test(solver, both_backends_end_at_the_rounding_floor_whatever_the_scale)
{
    const int reuses[2] = {NH_JACOBIAN_EACH_ITERATION, NH_JACOBIAN_EACH_SOLVE};
    for (int kind = 0; kind < 2; ++kind)
        for (int k = 0; k < 2; ++k) {
            nh_nonlinear_problem pb = {2, circle_residual, circle_jacobian, NULL, 4e6, reuses[k], 0, NULL};
            double x[2] = {1.0, 1.2};
            cr_assert(eq(int, solve_once((nh_solver_kind)kind, &pb, x, NULL), NH_OK), "backend %d", kind);
            cr_assert(ieee_ulp_eq(dbl, x[0], sqrt(2.0), 4), "backend %d, reuse %d: %.17g", kind, reuses[k], x[0]);
            cr_assert(ieee_ulp_eq(dbl, x[1], sqrt(2.0), 4), "backend %d, reuse %d: %.17g", kind, reuses[k], x[1]);
        }
}

/* F(x) = x^3 - 2, which cannot be evaluated within 1e-10 of its root. The chord iteration from 1.3 (rate
 * 0.06) passes the FTOL test (scale 1e8) about 1e-9 from the root, and the end of the solve steps into that
 * region: it must keep the last point it could evaluate rather than return the one it could not. */
static int cube_root_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    r[0] = x[0] * x[0] * x[0] - 2.0;
    return fabs(x[0] - cbrt(2.0)) < 1e-10;
}

static int cube_root_jacobian(const double *x, double *j, void *ctx)
{
    (void)ctx;
    j[0] = 3.0 * x[0] * x[0];
    return 0;
}

Test(solver, the_end_of_a_solve_keeps_a_point_it_could_evaluate)
{
    nh_nonlinear_problem pb = {1, cube_root_residual, cube_root_jacobian, NULL, 1e8, NH_JACOBIAN_EACH_SOLVE, 0, NULL};
    for (int kind = 0; kind < 2; ++kind) {
        double x[1] = {1.3}, r[1];
        const int rc = solve_once((nh_solver_kind)kind, &pb, x, NULL);
        cr_assert(eq(int, rc, NH_OK), "backend %d", kind);
        cr_assert(eq(int, cube_root_residual(x, r, NULL), 0), "backend %d returned x = %.17g, which F refuses", kind, x[0]);
    }
}

/* A linear F(x) = A x - b with the 3 x 3 Hilbert matrix (condition 524), full Newton without
 * residual_and_jacobian, from 0: the first step lands within the LU's rounding of the root and passes the
 * FTOL test (scale 100). Both backends then end the solve with the same chord steps and return the same
 * bits. (A backend that skipped them after a step over NH_SOLVER_FAR_STEP, as if the factors were spent,
 * returns x0 = 171.00000000000074 after 1 iteration against the 171.00000000000091 of 2.) */
static int linear3_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    static const double a[9] = {1.0, 1.0 / 2, 1.0 / 3, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 3, 1.0 / 4, 1.0 / 5};
    static const double b[3] = {1.0, -2.0, 3.0};
    for (int i = 0; i < 3; ++i)
        r[i] = a[3 * i] * x[0] + a[3 * i + 1] * x[1] + a[3 * i + 2] * x[2] - b[i];
    return 0;
}

static int linear3_jacobian(const double *x, double *j, void *ctx)
{
    (void)x;
    (void)ctx;
    static const double a[9] = {1.0, 1.0 / 2, 1.0 / 3, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 3, 1.0 / 4, 1.0 / 5};
    memcpy(j, a, sizeof a);
    return 0;
}

Test(solver, both_backends_end_a_linear_full_newton_solve_alike)
{
    nh_nonlinear_problem pb = {3, linear3_residual, linear3_jacobian, NULL, 100.0, NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    double x[2][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
    long iterations[2] = {0, 0};
    for (int kind = 0; kind < 2; ++kind)
        cr_assert(eq(int, solve_once((nh_solver_kind)kind, &pb, x[kind], &iterations[kind]), NH_OK), "backend %d", kind);
    for (int i = 0; i < 3; ++i)
        cr_assert(eq(dbl, x[0][i], x[1][i]), "x%d: kinsol %.17g, newton %.17g (iterations %ld, %ld)", i, x[0][i], x[1][i],
                  iterations[0], iterations[1]);
}

Test(fdjac, matches_the_analytic_jacobian_to_the_forward_difference_error)
{
    /* forward differences of step d_j = NH_FD_STEP max(1, |x_j|): for the quadratic row the error is exactly
     * (F'' / 2) d_j = d_j (1e-7 at x0 = 0.7, 3e-7 at x1 = -3), for the linear row rounding only
     * (|F| eps / d ~ 1e-9); tolerance 1e-8 on each, which the documented step rule meets and any
     * other step (or a central rule) does not */
    const double x[2] = {0.7, -3.0};
    const double expected_error[4] = {NH_FD_STEP, 3.0 * NH_FD_STEP, 0.0, 0.0};
    double fd[4], exact[4], work[NH_FD_WORK(2)];
    cr_assert(eq(int, nh_fd_jacobian(2, circle_residual, NULL, x, fd, work), 0));
    circle_jacobian(x, exact, NULL);
    for (int i = 0; i < 4; ++i)
        cr_assert(fabs(fd[i] - exact[i] - expected_error[i]) < 1e-8, "entry %d: %.12g vs %.12g", i, fd[i], exact[i]);
}

static int failing_residual(const double *x, double *r, void *ctx)
{
    (void)ctx;
    r[0] = x[0];
    return x[0] > 1.0; /* F cannot be evaluated beyond 1 */
}

Test(fdjac, reports_a_failed_evaluation)
{
    double x[1] = {1.0 - 1e-9}, jac[1], work[NH_FD_WORK(1)];
    cr_assert(eq(int, nh_fd_jacobian(1, failing_residual, NULL, x, jac, work), 1));
}
