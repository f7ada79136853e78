/* 2-stage Lobatto IIIA-B SPARK method for the index-2 nonholonomic DAE (Jay 2003, as used in
 * seed 000 Sect. 4.1.3); docs/METHODS.md Sect. 5. Coefficients: IIIA (trapezoidal) for q' = v, IIIB for
 * M v' = -grad V + A^T lam, stage constraints IIIA rows 2..s plus the end-point constraint; the IIIC,
 * IIIC* and IIID parts of the five-way splitting are empty for this problem. With s = 2 the IIIB
 * stages coincide, V1 = V2 = V, and IIIA gives Q1 = q0, Q2 = q1:
 *   V  = v0 + h/2 M^-1(-grad V(q0) + A(q0)^T L1),   q1 = q0 + h V,   1/2 [A(q0) + A(q1)] V = 0
 *   v1 = V + h/2 M^-1(-grad V(q1) + A(q1)^T L2),     A(q1) v1 = 0  (L2 by one SPD m x m solve)
 * For CVT-type systems A(q1) is known before L1 and the step is linear; otherwise the m equations
 * in L1 go through the engine's solver. Order 2, symmetric, reversible, constraint exact. */
#include "common.h"

#include <string.h>

typedef struct spark_step {
    const nh_system *sys;
    double h;
    const double *q0;
    double w[NH_MAX_DIM];                       /* v0 - h/2 M^-1 grad V(q0) */
    double kick[NH_MAX_DIM * NH_MAX_CON];       /* h/2 M^-1 A(q0)^T */
    double a0[NH_MAX_CON * NH_MAX_DIM];
} spark_step;

static void spark_stage(const spark_step *c, const double *l1, double *vs, double *q1)
{
    const int n = c->sys->n, m = c->sys->m;
    for (int i = 0; i < n; ++i) {
        double s = c->w[i];
        for (int k = 0; k < m; ++k)
            s += c->kick[i * m + k] * l1[k];
        vs[i] = s;
        q1[i] = c->q0[i] + c->h * s;
    }
}

static int spark_residual(const double *l1, double *r, void *ctx)
{
    const spark_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double vs[NH_MAX_DIM], q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    spark_stage(c, l1, vs, q1);
    s->type->constraint(s, q1, a1);
    for (int k = 0; k < m * n; ++k)
        a1[k] = 0.5 * (a1[k] + c->a0[k]);
    nh_matvec(m, n, a1, vs, r);
    return 0;
}

/* d/dL1 of 1/2 [A0 + A(q1)] V = {1/2 [A0 + A(q1)] + h/2 d(A V)/dq at q1} * kick */
static int spark_jacobian(const double *l1, double *jac, void *ctx)
{
    const spark_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double vs[NH_MAX_DIM], q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM], dav[NH_MAX_CON * NH_MAX_DIM];
    spark_stage(c, l1, vs, q1);
    s->type->constraint(s, q1, a1);
    s->type->constraint_jacobian_velocity(s, q1, vs, dav);
    for (int k = 0; k < m; ++k)
        for (int l = 0; l < m; ++l) {
            double sum = 0.0;
            for (int i = 0; i < n; ++i)
                sum += (0.5 * (c->a0[k * n + i] + a1[k * n + i]) + 0.5 * c->h * dav[k * n + i]) * c->kick[i * m + l];
            jac[k * m + l] = sum;
        }
    return 0;
}

/* CVT-type: q1 restricted to the coordinates A depends on does not move with L1. */
static int spark_linear(const spark_step *c, double *l1)
{
    const nh_system *s = c->sys;
    const int n = nh_dim(s), m = s->m;
    double q1[NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    for (int i = 0; i < n; ++i)
        q1[i] = c->q0[i] + c->h * c->w[i];
    s->type->constraint(s, q1, a1);
    for (int k = 0; k < m * n; ++k)
        a1[k] = 0.5 * (a1[k] + c->a0[k]);
    return nh_solve_kicked_constraint(m, n, a1, c->kick, c->w, l1);
}

static int spark_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s), m = s->m;
    double q0[NH_MAX_DIM], grad[NH_MAX_DIM], l1[NH_MAX_CON];
    memcpy(q0, q, (size_t)n * sizeof *q);
    spark_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.h = h;
    c.q0 = q0;
    s->type->potential_gradient(s, q0, grad);
    s->type->constraint(s, q0, c.a0);
    for (int i = 0; i < n; ++i) {
        c.w[i] = v[i] - 0.5 * h * s->inv_mass[i] * grad[i];
        for (int k = 0; k < m; ++k)
            c.kick[i * m + k] = 0.5 * h * s->inv_mass[i] * c.a0[k * n + i];
    }
    int rc = spark_linear(&c, l1);
    if (rc == NH_OK && st->solver) {
        nh_nonlinear_problem pb = {m, spark_residual, spark_jacobian, &c, fmax(nh_norm_inf(n, v), 1e-300), NH_JACOBIAN_EACH_ITERATION, 0};
        rc = nh_solver_solve(st->solver, &pb, l1);
    }
    if (rc)
        return rc;
    /* end point: v1 = P_{q1}[V - h/2 M^-1 grad V(q1)] is the L2 update */
    double vs[NH_MAX_DIM];
    spark_stage(&c, l1, vs, q);
    s->type->potential_gradient(s, q, grad);
    for (int i = 0; i < n; ++i)
        vs[i] -= 0.5 * h * s->inv_mass[i] * grad[i];
    return nh_project_velocity(s, q, vs, v) ? NH_STEP_SINGULAR : NH_OK;
}

static int spark_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return (sys->type->flags & NH_SYS_CVT_TYPE) ? 0 : sys->m;
}

const nh_method_type nh_method_spark2 = {
    .name = "spark2",
    .summary = "2-stage Lobatto IIIA-B SPARK for the index-2 nonholonomic DAE (seed 000 Sect. 4.1.3)",
    .reference = "Jay 2003; Celledoni et al. 2019 Sect. 4.1.3; docs/METHODS.md Sect. 5",
    .fixed_flags = NH_METHOD_LINEARLY_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = spark_solver_dim,
    .step = spark_step_fn,
};
