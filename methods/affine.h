/* Steps whose velocity is affine in the constraint multipliers (methods-private): u = w + K lam with K
 * = c h M^-1 A^T known before lam, and lam from the m equations A_* u = 0, where A_* is A at the point
 * base + reach u, or (averaged) (1 - weight) a_fixed + weight A(base + reach u). DLA^{0,1} (base q_half,
 * reach h/2), SPARK s = 2 (base q0, reach h, A_* = [A(q0) + A(q1)]/2) and Newmark with beta = 0 (reach
 * alpha h, or constraint (16)). On CVT-type systems A does not read the coordinates K moves: A_* is that
 * of u = w, and the equations are linear (docs/METHODS.md Sect. 0, 2, 5, 6). */
#ifndef NHENS_METHODS_AFFINE_H
#define NHENS_METHODS_AFFINE_H

#include "common.h"

typedef struct nh_affine_step {
    const nh_system *sys;
    const double *base;       /* n */
    double reach;             /* the point of A is base + reach u */
    const double *a_fixed;    /* m x n, or NULL: A_* = A(point) */
    double weight;            /* with a_fixed: A_* = (1 - weight) a_fixed + weight A(point) */
    double w[NH_MAX_DIM];                   /* u at lam = 0 */
    double kick[NH_MAX_DIM * NH_MAX_CON];   /* K, n x m */
} nh_affine_step;

/* Whether the equations in lam are linear: a CVT-type system, or A_* read at a point that u does not
 * move (reach 0 without a_fixed, or an a_fixed of weight 0). */
int nh_affine_is_linear(const nh_system *s, double reach, int averaged, double weight);

/* u = w + K lam (n entries) */
static inline void nh_affine_velocity(const nh_affine_step *c, const double *lam, double *u)
{
    nh_kicked_velocity(c->sys, c->w, c->kick, lam, u);
}

/* A at the point base + reach u, and the point */
static inline void nh_affine_point_constraint(const nh_affine_step *c, const double *u, double *a, double *point)
{
    const nh_system *s = c->sys;
    for (int i = 0; i < nh_dim(s); ++i)
        point[i] = c->base[i] + c->reach * u[i];
    nh_type(s)->constraint(s, point, a);
}

/* A_* for the velocity u, and the point where A is read */
static inline void nh_affine_constraint_matrix(const nh_affine_step *c, const double *u, double *a_star,
                                               double *point)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = nh_constraint_count(s);
    nh_affine_point_constraint(c, u, a_star, point);
    if (c->a_fixed)
        for (int k = 0; k < m * n; ++k)
            a_star[k] = (1 - c->weight) * c->a_fixed[k] + c->weight * a_star[k];
}

/* Newton from lam for the nonlinear case (residuals scaled by |v0|, the step's initial velocity), with the analytic matrix [A_* + weight reach d(A(q) u)/dq at the
 * point] K (weight 1 without a_fixed). */
int nh_affine_newton(nh_solver *solver, const nh_affine_step *c, const double *v0, double *lam);

/* lam: the linear solve with A_* at u = w (exact when the equations are linear), then, with a solver (the
 * stepper's, of dimension m; NULL when they are linear), nh_affine_newton from it. Inline: on CVT-type systems it is the whole solve of a step
 * that costs little more than a call. */
static inline int nh_affine_multiplier(nh_solver *solver, const nh_affine_step *c, const double *v0, double *lam)
{
    const nh_system *s = c->sys;
    double point[NH_MAX_DIM], a_star[NH_MAX_CON * NH_MAX_DIM];
    int rc;
    if (nh_constraint_count(s) == 1) { /* A at the point, averaged with a_fixed inside the division's loop */
        nh_affine_point_constraint(c, c->w, a_star, point);
        rc = nh_solve_kicked_row(nh_dim(s), c->a_fixed, c->weight, a_star, c->kick, c->w, lam);
    } else {
        nh_affine_constraint_matrix(c, c->w, a_star, point);
        rc = nh_solve_kicked_constraint(nh_constraint_count(s), nh_dim(s), a_star, c->kick, c->w, lam);
    }
    return rc == NH_OK && solver ? nh_affine_newton(solver, c, v0, lam) : rc;
}

#endif
