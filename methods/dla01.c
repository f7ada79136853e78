/* DLA^{0,1} of McLachlan-Perlmutter 2006 ("SI-DLA" of seed 000), seed 004 App. A.1 eq. 29;
 * docs/METHODS.md Sect. 2. Order 2, symmetric, reversible, constraint exact.
 *   q_half = q0 + h/2 v0,   w = v0 - h M^-1 grad V(q_half)
 *   v1 = w + h M^-1 A(q_half)^T lam,   q1 = q_half + h/2 v1,   A(q1) v1 = 0
 * For CVT-type systems A(q1) does not depend on lam and the step is one m x m linear solve
 *   lam = -(1/h) [A(q1) M^-1 A(q_half)^T]^-1 A(q1) w   (non-symmetric: LU);
 * otherwise the m equations in lam go through the engine's solver (docs/METHODS.md Sect. 9 row 4). */
#include "common.h"

#include <string.h>

typedef struct dla01_step {
    const nh_system *sys;
    double h;
    double q_half[NH_MAX_DIM], w[NH_MAX_DIM];
    double kick[NH_MAX_DIM * NH_MAX_CON];    /* n x m: h M^-1 A(q_half)^T */
} dla01_step;

static inline __attribute__((always_inline)) void velocity_for(const dla01_step *c, const int m, const double *lam,
                                                               double *v1, double *q1)
{
    const int n = c->sys->n;
    for (int i = 0; i < n; ++i) {
        double s = c->w[i];
        for (int k = 0; k < m; ++k)
            s += c->kick[i * m + k] * lam[k];
        v1[i] = s;
        q1[i] = c->q_half[i] + 0.5 * c->h * s;
    }
}

static void dla01_velocity(const dla01_step *c, const double *lam, double *v1, double *q1)
{
#define VELOCITY(m) velocity_for(c, m, lam, v1, q1)
    NH_WITH_CONSTRAINT_COUNT(c->sys->m, VELOCITY);
#undef VELOCITY
}

/* w = v0 - h M^-1 grad V(q_half) and kick = h M^-1 A(q_half)^T */
static inline __attribute__((always_inline)) void kick_for(dla01_step *c, const int m, const double *v,
                                                           const double *grad, const double *a_half)
{
    const nh_system *s = c->sys;
    const int n = s->n;
    for (int i = 0; i < n; ++i) {
        c->w[i] = v[i] - c->h * s->inv_mass[i] * grad[i];
        for (int k = 0; k < m; ++k)
            c->kick[i * m + k] = c->h * s->inv_mass[i] * a_half[k * n + i];
    }
}

static int dla01_residual(const double *lam, double *r, void *ctx)
{
    const dla01_step *c = ctx;
    const nh_system *s = c->sys;
    double v1[NH_MAX_DIM], q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    dla01_velocity(c, lam, v1, q1);
    s->type->constraint(s, q1, a1);
    nh_matvec(s->m, s->n, a1, v1, r);
    return 0;
}

/* d/dlam A(q1) v1 = [A(q1) + h/2 d(A v1)/dq] * kick */
static int dla01_jacobian(const double *lam, double *jac, void *ctx)
{
    const dla01_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = s->n, m = s->m;
    double v1[NH_MAX_DIM], q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    double dav[NH_MAX_CON * NH_MAX_DIM];
    dla01_velocity(c, lam, v1, q1);
    s->type->constraint(s, q1, a1);
    s->type->constraint_jacobian_velocity(s, q1, v1, dav);
    for (int k = 0; k < m; ++k)
        for (int l = 0; l < m; ++l) {
            double sum = 0.0;
            for (int i = 0; i < n; ++i)
                sum += (a1[k * n + i] + 0.5 * c->h * dav[k * n + i]) * c->kick[i * m + l];
            jac[k * m + l] = sum;
        }
    return 0;
}

/* CVT-type: A(q1) is known before lam. */
static int dla01_linear(const dla01_step *c, double *lam)
{
    const nh_system *s = c->sys;
    const int n = s->n, m = s->m;
    double q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    for (int i = 0; i < n; ++i)
        q1[i] = c->q_half[i] + 0.5 * c->h * c->w[i];
    s->type->constraint(s, q1, a1);
    return nh_solve_kicked_constraint(m, n, a1, c->kick, c->w, lam);
}

static int dla01_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s), m = s->m;
    dla01_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.h = h;
    double grad[NH_MAX_DIM], a_half[NH_MAX_CON * NH_MAX_DIM], lam[NH_MAX_CON];
    for (int i = 0; i < n; ++i)
        c.q_half[i] = q[i] + 0.5 * h * v[i];
    s->type->potential_gradient(s, c.q_half, grad);
    s->type->constraint(s, c.q_half, a_half);
#define KICK(m) kick_for(&c, m, v, grad, a_half)
    NH_WITH_CONSTRAINT_COUNT(m, KICK);
#undef KICK
    int rc = dla01_linear(&c, lam);
    if (rc == NH_OK && st->solver) {
        nh_nonlinear_problem pb = {m, dla01_residual, dla01_jacobian, &c, fmax(nh_norm_inf(n, v), 1e-300), NH_JACOBIAN_EACH_ITERATION, 0};
        rc = nh_solver_solve(st->solver, &pb, lam);
    }
    if (rc)
        return rc;
    dla01_velocity(&c, lam, v, q);
    return NH_OK;
}

static int dla01_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return (sys->type->flags & NH_SYS_CVT_TYPE) ? 0 : sys->m;
}

const nh_method_type nh_method_dla01 = {
    .name = "dla01",
    .summary = "DLA^{0,1} of McLachlan-Perlmutter, SI-DLA (seed 004 eq. 29)",
    .reference = "McLachlan-Perlmutter 2006 eq. 4.18; Modin-Verdier 2020 App. A.1 eq. 29",
    .fixed_flags = NH_METHOD_LINEARLY_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = dla01_solver_dim,
    .step = dla01_step_fn,
};
