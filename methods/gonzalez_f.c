/* Gonzalez-F: the first energy-preserving attempt of Celledoni et al. 2019, Sect. 3.3, eq. 15, on T*Q with a
 * multiplier: z = (q, p),
 *   (z' - z)/h = J grad_bar H(z, z') + lam (0, A(q_bar)^T),   A(q_bar) d_p grad_bar H(z, z') = 0,
 * with the Gonzalez discrete gradient of H = 1/2 p^T M^-1 p + V on R^{2n}. H is conserved exactly
 * (J skew, the multiplier term is orthogonal to grad_bar H); the constraint A(q) M^-1 p = 0 is not
 * kept at the output points ("only approximately satisfied", Celledoni et al. 2019), which a test shows.
 * Unknowns (q', p', lam): 2n + m. Order 2, symmetric. The Newton matrix is analytic: with
 * G = d grad_bar H / dz' = 1/2 Hess H(z_bar) + the Gonzalez correction's derivative (nh_gonzalez_correct_jacobian),
 *   rows q:   I/h - G_p.              | 0
 *   rows p:   I/h + G_q. - 1/2 d(A^T lam)/dq [q columns] | -A^T
 *   rows lam: A G_p. + 1/2 d(A w)/dq [q columns], w = (grad_bar H)_p | 0
 * (the midpoint moves by 1/2 of the end point). */
#include "common.h"
#include "discrete_gradient.h"

#include <string.h>

enum { N = NH_MAX_DIM };

typedef struct gonzalez_f_step {
    const nh_system *sys;
    double h;
    double z0[2 * N];           /* (q0, M v0) */
    const double *v0;
    double energy0;
    double *work;           /* the Newton matrix's scratch (the stepper's workspace, gonzalez_f_workspace_size) */
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

/* G (2n x 2n) = d grad_bar H / dz' = 1/2 Hess H(mid) + the derivative of the applied correction coef delta
 * (grad_mid = grad H(mid) before the correction); hess (n x n) = Hess V(mid), which the caller reuses. */
static void gonzalez_f_gradient_derivative(const gonzalez_f_step *c, const double *x, const double *mid,
                                           const double *delta, const double *grad_mid, int corrected, double coef,
                                           double *G, double *hess)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), dim = 2 * n;
    double grad1[2 * N], hess_delta[2 * N];
    s->type->potential_hessian(s, mid, hess);
    for (int i = 0; i < dim * dim; ++i)
        G[i] = 0.0;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < n; ++k)
            G[i * dim + k] = 0.5 * hess[i * n + k];
        G[(n + i) * dim + n + i] = 0.5 * s->inv_mass[i];
    }
    if (!corrected)
        return;
    canonical_gradient(s, x, grad1);
    nh_matvec(n, n, hess, delta, hess_delta);
    for (int i = 0; i < n; ++i)
        hess_delta[n + i] = s->inv_mass[i] * delta[n + i];
    nh_gonzalez_correct_jacobian(dim, delta, coef, grad1, grad_mid, hess_delta, G);
}

/* The Newton matrix of the residual below (the rows of the module comment) from its points and G; g is
 * grad_bar H after the correction, a = A(mid). */
static void gonzalez_f_matrix(const gonzalez_f_step *c, const double *x, const double *mid, const double *delta,
                              const double *grad_mid, const double *g, const double *a, int corrected, double coef,
                              double *jac)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m, dim = 2 * n, size = dim + m;
    double *G = c->work, *hess = c->work + dim * dim, *datl = hess + n * n, dav[NH_MAX_CON * N];
    gonzalez_f_gradient_derivative(c, x, mid, delta, grad_mid, corrected, coef, G, hess);
    s->type->constraint_jacobian_multiplier(s, mid, x + dim, datl);
    s->type->constraint_jacobian_velocity(s, mid, g + n, dav);
    const double inv_h = 1.0 / c->h;
    for (int i = 0; i < n; ++i) {
        double *rq = jac + i * size, *rp = jac + (n + i) * size;
        for (int k = 0; k < dim; ++k) {
            rq[k] = -G[(n + i) * dim + k];
            rp[k] = G[i * dim + k];
        }
        rq[i] += inv_h;
        rp[n + i] += inv_h;
        for (int k = 0; k < n; ++k)
            rp[k] -= 0.5 * datl[i * n + k];
        for (int j = 0; j < m; ++j) {
            rq[dim + j] = 0.0;
            rp[dim + j] = -a[j * n + i];
        }
    }
    for (int j = 0; j < m; ++j) {
        double *rl = jac + (dim + j) * size;
        for (int k = 0; k < dim; ++k) {
            double sum = 0.0;
            for (int l = 0; l < n; ++l)
                sum += a[j * n + l] * G[(n + l) * dim + k];
            rl[k] = sum + (k < n ? 0.5 * dav[j * n + k] : 0.0);
        }
        for (int l = 0; l < m; ++l)
            rl[dim + l] = 0.0;
    }
}

