/* The mechanics on a step's path (systems-private; systems/mechanics.c exports each of them once): the
 * Gram matrix, the projection onto D_q and the index-1 right-hand side, always inline and reading the
 * system through nh_dim, nh_constraint_count and nh_type, so that the step kernels (methods/kernels.c)
 * compile them with their system's constants. For a constant mass they work here; a variable mass or a
 * reduced system goes on to the out-of-line functions declared below. */
#ifndef NHENS_SYSTEMS_MECHANICS_INLINE_H
#define NHENS_SYSTEMS_MECHANICS_INLINE_H

#include "nhens/linalg.h"
#include "nhens/system.h"

#define NH_MECHANICS_INLINE static inline __attribute__((always_inline))

/* x . y with nh_dot's bits (0 + x_0 y_0, then each product in turn), for an x whose entries marked in
 * `zeros` (bit i: entry i) are structural zeros, +-0: their products are summed apart and added last, so
 * that the chain of dependent additions is the other entries' only. In round-to-nearest a + b is -0 only
 * when both are, so a sum that starts at +0 is never -0 after its first term, and adding the +-0 product of
 * a zero and a finite y_i leaves it unchanged wherever it comes; the zeros' sum from +0 is +0 then, or NaN
 * for a non-finite y_i, as nh_dot's sum is. With n and `zeros` constants (a step kernel) the loop
 * unrolls into the two sums. */
NH_MECHANICS_INLINE double nh_dot_zeros_apart(int n, const double *x, const double *y, unsigned long zeros)
{
    double sum = 0.0, zero_sum = 0.0;
    for (int i = 0; i < n; ++i) {
        if (zeros >> i & 1)
            zero_sum += x[i] * y[i];
        else
            sum += x[i] * y[i];
    }
    return sum + zero_sum;
}

/* A row of A(q) (n entries) dotted with a vector, summed as nh_dot sums it. A step kernel whose system
 * knows the row's structural zeros defines it first, with nh_dot_zeros_apart (kernel_quartic.h). */
#ifndef nh_constraint_row_dot
#define nh_constraint_row_dot(s, row, x) nh_dot(nh_dim(s), row, x)
#endif

/* mechanics.c: the same quantities for a configuration-dependent mass (the Gram matrix, the projection with
 * a = A(q) at hand, the multiplier), and f += c(q, v) and the Euler-Poincare term (its callers test
 * nh_force_is_potential_gradient first: then there is nothing to add). */
void nh_constraint_gram_variable_mass(const nh_system *s, const double *q, const double *a, double *c);
int nh_project_velocity_variable_mass(const nh_system *s, const double *q, const double *a, const double *w,
                                      double *out);
int nh_multiplier_variable_mass(const nh_system *s, const double *q, const double *v, const double *a,
                                const double *grad, double *lam);
void nh_add_velocity_forces(const nh_system *s, const double *q, const double *v, double *f);

/* Whether grad V is the whole generalized force: a constant M on a configuration space, so there is no
 * c(q, v) and no Euler-Poincare term. */
static inline int nh_force_is_potential_gradient(const nh_system *s)
{
    return !nh_has_variable_mass(s) && !nh_is_reduced(s);
}

/* nh_constraint_gram for a constant mass with m a constant: the products of the general case, without
 * storing M^-1 A^T */
NH_MECHANICS_INLINE void constant_mass_gram_for(const nh_system *s, const int m,
                                                                         const double *restrict a,
                                                                         double *restrict c)
{
    const int n = nh_dim(s);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j <= i; ++j) {
            double sum = 0.0;
            for (int k = 0; k < n; ++k)
                sum += a[j * n + k] * (nh_inv_mass(s)[k] * a[i * n + k]);
            c[i * m + j] = c[j * m + i] = sum;
        }
}

NH_MECHANICS_INLINE void nh_constraint_gram_inline(const nh_system *s, const double *q, const double *a, double *c)
{
    if (nh_has_variable_mass(s)) {
        nh_constraint_gram_variable_mass(s, q, a, c);
        return;
    }
#define GRAM(m) constant_mass_gram_for(s, m, a, c)
    NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(s), GRAM);
#undef GRAM
}

/* nh_project_velocity for a constant mass with m a constant: out = w - M^-1 A^T mu, A^T mu summed as
 * nh_matvec_t sums it in the loop that writes out (w and out may be one array). */
NH_MECHANICS_INLINE int project_constant_mass_for(const nh_system *s, const int m,
                                                                           const double *a, const double *w,
                                                                           double *out)
{
    const int n = nh_dim(s);
    double c[NH_MAX_CON * NH_MAX_CON], mu[NH_MAX_CON];
    constant_mass_gram_for(s, m, a, c);
    for (int k = 0; k < m; ++k)
        mu[k] = nh_constraint_row_dot(s, a + k * n, w);
    if (nh_spd_solve(m, c, mu))
        return NH_STEP_SINGULAR;
    for (int i = 0; i < n; ++i)
        out[i] = w[i] - nh_inv_mass(s)[i] * nh_matvec_t_entry(m, n, a, mu, i);
    return NH_OK;
}

