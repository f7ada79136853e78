/* The CVT's formulas for the bench's loops (cvt_loops.c, scalar; lockstep_cvt_loops.c, lanes): q = (x1, x2, xi),
 * M = I, V = |x|^2 / 2 + cos xi - eps sin(2 xi) / 2, one constraint x1' + sin(xi) x2' = 0 (systems/cvt.c), at
 * the bench's eps = 0.1. Its sines and cosines are trig_inline.h's, as the system's callbacks' are, and the angle
 * xi is recentred after every step as nhens recentres it (nh_stepper_recentre: by whole turns 2 pi = high + low
 * once |xi| > 2 pi, for finite |xi| < 2^20), so that the loops follow nhens' trajectories to round-off and keep
 * their sines accurate over 10^5 steps of a rotating driver. */
#ifndef NHENS_BENCH_CVT_FORMULAS_H
#define NHENS_BENCH_CVT_FORMULAS_H

#include "trig_inline.h"

#include <math.h>

enum { CVT_DIM = 3, CVT_XI = 2 };

/* the eps of the bench's CVT rows (cvt_eps0.1_E6); nhens_bench checks the system's parameter against it */
#define CVT_LOOP_EPS 0.1

#define CVT_INLINE static inline __attribute__((always_inline))

/* grad V at q, sin xi given: x1, x2, -sin xi - eps cos 2 xi (cvt_gradient) */
CVT_INLINE void cvt_loop_gradient(const double *q, double sin_xi, double cos_2xi, double *g)
{
    g[0] = q[0];
    g[1] = q[1];
    g[2] = -sin_xi - CVT_LOOP_EPS * cos_2xi;
}

/* nh_stepper_recentre of an angle: whole turns off xi while |xi| > 2 pi; 1 when it moved */
CVT_INLINE int cvt_loop_recentre(double *xi)
{
    static const double two_pi_high = 6.283185307179586232, two_pi_low = 2.4492935982947064e-16;
    if (!(fabs(*xi) > 2.0 * M_PI && fabs(*xi) < 0x1p20))
        return 0;
    while (fabs(*xi) > 2.0 * M_PI) {
        const double sign = *xi > 0 ? 1.0 : -1.0;
        *xi = (*xi - sign * two_pi_high) - sign * two_pi_low;
    }
    return 1;
}

/* lambda*(q, v) = (A grad V - d(A v)/dq v) / A A^T = (g1 + sin xi g2 - cos xi v2 v3) / (1 + sin^2 xi): the
 * leap-frog's first multiplier */
CVT_INLINE double cvt_loop_exact_multiplier(const double *q, const double *v)
{
    const double s = nh_sin(q[CVT_XI]), c = nh_cos(q[CVT_XI]);
    double g[CVT_DIM];
    cvt_loop_gradient(q, s, nh_cos(2.0 * q[CVT_XI]), g);
    return (g[0] + s * g[1] - c * v[1] * v[2]) / (1.0 + s * s);
}

#endif
