/* Mechanics of a constrained system that every method and observer shares: energy, constraint
 * residual, Gram matrix, projection onto D_q and the continuous (index-1) multiplier. The parts on a
 * step's path are in mechanics_inline.h; here they are exported, with what a variable mass or a reduced
 * system adds. */
#include "mechanics_inline.h"

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

/* 1/2 v^T M(q) v of a configuration-dependent mass (its matrix on its own frame, off the constant-mass path,
 * which observers take at every output row). */
__attribute__((noinline)) static double variable_mass_kinetic_energy(const nh_system *s, const double *q,
                                                                     const double *v)
{
    const int n = s->n;
    double m[NH_MAX_DIM * NH_MAX_DIM], mv[NH_MAX_DIM];
    s->type->mass_matrix(s, q, m);
    nh_matvec(n, n, m, v, mv);
    return 0.5 * nh_dot(n, v, mv);
}

double nh_kinetic_energy(const nh_system *s, const double *q, const double *v)
{
    if (nh_has_variable_mass(s))
        return variable_mass_kinetic_energy(s, q, v);
    double k = 0.0;
    for (int i = 0; i < s->n; ++i)
        k += s->mass[i] * v[i] * v[i];
    return 0.5 * k;
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

void nh_constraint_gram(const nh_system *s, const double *q, const double *a, double *c)
{
    nh_constraint_gram_inline(s, q, a, c);
}

void nh_constraint_gram_variable_mass(const nh_system *s, const double *q, const double *a, double *c)
{
    const int n = s->n, m = s->m;
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

int nh_project_velocity(const nh_system *s, const double *q, const double *w, double *out)
{
    return nh_project_velocity_inline(s, q, w, out);
}

int nh_project_velocity_variable_mass(const nh_system *s, const double *q, const double *a, const double *w,
                                      double *out)
{
    const int n = s->n, m = s->m;
    double c[NH_MAX_CON * NH_MAX_CON], mu[NH_MAX_CON], corr[NH_MAX_DIM];
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

int nh_multiplier_variable_mass(const nh_system *s, const double *q, const double *v, const double *a,
                                const double *grad, double *lam)
{
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

void nh_add_velocity_forces(const nh_system *s, const double *q, const double *v, double *f)
{
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
    if (nh_force_is_potential_gradient(s))   /* no copy of grad V to add to */
        return nh_multiplier_from_inline(s, q, v, a, grad, lam);
    double f[NH_MAX_DIM];
    memcpy(f, grad, (size_t)s->n * sizeof *f);
    nh_add_velocity_forces(s, q, v, f);
    return nh_multiplier_from_inline(s, q, v, a, f, lam);
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

int nh_index1_rhs(const nh_system *s, const double *q, const double *v, double *dq, double *dv, double *lam_out)
{
    return nh_index1_rhs_inline(s, q, v, dq, dv, lam_out);
}
