/* Reference solutions: SUNDIALS CVODE (Adams, dense Newton) on the index-1 ODE of a system at tight
 * tolerances, for convergence studies of the methods. */
#ifndef NHENS_REFERENCE_H
#define NHENS_REFERENCE_H

#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Integrate (q0, v0) from 0 to T; q, v receive the state at T. */
int nh_reference_solve(const nh_system *s, const double *q0, const double *v0, double T, double rtol,
                       double atol, double *q, double *v, nh_error *err);

/* A reference that follows one trajectory at a time (create / start / advance / free, one per thread):
 * start at (q0, v0) and t = 0, then advance to increasing times t (CVODE stops exactly at t, so the
 * reference state does not depend on the spacing of the requests). NH_ERR_SOLVER when CVODE fails. */
typedef struct nh_reference_tracker nh_reference_tracker;
nh_reference_tracker *nh_reference_tracker_create(const nh_system *s, double rtol, double atol);
int nh_reference_tracker_start(nh_reference_tracker *r, const double *q0, const double *v0);
int nh_reference_tracker_advance(nh_reference_tracker *r, double t, double *q, double *v);
void nh_reference_tracker_free(nh_reference_tracker *r);

/* Driver-period monodromy of the reduced system (Modin & Verdier 2020, eq. 10) of a coupled system whose reduced
 * vector u has 3 components and f = 0 (cvt, hcvt): the exact driver from (xi0, xi0') is integrated with
 * CVODE together with U' = B(xi(t)) U, B = [[0, k0], [-k0^T, 0]], k0 = kappa k, until the driver's first
 * return to the section xi = xi0 (mod 2 pi) in the direction of xi0' (the period P); R = U(P) is a rotation
 * whose axis (unit, sign fixed by axis . u0 >= 0) is written to axis. */
int nh_driver_monodromy(const nh_system *s, const double *q0, const double *v0, double rtol, double *period,
                        double *axis, nh_error *err);
/* Time t > 0 of the driver's first crossing of xi = section (mod 2 pi) in the direction of xi0' (CVODE on
 * the driver alone, tolerance 1e-12). */
int nh_driver_time_to_section(const nh_system *s, const double *q0, const double *v0, double section, double *t,
                              nh_error *err);
/* 1 when nh_driver_monodromy applies to the system. */
int nh_has_latitude(const nh_system *s);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
