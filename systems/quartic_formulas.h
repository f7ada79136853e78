/* The quartic's formulas (systems-private): V, grad V, its Hessian, A and the two contractions of dA, each
 * an always-inline function of the pair count k (q = (x, w_1..w_k, z_1..z_k), n = 2k + 1). quartic.c's
 * callbacks call them with k a constant for the papers' sizes or read at run time; the step kernels
 * (methods/kernels.c) compile the explicit steps with them inline. */
#ifndef NHENS_SYSTEMS_QUARTIC_FORMULAS_H
#define NHENS_SYSTEMS_QUARTIC_FORMULAS_H

#include "nhens/system.h"

#include <string.h>

#define QUARTIC_INLINE static inline __attribute__((always_inline))

QUARTIC_INLINE double potential_of(int k, const double *q)
{
    const double *w = q + 1, *z = q + 1 + k;
    double v = z[0] * z[0] * z[1] * z[1];
    for (int i = 0; i < 2 * k + 1; ++i)
        v += q[i] * q[i];
    for (int i = 0; i < k; ++i)
        v += w[i] * w[i] * z[i] * z[i];
    return 0.5 * v;
}

/* grad V = q + (0, w_i z_i^2, z_i w_i^2) + the z_1^2 z_2^2 term's (z_1 z_2^2, z_2 z_1^2), each entry written
 * once: q's entry, then the coupling term (z_1 and z_2 only), then the pair's term, in that order. */
QUARTIC_INLINE void gradient_of(int k, const double *restrict q, double *restrict g)
{
    const double *w = q + 1, *z = q + 1 + k;
    g[0] = q[0];
    for (int i = 0; i < k; ++i) {
        double gz = z[i];
        if (i < 2)
            gz += z[i] * z[1 - i] * z[1 - i];
        g[1 + i] = w[i] + w[i] * z[i] * z[i];
        g[1 + k + i] = gz + z[i] * w[i] * w[i];
    }
}

QUARTIC_INLINE void hessian_of(int k, const double *q, double *h)
{
    const int n = 2 * k + 1;
    const double *w = q + 1, *z = q + 1 + k;
    memset(h, 0, (size_t)n * n * sizeof *h);
    for (int i = 0; i < n; ++i)
        h[i * n + i] = 1.0;
    const int z1 = 1 + k, z2 = 2 + k;
    h[z1 * n + z1] += z[1] * z[1];
    h[z2 * n + z2] += z[0] * z[0];
    h[z1 * n + z2] += 2.0 * z[0] * z[1];
    h[z2 * n + z1] += 2.0 * z[0] * z[1];
    for (int i = 0; i < k; ++i) {
        const int wi = 1 + i, zi = 1 + k + i;
        h[wi * n + wi] += z[i] * z[i];
        h[zi * n + zi] += w[i] * w[i];
        h[wi * n + zi] += 2.0 * w[i] * z[i];
        h[zi * n + wi] += 2.0 * w[i] * z[i];
    }
}

/* A = [1, 0 (k entries), w], each entry written once */
QUARTIC_INLINE void constraint_of(int k, const double *q, double *a)
{
    a[0] = 1.0;
    for (int i = 0; i < k; ++i) {
        a[1 + i] = 0.0;
        a[1 + k + i] = q[1 + i];
    }
}

/* The structural zeros of A's row [1, 0, w] (bit i: entry i), for nh_dot_zeros_apart
 * (systems/mechanics_inline.h) */
QUARTIC_INLINE unsigned long constraint_zeros_of(int k)
{
    return ((1ul << k) - 1) << 1;
}

/* A = [1, 0, w]: d(A u)/dw_i = u_{z_i}, every entry written once (no memset call for a few entries) */
QUARTIC_INLINE void constraint_jacobian_velocity_of(int k, const double *restrict u, double *restrict out)
{
    out[0] = 0.0;
    for (int i = 0; i < k; ++i) {
        out[1 + i] = u[1 + k + i];
        out[1 + k + i] = 0.0;
    }
}

/* d(A^T lam)_{z_i}/dw_i = lam */
QUARTIC_INLINE void constraint_jacobian_multiplier_of(int k, double lam, double *out)
{
    const int n = 2 * k + 1;
    memset(out, 0, (size_t)n * n * sizeof *out);
    for (int i = 0; i < k; ++i)
        out[(1 + k + i) * n + (1 + i)] = lam;
}

#endif
