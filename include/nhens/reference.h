/* Reference solutions: SUNDIALS CVODE (Adams, dense Newton) on the index-1 ODE of a system at tight
 * tolerances, for convergence studies of the methods. */
#ifndef NHENS_REFERENCE_H
#define NHENS_REFERENCE_H

#include "nhens/system.h"

/* Integrate (q0, v0) from 0 to T; q, v receive the state at T. */
int nh_reference_solve(const nh_system *s, const double *q0, const double *v0, double T, double rtol,
                       double atol, double *q, double *v, nh_error *err);

#endif
