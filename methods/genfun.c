/* Generating-function integrators of de Leon et al. 2004 (docs/REFERENCES.md), in the one-step (q, p) form of docs/METHODS.md Sect. 7 (p = M v is the engine's velocity state):
 *   v_01 = (q1 - q0)/h,  q_a = (1 - alpha) q0 + alpha q1,
 *   F = -grad V(q_a) + A(q_a)^T lambda*(q_a, v_01)       (S_alpha^h of eq. 25 and the discretised
 *                                                          constraint forces; lambda* in closed form)
 *   solve  M (q1 - q0)/h = p0 + h (1 - alpha) F  for q1,   p+ = M (q1 - q0)/h + h alpha F
 *   variant 4 (Sect. 4):     p1 = p+          symmetric for alpha = 1/2, constraint O(h^2) only
 *   variant 5 (Sect. 5.1):   p1 = P_q1^T p+   eq. 33: constraint exact, not symmetric
 *   variant 6 (end of Sect. 5, "geometric nonholonomic integrator" P(D2 S + D1 S) = 0): the
 *                            constraint forces alpha_0, alpha_1 are taken in D^o, so F = -grad V(q_a);
 *                            de Leon et al. 2004 leave alpha_0 free, and we fix it by the initial condition
 *                            phi~(q_k, q_k+1) = 0 at every step, i.e. -D1 S(q_k, q_k+1) = p_k, then
 *                            p_k+1 = P_q_k+1^T D2 S(q_k, q_k+1). Constraint exact; our reading, and
 *                            only first order (the position update carries no constraint force).
 * Starting from (q0, v0) on D with p0 = M v0 is the initial condition phi~(q0, q1) = 0. Eq. 27 of
 * de Leon et al. 2004 has the wrong overall sign of lambda (docs/METHODS.md Sect. 9 row 11); lambda* is the engine's.
 * The Newton matrix is analytic for constant-mass systems with a potential Hessian (the q- and
 * v-derivatives of lambda*; the second derivatives of A that they need by differences of the system's
 * d(A v)/dq, m x n entries), else forward differences of the residual; either way Newton converges to
 * the same round-off. */
#include "common.h"

#include <math.h>
#include <string.h>

enum { P_ALPHA = 0, P_VARIANT = 1 };

static const nh_param_def genfun_params[] = {
    {"alpha", 0.5, 0.0, 1.0, 0, "point of S_alpha^h (eq. 25); 1/2 is second order", NULL},
    {"variant", 4, 4, 6, 1, "4 = Sect. 4, 5 = Sect. 5.1 (eq. 33), 6 = geometric nonholonomic integrator", NULL},
};

typedef struct genfun_step {
    const nh_system *sys;
    double h, alpha;
    int constraint_force;   /* 0 for the GNI: forces in D^o are projected away */
    const double *q0, *v0;
    double p0[NH_MAX_DIM];
    double *work;           /* the Newton matrix's scratch (the stepper's workspace) */
    /* The last point F was computed at (genfun_force_at), with F, grad V and A there: the step's end
     * velocity and the Newton matrix are read at points whose residual was just computed. */
    int is_at;
    double at_q1[NH_MAX_DIM], force[NH_MAX_DIM], grad[NH_MAX_DIM], a[NH_MAX_CON * NH_MAX_DIM];
} genfun_step;

/* q_a and v_01 of the header */
static void genfun_points(const genfun_step *c, const double *q1, double *qa, double *v01)
{
    for (int i = 0; i < nh_dim(c->sys); ++i) {
        qa[i] = (1 - c->alpha) * c->q0[i] + c->alpha * q1[i];
        v01[i] = (q1[i] - c->q0[i]) / c->h;
    }
}

/* F(q0, q1) of the header into c->force, with grad V(q_a) and A(q_a) (c->grad, c->a) */
static int genfun_force(genfun_step *c, const double *q1)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double qa[NH_MAX_DIM], v01[NH_MAX_DIM], lam[NH_MAX_CON], at[NH_MAX_DIM];
    genfun_points(c, q1, qa, v01);
    s->type->potential_gradient(s, qa, c->grad);
    if (!c->constraint_force) {
        for (int i = 0; i < n; ++i)
            c->force[i] = -c->grad[i];
        return 0;
    }
    s->type->constraint(s, qa, c->a);
    if (nh_exact_multiplier_from(s, qa, v01, c->a, c->grad, lam))
        return 1;
    nh_matvec_t(m, n, c->a, lam, at);
    for (int i = 0; i < n; ++i)
        c->force[i] = at[i] - c->grad[i];
    return 0;
}

