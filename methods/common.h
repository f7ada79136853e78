/* Pieces shared by the method files (methods-private): the explicit predictor that warm-starts
 * implicit steps, and residual scales for the solver's round-off test. */
#ifndef NHENS_METHODS_COMMON_H
#define NHENS_METHODS_COMMON_H

#include "nhens/linalg.h"
#include "nhens/method.h"
#include "stepper.h"

#include <math.h>

/* Explicit Euler on the index-1 ODE: v1 = v0 + h a(q0, v0), lam = lambda*(q0, v0). The usual
 * warm start of a one-step implicit method (O(h^2) from the solution, so Newton needs 2-3 steps). */
static inline int nh_method_predict(const nh_system *s, double h, const double *q0, const double *v0,
                                    double *v1, double *lam)
{
    double dq[NH_MAX_DIM], dv[NH_MAX_DIM];
    int rc = nh_index1_rhs(s, q0, v0, dq, dv, lam);
    if (rc)
        return rc;
    for (int i = 0; i < s->n; ++i)
        v1[i] = v0[i] + h * dv[i];
    return NH_OK;
}

/* Magnitude of the terms of a momentum-balance residual M(v1 - v0) + h grad V + ...: the solver
 * stops when the residual is at round-off of this. */
static inline double nh_method_momentum_scale(const nh_system *s, double h, const double *v0, const double *grad)
{
    double scale = 0.0;
    for (int i = 0; i < s->n; ++i) {
        double a = fabs(s->mass[i] * v0[i]), b = fabs(h * grad[i]);
        scale = fmax(scale, fmax(a, b));
    }
    return scale > 0.0 ? scale : 1.0;
}

/* The linear multiplier solve of the CVT-type fast paths (DLA^{0,1}, SPARK): with velocities
 * w + K lam (K = kick, n x m) and a constraint matrix a (m x n) known beforehand, a (w + K lam) = 0
 * gives (a K) lam = -a w, a non-symmetric m x m system. */
static inline int nh_solve_kicked_constraint(int m, int n, const double *a, const double *kick, const double *w,
                                             double *lam)
{
    if (m == 1) { /* one constraint (the quartic, the CVTs): the 1 x 1 LU below is this division */
        double aw = 0.0, ak = 0.0;
        for (int i = 0; i < n; ++i) {
            aw += a[i] * w[i];
            ak += a[i] * kick[i];
        }
        if (!(fabs(ak) > 0.0) || !isfinite(ak))
            return NH_STEP_SINGULAR;
        lam[0] = -aw / ak;
        return NH_OK;
    }
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

#endif
