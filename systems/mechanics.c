/* Mechanics of a constrained system that every method and observer shares: energy, constraint
 * residual, Gram matrix, projection onto D_q and the continuous (index-1) multiplier. */
#include "nhens/linalg.h"
#include "nhens/system.h"

#include <math.h>
#include <string.h>

double nh_kinetic_energy(const nh_system *s, const double *v)
{
    double k = 0.0;
    for (int i = 0; i < s->n; ++i)
        k += s->mass[i] * v[i] * v[i];
    return 0.5 * k;
}

double nh_energy(const nh_system *s, const double *q, const double *v)
{
    return nh_kinetic_energy(s, v) + s->type->potential(s, q);
}

double nh_constraint_residual(const nh_system *s, const double *q, const double *v)
{
    double a[NH_MAX_CON * NH_MAX_DIM], r[NH_MAX_CON];
    s->type->constraint(s, q, a);
    nh_matvec(s->m, s->n, a, v, r);
    return sqrt(nh_dot(s->m, r, r));
}

void nh_constraint_gram(const nh_system *s, const double *a, double *c)
{
    const int n = s->n, m = s->m;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j <= i; ++j) {
            double sum = 0.0;
            for (int k = 0; k < n; ++k)
                sum += a[i * n + k] * s->inv_mass[k] * a[j * n + k];
            c[i * m + j] = c[j * m + i] = sum;
        }
}

void nh_da_times_vector(const nh_system *s, const double *da, const double *u, double *out)
{
    const int n = s->n, m = s->m;
    for (int a = 0; a < m; ++a)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int i = 0; i < n; ++i)
                sum += da[(a * n + i) * n + j] * u[i];
            out[a * n + j] = sum;
        }
}

void nh_dat_times_multiplier(const nh_system *s, const double *da, const double *lam, double *out)
{
    const int n = s->n, m = s->m;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int a = 0; a < m; ++a)
                sum += da[(a * n + i) * n + j] * lam[a];
            out[i * n + j] = sum;
        }
}

void nh_constraint_curvature(const nh_system *s, const double *q, const double *v, double *out)
{
    double da[NH_MAX_CON * NH_MAX_DIM * NH_MAX_DIM], dav[NH_MAX_CON * NH_MAX_DIM];
    s->type->constraint_derivative(s, q, da);
    nh_da_times_vector(s, da, v, dav);
    nh_matvec(s->m, s->n, dav, v, out);
}

int nh_project_velocity(const nh_system *s, const double *q, const double *w, double *out)
{
    const int n = s->n, m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON], mu[NH_MAX_CON], corr[NH_MAX_DIM];
    s->type->constraint(s, q, a);
    nh_constraint_gram(s, a, c);
    nh_matvec(m, n, a, w, mu);
    if (nh_spd_solve(m, c, mu))
        return NH_STEP_SINGULAR;
    nh_matvec_t(m, n, a, mu, corr);
    for (int i = 0; i < n; ++i)
        out[i] = w[i] - s->inv_mass[i] * corr[i];
    return NH_OK;
}

int nh_exact_multiplier(const nh_system *s, const double *q, const double *v, double *lam)
{
    const int n = s->n, m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON], g[NH_MAX_DIM], curv[NH_MAX_CON];
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, g);
    for (int i = 0; i < n; ++i)
        g[i] *= s->inv_mass[i];
    nh_matvec(m, n, a, g, lam);
    nh_constraint_curvature(s, q, v, curv);
    for (int k = 0; k < m; ++k)
        lam[k] -= curv[k];
    nh_constraint_gram(s, a, c);
    return nh_spd_solve(m, c, lam) ? NH_STEP_SINGULAR : NH_OK;
}

int nh_index1_rhs(const nh_system *s, const double *q, const double *v, double *dq, double *dv)
{
    const int n = s->n, m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], lam[NH_MAX_CON], force[NH_MAX_DIM];
    int rc = nh_exact_multiplier(s, q, v, lam);
    if (rc)
        return rc;
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, dv);
    nh_matvec_t(m, n, a, lam, force);
    for (int i = 0; i < n; ++i) {
        dq[i] = v[i];
        dv[i] = s->inv_mass[i] * (force[i] - dv[i]);
    }
    return NH_OK;
}
