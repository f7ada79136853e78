/* Nonholonomic Newmark F^{beta,beta',alpha} of Anahory Simoes et al. 2022, Def. 3.1 with the discrete constraints
 * (15) Phi = A((1-alpha) q0 + alpha q1)(q1 - q0)/h or (16) [(1-alpha) A(q0) + alpha A(q1)](q1 - q0)/h;
 * docs/METHODS.md Sect. 6 (gamma = 1/2 + beta - beta' corrects a misprint of Anahory Simoes et al. 2022). With
 * Gamma(q, lam) = M^-1(-grad V(q) + A(q)^T lam):
 *   q1 = q0 + h v0 + h^2/2 [(1-2 beta) Gamma(q0, lam) + 2 beta Gamma(q1, lam')]
 *   q0 = q1 - h v1 + h^2/2 [2 beta' Gamma(q0, lam) + (1-2 beta') Gamma(q1, lam')]
 *   0 = Phi_alpha(q0, q1),   0 = A(q1) v1
 * The second equation gives v1 explicitly, v1 = (q1 - q0)/h + h/2 [2 beta' Gamma(q0, lam) +
 * (1-2 beta') Gamma(q1, lam')], so the solver sees only (q1, lam, lam') (n + 2m unknowns, not 2n + 2m):
 * Newton on this system is Newton on the full one with v1 eliminated (it enters linearly, with -I).
 * With beta > 0 the Newton matrix is built at every iteration.
 * With beta = 0 (the default F^{0,0,1/2}, F^{0,0,0}, F^{0,0,1}) the position equation is affine in lam and
 * does not read lam': (q1 - q0)/h = w + K lam, w = v0 - h/2 M^-1 grad V(q0), K = h/2 M^-1 A(q0)^T. Then
 * Phi_alpha is m equations in lam alone, linear when A_* does not depend on lam (alpha = 0, or a CVT-type
 * system, whose A does not read the coordinates K moves; docs/METHODS.md Sect. 6), and A(q1) v1 = 0 is
 * m linear equations in lam': the step is two m x m linear solves (F^{0,0,0} is Prop. 3.9's explicit
 * method), with an m-unknown Newton solve for lam otherwise.
 * Order 2 and reversible iff beta = beta' and alpha = 1/2, else order 1. beta + beta' = 1/2 is refused
 * (Remark 3.3: the lam and lam' columns of the Jacobian become parallel). */
#include "affine.h"
#include "common.h"

#include <string.h>

enum { P_BETA = 0, P_BETA2 = 1, P_ALPHA = 2, P_DISC = 3 };

static const nh_param_def newmark_params[] = {
    {"beta", 0.0, 0.0, 0.5, 0, "weight of Gamma(q1) in the position equation", NULL},
    {"beta2", 0.0, 0.0, 0.5, 0, "beta' of Anahory Simoes et al. 2022, weight of Gamma(q0) in the backward equation",
     NULL},
    {"alpha", 0.5, 0.0, 1.0, 0, "point of the discrete constraint", NULL},
    {"disc", 15, 15, 16, 1, "discrete constraint: 15 = A at the alpha-point, 16 = alpha-average of A", NULL},
};

typedef struct newmark_step {
    const nh_system *sys;
    double h, beta, beta2, alpha;
    int averaged;                               /* constraint (16) */
    const double *q0, *v0;
    double gamma0_force[NH_MAX_DIM];            /* -M^-1 grad V(q0) */
    double a0[NH_MAX_CON * NH_MAX_DIM];         /* A(q0) */
    double *work;                               /* the stepper's workspace: Hessian, A^T lam (n n each), dv1/dx (n (n + 2m)) */
} newmark_step;

/* Gamma(q, lam) into g; also returns A(q) in a. */
static void newmark_gamma(const nh_system *s, const double *q, const double *lam, double *a, double *g)
{
    double grad[NH_MAX_DIM], force[NH_MAX_DIM];
    s->type->potential_gradient(s, q, grad);
    s->type->constraint(s, q, a);
    nh_matvec_t(s->m, s->n, a, lam, force);
    for (int i = 0; i < s->n; ++i)
        g[i] = s->inv_mass[i] * (force[i] - grad[i]);
}

static void gamma_at_q0(const newmark_step *c, const double *lam, double *g)
{
    double force[NH_MAX_DIM];
    nh_matvec_t(c->sys->m, c->sys->n, c->a0, lam, force);
    for (int i = 0; i < c->sys->n; ++i)
        g[i] = c->gamma0_force[i] + c->sys->inv_mass[i] * force[i];
}