/* genfun_force at q1 unless it was the last point computed */
static int genfun_force_at(genfun_step *c, const double *q1)
{
    const int n = nh_dim(c->sys);
    if (c->is_at && !memcmp(c->at_q1, q1, (size_t)n * sizeof *q1))
        return 0;
    c->is_at = 0;
    if (genfun_force(c, q1))
        return 1;
    memcpy(c->at_q1, q1, (size_t)n * sizeof *q1);
    c->is_at = 1;
    return 0;
}

static int genfun_residual(const double *q1, double *r, void *ctx)
{
    genfun_step *c = ctx;
    const nh_system *s = c->sys;
    if (genfun_force_at(c, q1))
        return 1;
    for (int i = 0; i < nh_dim(s); ++i)
        r[i] = s->mass[i] * (q1[i] - c->q0[i]) / c->h - c->p0[i] - c->h * (1 - c->alpha) * c->force[i];
    return 0;
}

/* The first guess of q1: with the forces F of the past steps (the history records F, not q1), the
 * position equation M (q1 - q0)/h = p0 + h (1 - alpha) F with F the quintic through the last six, which
 * is O(h^6) from this step's F, so q1 is O(h^8) from the solution; else q0 + h/2 (v0 + v1) with v1
 * from explicit Euler (nh_method_predict), O(h^3). */
static int genfun_guess(void *ctx, double *q1, const double *past)
{
    const genfun_step *c = ctx;
    const nh_system *s = c->sys;
    double v1[NH_MAX_DIM], lam[NH_MAX_CON], force[NH_MAX_DIM];
    if (past) {
        nh_history_quintic(s->n, past, force);
        for (int i = 0; i < s->n; ++i)
            q1[i] = c->q0[i] + c->h * s->inv_mass[i] * (c->p0[i] + c->h * (1 - c->alpha) * force[i]);
        return NH_OK;
    }
    int rc = nh_method_predict(s, c->h, c->q0, c->v0, v1, lam);
    for (int i = 0; i < s->n && !rc; ++i)
        q1[i] = c->q0[i] + 0.5 * c->h * (c->v0[i] + v1[i]);
    return rc;
}

/* The analytic matrix needs a constant M and a configuration; otherwise forward differences. */
static int genfun_has_analytic_jacobian(const nh_system *s)
{
    return !nh_has_variable_mass(s) && !nh_is_reduced(s);
}

/* out (m x n) = the m rows c_k(q) = [d(A v)/dq (q) v]_k differentiated along each q_j by a forward
 * difference of the system's d(A v)/dq at fixed v: second derivatives of A, which systems do not supply.
 * They enter only the Newton matrix, with a factor alpha h (1 - alpha), never the residual. Zero, without
 * differences, on a system that declares A affine in q (NH_SYS_AFFINE_CONSTRAINT). */
static void curvature_derivative(const nh_system *s, const double *q, const double *v, const double *curv, double *out)
{
    const int n = s->n, m = s->m;
    double qp[NH_MAX_DIM], dav[NH_MAX_CON * NH_MAX_DIM];
    if (s->type->flags & NH_SYS_AFFINE_CONSTRAINT) {   /* d(A v)/dq does not depend on q: dc/dq = 0 */
        for (int k = 0; k < m * n; ++k)
            out[k] = 0.0;
        return;
    }
    memcpy(qp, q, (size_t)n * sizeof *q);
    for (int j = 0; j < n; ++j) {
        const double d = NH_FD_STEP * fmax(1.0, fabs(q[j]));
        qp[j] = q[j] + d;
        s->type->constraint_jacobian_velocity(s, qp, v, dav);
        qp[j] = q[j];
        for (int k = 0; k < m; ++k)
            out[k * n + j] = (nh_dot(n, dav + k * n, v) - curv[k]) / d;
    }
}

/* The end of constraint_force_jacobian, with m a constant (NH_WITH_CONSTRAINT_COUNT): G dlam/dq1 from
 * J(u), J(w), dc/dq and J(v_01) (`jacobians`, m x n each) and K, then dF/dq1. */
