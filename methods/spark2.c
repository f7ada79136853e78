/* 2-stage Lobatto IIIA-B SPARK method for the index-2 nonholonomic DAE (Jay 2003, as used in
 * Celledoni et al. 2019, Sect. 4.1.3); docs/METHODS.md Sect. 5. Coefficients: IIIA (trapezoidal) for q' = v, IIIB for
 * M v' = -grad V + A^T lam, stage constraints IIIA rows 2..s plus the end-point constraint; the IIIC,
 * IIIC* and IIID parts of the five-way splitting are empty for this problem. With s = 2 the IIIB
 * stages coincide, V1 = V2 = V, and IIIA gives Q1 = q0, Q2 = q1:
 *   V  = v0 + h/2 M^-1(-grad V(q0) + A(q0)^T L1),   q1 = q0 + h V,   1/2 [A(q0) + A(q1)] V = 0
 *   v1 = V + h/2 M^-1(-grad V(q1) + A(q1)^T L2),     A(q1) v1 = 0  (L2 by one SPD m x m solve)
 * For CVT-type systems A(q1) is known before L1 and the step is linear; otherwise the m equations
 * in L1 go through the engine's solver. Order 2, symmetric, reversible, constraint exact. */
#include "affine.h"
#include "common.h"

#include <string.h>

/* One step: V is the affine velocity of affine.h from base q0 with reach h, A_* = [A(q0) + A(q1)]/2. */
static int spark_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    double q0[NH_MAX_DIM], grad[NH_MAX_DIM], a0[NH_MAX_CON * NH_MAX_DIM], l1[NH_MAX_CON], vs[NH_MAX_DIM];
    memcpy(q0, q, (size_t)n * sizeof *q);
    nh_affine_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.base = q0;
    c.reach = h;
    c.a_fixed = a0;
    c.weight = 0.5;
    nh_type(s)->potential_gradient(s, q0, grad);
    nh_type(s)->constraint(s, q0, a0);
    for (int i = 0; i < n; ++i)
        c.w[i] = v[i] - 0.5 * h * nh_inv_mass(s)[i] * grad[i];
    nh_kick_matrix(s, 0.5 * h, a0, c.kick);
    int rc = nh_affine_multiplier(st->solver, &c, v, l1);
    if (rc)
        return rc;
    /* end point: v1 = P_{q1}[V - h/2 M^-1 grad V(q1)] is the L2 update */
    nh_affine_velocity(&c, l1, vs);
    for (int i = 0; i < n; ++i)
        q[i] = q0[i] + h * vs[i];
    nh_type(s)->potential_gradient(s, q, grad);
    for (int i = 0; i < n; ++i)
        vs[i] -= 0.5 * h * nh_inv_mass(s)[i] * grad[i];
    return nh_project_velocity(s, q, vs, v) ? NH_STEP_SINGULAR : NH_OK;
}

#ifndef NH_STEP_KERNEL /* the method's registration: compiled once, not again in a step kernel (kernels.h) */
static int spark_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return nh_affine_is_linear(sys, 1.0, 1, 0.5) ? 0 : sys->m;
}

const nh_method_type nh_method_spark2 = {
    .name = "spark2",
    .summary = "2-stage Lobatto IIIA-B SPARK for the index-2 nonholonomic DAE (Celledoni et al. 2019, Sect. 4.1.3)",
    .reference = "Jay 2003; Celledoni et al. 2019 Sect. 4.1.3; docs/METHODS.md Sect. 5",
    .fixed_flags = NH_METHOD_LINEARLY_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = spark_solver_dim,
    .step = spark_step_fn,
};
#endif