/* v1 of the backward equation from Gamma(q0, lam) and Gamma(q1, lam') */
static void newmark_velocity(const newmark_step *c, const double *q1, const double *g0, const double *g1, double *v1)
{
    for (int i = 0; i < c->sys->n; ++i)
        v1[i] = (q1[i] - c->q0[i]) / c->h + 0.5 * c->h * (2 * c->beta2 * g0[i] + (1 - 2 * c->beta2) * g1[i]);
}

/* Unknowns x = (q1, lam, lam'); rows: the position equation divided by h (a velocity), Phi_alpha, and
 * A(q1) v1 with v1 from newmark_velocity. */
static int newmark_residual(const double *x, double *r, void *ctx)
{
    const newmark_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    const double *q1 = x, *lam = x + n, *lam2 = x + n + m, h = c->h;
    double g0[NH_MAX_DIM], g1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM], aa[NH_MAX_CON * NH_MAX_DIM], dq[NH_MAX_DIM];
    double qa[NH_MAX_DIM], v1[NH_MAX_DIM];
    gamma_at_q0(c, lam, g0);
    newmark_gamma(s, q1, lam2, a1, g1);
    newmark_velocity(c, q1, g0, g1, v1);
    for (int i = 0; i < n; ++i) {
        dq[i] = (q1[i] - c->q0[i]) / h;
        r[i] = dq[i] - c->v0[i] - 0.5 * h * ((1 - 2 * c->beta) * g0[i] + 2 * c->beta * g1[i]);
        qa[i] = (1 - c->alpha) * c->q0[i] + c->alpha * q1[i];
    }
    if (c->averaged) {
        for (int k = 0; k < m * n; ++k)
            aa[k] = (1 - c->alpha) * c->a0[k] + c->alpha * a1[k];
    } else {
        s->type->constraint(s, qa, aa);
    }
    nh_matvec(m, n, aa, dq, r + n);
    nh_matvec(m, n, a1, v1, r + n + m);
    return 0;
}

/* The rows of the position equation and dv1/dx (n x dim, in `dv`): both are affine in Gamma(q0, lam)
 * and Gamma(q1, lam'), whose derivatives are g1q = dGamma(q1, lam')/dq1 and the columns M^-1 A^T.
 * Inlined with m a constant where the caller knows it (NH_WITH_CONSTRAINT_COUNT). */
static inline __attribute__((always_inline)) void newmark_gamma_rows(const newmark_step *c, const int m,
                                                                     const double *g1q, const double *a1, double *jac,
                                                                     double *dv)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), dim = n + 2 * m;
    const double h = c->h, inv_h = 1.0 / h;
    /* the weights of Gamma(q0, lam) and Gamma(q1, lam') in the rows of q1 and of v1 */
    const double jac_g0 = -0.5 * h * (1 - 2 * c->beta), jac_g1 = -0.5 * h * 2 * c->beta;
    const double dv_g0 = 0.5 * h * 2 * c->beta2, dv_g1 = 0.5 * h * (1 - 2 * c->beta2);
    const double *restrict inv_mass = s->inv_mass, *restrict a0 = c->a0;
    for (int i = 0; i < n; ++i) {
        double *restrict jac_row = jac + i * dim, *restrict dv_row = dv + i * dim;
        const double *restrict g_row = g1q + i * n;
        for (int j = 0; j < n; ++j) {
            jac_row[j] = jac_g1 * g_row[j];
            dv_row[j] = dv_g1 * g_row[j];
        }
        jac_row[i] += inv_h;
        dv_row[i] += inv_h;
        for (int k = 0; k < m; ++k) {
            const double b0 = inv_mass[i] * a0[k * n + i], b1 = inv_mass[i] * a1[k * n + i];
            jac_row[n + k] = jac_g0 * b0;
            jac_row[n + m + k] = jac_g1 * b1;
            dv_row[n + k] = dv_g0 * b0;
            dv_row[n + m + k] = dv_g1 * b1;
        }
    }
}

/* The rows of Phi_alpha, d/dq1 of A_*(q1 - q0)/h from A_* (aa) and d(A_* dq)/dq1 (daa), and of A(q1) v1:
 * d(A v)/dq1 at fixed v (dav) plus A(q1) dv1/dx. */
