/* DLA^alpha of Cortes-Martinez 2001 as written in Modin & Verdier 2020, App. A.1 eq. 27 (alpha = 1/2 is eq. 28);
 * docs/METHODS.md Sect. 1. Order 1 for alpha != 1/2, 2 for alpha = 1/2 (then symmetric and reversible);
 * constraint exact at the outputs.
 *   Q = q0 + (1-alpha) h v0
 *   M (v1 - v0) = -h [alpha grad V(q0) + (1-alpha) grad V(q1)] + h A(Q)^T lam
 *   q1 = Q + alpha h v1,   A(q1) v1 = 0
 * Unknowns (v1, lam), n + m equations, solved through the engine's solver with the analytic
 * Jacobian of docs/METHODS.md Sect. 1. */
#include "common.h"

#include <string.h>

enum { P_ALPHA = 0 };

static const nh_param_def dla_params[] = {
    {"alpha", 0.5, 0.0, 1.0, 0, "weight of grad V(q0); 1/2 gives the symmetric eq. 28", NULL},
};

typedef struct dla_step {
    const nh_system *sys;
    double h, alpha;
    const double *q0, *v0;
    double grad0[NH_MAX_DIM];
    double node[NH_MAX_DIM];                 /* Q */
    double a_node[NH_MAX_CON * NH_MAX_DIM];  /* A(Q) */
} dla_step;

static void dla_position(const dla_step *c, const double *v1, double *q1)
{
    for (int i = 0; i < nh_dim(c->sys); ++i)
        q1[i] = c->node[i] + c->alpha * c->h * v1[i];
}

/* The momentum balance and constraint rows of the residual at x = (v1, lam), with grad V and A at q1;
 * A(Q)^T lam summed in the row loop with m a constant. */
static inline __attribute__((always_inline)) void dla_residual_rows(const dla_step *c, const int m, const double *x,
                                                                    const double *g1, const double *a1, double *r)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s);
    const double *v1 = x, *lam = x + n;
    for (int i = 0; i < n; ++i)
        r[i] = s->mass[i] * (v1[i] - c->v0[i]) + c->h * (c->alpha * c->grad0[i] + (1.0 - c->alpha) * g1[i]) -
               c->h * nh_matvec_t_entry(m, n, c->a_node, lam, i);
    nh_matvec(m, n, a1, v1, r + n);
}

/* The rows of the Newton matrix: momentum balance M + curvature Hess V | -h A(Q)^T, constraint
 * A(q1) + alpha h d(A(q1) v1)/dq1 | 0. */
static inline __attribute__((always_inline)) void dla_jacobian_rows(const dla_step *c, const int m, const double *hess,
                                                                    const double *a1, const double *dav, double *jac)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), dim = n + m;
    const double h = c->h, al = c->alpha, curvature = al * (1.0 - al) * h * h, velocity_weight = al * h;
    const double *restrict mass = s->mass, *restrict a_node = c->a_node;
    for (int i = 0; i < n; ++i) {
        double *restrict row = jac + i * dim;
        const double *restrict hess_row = hess + i * n;
        for (int j = 0; j < n; ++j)
            row[j] = curvature * hess_row[j];
        row[i] += mass[i];
        for (int k = 0; k < m; ++k)
            row[n + k] = -h * a_node[k * n + i];
    }
    for (int k = 0; k < m; ++k) {
        double *restrict row = jac + (n + k) * dim;
        for (int j = 0; j < n; ++j)
            row[j] = a1[k * n + j] + velocity_weight * dav[k * n + j];
        for (int l = 0; l < m; ++l)
            row[n + l] = 0.0;
    }
}

