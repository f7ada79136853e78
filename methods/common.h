/* Pieces shared by the method files (methods-private): the explicit predictor that warm-starts
 * implicit steps, residual scales for the solver's round-off test, and the kick and multiplier of the
 * linear fast paths. */
#ifndef NHENS_METHODS_COMMON_H
#define NHENS_METHODS_COMMON_H

#include "nhens/linalg.h"
#include "nhens/method.h"
#include "stepper.h"

#include <math.h>

/* A copy of a step's few doubles (q, v: n <= 31) that a step has just stored one at a time, as a loop in
 * the files built with scalar loops (CMakeLists.txt): one load per store, where memcpy's wide loads span
 * several stores and wait until they reach the cache. A composition's stage starts right where the one
 * before stored its q (docs/decisions/0010-scalar-loops-in-step-code.md). */
static inline void nh_copy(int n, const double *restrict from, double *restrict to)
{
    for (int i = 0; i < n; ++i)
        to[i] = from[i];
}

/* Explicit Euler on the index-1 ODE: v1 = v0 + h a(q0, v0), lam = lambda*(q0, v0). The warm start of a
 * one-step implicit method without a history (O(h^2) from the solution, so Newton needs 2-3 steps). */
static inline int nh_method_predict(const nh_system *s, double h, const double *q0, const double *v0,
                                    double *v1, double *lam)
{
    double dq[NH_MAX_DIM], dv[NH_MAX_DIM];
    int rc = nh_index1_rhs(s, q0, v0, dq, dv, lam);
    if (rc)
        return rc;
    for (int i = 0; i < nh_dim(s); ++i)
        v1[i] = v0[i] + h * dv[i];
    return NH_OK;
}

/* The past solutions the extrapolations below read (at most NH_HISTORY_POINTS). */
enum { NH_QUADRATIC_POINTS = 3, NH_QUINTIC_POINTS = 6 };
_Static_assert((int)NH_QUINTIC_POINTS <= (int)NH_HISTORY_POINTS, "the step history keeps the quintic's points");

/* x = the quadratic through the last three solutions of a trajectory's steps of one size (newest first,
 * dim apart): O(h^3) from this step's solution, with nothing to evaluate. */
static inline void nh_history_quadratic(int dim, const double *restrict past, double *restrict x)
{
    const double *restrict middle = past + dim, *restrict oldest = middle + dim;
    for (int i = 0; i < dim; ++i)
        x[i] = 3.0 * (past[i] - middle[i]) + oldest[i];
}

/* x = the quintic through the last six (newest first, dim apart): O(h^6), the sixth difference left out.
 * At the quartic's h = 0.1 each degree gains about omega h ~ 0.3, so the quintic's guess is about 8x
 * closer than the cubic's; where omega h nears 1 a high degree gains nothing (docs/decisions/0006). */
static inline void nh_history_quintic(int dim, const double *restrict past, double *restrict x)
{
    const double *restrict p1 = past + dim, *restrict p2 = p1 + dim, *restrict p3 = p2 + dim, *restrict p4 = p3 + dim;
    const double *restrict p5 = p4 + dim;
    for (int i = 0; i < dim; ++i)
        x[i] = 6.0 * (past[i] + p4[i]) - 15.0 * (p1[i] + p3[i]) + 20.0 * p2[i] - p5[i];
}

/* The guess for unknowns x = (v1, lam) (DLA, dd): the quadratic through the past solutions when there
 * are any, else explicit Euler on the index-1 ODE. */
static inline int nh_method_guess_velocity(const nh_system *s, double h, const double *q0, const double *v0,
                                           const double *past, double *x)
{
    if (!past)
        return nh_method_predict(s, h, q0, v0, x, x + nh_dim(s));
    nh_history_quadratic(nh_dim(s) + nh_constraint_count(s), past, x);
    return NH_OK;
}

/* Solve pb for the unknowns x of a step from (q, v) with step h. The method's guess(ctx, x, past) writes
 * the first guess, given past: the stepper's recorded solutions (nh_stepper_history) when there are at
 * least `points` of them, else NULL, when it uses its own (typically nh_method_predict, O(h^2)). A solve
 * that fails from a guess made with the history starts again from guess(ctx, x, NULL). A method whose
 * residual scale reads the guess passes scale_at(ctx, x), which sets pb->scale at each guess (else
 * NULL). The method calls nh_stepper_remember after the step. */
static inline int nh_method_solve(nh_stepper *st, nh_nonlinear_problem *pb, double h, const double *q,
                                  const double *v, int points, int (*guess)(void *ctx, double *x, const double *past),
                                  double (*scale_at)(void *ctx, const double *x), double *x)
{
    const double *past = NULL;
    if (nh_stepper_history(st, h, q, v, &past) < points)
        past = NULL;
    for (;; past = NULL) {
        int rc = guess(pb->ctx, x, past);
        if (rc)
            return rc;
        if (scale_at)
            pb->scale = scale_at(pb->ctx, x);
        rc = nh_solver_solve(st->solver, pb, x);
        if (rc == NH_OK || !past)
            return rc;
    }
}

/* Magnitude of the terms of a momentum-balance residual M(v1 - v0) + h grad V + ...: the solver
 * stops when the residual is at round-off of this. */