static inline __attribute__((always_inline)) void newmark_constraint_rows(const newmark_step *c, const int m,
                                                                          const double *aa, const double *daa,
                                                                          const double *a1, const double *dav,
                                                                          const double *dv, double *jac)
{
    const int n = nh_dim(c->sys), dim = n + 2 * m;
    const double h = c->h, al = c->alpha;
    for (int k = 0; k < m; ++k) {
        double *restrict phi_row = jac + (n + k) * dim, *restrict av_row = jac + (n + m + k) * dim;
        for (int j = 0; j < n; ++j) {
            phi_row[j] = (aa[k * n + j] + al * daa[k * n + j]) / h;
            av_row[j] = dav[k * n + j];
        }
        for (int j = n; j < dim; ++j)
            phi_row[j] = av_row[j] = 0.0;
        for (int i = 0; i < n; ++i) {   /* + A(q1) dv1/dx, summed over i in order for every column */
            const double a_ki = a1[k * n + i], *restrict dv_row = dv + i * dim;
            for (int j = 0; j < dim; ++j)
                av_row[j] += a_ki * dv_row[j];
        }
    }
}

static int newmark_jacobian(const double *x, double *jac, void *ctx)
{
    const newmark_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    const double *q1 = x, *lam = x + n, *lam2 = x + n + m, al = c->alpha;
    double *hess = c->work, *atl = c->work + n * n, *dv = c->work + 2 * n * n, a1[NH_MAX_CON * NH_MAX_DIM];
    double dq[NH_MAX_DIM], qa[NH_MAX_DIM], aa[NH_MAX_CON * NH_MAX_DIM], daa[NH_MAX_CON * NH_MAX_DIM];
    double dav[NH_MAX_CON * NH_MAX_DIM], g0[NH_MAX_DIM], g1[NH_MAX_DIM], v1[NH_MAX_DIM];
    s->type->potential_hessian(s, q1, hess);
    s->type->constraint_jacobian_multiplier(s, q1, lam2, atl);
    gamma_at_q0(c, lam, g0);
    newmark_gamma(s, q1, lam2, a1, g1);
    newmark_velocity(c, q1, g0, g1, v1);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j)   /* dGamma(q1, lam')/dq1, in place of the Hessian */
            hess[i * n + j] = s->inv_mass[i] * (atl[i * n + j] - hess[i * n + j]);
        dq[i] = q1[i] - c->q0[i];
        qa[i] = (1 - al) * c->q0[i] + al * q1[i];
    }
#define GAMMA_ROWS(m) newmark_gamma_rows(c, m, hess, a1, jac, dv)
    NH_WITH_CONSTRAINT_COUNT(m, GAMMA_ROWS);
#undef GAMMA_ROWS
    /* Phi rows: d/dq1 of A_*(q1 - q0)/h */
    if (c->averaged) {
        for (int k = 0; k < m * n; ++k)
            aa[k] = (1 - al) * c->a0[k] + al * a1[k];
        s->type->constraint_jacobian_velocity(s, q1, dq, daa);
    } else {
        s->type->constraint(s, qa, aa);
        s->type->constraint_jacobian_velocity(s, qa, dq, daa);
    }
    /* A(q1) v1 rows: d(A v)/dq1 at fixed v, plus A(q1) dv1/dx */
    s->type->constraint_jacobian_velocity(s, q1, v1, dav);
#define CONSTRAINT_ROWS(m) newmark_constraint_rows(c, m, aa, daa, a1, dav, dv, jac)
    NH_WITH_CONSTRAINT_COUNT(m, CONSTRAINT_ROWS);
#undef CONSTRAINT_ROWS
    return 0;
}

/* ---- beta = 0: lam from Phi_alpha (affine.h: base q0, reach alpha h, or (16)), then q1, then lam' ------ */

/* Phi_alpha as affine.h's A_* u = 0 with u = (q1 - q0)/h: (15) A(q0 + alpha h u), (16) (1 - alpha) A(q0) +
 * alpha A(q0 + h u) */
static void phi_as_affine(const nh_system *s, const double *par, double h, const double *q0, const double *a0,
                          nh_affine_step *c)
{
    const int averaged = par[P_DISC] == 16;
    c->sys = s;
    c->base = q0;
    c->reach = averaged ? h : par[P_ALPHA] * h;
    c->a_fixed = averaged ? a0 : NULL;
    c->weight = par[P_ALPHA];
}