/* The residual (r not NULL) and the Newton matrix (jac not NULL) at x = (v1, lam), sharing q1 and A(q1) */
static int dla_evaluate(const dla_step *c, const double *x, double *r, double *jac)
{
    const nh_system *s = c->sys;
    const double *v1 = x;
    double q1[NH_MAX_DIM], g1[NH_MAX_DIM], hess[NH_MAX_DIM * NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    double dav[NH_MAX_CON * NH_MAX_DIM];
    dla_position(c, v1, q1);
    s->type->constraint(s, q1, a1);
    if (r) {
        s->type->potential_gradient(s, q1, g1);
#define RESIDUAL(m) dla_residual_rows(c, m, x, g1, a1, r)
        NH_WITH_CONSTRAINT_COUNT(s->m, RESIDUAL);
#undef RESIDUAL
    }
    if (!jac)
        return 0;
    s->type->potential_hessian(s, q1, hess);
    s->type->constraint_jacobian_velocity(s, q1, v1, dav);
#define ROWS(m) dla_jacobian_rows(c, m, hess, a1, dav, jac)
    NH_WITH_CONSTRAINT_COUNT(s->m, ROWS);
#undef ROWS
    return 0;
}

NH_PROBLEM_CALLBACKS(dla, dla_step, dla_evaluate)

static int dla_guess(void *ctx, double *x, const double *past)
{
    const dla_step *c = ctx;
    return nh_method_guess_velocity(c->sys, c->h, c->q0, c->v0, past, x);
}

static int dla_advance(nh_stepper *st, double h, double alpha, double *q, double *v)
{
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    dla_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.h = h;
    c.alpha = alpha;
    c.q0 = q;
    c.v0 = v;
    double x[NH_MAX_UNKNOWNS];
    s->type->potential_gradient(s, q, c.grad0);
    for (int i = 0; i < n; ++i)
        c.node[i] = q[i] + (1.0 - c.alpha) * h * v[i];
    s->type->constraint(s, c.node, c.a_node);
    nh_nonlinear_problem pb = {n + s->m, dla_residual, dla_jacobian, &c,
                               nh_method_momentum_scale(s, h, v, c.grad0), NH_JACOBIAN_EACH_ITERATION, 0,
                               dla_residual_and_jacobian};
    int rc = nh_method_solve(st, &pb, h, q, v, NH_QUADRATIC_POINTS, dla_guess, NULL, x);
    if (rc)
        return rc;
    dla_position(&c, x, q);
    memcpy(v, x, (size_t)n * sizeof *v);
    nh_stepper_remember(st, x, q, v);
    return NH_OK;
}

static int dla_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    return dla_advance(st, h, st->params.value[P_ALPHA], q, v);
}

/* I-DLA: the midpoint discrete Lagrangian L_d = h L((Q0+Q1)/2, (Q1-Q0)/h) with the midpoint discrete
 * constraint A((Q0+Q1)/2)(Q1-Q0) = 0 (Celledoni et al. 2019, Sect. 4.1.3 after McLachlan-Perlmutter 2006). In the
 * one-step variables q_k = (Q_k+Q_{k+1})/2, v_k = (Q_{k+1}-Q_k)/h its DLA equations are exactly
 * DLA^{1/2} (docs/METHODS.md Sect. 2), so it shares this step. */
static int idla_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    return dla_advance(st, h, 0.5, q, v);
}

static unsigned dla_flags(const nh_method_spec *self)
{
    unsigned f = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT;
    return self->params.value[P_ALPHA] == 0.5 ? f | NH_METHOD_REVERSIBLE : f;
}

static int dla_order(const nh_method_spec *self)
{
    return self->params.value[P_ALPHA] == 0.5 ? 2 : 1;
}

static int dla_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return sys->n + sys->m;
}

const nh_method_type nh_method_dla = {
    .name = "dla",
    .summary = "discrete Lagrange-d'Alembert DLA^alpha (Modin & Verdier 2020, eqs. 27-28)",
    .reference = "Cortes-Martinez 2001; Modin & Verdier 2020 App. A.1 eq. 27",
    .n_params = 1,
    .params = dla_params,
    .flags = dla_flags,
    .order = dla_order,
    .solver_dim = dla_solver_dim,
    .step = dla_step_fn,
};

const nh_method_type nh_method_idla = {
    .name = "idla",
    .summary = "I-DLA: implicit reversible DLA, midpoint discrete Lagrangian and constraint "
               "(Celledoni et al. 2019, Sect. 4.1.3)",
    .reference = "McLachlan-Perlmutter 2006; Celledoni et al. 2019 Sect. 4.1.3; docs/METHODS.md Sect. 2",
    .fixed_flags = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = dla_solver_dim,
    .step = idla_step_fn,
};