static inline double nh_method_momentum_scale(const nh_system *s, double h, const double *v0, const double *grad)
{
    double scale = 0.0;
    for (int i = 0; i < nh_dim(s); ++i) {   /* comparisons, not libm's fmax calls: a NaN term is skipped either way */
        const double a = fabs(s->mass[i] * v0[i]), b = fabs(h * grad[i]);
        scale = a > scale ? a : scale;
        scale = b > scale ? b : scale;
    }
    return scale > 0.0 ? scale : 1.0;
}

/* kick (n x m) = scale M^-1 A^T from a = A (m x n): the velocity a unit multiplier of a step's constraint
 * force adds (DLA^{0,1}, SPARK, Newmark with beta = 0); inlined with m a constant (NH_WITH_CONSTRAINT_COUNT). */
static inline __attribute__((always_inline)) void nh_kick_matrix_for(const nh_system *s, const int m, double scale,
                                                                     const double *restrict a, double *restrict kick)
{
    for (int i = 0; i < nh_dim(s); ++i)
        for (int k = 0; k < m; ++k)
            kick[i * m + k] = scale * nh_inv_mass(s)[i] * a[k * nh_dim(s) + i];
}

static inline void nh_kick_matrix(const nh_system *s, double scale, const double *a, double *kick)
{
#define NH_KICK(m) nh_kick_matrix_for(s, m, scale, a, kick)
    NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(s), NH_KICK);
#undef NH_KICK
}

/* out = base + kick lam (n entries; kick n x m) */
static inline __attribute__((always_inline)) void nh_kicked_velocity_for(int n, const int m, const double *base,
                                                                         const double *kick, const double *lam,
                                                                         double *out)
{
    for (int i = 0; i < n; ++i) {
        double sum = base[i];
        for (int k = 0; k < m; ++k)
            sum += kick[i * m + k] * lam[k];
        out[i] = sum;
    }
}

static inline void nh_kicked_velocity(const nh_system *s, const double *base, const double *kick, const double *lam,
                                      double *out)
{
#define NH_KICKED(m) nh_kicked_velocity_for(nh_dim(s), m, base, kick, lam, out)
    NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(s), NH_KICKED);
#undef NH_KICKED
}

/* The linear multiplier solve of the CVT-type fast paths (DLA^{0,1}, SPARK): with velocities
 * w + K lam (K = kick, n x m) and a constraint matrix a (m x n) known beforehand, a (w + K lam) = 0
 * gives (a K) lam = -a w, a non-symmetric m x m system. */
/* One constraint (the quartic, the CVTs): the 1 x 1 LU of nh_solve_kicked_constraint is a division. Its row
 * is a, or (averaged, with a_fixed) (1 - weight) a_fixed + weight a, formed entry by entry in the loop of
 * the two dot products. */
static inline __attribute__((always_inline)) int nh_solve_kicked_row(int n, const double *a_fixed, double weight,
                                                                     const double *a, const double *kick,
                                                                     const double *w, double *lam)
{
    double aw = 0.0, ak = 0.0;
    for (int i = 0; i < n; ++i) {
        const double row = a_fixed ? (1 - weight) * a_fixed[i] + weight * a[i] : a[i];
        aw += row * w[i];
        ak += row * kick[i];
    }
    if (!(fabs(ak) > 0.0) || !isfinite(ak))
        return NH_STEP_SINGULAR;
    lam[0] = -aw / ak;
    return NH_OK;
}

static inline int nh_solve_kicked_constraint(int m, int n, const double *a, const double *kick, const double *w,
                                             double *lam)
{
    if (m == 1)
        return nh_solve_kicked_row(n, NULL, 0.0, a, kick, w, lam);
    double mat[NH_MAX_CON * NH_MAX_CON];
    int piv[NH_MAX_CON];
    nh_matvec(m, n, a, w, lam);
    for (int k = 0; k < m; ++k) {
        lam[k] = -lam[k];
        for (int l = 0; l < m; ++l) {
            double sum = 0.0;
            for (int i = 0; i < n; ++i)
                sum += a[k * n + i] * kick[i * m + l];
            mat[k * m + l] = sum;
        }
    }
    if (nh_lu_factor(m, mat, piv))
        return NH_STEP_SINGULAR;
    nh_lu_solve(m, mat, piv, lam);
    return NH_OK;
}

/* The three callbacks of nh_nonlinear_problem (residual, jacobian, residual_and_jacobian) for a method
 * whose residual and Newton matrix come from one function evaluate(const STEP *, x, r or NULL, jac or
 * NULL): the combined call then gives the separate calls' bits by construction (dd, DLA). */
#define NH_PROBLEM_CALLBACKS(prefix, STEP, evaluate)                                                               \
    static int prefix##_residual(const double *x, double *r, void *ctx)                                          \
    {                                                                                                            \
        return evaluate((const STEP *)ctx, x, r, NULL);                                                          \
    }                                                                                                            \
    static int prefix##_jacobian(const double *x, double *jac, void *ctx)                                        \
    {                                                                                                            \
        return evaluate((const STEP *)ctx, x, NULL, jac);                                                        \
    }                                                                                                            \
    static int prefix##_residual_and_jacobian(const double *x, double *r, double *jac, void *ctx)                \
    {                                                                                                            \
        return evaluate((const STEP *)ctx, x, r, jac);                                                           \
    }

#endif