/* v1 = u1 + K1 lam' with A(q1) v1 = 0: u1 = u + h beta' Gamma(q0, lam) - h/2 (1 - 2 beta') M^-1 grad V(q1),
 * K1 = h/2 (1 - 2 beta') M^-1 A(q1)^T; gamma0_force = -M^-1 grad V(q0), a0 = A(q0) */
static int final_velocity(const nh_system *s, double h, double beta2, const double *gamma0_force, const double *a0,
                          const double *lam, const double *u, const double *q1, double *v1)
{
    const int n = s->n, m = s->m;
    const double w0 = h * beta2, w1 = 0.5 * h * (1 - 2 * beta2);
    double grad[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM], kick1[NH_MAX_DIM * NH_MAX_CON], u1[NH_MAX_DIM];
    double force0[NH_MAX_DIM], lam1[NH_MAX_CON];
    s->type->potential_gradient(s, q1, grad);
    s->type->constraint(s, q1, a1);
    for (int i = 0; i < n; ++i)
        u1[i] = u[i] - w1 * s->inv_mass[i] * grad[i];
    nh_kick_matrix(s, w1, a1, kick1);
    if (w0 != 0.0) {
        nh_matvec_t(m, n, a0, lam, force0);
        for (int i = 0; i < n; ++i)
            u1[i] += w0 * (gamma0_force[i] + s->inv_mass[i] * force0[i]);
    }
    int rc = nh_solve_kicked_constraint(m, n, a1, kick1, u1, lam1);
    if (rc == NH_OK)
        nh_kicked_velocity(s, u1, kick1, lam1, v1);
    return rc;
}

static int newmark_split_step(nh_stepper *st, double h, double *q, double *v)
{
    const nh_system *s = st->sys;
    const double *par = st->params.value;
    const int n = nh_dim(s);
    double q0[NH_MAX_DIM], grad[NH_MAX_DIM], a0[NH_MAX_CON * NH_MAX_DIM], gamma0_force[NH_MAX_DIM];
    double lam[NH_MAX_CON], u[NH_MAX_DIM];
    nh_affine_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    nh_copy(n, q, q0);
    phi_as_affine(s, par, h, q0, a0, &c);
    s->type->potential_gradient(s, q0, grad);
    s->type->constraint(s, q0, a0);
    for (int i = 0; i < n; ++i) {
        gamma0_force[i] = -s->inv_mass[i] * grad[i];
        c.w[i] = v[i] + 0.5 * h * gamma0_force[i];
    }
    nh_kick_matrix(s, 0.5 * h, a0, c.kick);
    int rc = nh_affine_multiplier(st->solver, &c, v, lam);
    if (rc)
        return rc;
    nh_affine_velocity(&c, lam, u);
    for (int i = 0; i < n; ++i)
        q[i] = q0[i] + h * u[i];
    return final_velocity(s, h, par[P_BETA2], gamma0_force, a0, lam, u, q, v);
}

/* ---- beta > 0: Newton on (q1, lam, lam') ------------------------------------------------------- */

/* q1 from Taylor, q0 + h v0 + h^2/2 Gamma(q0, lam), with lam and lam' from the quadratic through the
 * last three solutions (whose own q1 is O(h^3) too, but with 6 times the Taylor guess's error: the chord
 * iteration took 4.3 iterations per step from it instead of 2), else the exact multiplier of the
 * index-1 ODE for both */
static int newmark_guess(void *ctx, double *x, const double *past)
{
    const newmark_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = s->n, m = s->m;
    const double h = c->h;
    double v_euler[NH_MAX_DIM], g0[NH_MAX_DIM];
    if (past) {
        nh_history_quadratic(n + 2 * m, past, x);
    } else {
        int rc = nh_method_predict(s, h, c->q0, c->v0, v_euler, x + n);
        if (rc)
            return rc;
        memcpy(x + n + m, x + n, (size_t)m * sizeof *x);
    }
    gamma_at_q0(c, x + n, g0);
    for (int i = 0; i < n; ++i)
        x[i] = c->q0[i] + h * c->v0[i] + 0.5 * h * h * g0[i];
    return NH_OK;
}

static int is_explicit(const double *par)
{
    return par[P_BETA] == 0.0 && par[P_BETA2] == 0.0 && par[P_ALPHA] == 0.0;
}

