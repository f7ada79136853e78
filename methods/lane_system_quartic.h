/* The quartic's formulas lane by lane (lane_steps.h), each entry's operations those of quartic_formulas.h:
 * the lane kernels of the quartic with QUARTIC_LANE_PAIRS pairs (n = 2k + 1), for unit mass. */
#include "builtin_systems.h"
#include "lanes_internal.h"
#include "quartic_formulas.h"

enum { LANE_PAIRS = QUARTIC_LANE_PAIRS };
#define LS_N (2 * QUARTIC_LANE_PAIRS + 1)
#define LS_ANGLES 0 /* no sines: lane_steps.h has no exact pass */
#define LS_POINT_FROM_Q 1 /* grad V and A from q cost less than their loads (lane_steps.h, lf) */
#define LANE_INLINE_SYSTEM static inline __attribute__((always_inline))
#define LS_AT(a, i) (a)[(i) * L + l]
#define LS_LANES _Pragma("GCC unroll 1") for (int l = 0; l < L; ++l)


/* gradient_of: q's entry, then the z_1^2 z_2^2 coupling (z_1, z_2 only), then the pair's term */
LANE_INLINE_SYSTEM void ls_gradient(const double *par, const double *restrict q, double *restrict g, int L)
{
    (void)par;
    const int k = LANE_PAIRS;
    LS_LANES LS_AT(g, 0) = LS_AT(q, 0);
    for (int i = 0; i < k; ++i)
        LS_LANES {
            const double w = LS_AT(q, 1 + i), z = LS_AT(q, 1 + k + i);
            double gz = z;
            if (i < 2) {
                const double other = LS_AT(q, 1 + k + (1 - i));
                gz += z * other * other;
            }
            LS_AT(g, 1 + i) = w + w * z * z;
            LS_AT(g, 1 + k + i) = gz + z * w * w;
        }
}

/* A = [1, 0 (k entries), w] */
LANE_INLINE_SYSTEM void ls_constraint(const double *par, const double *restrict q, double *restrict a, int L)
{
    (void)par;
    const int k = LANE_PAIRS;
    LS_LANES LS_AT(a, 0) = 1.0;
    for (int i = 0; i < k; ++i)
        LS_LANES {
            LS_AT(a, 1 + i) = 0.0;
            LS_AT(a, 1 + k + i) = LS_AT(q, 1 + i);
        }
}

/* d(A u)/dw_i = u_{z_i} */
LANE_INLINE_SYSTEM void ls_jacobian_velocity(const double *par, const double *restrict q, const double *restrict u,
                                             double *restrict out, int L)
{
    (void)par;
    (void)q;
    const int k = LANE_PAIRS;
    LS_LANES LS_AT(out, 0) = 0.0;
    for (int i = 0; i < k; ++i)
        LS_LANES {
            LS_AT(out, 1 + i) = LS_AT(u, 1 + k + i);
            LS_AT(out, 1 + k + i) = 0.0;
        }
}

/* hessian_of: zeros, the unit diagonal, then the coupling's and each pair's terms added in hessian_of's order
 * (n x n x L, entry (i, j) at (i n + j) L + l) */
LANE_INLINE_SYSTEM void ls_hessian(const double *par, const double *restrict q, double *restrict h, int L)
{
    (void)par;
    const int k = LANE_PAIRS, n = LS_N, z1 = 1 + k, z2 = 2 + k;
    for (int i = 0; i < n * n; ++i)
        LS_LANES LS_AT(h, i) = 0.0;
    for (int i = 0; i < n; ++i)
        LS_LANES LS_AT(h, i * n + i) = 1.0;
    LS_LANES {
        const double za = LS_AT(q, 1 + k), zb = LS_AT(q, 2 + k);
        LS_AT(h, z1 * n + z1) += zb * zb;
        LS_AT(h, z2 * n + z2) += za * za;
        LS_AT(h, z1 * n + z2) += 2.0 * za * zb;
        LS_AT(h, z2 * n + z1) += 2.0 * za * zb;
    }
    for (int i = 0; i < k; ++i)
        LS_LANES {
            const int wi = 1 + i, zi = 1 + k + i;
            const double w = LS_AT(q, wi), z = LS_AT(q, zi);
            LS_AT(h, wi * n + wi) += z * z;
            LS_AT(h, zi * n + zi) += w * w;
            LS_AT(h, wi * n + zi) += 2.0 * w * z;
            LS_AT(h, zi * n + wi) += 2.0 * w * z;
        }
}

/* potential_of: the z_1^2 z_2^2 coupling, then |q|^2, then each pair's w_i^2 z_i^2, halved (L values) */
LANE_INLINE_SYSTEM void ls_potential(const double *par, const double *restrict q, double *restrict out, int L)
{
    (void)par;
    const int k = LANE_PAIRS;
    LS_LANES {
        const double za = LS_AT(q, 1 + k), zb = LS_AT(q, 2 + k);
        double v = za * za * zb * zb;
        for (int i = 0; i < LS_N; ++i)
            v += LS_AT(q, i) * LS_AT(q, i);
        for (int i = 0; i < k; ++i) {
            const double w = LS_AT(q, 1 + i), z = LS_AT(q, 1 + k + i);
            v += w * w * z * z;
        }
        out[l] = 0.5 * v;
    }
}

/* constraint_jacobian_multiplier_of: zeros, then d(A^T lam)_{z_i}/dw_i = lam (n x n x L; lam: L values) */
LANE_INLINE_SYSTEM void ls_jacobian_multiplier(const double *par, const double *restrict q, const double *restrict lam,
                                               double *restrict out, int L)
{
    (void)par;
    (void)q;
    const int k = LANE_PAIRS, n = LS_N;
    for (int i = 0; i < n * n; ++i)
        LS_LANES LS_AT(out, i) = 0.0;
    for (int i = 0; i < k; ++i)
        LS_LANES LS_AT(out, (1 + k + i) * n + (1 + i)) = lam[l];
}

/* One lane's formulas (lane_steps.h's fused kernels: q, g, a, u, out are the lane's n values): quartic.c's own
 * (quartic_formulas.h), which has no sines, so `exact` and `beyond` are not read. */
LANE_INLINE_SYSTEM void lp_gradient(const double *par, const double *restrict q, double *restrict g, int exact,
                                    double *angles)
{
    (void)par, (void)exact, (void)angles;
    gradient_of(LANE_PAIRS, q, g);
}

LANE_INLINE_SYSTEM void lp_constraint(const double *par, const double *restrict q, double *restrict a, int exact,
                                      double *angles)
{
    (void)par, (void)exact, (void)angles;
    constraint_of(LANE_PAIRS, q, a);
}

LANE_INLINE_SYSTEM void lp_jacobian_velocity(const double *par, const double *restrict q, const double *restrict u,
                                             double *restrict out, int exact, double *angles)
{
    (void)par, (void)q, (void)exact, (void)angles;
    constraint_jacobian_velocity_of(LANE_PAIRS, u, out);
}

static int ls_matches(const nh_system *sys)
{
    return sys->type == &nh_system_quartic && sys->n == LS_N && sys->m == 1;
}
