/* Generating-function integrators of seed 003 (de Leon, Martin de Diego, Santamaria-Merino 2004),
 * in the one-step (q, p) form of docs/METHODS.md Sect. 7 (p = M v is the engine's velocity state):
 *   v_01 = (q1 - q0)/h,  q_a = (1 - alpha) q0 + alpha q1,
 *   F = -grad V(q_a) + A(q_a)^T lambda*(q_a, v_01)       (S_alpha^h of eq. 25 and the discretised
 *                                                          constraint forces; lambda* in closed form)
 *   solve  M (q1 - q0)/h = p0 + h (1 - alpha) F  for q1,   p+ = M (q1 - q0)/h + h alpha F
 *   variant 4 (Sect. 4):     p1 = p+          symmetric for alpha = 1/2, constraint O(h^2) only
 *   variant 5 (Sect. 5.1):   p1 = P_q1^T p+   eq. 33: constraint exact, not symmetric
 *   variant 6 (end of Sect. 5, "geometric nonholonomic integrator" P(D2 S + D1 S) = 0): the
 *                            constraint forces alpha_0, alpha_1 are taken in D^o, so F = -grad V(q_a);
 *                            seed 003 leaves alpha_0 free, and we fix it by the initial condition
 *                            phi~(q_k, q_k+1) = 0 at every step, i.e. -D1 S(q_k, q_k+1) = p_k, then
 *                            p_k+1 = P_q_k+1^T D2 S(q_k, q_k+1). Constraint exact; our reading, and
 *                            only first order (the position update carries no constraint force).
 * Starting from (q0, v0) on D with p0 = M v0 is the initial condition phi~(q0, q1) = 0. Seed 003
 * eq. 27 has the wrong overall sign of lambda (docs/METHODS.md Sect. 9 row 11); lambda* is the engine's.
 * The Jacobian is by finite differences (it needs the q- and v-derivatives of lambda*, i.e. second
 * derivatives of A; docs/METHODS.md: differences suffice), so Newton converges to the same round-off. */
#include "common.h"

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
    const double *q0;
    double p0[NH_MAX_DIM];
    double *work;           /* nh_fd_jacobian's scratch (the stepper's workspace) */
} genfun_step;

/* F(q0, q1) of the header */
static int genfun_force(const genfun_step *c, const double *q1, double *force)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double qa[NH_MAX_DIM], v01[NH_MAX_DIM], lam[NH_MAX_CON], a[NH_MAX_CON * NH_MAX_DIM], at[NH_MAX_DIM];
    for (int i = 0; i < n; ++i) {
        qa[i] = (1 - c->alpha) * c->q0[i] + c->alpha * q1[i];
        v01[i] = (q1[i] - c->q0[i]) / c->h;
    }
    s->type->potential_gradient(s, qa, force);
    if (!c->constraint_force) {
        for (int i = 0; i < n; ++i)
            force[i] = -force[i];
        return 0;
    }
    if (nh_exact_multiplier(s, qa, v01, lam))
        return 1;
    s->type->constraint(s, qa, a);
    nh_matvec_t(m, n, a, lam, at);
    for (int i = 0; i < n; ++i)
        force[i] = at[i] - force[i];
    return 0;
}

static int genfun_residual(const double *q1, double *r, void *ctx)
{
    const genfun_step *c = ctx;
    const nh_system *s = c->sys;
    double force[NH_MAX_DIM];
    if (genfun_force(c, q1, force))
        return 1;
    for (int i = 0; i < nh_dim(s); ++i)
        r[i] = s->mass[i] * (q1[i] - c->q0[i]) / c->h - c->p0[i] - c->h * (1 - c->alpha) * force[i];
    return 0;
}

/* Central differences: error O(delta^2) = 1e-11 relative in the Newton matrix, which only slows
 * the last Newton step, never the converged residual. */
static int genfun_jacobian(const double *q1, double *jac, void *ctx)
{
    const genfun_step *c = ctx;
    return nh_fd_jacobian(nh_dim(c->sys), genfun_residual, ctx, q1, jac, c->work);
}

static int genfun_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    double q0[NH_MAX_DIM], q1[NH_MAX_DIM], v1[NH_MAX_DIM], lam[NH_MAX_CON], force[NH_MAX_DIM];
    memcpy(q0, q, (size_t)n * sizeof *q);
    const int variant = (int)st->params.value[P_VARIANT];
    genfun_step c = {.sys = s, .h = h, .alpha = st->params.value[P_ALPHA], .q0 = q0, .constraint_force = variant != 6,
                     .work = st->workspace};
    for (int i = 0; i < n; ++i)
        c.p0[i] = s->mass[i] * v[i];
    int rc = nh_method_predict(s, h, q0, v, v1, lam);
    if (rc)
        return rc;
    for (int i = 0; i < n; ++i)
        q1[i] = q0[i] + 0.5 * h * (v[i] + v1[i]);
    nh_nonlinear_problem pb = {n, genfun_residual, genfun_jacobian, &c, fmax(nh_norm_inf(n, c.p0), 1e-300), NH_JACOBIAN_EACH_SOLVE, 0};
    if ((rc = nh_solver_solve(st->solver, &pb, q1)) || genfun_force(&c, q1, force))
        return rc ? rc : NH_STEP_NONFINITE;
    for (int i = 0; i < n; ++i)
        v1[i] = (q1[i] - q0[i]) / h + h * c.alpha * force[i] * s->inv_mass[i];   /* M^-1 p+ */
    memcpy(q, q1, (size_t)n * sizeof *q);
    if (variant >= 5)
        return nh_project_velocity(s, q1, v1, v) ? NH_STEP_SINGULAR : NH_OK;
    memcpy(v, v1, (size_t)n * sizeof *v);
    return NH_OK;
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
    return NH_FD_WORK(genfun_solver_dim(self, sys));
}

const nh_method_type nh_method_genfun = {
    .name = "genfun",
    .summary = "generating-function integrator S_alpha^h of seed 003 (Sect. 4; variant 5 = Sect. 5.1)",
    .reference = "de Leon, Martin de Diego, Santamaria-Merino 2004 eqs. 25, 33; docs/METHODS.md Sect. 7",
    .n_params = 2,
    .params = genfun_params,
    .flags = genfun_flags,
    .order = genfun_order,
    .solver_dim = genfun_solver_dim,
    .workspace_size = genfun_workspace_size,
    .step = genfun_step_fn,
};
