/* Mechanics of a constrained system that every method and observer shares: energy, constraint
 * residual, Gram matrix, projection onto D_q and the continuous (index-1) multiplier. */
#include "nhens/linalg.h"
#include "nhens/system.h"

#include <math.h>
#include <string.h>

void nh_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    if (s->type->adapted_basis_pattern) {
        const size_t entries = (size_t)s->n * (size_t)(s->n - s->m);
        memset(x, 0, entries * sizeof *x);
        memset(dx, 0, entries * (size_t)s->n * sizeof *dx);
    }
    s->type->adapted_basis(s, q, x, dx);
}

void nh_mass_matrix(const nh_system *s, const double *q, double *m)
{
    const int n = s->n;
    if (nh_has_variable_mass(s)) {
        s->type->mass_matrix(s, q, m);
        return;
    }
    memset(m, 0, (size_t)n * n * sizeof *m);
    for (int i = 0; i < n; ++i)
        m[i * n + i] = s->mass[i];
}

int nh_mass_solve(const nh_system *s, const double *q, const double *rhs, double *out)
{
    const int n = s->n;
    if (!nh_has_variable_mass(s)) {
        for (int i = 0; i < n; ++i)
            out[i] = s->inv_mass[i] * rhs[i];
        return 0;
    }
    double m[NH_MAX_DIM * NH_MAX_DIM];
    s->type->mass_matrix(s, q, m);
    memcpy(out, rhs, (size_t)n * sizeof *out);
    return nh_spd_solve(n, m, out);
}

double nh_kinetic_energy(const nh_system *s, const double *q, const double *v)
{
    const int n = s->n;
    if (!nh_has_variable_mass(s)) {
        double k = 0.0;
        for (int i = 0; i < n; ++i)
            k += s->mass[i] * v[i] * v[i];
        return 0.5 * k;
    }
    double m[NH_MAX_DIM * NH_MAX_DIM], mv[NH_MAX_DIM];
    s->type->mass_matrix(s, q, m);
    nh_matvec(n, n, m, v, mv);
    return 0.5 * nh_dot(n, v, mv);
}

double nh_energy(const nh_system *s, const double *q, const double *v)
{
    return nh_kinetic_energy(s, q, v) + s->type->potential(s, q);
}

/* c(q, v) = (DM[v]) v - 1/2 grad_q (v^T M v): the velocity-dependent force of a configuration-dependent
 * mass matrix (zero for constant M). */
__attribute__((noinline)) static void mass_velocity_force(const nh_system *s, const double *q, const double *v,
                                                          double *c)
{
    const int n = s->n;
    memset(c, 0, (size_t)n * sizeof *c);
    if (!nh_has_variable_mass(s))
        return;
    double dm[NH_MAX_VARIABLE_MASS_DIM * NH_MAX_VARIABLE_MASS_DIM * NH_MAX_VARIABLE_MASS_DIM];
    s->type->mass_matrix_derivative(s, q, dm);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k)
                c[i] += dm[(i * n + j) * n + k] * v[j] * v[k] - 0.5 * dm[(j * n + k) * n + i] * v[j] * v[k];
}

double nh_constraint_residual(const nh_system *s, const double *q, const double *v)
{
    double a[NH_MAX_CON * NH_MAX_DIM], r[NH_MAX_CON];
    s->type->constraint(s, q, a);
    nh_matvec(s->m, s->n, a, v, r);
    return sqrt(nh_dot(s->m, r, r));
}

/* nh_constraint_gram for a constant mass with m a constant: the products of the general case, without
 * storing M^-1 A^T (lf: 175 -> 36 instructions) */
static inline __attribute__((always_inline)) void constant_mass_gram_for(const nh_system *s, const int m,
                                                                         const double *restrict a,
                                                                         double *restrict c)
{
    const int n = s->n;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j <= i; ++j) {
            double sum = 0.0;
            for (int k = 0; k < n; ++k)
                sum += a[j * n + k] * (s->inv_mass[k] * a[i * n + k]);
            c[i * m + j] = c[j * m + i] = sum;
        }
}

void nh_constraint_gram(const nh_system *s, const double *q, const double *a, double *c)
{
    const int n = s->n, m = s->m;
    if (!nh_has_variable_mass(s)) {
#define GRAM(m) constant_mass_gram_for(s, m, a, c)
        NH_WITH_CONSTRAINT_COUNT(m, GRAM);
#undef GRAM
        return;
    }
    double minv_at[NH_MAX_CON * NH_MAX_DIM];   /* row i: M^-1 A_i^T */
    for (int i = 0; i < m; ++i)
        nh_mass_solve(s, q, a + i * n, minv_at + i * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j <= i; ++j)
            c[i * m + j] = c[j * m + i] = nh_dot(n, a + j * n, minv_at + i * n);
}

