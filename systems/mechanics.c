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

void nh_constraint_curvature(const nh_system *s, const double *q, const double *v, double *out)
{
    double dav[NH_MAX_CON * NH_MAX_DIM];
    s->type->constraint_jacobian_velocity(s, q, v, dav);
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

/* lambda* from A(q) and grad V(q) already at hand. */
static int multiplier_from(const nh_system *s, const double *q, const double *v, const double *a, const double *grad,
                           double *lam)
{
    const int n = s->n, m = s->m;
    double c[NH_MAX_CON * NH_MAX_CON], g[NH_MAX_DIM], curv[NH_MAX_CON];
    for (int i = 0; i < n; ++i)
        g[i] = s->inv_mass[i] * grad[i];
    nh_matvec(m, n, a, g, lam);
    nh_constraint_curvature(s, q, v, curv);
    for (int k = 0; k < m; ++k)
        lam[k] -= curv[k];
    nh_constraint_gram(s, a, c);
    return nh_spd_solve(m, c, lam) ? NH_STEP_SINGULAR : NH_OK;
}

int nh_exact_multiplier(const nh_system *s, const double *q, const double *v, double *lam)
{
    double a[NH_MAX_CON * NH_MAX_DIM], g[NH_MAX_DIM];
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, g);
    return multiplier_from(s, q, v, a, g, lam);
}

int nh_index1_rhs(const nh_system *s, const double *q, const double *v, double *dq, double *dv, double *lam_out)
{
    const int n = nh_dim(s), m = s->m;
    double a[NH_MAX_CON * NH_MAX_DIM], grad[NH_MAX_DIM], lam[NH_MAX_CON], force[NH_MAX_DIM];
    s->type->constraint(s, q, a);
    s->type->potential_gradient(s, q, grad);
    int rc = multiplier_from(s, q, v, a, grad, lam);
    if (rc)
        return rc;
    nh_matvec_t(m, n, a, lam, force);
    for (int i = 0; i < n; ++i) {
        dq[i] = v[i];
        dv[i] = s->inv_mass[i] * (force[i] - grad[i]);
    }
    if (lam_out)
        for (int k = 0; k < m; ++k)
            lam_out[k] = lam[k];
    return NH_OK;
}