static inline __attribute__((always_inline)) void force_jacobian_rows(const genfun_step *c, const int m,
                                                                      const double *qa, const double *v01,
                                                                      const double *hess,
                                                                      const double *const jacobians[4],
                                                                      const double *g, double *dforce)
{
    const nh_system *s = c->sys;
    const int n = s->n;
    const double al = c->alpha, h = c->h, *restrict a = c->a;
    const double *restrict dlam_q = c->work + n * n, *restrict ju = jacobians[0], *restrict jw = jacobians[1];
    const double *restrict dc = jacobians[2], *restrict jv = jacobians[3];
    double *scratch = c->work + 2 * n * n, rhs[NH_MAX_CON * NH_MAX_DIM], col[NH_MAX_CON], a_minv[NH_MAX_DIM];
    for (int k = 0; k < m; ++k) {
        double unit[NH_MAX_CON] = {0};
        unit[k] = 1.0;
        s->type->constraint_jacobian_multiplier(s, qa, unit, scratch);   /* scratch[l n + j] = dA_kl/dq_j */
        for (int i = 0; i < n; ++i)
            a_minv[i] = a[k * n + i] * s->inv_mass[i];
        for (int j = 0; j < n; ++j) {
            double second = 0.0, kv = 0.0;   /* (A M^-1 (Hess V - D_lam))_kj and K_kj */
            for (int i = 0; i < n; ++i) {
                second += a_minv[i] * (hess[i * n + j] - dlam_q[i * n + j]);
                kv += scratch[j * n + i] * v01[i];
            }
            rhs[k * n + j] = al * (ju[k * n + j] - jw[k * n + j] + second - dc[k * n + j]) - (jv[k * n + j] + kv) / h;
        }
    }
    for (int j = 0; j < n; ++j) {   /* dlam/dq1 = G^-1 rhs, column by column with G factored */
        for (int k = 0; k < m; ++k)
            col[k] = rhs[k * n + j];
        nh_spd_solve_factored(m, g, col);
        for (int k = 0; k < m; ++k)
            rhs[k * n + j] = col[k];
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = al * (dlam_q[i * n + j] - hess[i * n + j]);
            for (int k = 0; k < m; ++k)
                sum += a[k * n + i] * rhs[k * n + j];
            dforce[i * n + j] = sum;
        }
}

/* dF/dq1 (n x n, in dforce) with the constraint force A(q_a)^T lam*, lam* = G^-1 b, G = A M^-1 A^T,
 * b = A M^-1 grad V - c(q_a, v_01) (nh_exact_multiplier), c = d(A v)/dq v:
 *   dF/dq1 = alpha (-Hess V + D_lam) + A^T dlam/dq1,   D_lam = d(A^T lam)/dq at fixed lam,
 *   G dlam/dq1 = alpha [J(M^-1 grad V) - J(M^-1 A^T lam) + A M^-1 (Hess V - D_lam) - dc/dq]
 *              - (J(v_01) + K) / h,
 * with J(u) = d(A u)/dq at fixed u and K_kl = sum_j dA_kl/dq_j v_01,j (the v-derivative of c is J(v) + K). */
static int constraint_force_jacobian(const genfun_step *c, const double *qa, const double *v01, const double *hess,
                                     double *dforce)
{
    const nh_system *s = c->sys;
    const int n = s->n, m = s->m;
    const double *a = c->a;
    double *dlam_q = c->work + n * n, g[NH_MAX_CON * NH_MAX_CON], lam[NH_MAX_CON], curv[NH_MAX_CON];
    double u[NH_MAX_DIM], w[NH_MAX_DIM], ju[NH_MAX_CON * NH_MAX_DIM], jw[NH_MAX_CON * NH_MAX_DIM];
    double jv[NH_MAX_CON * NH_MAX_DIM], dc[NH_MAX_CON * NH_MAX_DIM];
    for (int i = 0; i < n; ++i)
        u[i] = c->grad[i] * s->inv_mass[i];
    s->type->constraint_jacobian_velocity(s, qa, v01, jv);
    for (int k = 0; k < m; ++k)
        curv[k] = nh_dot(n, jv + k * n, v01);
    nh_constraint_gram(s, qa, a, g);
    for (int k = 0; k < m; ++k)   /* lambda* again, which factors g for dlam/dq1 below */
        lam[k] = nh_dot(n, a + k * n, u) - curv[k];
    if (nh_spd_solve(m, g, lam))
        return 1;
    s->type->constraint_jacobian_multiplier(s, qa, lam, dlam_q);
    nh_matvec_t(m, n, a, lam, w);
    for (int i = 0; i < n; ++i)
        w[i] *= s->inv_mass[i];
    s->type->constraint_jacobian_velocity(s, qa, u, ju);
    s->type->constraint_jacobian_velocity(s, qa, w, jw);
    curvature_derivative(s, qa, v01, curv, dc);
    const double *jacobians[4] = {ju, jw, dc, jv};
#define ROWS(m) force_jacobian_rows(c, m, qa, v01, hess, jacobians, g, dforce)
    NH_WITH_CONSTRAINT_COUNT(m, ROWS);
#undef ROWS
    return 0;
}

