/* The CVT's formulas lane by lane (lane_steps.h), each entry's operations those of systems/cvt.c:
 * q = (x1, x2, xi), V = |x|^2 / 2 + cos xi - eps sin(2 xi) / 2, A = [1, sin xi, 0]; its sines and cosines those
 * of trig_inline.h (lane_trig.h). */
#include "builtin_systems.h"
#include "lanes_internal.h"

#include "lane_trig.h"

#define LS_N 3
#define LS_ANGLES 1 /* sines of xi: lane_steps.h steps a lane beyond the kernel's bound exactly */
#define LS_POINT_FROM_Q 0 /* grad V and A of the kept end point of lf (its sines cost more than loads) */
#define LANE_INLINE_SYSTEM static inline __attribute__((always_inline))
#define LS_AT(a, i) (a)[(i) * L + l]
#define LS_LANES _Pragma("GCC unroll 1") for (int l = 0; l < L; ++l)


LANE_INLINE_SYSTEM void ls_gradient(const double *par, const double *restrict q, double *restrict g, int L)
{
    const double eps = par[0];
    double sin_xi[NH_MAX_LANES], cos_2xi[NH_MAX_LANES];
    nh_sin_lanes(1.0, q + 2 * L, sin_xi, L);
    nh_cos_lanes(2.0, q + 2 * L, cos_2xi, L);
    LS_LANES {
        LS_AT(g, 0) = LS_AT(q, 0);
        LS_AT(g, 1) = LS_AT(q, 1);
        LS_AT(g, 2) = -sin_xi[l] - eps * cos_2xi[l];
    }
}

LANE_INLINE_SYSTEM void ls_constraint(const double *par, const double *restrict q, double *restrict a, int L)
{
    (void)par;
    double sin_xi[NH_MAX_LANES];
    nh_sin_lanes(1.0, q + 2 * L, sin_xi, L);
    LS_LANES {
        LS_AT(a, 0) = 1.0;
        LS_AT(a, 1) = sin_xi[l];
        LS_AT(a, 2) = 0.0;
    }
}

LANE_INLINE_SYSTEM void ls_jacobian_velocity(const double *par, const double *restrict q, const double *restrict u,
                                             double *restrict out, int L)
{
    (void)par;
    double cos_xi[NH_MAX_LANES];
    nh_cos_lanes(1.0, q + 2 * L, cos_xi, L);
    LS_LANES {
        LS_AT(out, 0) = 0.0;
        LS_AT(out, 1) = 0.0;
        LS_AT(out, 2) = cos_xi[l] * LS_AT(u, 1);
    }
}

/* cvt_hessian: zeros, then diag(1, 1, -cos xi + 2 eps sin(2 xi)) (n x n x L) */
LANE_INLINE_SYSTEM void ls_hessian(const double *par, const double *restrict q, double *restrict h, int L)
{
    const double eps = par[0];
    double cos_xi[NH_MAX_LANES], sin_2xi[NH_MAX_LANES];
    nh_cos_lanes(1.0, q + 2 * L, cos_xi, L);
    nh_sin_lanes(2.0, q + 2 * L, sin_2xi, L);
    for (int i = 0; i < 9; ++i)
        LS_LANES LS_AT(h, i) = 0.0;
    LS_LANES {
        LS_AT(h, 0) = 1.0;
        LS_AT(h, 4) = 1.0;
        LS_AT(h, 8) = -cos_xi[l] + 2.0 * eps * sin_2xi[l];
    }
}

/* cvt_potential: |x|^2 / 2 + (cos xi - eps sin(2 xi) / 2) (L values) */
LANE_INLINE_SYSTEM void ls_potential(const double *par, const double *restrict q, double *restrict out, int L)
{
    const double eps = par[0];
    double cos_xi[NH_MAX_LANES], sin_2xi[NH_MAX_LANES];
    nh_cos_lanes(1.0, q + 2 * L, cos_xi, L);
    nh_sin_lanes(2.0, q + 2 * L, sin_2xi, L);
    LS_LANES out[l] = 0.5 * (LS_AT(q, 0) * LS_AT(q, 0) + LS_AT(q, 1) * LS_AT(q, 1)) +
                      (cos_xi[l] - 0.5 * eps * sin_2xi[l]);
}

/* cvt_constraint_jacobian_multiplier: zeros, then d(A^T lam)_{x2}/dxi = cos xi lam (n x n x L) */
LANE_INLINE_SYSTEM void ls_jacobian_multiplier(const double *par, const double *restrict q, const double *restrict lam,
                                               double *restrict out, int L)
{
    (void)par;
    double cos_xi[NH_MAX_LANES];
    nh_cos_lanes(1.0, q + 2 * L, cos_xi, L);
    for (int i = 0; i < 9; ++i)
        LS_LANES LS_AT(out, i) = 0.0;
    LS_LANES LS_AT(out, 1 * 3 + 2) = cos_xi[l] * lam[l];
}

/* One lane's formulas (lane_steps.h's fused kernels: q, g, a, u, out are the lane's 3 values): cvt.c's, with the
 * sines of nh_sin_lane / nh_cos_lane (lane_trig.h) */
LANE_INLINE_SYSTEM void lp_gradient(const double *par, const double *restrict q, double *restrict g, int exact,
                                    double *angles)
{
    g[0] = q[0];
    g[1] = q[1];
    g[2] = -nh_sin_lane(q[2], exact, angles) - par[0] * nh_cos_lane(2.0 * q[2], exact, angles);
}

LANE_INLINE_SYSTEM void lp_constraint(const double *par, const double *restrict q, double *restrict a, int exact,
                                      double *angles)
{
    (void)par;
    a[0] = 1.0;
    a[1] = nh_sin_lane(q[2], exact, angles);
    a[2] = 0.0;
}

LANE_INLINE_SYSTEM void lp_jacobian_velocity(const double *par, const double *restrict q, const double *restrict u,
                                             double *restrict out, int exact, double *angles)
{
    (void)par;
    out[0] = 0.0;
    out[1] = 0.0;
    out[2] = nh_cos_lane(q[2], exact, angles) * u[1];
}

static int ls_matches(const nh_system *sys)
{
    return sys->type == &nh_system_cvt;
}