void nh_constraint_curvature(const nh_system *s, const double *q, const double *v, double *out)
{
    double dav[NH_MAX_CON * NH_MAX_DIM];
    s->type->constraint_jacobian_velocity(s, q, v, dav);
    nh_matvec(s->m, s->n, dav, v, out);
}

/* nh_project_velocity for a constant mass with m a constant: out = w - M^-1 A^T mu, A^T mu summed as
 * nh_matvec_t sums it in the loop that writes out (w and out may be one array). */
static inline __attribute__((always_inline)) int project_constant_mass_for(const nh_system *s, const int m,
                                                                           const double *a, const double *w,
                                                                           double *out)
{
    const int n = s->n;
    double c[NH_MAX_CON * NH_MAX_CON], mu[NH_MAX_CON];
    constant_mass_gram_for(s, m, a, c);
    for (int k = 0; k < m; ++k)
        mu[k] = nh_dot(n, a + k * n, w);
    if (nh_spd_solve(m, c, mu))
        return NH_STEP_SINGULAR;
    for (int i = 0; i < n; ++i)
        out[i] = w[i] - s->inv_mass[i] * nh_matvec_t_entry(m, n, a, mu, i);
    return NH_OK;
}

int nh_project_velocity(const nh_system *s, const double *q, const double *w, double *out)
{
    const int n = s->n, m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON], mu[NH_MAX_CON], corr[NH_MAX_DIM];
    s->type->constraint(s, q, a);
    if (!nh_has_variable_mass(s)) {
#define PROJECT(m) project_constant_mass_for(s, m, a, w, out)
        return NH_WITH_CONSTRAINT_COUNT(m, PROJECT);
#undef PROJECT
    }
    nh_constraint_gram(s, q, a, c);
    nh_matvec(m, n, a, w, mu);
    if (nh_spd_solve(m, c, mu))
        return NH_STEP_SINGULAR;
    nh_matvec_t(m, n, a, mu, corr);
    if (nh_mass_solve(s, q, corr, corr))
        return NH_STEP_SINGULAR;
    for (int i = 0; i < n; ++i)
        out[i] = w[i] - corr[i];
    return NH_OK;
}

/* multiplier_from for a constant diagonal M: the same products summed in the same order (each sum over
 * the coordinates in turn), in one loop over the coordinates with m a constant (NH_WITH_CONSTRAINT_COUNT),
 * without the calls (it runs in every residual of genfun, every stage of rk4 and every explicit
 * predictor). */
