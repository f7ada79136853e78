/* Discrete-derivative (energy-preserving) method of Betsch 2006 as written in Modin & Verdier 2020, App. A.3,
 * with the Gonzalez discrete gradient (the one that reproduces Modin & Verdier 2020, Figs. 7-8; docs/METHODS.md
 * Sect. 4). Order 2, symmetric, reversible, energy exact; the constraint holds at the midpoint only,
 * so A(q_k) v_k = O(h^2) at the outputs (it does not claim constraint preservation).
 *   q1 = q0 + h/2 (v0 + v1),   q_bar = (q0 + q1)/2
 *   M (v1 - v0) = h [-grad_bar V(q0, q1) + A(q_bar)^T lam],   A(q_bar)(v0 + v1)/2 = 0
 * Unknowns (v1, lam), analytic Jacobian. */
#include "common.h"
#include "discrete_gradient.h"

#include <math.h>
#include <string.h>

typedef struct dd_step {
    const nh_system *sys;
    double h;
    const double *q0, *v0;
    double potential0;
    double grad0[NH_MAX_DIM];   /* grad V(q0) */
    double *work;           /* 2 n^2 doubles of the stepper's workspace: d grad_bar V, d(A^T lam)/dq */
} dd_step;

static void dd_points(const dd_step *c, const double *v1, double *q1, double *mid, double *vbar)
{
    for (int i = 0; i < nh_dim(c->sys); ++i) {
        vbar[i] = 0.5 * (c->v0[i] + v1[i]);
        q1[i] = c->q0[i] + c->h * vbar[i];
        mid[i] = c->q0[i] + 0.5 * c->h * vbar[i];
    }
}

/* The momentum balance and constraint rows of the residual at v1, lam from the step's points and the
 * discrete gradient and A at the midpoint; A^T lam summed in the row loop with m a constant. */
static inline __attribute__((always_inline)) void dd_residual_rows(const dd_step *c, const int m, const double *x,
                                                                   const double *vbar, const double *grad,
                                                                   const double *a, double *r)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s);
    const double *v1 = x, *lam = x + n;
    for (int i = 0; i < n; ++i)
        r[i] = s->mass[i] * (v1[i] - c->v0[i]) + c->h * (grad[i] - nh_matvec_t_entry(m, n, a, lam, i));
    nh_matvec(m, n, a, vbar, r + n);
}

/* The rows of the Newton matrix: momentum balance M + h^2/2 dgrad - h^2/4 d(A^T lam)/dq | -h A(mid)^T,
 * constraint A(mid)/2 + h/4 d(A(mid) vbar)/dq | 0 (dq1/dv1 = h/2 I, dmid/dv1 = h/4 I). */
static inline __attribute__((always_inline)) void dd_jacobian_rows(const dd_step *c, const int m, const double *a,
                                                                   const double *dav, double *jac)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), dim = n + m;
    const double h = c->h, grad_weight = 0.5 * h * h, force_weight = 0.25 * h * h, velocity_weight = 0.25 * h;
    const double *restrict mass = s->mass, *restrict dgrad = c->work, *restrict datl = c->work + n * n;
    for (int i = 0; i < n; ++i) {
        double *restrict row = jac + i * dim;
        for (int j = 0; j < n; ++j)
            row[j] = grad_weight * dgrad[i * n + j] - force_weight * datl[i * n + j];
        row[i] += mass[i];
        for (int k = 0; k < m; ++k)
            row[n + k] = -h * a[k * n + i];
    }
    for (int k = 0; k < m; ++k) {
        double *restrict row = jac + (n + k) * dim;
        for (int j = 0; j < n; ++j)
            row[j] = 0.5 * a[k * n + j] + velocity_weight * dav[k * n + j];
        for (int l = 0; l < m; ++l)
            row[n + l] = 0.0;
    }
}

/* The residual (r not NULL) and the Newton matrix (jac not NULL) at x = (v1, lam), from one discrete
 * gradient (its Hessian part only for the matrix) and one A at the midpoint. */