NH_MECHANICS_INLINE int nh_project_velocity_inline(const nh_system *s, const double *q, const double *w, double *out)
{
    double a[NH_MAX_CON * NH_MAX_DIM];
    nh_type(s)->constraint(s, q, a);
    if (nh_has_variable_mass(s))
        return nh_project_velocity_variable_mass(s, q, a, w, out);
#define PROJECT(m) project_constant_mass_for(s, m, a, w, out)
    return NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(s), PROJECT);
#undef PROJECT
}

/* multiplier_from for a constant diagonal M: the same products summed in the same order (each sum over
 * the coordinates in turn), in one loop over the coordinates with m a constant (NH_WITH_CONSTRAINT_COUNT),
 * without the calls (it runs in every residual of genfun, every stage of rk4 and every explicit
 * predictor). */
NH_MECHANICS_INLINE int constant_mass_multiplier_for(const nh_system *s, const int m,
                                                                              const double *q,
                                                                              const double *restrict v,
                                                                              const double *restrict a,
                                                                              const double *restrict grad,
                                                                              double *restrict lam)
{
    const int n = nh_dim(s);
    const double *restrict inv_mass = nh_inv_mass(s);
    double dav[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON], curvature[NH_MAX_CON];
    nh_type(s)->constraint_jacobian_velocity(s, q, v, dav);
    for (int k = 0; k < m; ++k) {
        lam[k] = curvature[k] = 0.0;   /* lam: the force term A M^-1 grad V, until the solve */
        for (int j = 0; j <= k; ++j)
            c[k * m + j] = 0.0;
    }
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < m; ++k) {
            const double ak = a[k * n + i];
            lam[k] += ak * (inv_mass[i] * grad[i]);
            curvature[k] += dav[k * n + i] * v[i];
            for (int j = 0; j <= k; ++j)
                c[k * m + j] += a[j * n + i] * (inv_mass[i] * ak);
        }
    for (int k = 0; k < m; ++k) {
        lam[k] -= curvature[k];
        for (int j = 0; j < k; ++j)
            c[j * m + k] = c[k * m + j];
    }
    return nh_spd_solve(m, c, lam) ? NH_STEP_SINGULAR : NH_OK;
}

/* lambda* from A(q) and the force term grad V + c(q, v) already at hand. */
NH_MECHANICS_INLINE int nh_multiplier_from_inline(const nh_system *s, const double *q, const double *v,
                                                  const double *a, const double *grad, double *lam)
{
    if (nh_has_variable_mass(s))
        return nh_multiplier_variable_mass(s, q, v, a, grad, lam);
#define MULTIPLIER(m) constant_mass_multiplier_for(s, m, q, v, a, grad, lam)
    return NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(s), MULTIPLIER);
#undef MULTIPLIER
}

/* dq = v (0 for a reduced system, whose q never moves) and dv = M^-1 (A^T lam - f), with m a constant
 * (NH_WITH_CONSTRAINT_COUNT) and A^T lam summed as nh_matvec_t sums it; M^-1 a product for a constant
 * mass, else nh_mass_solve. 1 if M is singular. */
NH_MECHANICS_INLINE int index1_derivatives_for(const nh_system *s, const int m,
                                                                        const double *q, const double *v,
                                                                        const double *restrict a,
                                                                        const double *restrict lam,
                                                                        const double *restrict f, double *dq,
                                                                        double *dv)
{
    const int n = nh_dim(s), moves = !nh_is_reduced(s);
    if (!nh_has_variable_mass(s)) {
        for (int i = 0; i < n; ++i) {
            dq[i] = moves ? v[i] : 0.0;
            dv[i] = nh_inv_mass(s)[i] * (nh_matvec_t_entry(m, n, a, lam, i) - f[i]);
        }
        return 0;
    }
    double force[NH_MAX_DIM];
    for (int i = 0; i < n; ++i) {
        dq[i] = moves ? v[i] : 0.0;
        force[i] = nh_matvec_t_entry(m, n, a, lam, i) - f[i];
    }
    return nh_mass_solve(s, q, force, dv);
}

NH_MECHANICS_INLINE int nh_index1_rhs_inline(const nh_system *s, const double *q, const double *v, double *dq,
                                             double *dv, double *lam_out)
{
    const int m = nh_constraint_count(s);
    double a[NH_MAX_CON * NH_MAX_DIM], grad[NH_MAX_DIM], lam[NH_MAX_CON];
    nh_type(s)->constraint(s, q, a);
    nh_type(s)->potential_gradient(s, q, grad);
    if (!nh_force_is_potential_gradient(s))
        nh_add_velocity_forces(s, q, v, grad);
    int rc = nh_multiplier_from_inline(s, q, v, a, grad, lam);
    if (rc)
        return rc;
#define DERIVATIVES(m) index1_derivatives_for(s, m, q, v, a, lam, grad, dq, dv)
    if (NH_WITH_CONSTRAINT_COUNT(m, DERIVATIVES))
        return NH_STEP_SINGULAR;
#undef DERIVATIVES
    if (lam_out)
        for (int k = 0; k < m; ++k)
            lam_out[k] = lam[k];
    return NH_OK;
}

#endif
