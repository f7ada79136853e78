/* Backend vtable behind include/nhens/solver.h (engine-private). */
#ifndef NHENS_SOLVER_INTERNAL_H
#define NHENS_SOLVER_INTERNAL_H

#include "nhens/solver.h"

typedef struct nh_solver_backend {
    void *(*create)(int dim, nh_error *err);
    int (*solve)(void *impl, const nh_nonlinear_problem *problem, double *x, long *iterations);
    void (*forget)(void *impl);   /* drop a Newton matrix kept across solves */
    void (*destroy)(void *impl);
} nh_solver_backend;

extern const nh_solver_backend nh_solver_backend_kinsol;
extern const nh_solver_backend nh_solver_backend_newton;

/* The shared acceptance rule after an update (see solver.h). */
int nh_solver_accepts(const nh_nonlinear_problem *problem, double fnorm, double rel_step);

#endif