/* The residual (r not NULL) and the Newton matrix (jac not NULL) at x = (q', p', lam). */
static int gonzalez_f_evaluate(const gonzalez_f_step *c, const double *x, double *r, double *jac)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m, dim = 2 * n;
    const double *lam = x + dim;
    double mid[2 * N], delta[2 * N], g[2 * N], grad_mid[2 * N], a[NH_MAX_CON * N], force[N], coef;
    for (int i = 0; i < dim; ++i) {
        mid[i] = 0.5 * (c->z0[i] + x[i]);
        delta[i] = x[i] - c->z0[i];
    }
    canonical_gradient(s, mid, g);
    if (jac)
        memcpy(grad_mid, g, (size_t)dim * sizeof *g);
    const int corrected =
        nh_gonzalez_correct(dim, c->energy0, canonical_energy(s, x), delta, nh_dot(dim, mid, mid), g, &coef);
    s->type->constraint(s, mid, a);
    if (r) {
        nh_matvec_t(m, n, a, lam, force);
        for (int i = 0; i < n; ++i) {
            r[i] = delta[i] / c->h - g[n + i];
            r[n + i] = delta[n + i] / c->h + g[i] - force[i];
        }
        nh_matvec(m, n, a, g + n, r + dim);
    }
    if (jac)
        gonzalez_f_matrix(c, x, mid, delta, grad_mid, g, a, corrected, coef, jac);
    return 0;
}

NH_PROBLEM_CALLBACKS(gonzalez_f, gonzalez_f_step, gonzalez_f_evaluate)

/* lam (m) = the weighted least-squares solution of the p rows at the guess (q1, p1) without the Gonzalez
 * correction, A^T lam = (p1 - p0)/h + grad V(q_bar): (A M^-1 A^T) lam = A M^-1 [...] at q_bar. */
static int gonzalez_f_guess_multiplier(const gonzalez_f_step *c, const double *x, double *lam)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double mid[N], grad[N], force[N], a[NH_MAX_CON * N], gram[NH_MAX_CON * NH_MAX_CON];
    for (int i = 0; i < n; ++i)
        mid[i] = 0.5 * (c->z0[i] + x[i]);
    s->type->potential_gradient(s, mid, grad);
    s->type->constraint(s, mid, a);
    for (int i = 0; i < n; ++i)
        force[i] = s->inv_mass[i] * ((x[n + i] - c->z0[n + i]) / c->h + grad[i]);
    nh_matvec(m, n, a, force, lam);
    nh_constraint_gram(s, mid, a, gram);
    return nh_spd_solve(m, gram, lam) ? NH_STEP_SINGULAR : NH_OK;
}

/* The first guess. With six past steps: q1 from the quintic through their increments, p1 from the
 * midpoint rule's q rows, 2 M (q1 - q0)/h - p0, and lam from the p rows (gonzalez_f_guess_multiplier);
 * p and lam are not extrapolated, since they carry a period-2 ripple (docs/METHODS.md). Else explicit
 * Euler on the index-1 ODE. */
static int gonzalez_f_guess(void *ctx, double *x, const double *past)
{
    const gonzalez_f_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s);
    if (past) {
        double increments[NH_MAX_UNKNOWNS];
        nh_history_quintic(2 * n + s->m, past, increments);
        for (int i = 0; i < n; ++i) {
            x[i] = c->z0[i] + increments[i];
            x[n + i] = 2.0 * s->mass[i] * increments[i] / c->h - c->z0[n + i];
        }
        if (gonzalez_f_guess_multiplier(c, x, x + 2 * n) != NH_OK)
            for (int j = 0; j < s->m; ++j)   /* A M^-1 A^T not SPD at that q_bar (NaN, say): the solve decides, */
                x[2 * n + j] = 0.0;           /* and nh_method_solve restarts from Euler's guess if it fails */
        return NH_OK;
    }
    double v1[N];
    const int rc = nh_method_predict(s, c->h, c->z0, c->v0, v1, x + 2 * n);
    for (int i = 0; i < n && !rc; ++i) {
        x[i] = c->z0[i] + c->h * c->v0[i];
        x[n + i] = s->mass[i] * v1[i];
    }
    return rc;
}

static int gonzalez_f_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    gonzalez_f_step c = {.sys = s, .h = h, .v0 = v, .work = st->workspace};
    double x[NH_MAX_UNKNOWNS];
    memcpy(c.z0, q, (size_t)n * sizeof *q);
    for (int i = 0; i < n; ++i)
        c.z0[n + i] = s->mass[i] * v[i];
    c.energy0 = canonical_energy(s, c.z0);
    nh_nonlinear_problem pb = {2 * n + s->m, gonzalez_f_residual, gonzalez_f_jacobian, &c,
                               fmax(nh_norm_inf(2 * n, c.z0) / fabs(h), 1e-300), NH_JACOBIAN_EACH_SOLVE, 0,
                               gonzalez_f_residual_and_jacobian};
    const int rc = nh_method_solve(st, &pb, h, q, v, NH_QUINTIC_POINTS, gonzalez_f_guess, NULL, x);
    if (rc)
        return rc;
    for (int i = 0; i < n; ++i) {
        q[i] = x[i];
        v[i] = s->inv_mass[i] * x[n + i];
    }
    for (int i = 0; i < 2 * n; ++i)
        x[i] -= c.z0[i];
    nh_stepper_remember(st, x, q, v);
    return NH_OK;
}

static int gonzalez_f_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 2 * sys->n + sys->m;
}

static long gonzalez_f_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 6L * sys->n * sys->n;   /* G (2n x 2n), Hess V and d(A^T lam)/dq (n x n each) */
}

const nh_method_type nh_method_gonzalez_f = {
    .name = "gonzalez-f",
    .summary = "Gonzalez-F: Gonzalez discrete gradient on T*Q with a multiplier (Celledoni et al. 2019, eq. 15)",
    .reference = "Celledoni et al. 2019 eq. 15",
    .fixed_flags = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_ENERGY | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = gonzalez_f_solver_dim,
    .workspace_size = gonzalez_f_workspace_size,
    .step = gonzalez_f_step_fn,
};
