/* DLA^{0,1} of McLachlan-Perlmutter 2006 ("SI-DLA" of Celledoni et al. 2019), Modin & Verdier 2020, App. A.1 eq. 29;
 * docs/METHODS.md Sect. 2. Order 2, symmetric, reversible, constraint exact.
 *   q_half = q0 + h/2 v0,   w = v0 - h M^-1 grad V(q_half)
 *   v1 = w + h M^-1 A(q_half)^T lam,   q1 = q_half + h/2 v1,   A(q1) v1 = 0
 * For CVT-type systems A(q1) does not depend on lam and the step is one m x m linear solve
 *   lam = -(1/h) [A(q1) M^-1 A(q_half)^T]^-1 A(q1) w   (non-symmetric: LU);
 * otherwise the m equations in lam go through the engine's solver (docs/METHODS.md Sect. 9 row 4). */
#include "affine.h"
#include "common.h"

/* One step: the affine velocity of affine.h from base q_half with reach h/2 and A_* = A(q1). */
static int dla01_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    double q_half[NH_MAX_DIM], grad[NH_MAX_DIM], a_half[NH_MAX_CON * NH_MAX_DIM], lam[NH_MAX_CON];
    for (int i = 0; i < n; ++i)
        q_half[i] = q[i] + 0.5 * h * v[i];
    nh_affine_step c; /* not zero-initialised: its max-size arrays are written before they are read */
    c.sys = s;
    c.base = q_half;
    c.reach = 0.5 * h;
    c.a_fixed = NULL;
    nh_type(s)->potential_gradient(s, q_half, grad);
    nh_type(s)->constraint(s, q_half, a_half);
    for (int i = 0; i < n; ++i)
        c.w[i] = v[i] - h * nh_inv_mass(s)[i] * grad[i];
    nh_kick_matrix(s, h, a_half, c.kick);
    int rc = nh_affine_multiplier(st->solver, &c, v, lam);
    if (rc)
        return rc;
    nh_affine_velocity(&c, lam, v);
    for (int i = 0; i < n; ++i)
        q[i] = q_half[i] + c.reach * v[i];
    return NH_OK;
}

#ifndef NH_STEP_KERNEL /* the method's registration: compiled once, not again in a step kernel (kernels.h) */
static int dla01_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return nh_affine_is_linear(sys, 0.5, 0, 0.0) ? 0 : sys->m;
}

const nh_method_type nh_method_dla01 = {
    .name = "dla01",
    .summary = "DLA^{0,1} of McLachlan-Perlmutter, SI-DLA (Modin & Verdier 2020, eq. 29)",
    .reference = "McLachlan-Perlmutter 2006 eq. 4.18; Modin & Verdier 2020 App. A.1 eq. 29",
    .fixed_flags = NH_METHOD_LINEARLY_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .solver_dim = dla01_solver_dim,
    .step = dla01_step_fn,
};
#endif