static int dd_evaluate(const dd_step *c, const double *x, double *r, double *jac)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s);
    const double *v1 = x, *lam = x + n;
    double q1[NH_MAX_DIM], mid[NH_MAX_DIM], vbar[NH_MAX_DIM], grad[NH_MAX_DIM];
    double a[NH_MAX_CON * NH_MAX_DIM], dav[NH_MAX_CON * NH_MAX_DIM];
    dd_points(c, v1, q1, mid, vbar);
    nh_gonzalez_gradient(s, c->q0, c->potential0, q1, grad, jac ? c->work : NULL);
    s->type->constraint(s, mid, a);
    if (r) {
#define RESIDUAL(m) dd_residual_rows(c, m, x, vbar, grad, a, r)
        NH_WITH_CONSTRAINT_COUNT(s->m, RESIDUAL);
#undef RESIDUAL
    }
    if (!jac)
        return 0;
    s->type->constraint_jacobian_multiplier(s, mid, lam, c->work + n * n);
    s->type->constraint_jacobian_velocity(s, mid, vbar, dav);
#define ROWS(m) dd_jacobian_rows(c, m, a, dav, jac)
    NH_WITH_CONSTRAINT_COUNT(s->m, ROWS);
#undef ROWS
    return 0;
}

NH_PROBLEM_CALLBACKS(dd, dd_step, dd_evaluate)

/* Magnitude of the residual's terms: the momentum balance's, and the discrete gradient's correction
 * h [V(q1) - V(q0) - grad.D] D / |D|^2, whose rounding (eps |V| h / |D|) is the residual's floor when
 * the velocity is small; without it the solver's tolerance would lie below that floor, and which backend
 * accepts a step would be luck. */
static double dd_scale(void *ctx, const double *x)
{
    const dd_step *c = ctx;
    const nh_system *s = c->sys;
    double q1[NH_MAX_DIM], mid[NH_MAX_DIM], vbar[NH_MAX_DIM];
    dd_points(c, x, q1, mid, vbar);
    const double step = fabs(c->h) * sqrt(nh_dot(nh_dim(s), vbar, vbar));
    const double floor_step = 1e-12 * sqrt(1.0 + nh_dot(nh_dim(s), mid, mid)); /* the correction's cut-off */
    const double potentials = fabs(c->potential0) + fabs(s->type->potential(s, q1));
    const double correction = fabs(c->h) * potentials / fmax(step, floor_step);
    return fmax(nh_method_momentum_scale(s, c->h, c->v0, c->grad0), correction);
}

static int dd_guess(void *ctx, double *x, const double *past)
{
    const dd_step *c = ctx;
    return nh_method_guess_velocity(c->sys, c->h, c->q0, c->v0, past, x);
}

static int dd_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    dd_step c = {.sys = s, .h = h, .q0 = q, .v0 = v, .potential0 = s->type->potential(s, q),
                 .work = st->workspace};
    double x[NH_MAX_UNKNOWNS], q1[NH_MAX_DIM], mid[NH_MAX_DIM], vbar[NH_MAX_DIM];
    s->type->potential_gradient(s, q, c.grad0);
    nh_nonlinear_problem pb = {n + s->m, dd_residual, dd_jacobian, &c, 1.0, NH_JACOBIAN_EACH_ITERATION, 0,
                               dd_residual_and_jacobian};
    int rc = nh_method_solve(st, &pb, h, q, v, NH_QUADRATIC_POINTS, dd_guess, dd_scale, x);
    if (rc)
        return rc;
    dd_points(&c, x, q1, mid, vbar);
    memcpy(q, q1, (size_t)n * sizeof *q);
    memcpy(v, x, (size_t)n * sizeof *v);
    nh_stepper_remember(st, x, q, v);
    return NH_OK;
}

static int dd_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return sys->n + sys->m;
}

static long dd_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 2L * sys->n * sys->n;
}

const nh_method_type nh_method_dd = {
    .name = "dd",
    .summary = "discrete-derivative energy-preserving method, Gonzalez gradient (Modin & Verdier 2020, App. A.3)",
    .reference = "Betsch 2006; Gonzalez 1996; Modin & Verdier 2020 App. A.3",
    .fixed_flags = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_ENERGY | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = dd_solver_dim,
    .workspace_size = dd_workspace_size,
    .step = dd_step_fn,
};