/* d res / d q1 = M / h - h (1 - alpha) dF/dq1: analytic where genfun_has_analytic_jacobian, else forward
 * differences (an error of about 1e-7 relative, which only slows the last Newton step). */
static int genfun_jacobian(const double *q1, double *jac, void *ctx)
{
    genfun_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s);
    if (!genfun_has_analytic_jacobian(s))
        return nh_fd_jacobian(n, genfun_residual, ctx, q1, jac, c->work);
    double qa[NH_MAX_DIM], v01[NH_MAX_DIM], *hess = c->work;
    if (genfun_force_at(c, q1))
        return 1;
    genfun_points(c, q1, qa, v01);
    s->type->potential_hessian(s, qa, hess);
    if (c->constraint_force && s->m > 0) {
        if (constraint_force_jacobian(c, qa, v01, hess, jac))
            return 1;
    } else {
        for (int i = 0; i < n * n; ++i)
            jac[i] = -c->alpha * hess[i];
    }
    for (int i = 0; i < n * n; ++i)   /* jac holds dF/dq1 */
        jac[i] *= -c->h * (1 - c->alpha);
    for (int i = 0; i < n; ++i)
        jac[i * n + i] += s->mass[i] / c->h;
    return 0;
}

static int genfun_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM], q1[NH_MAX_DIM], v1[NH_MAX_DIM];
    memcpy(q0, q, (size_t)n * sizeof *q);
    memcpy(v0, v, (size_t)n * sizeof *v);
    const int variant = (int)st->params.value[P_VARIANT];
    genfun_step c;   /* not zero-initialised (2 KB): its arrays are written before they are read */
    c.sys = s, c.h = h, c.alpha = st->params.value[P_ALPHA], c.q0 = q0, c.v0 = v0;
    c.constraint_force = variant != 6, c.work = st->workspace, c.is_at = 0;
    for (int i = 0; i < n; ++i)
        c.p0[i] = s->mass[i] * v[i];
    nh_nonlinear_problem pb = {n, genfun_residual, genfun_jacobian, &c, fmax(nh_norm_inf(n, c.p0), 1e-300), NH_JACOBIAN_EACH_SOLVE, 0, NULL};
    int rc = nh_method_solve(st, &pb, h, q0, v0, NH_QUINTIC_POINTS, genfun_guess, NULL, q1);
    if (rc || genfun_force_at(&c, q1))
        return rc ? rc : NH_STEP_NONFINITE;
    for (int i = 0; i < n; ++i)
        v1[i] = (q1[i] - q0[i]) / h + h * c.alpha * c.force[i] * s->inv_mass[i];   /* M^-1 p+ */
    memcpy(q, q1, (size_t)n * sizeof *q);
    if (variant >= 5)
        rc = nh_project_velocity(s, q1, v1, v) ? NH_STEP_SINGULAR : NH_OK;
    else
        memcpy(v, v1, (size_t)n * sizeof *v);
    if (rc == NH_OK)
        nh_stepper_remember(st, c.force, q, v);
    return rc;
}

static unsigned genfun_flags(const nh_method_spec *self)
{
    if (self->params.value[P_VARIANT] >= 5)
        return NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT;
    return NH_METHOD_IMPLICIT | (self->params.value[P_ALPHA] == 0.5 ? NH_METHOD_REVERSIBLE : 0u);
}

static int genfun_order(const nh_method_spec *self)
{
    return self->params.value[P_ALPHA] == 0.5 && self->params.value[P_VARIANT] != 6 ? 2 : 1;
}

static int genfun_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return sys->n;
}

static long genfun_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    const long analytic = 3L * sys->n * sys->n;   /* Hess V, D_lam and one dA_k/dq */
    const long differences = NH_FD_WORK(genfun_solver_dim(self, sys));
    return analytic > differences ? analytic : differences;
}

const nh_method_type nh_method_genfun = {
    .name = "genfun",
    .summary = "generating-function integrator S_alpha^h of de Leon et al. 2004 (Sect. 4; variant 5 = Sect. 5.1)",
    .reference = "de Leon et al. 2004 eqs. 25, 33; docs/METHODS.md Sect. 7",
    .n_params = 2,
    .params = genfun_params,
    .flags = genfun_flags,
    .order = genfun_order,
    .solver_dim = genfun_solver_dim,
    .workspace_size = genfun_workspace_size,
    .step = genfun_step_fn,
};
