/* Classical fourth-order Runge-Kutta on the index-1 ODE q' = v, M v' = -grad V + A^T lambda*(q, v),
 * the multiplier eliminated in closed form (docs/METHODS.md Sect. 0). The baseline users compare with:
 * order 4, explicit, neither constraint nor energy preserving, not reversible. */
#include "common.h"

/* inline: a call per stage would pass the stage's vectors through memory on the kernel's chain of operations */
static inline __attribute__((always_inline)) int rk4_stage(const nh_system *s, const double *q, const double *v,
                                                          double c, const double *dq, const double *dv,
                                                          double *kq, double *kv)
{
    double qs[NH_MAX_DIM], vs[NH_MAX_DIM];
    for (int i = 0; i < nh_dim(s); ++i) {
        qs[i] = q[i] + c * dq[i];
        vs[i] = v[i] + c * dv[i];
    }
    return nh_index1_rhs(s, qs, vs, kq, kv, NULL);
}

static int rk4_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    double k1q[NH_MAX_DIM], k1v[NH_MAX_DIM], k2q[NH_MAX_DIM], k2v[NH_MAX_DIM];
    double k3q[NH_MAX_DIM], k3v[NH_MAX_DIM], k4q[NH_MAX_DIM], k4v[NH_MAX_DIM];
    int rc = nh_index1_rhs(s, q, v, k1q, k1v, NULL);
    if (!rc)
        rc = rk4_stage(s, q, v, 0.5 * h, k1q, k1v, k2q, k2v);
    if (!rc)
        rc = rk4_stage(s, q, v, 0.5 * h, k2q, k2v, k3q, k3v);
    if (!rc)
        rc = rk4_stage(s, q, v, h, k3q, k3v, k4q, k4v);
    if (rc)
        return rc;
    for (int i = 0; i < nh_dim(s); ++i) {
        q[i] += h / 6.0 * (k1q[i] + 2.0 * k2q[i] + 2.0 * k3q[i] + k4q[i]);
        v[i] += h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]);
    }
    return NH_OK;
}

#ifndef NH_STEP_KERNEL /* the method's registration: compiled once, not again in a step kernel (kernels.h) */
const nh_method_type nh_method_rk4 = {
    .name = "rk4",
    .summary = "classical RK4 on the index-1 ODE (multiplier eliminated); baseline",
    .reference = "Kutta 1901; used as baseline in Anahory Simoes et al. 2022 Sect. 5",
    .fixed_flags = NH_METHOD_GENERAL_MASS | NH_METHOD_REDUCED,
    .fixed_order = 4,
    .step = rk4_step,
};
#endif
