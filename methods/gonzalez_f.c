/* Gonzalez-F: the first energy-preserving attempt of seed 000 Sect. 3.3, eq. 15, on T*Q with a
 * multiplier: z = (q, p),
 *   (z' - z)/h = J grad_bar H(z, z') + lam (0, A(q_bar)^T),   A(q_bar) d_p grad_bar H(z, z') = 0,
 * with the Gonzalez discrete gradient of H = 1/2 p^T M^-1 p + V on R^{2n}. H is conserved exactly
 * (J skew, the multiplier term is orthogonal to grad_bar H); the constraint A(q) M^-1 p = 0 is not
 * kept at the output points ("only approximately satisfied", seed 000), which a test shows.
 * Unknowns (q', p', lam): 2n + m, forward-difference Newton matrix. Order 2, symmetric. */
#include "common.h"
#include "discrete_gradient.h"

#include <string.h>

enum { N = NH_MAX_DIM };

typedef struct gonzalez_f_step {
    const nh_system *sys;
    double h;
    double z0[2 * N];
    double energy0;
    double *work;           /* nh_fd_jacobian's scratch (the stepper's workspace) */
} gonzalez_f_step;

static double canonical_energy(const nh_system *s, const double *z)
{
    double k = 0.0;
    for (int i = 0; i < s->n; ++i)
        k += z[s->n + i] * z[s->n + i] * s->inv_mass[i];
    return 0.5 * k + s->type->potential(s, z);
}

static void canonical_gradient(const nh_system *s, const double *z, double *g)
{
    s->type->potential_gradient(s, z, g);
    for (int i = 0; i < s->n; ++i)
        g[s->n + i] = s->inv_mass[i] * z[s->n + i];
}

static int gonzalez_f_residual(const double *x, double *r, void *ctx)
{
    const gonzalez_f_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m, dim = 2 * n;
    const double *lam = x + dim;
    double mid[2 * N], delta[2 * N], g[2 * N], a[NH_MAX_CON * N], force[N], coef;
    for (int i = 0; i < dim; ++i) {
        mid[i] = 0.5 * (c->z0[i] + x[i]);
        delta[i] = x[i] - c->z0[i];
    }
    canonical_gradient(s, mid, g);
    nh_gonzalez_correct(dim, c->energy0, canonical_energy(s, x), delta, nh_dot(dim, mid, mid), g, &coef);
    s->type->constraint(s, mid, a);
    nh_matvec_t(m, n, a, lam, force);
    for (int i = 0; i < n; ++i) {
        r[i] = delta[i] / c->h - g[n + i];
        r[n + i] = delta[n + i] / c->h + g[i] - force[i];
    }
    nh_matvec(m, n, a, g + n, r + dim);
    return 0;
}

static int gonzalez_f_jacobian(const double *x, double *jac, void *ctx)
{
    const gonzalez_f_step *c = ctx;
    return nh_fd_jacobian(2 * c->sys->n + c->sys->m, gonzalez_f_residual, ctx, x, jac, c->work);
}

static int gonzalez_f_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    gonzalez_f_step c = {.sys = s, .h = h, .work = st->workspace};
    double x[NH_MAX_UNKNOWNS], v1[N];
    memcpy(c.z0, q, (size_t)n * sizeof *q);
    for (int i = 0; i < n; ++i)
        c.z0[n + i] = s->mass[i] * v[i];
    c.energy0 = canonical_energy(s, c.z0);
    int rc = nh_method_predict(s, h, q, v, v1, x + 2 * n);
    if (rc)
        return rc;
    for (int i = 0; i < n; ++i) {
        x[i] = q[i] + h * v[i];
        x[n + i] = s->mass[i] * v1[i];
    }
    nh_nonlinear_problem pb = {2 * n + s->m, gonzalez_f_residual, gonzalez_f_jacobian, &c,
                               fmax(nh_norm_inf(2 * n, c.z0) / h, 1e-300), NH_JACOBIAN_EACH_SOLVE, 0, NULL};
    if ((rc = nh_solver_solve(st->solver, &pb, x)))
        return rc;
    for (int i = 0; i < n; ++i) {
        q[i] = x[i];
        v[i] = s->inv_mass[i] * x[n + i];
    }
    return NH_OK;
}

static int gonzalez_f_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 2 * sys->n + sys->m;
}

static long gonzalez_f_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    return NH_FD_WORK(gonzalez_f_solver_dim(self, sys));
}

const nh_method_type nh_method_gonzalez_f = {
    .name = "gonzalez-f",
    .summary = "Gonzalez-F: Gonzalez discrete gradient on T*Q with a multiplier (seed 000 eq. 15)",
    .reference = "Celledoni et al. 2019 eq. 15",
    .fixed_flags = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_ENERGY | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = gonzalez_f_solver_dim,
    .workspace_size = gonzalez_f_workspace_size,
    .step = gonzalez_f_step_fn,
};
