/* Method audit: the measurements a user reads before choosing a method, on one system and one
 * initial state: observed order against CVODE, constraint residual and energy error over a long
 * run, and the one-step reversibility defect |Phi_h(rho Phi_h x) - rho x|, rho(q, v) = (q, -v). */
#ifndef NHENS_AUDIT_H
#define NHENS_AUDIT_H

#include "nhens/method.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_audit_config {
    const nh_system *system;
    const double *q0, *v0;
    nh_solver_kind solver;
    double h;            /* step of the long run and of the reversibility check; order uses h, h/2, h/4 */
    double order_T;      /* horizon of the convergence study */
    double long_T;       /* horizon of the constraint/energy run */
} nh_audit_config;

typedef struct nh_audit_row {
    int formal_order;
    double error[3];         /* at h, h/2, h/4 and T = order_T */
    double observed_order;   /* from the last pair */
    double constraint_max;   /* max |A(q) v| over the long run */
    double energy_rel_max;   /* max |H - H0| / |H0| over the long run */
    double reversibility;    /* one-step defect at h */
    int status;              /* first step failure (0 if none) */
    double failed_at;        /* time of that failure in the long run */
} nh_audit_row;

/* One-step reversibility defect; carried multipliers are even and kept. */
int nh_reversibility_defect(const nh_method_spec *spec, const nh_system *s, nh_solver_kind solver, const double *q0,
                            const double *v0, double h, double *defect, nh_error *err);
int nh_audit_method(const nh_audit_config *cfg, const nh_method_spec *spec, nh_audit_row *row, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