static inline __attribute__((always_inline)) int constant_mass_multiplier_for(const nh_system *s, const int m,
                                                                              const double *q,
                                                                              const double *restrict v,
                                                                              const double *restrict a,
                                                                              const double *restrict grad,
                                                                              double *restrict lam)
{
    const int n = s->n;
    const double *restrict inv_mass = s->inv_mass;
    double dav[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON], curvature[NH_MAX_CON];
    s->type->constraint_jacobian_velocity(s, q, v, dav);
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

static int constant_mass_multiplier(const nh_system *s, const double *q, const double *v, const double *a,
                                    const double *grad, double *lam)
{
#define MULTIPLIER(m) constant_mass_multiplier_for(s, m, q, v, a, grad, lam)
    return NH_WITH_CONSTRAINT_COUNT(s->m, MULTIPLIER);
#undef MULTIPLIER
}

/* lambda* from A(q) and the force term grad V + c(q, v) already at hand. */
static int multiplier_from(const nh_system *s, const double *q, const double *v, const double *a, const double *grad,
                           double *lam)
{
    if (!nh_has_variable_mass(s))
        return constant_mass_multiplier(s, q, v, a, grad, lam);
    const int n = s->n, m = s->m;
    double c[NH_MAX_CON * NH_MAX_CON], g[NH_MAX_DIM], curv[NH_MAX_CON];
    if (nh_mass_solve(s, q, grad, g))
        return NH_STEP_SINGULAR;
    nh_matvec(m, n, a, g, lam);
    nh_constraint_curvature(s, q, v, curv);
    for (int k = 0; k < m; ++k)
        lam[k] -= curv[k];
    nh_constraint_gram(s, q, a, c);
    return nh_spd_solve(m, c, lam) ? NH_STEP_SINGULAR : NH_OK;
}

/* -(ad*_v p)_i = -p . [v, e_i], p = M v: the Euler-Poincare force of a reduced system, on the side of
 * grad V in M v' = -f + A^T lam */
static void reduced_force(const nh_system *s, const double *q, const double *v, double *f)
{
    const int n = s->n;
    double mass[NH_MAX_DIM * NH_MAX_DIM], p[NH_MAX_DIM], e[NH_MAX_DIM] = {0}, br[NH_MAX_DIM];
    nh_mass_matrix(s, q, mass);
    nh_matvec(n, n, mass, v, p);
    for (int i = 0; i < n; ++i) {
        e[i] = 1.0;
        s->type->lie_bracket(s, v, e, br);
        f[i] -= nh_dot(n, p, br);
        e[i] = 0.0;
    }
}

/* Whether grad V is the whole generalized force: a constant M on a configuration space, so there is no
 * c(q, v) and no Euler-Poincare term. */
static int force_is_potential_gradient(const nh_system *s)
{
    return !nh_has_variable_mass(s) && !nh_is_reduced(s);
}

/* f += c(q, v) and the Euler-Poincare term of a reduced system: grad V(q) in f becomes the generalized
 * force (nothing to add when force_is_potential_gradient) */
static void add_velocity_forces(const nh_system *s, const double *q, const double *v, double *f)
{
    if (force_is_potential_gradient(s))
        return;
    double c[NH_MAX_DIM];
    mass_velocity_force(s, q, v, c);
    for (int i = 0; i < s->n; ++i)
        f[i] += c[i];
    if (nh_is_reduced(s))
        reduced_force(s, q, v, f);
}

int nh_exact_multiplier_from(const nh_system *s, const double *q, const double *v, const double *a,
                             const double *grad, double *lam)
{
    if (force_is_potential_gradient(s))   /* no copy of grad V to add to */
        return multiplier_from(s, q, v, a, grad, lam);
    double f[NH_MAX_DIM];
    memcpy(f, grad, (size_t)s->n * sizeof *f);
    add_velocity_forces(s, q, v, f);
    return multiplier_from(s, q, v, a, f, lam);
}

int nh_exact_multiplier(const nh_system *s, const double *q, const double *v, double *lam)
{
    double a[NH_MAX_CON * NH_MAX_DIM], g[NH_MAX_DIM];
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, g);
    return nh_exact_multiplier_from(s, q, v, a, g, lam);
}

int nh_reduced_vector(const nh_system *s, const double *q, const double *v, double *u)
{
    if (!s->type->coupled_structure)
        return 0;
    const int p = s->n - 1;
    double k[NH_MAX_DIM], kappa[NH_MAX_DIM * NH_MAX_DIM], f[NH_MAX_DIM];
    int rows = 0;
    s->type->coupled_structure(s, q[p], k, kappa, &rows, f);
    nh_matvec(rows, p, kappa, q, u);
    u[rows] = nh_dot(p, v, k);
    return rows + 1;
}

int nh_driver_state(const nh_system *s, const double *q, const double *v, double *xi, double *xi_dot)
{
    if (!s->type->coupled_structure)
        return 0;
    *xi = q[s->n - 1];
    *xi_dot = v[s->n - 1];
    return 1;
}

/* dq = v (0 for a reduced system, whose q never moves) and dv = M^-1 (A^T lam - f), with m a constant
 * (NH_WITH_CONSTRAINT_COUNT) and A^T lam summed as nh_matvec_t sums it; M^-1 a product for a constant
 * mass, else nh_mass_solve. 1 if M is singular. */
static inline __attribute__((always_inline)) int index1_derivatives_for(const nh_system *s, const int m,
                                                                        const double *q, const double *v,
                                                                        const double *restrict a,
                                                                        const double *restrict lam,
                                                                        const double *restrict f, double *dq,
                                                                        double *dv)
{
    const int n = s->n, moves = !nh_is_reduced(s);
    if (!nh_has_variable_mass(s)) {
        for (int i = 0; i < n; ++i) {
            dq[i] = moves ? v[i] : 0.0;
            dv[i] = s->inv_mass[i] * (nh_matvec_t_entry(m, n, a, lam, i) - f[i]);
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

int nh_index1_rhs(const nh_system *s, const double *q, const double *v, double *dq, double *dv, double *lam_out)
{
    const int m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], grad[NH_MAX_DIM], lam[NH_MAX_CON];
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, grad);
    add_velocity_forces(s, q, v, grad);
    int rc = multiplier_from(s, q, v, a, grad, lam);
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