static int newmark_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const double *par = st->params.value;
    if (par[P_BETA] == 0.0)
        return newmark_split_step(st, h, q, v);
    const int n = nh_dim(s), m = s->m;
    double x[NH_MAX_UNKNOWNS], q0[NH_MAX_DIM], g0[NH_MAX_DIM], grad[NH_MAX_DIM];
    nh_copy(n, q, q0);
    newmark_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.h = h;
    c.work = st->workspace;
    c.beta = par[P_BETA];
    c.beta2 = par[P_BETA2];
    c.alpha = par[P_ALPHA];
    c.averaged = par[P_DISC] == 16;
    c.q0 = q0;
    c.v0 = v;
    s->type->constraint(s, q0, c.a0);
    s->type->potential_gradient(s, q0, grad);
    for (int i = 0; i < n; ++i)
        c.gamma0_force[i] = -s->inv_mass[i] * grad[i];
    double scale = fmax(nh_norm_inf(n, q0) / fabs(h), fmax(nh_norm_inf(n, v), fabs(h) * nh_norm_inf(n, grad)));
    /* Full Newton: a chord iteration needs more iterations here (2.24 instead of 1.98 at beta = 0.1, 3.81
     * instead of 2.02 at 0.2). */
    nh_nonlinear_problem pb = {n + 2 * m, newmark_residual, newmark_jacobian, &c, scale > 0 ? scale : 1.0,
                               NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    int rc = nh_method_solve(st, &pb, h, q0, v, NH_QUADRATIC_POINTS, newmark_guess, NULL, x);
    if (rc)
        return rc;
    double a1[NH_MAX_CON * NH_MAX_DIM], g1[NH_MAX_DIM];
    gamma_at_q0(&c, x + n, g0);
    newmark_gamma(s, x, x + n + m, a1, g1);
    newmark_velocity(&c, x, g0, g1, v);
    memcpy(q, x, (size_t)n * sizeof *q);
    nh_stepper_remember(st, x, q, v);
    return NH_OK;
}

static int symmetric(const double *par)
{
    return par[P_BETA] == par[P_BETA2] && par[P_ALPHA] == 0.5;
}

static unsigned newmark_flags(const nh_method_spec *self)
{
    unsigned f = NH_METHOD_PRESERVES_CONSTRAINT | (is_explicit(self->params.value) ? 0u : NH_METHOD_IMPLICIT);
    return symmetric(self->params.value) ? f | NH_METHOD_REVERSIBLE : f;
}

static int newmark_order(const nh_method_spec *self)
{
    return symmetric(self->params.value) ? 2 : 1;
}

static int newmark_accepts(const nh_method_spec *self, const nh_system *sys, nh_error *err)
{
    (void)sys;
    if (fabs(self->params.value[P_BETA] + self->params.value[P_BETA2] - 0.5) < 1e-12)
        return nh_fail(err, NH_ERR_INPUT,
                       "newmark: beta + beta2 = %g is refused: with beta + beta' = 1/2 the columns of lam and lam' in "
                       "the Newton matrix become parallel and the step is ill-conditioned "
                       "(Anahory Simoes et al. 2022, Remark 3.3); "
                       "choose beta + beta2 != 1/2, e.g. beta = beta2 = 0 or 0.1",
                       self->params.value[P_BETA] + self->params.value[P_BETA2]);
    return NH_OK;
}

/* beta = 0: lam solves m equations, linear (no solver) when A_* does not depend on lam; else (q1, lam, lam'). */
static int newmark_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    const double *par = self->params.value;
    if (par[P_BETA] == 0.0) {   /* phi_as_affine's A_* */
        const int averaged = par[P_DISC] == 16;
        return nh_affine_is_linear(sys, averaged ? 1.0 : par[P_ALPHA], averaged, par[P_ALPHA]) ? 0 : sys->m;
    }
    return sys->n + 2 * sys->m;
}

static long newmark_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    const long dim = sys->n + 2L * sys->m;
    return self->params.value[P_BETA] == 0.0 ? 0 : 2L * sys->n * sys->n + (long)sys->n * dim;
}

const nh_method_type nh_method_newmark = {
    .name = "newmark",
    .summary = "nonholonomic Newmark F^{beta,beta',alpha} (Anahory Simoes et al. 2022, Def. 3.1; explicit for 0,0,0)",
    .reference = "Anahory Simoes et al. 2022 Def. 3.1, eqs. 15-16, Prop. 3.9; docs/METHODS.md Sect. 6",
    .n_params = 4,
    .params = newmark_params,
    .flags = newmark_flags,
    .order = newmark_order,
    .accepts = newmark_accepts,
    .solver_dim = newmark_solver_dim,
    .workspace_size = newmark_workspace_size,
    .step = newmark_step_fn,
};
