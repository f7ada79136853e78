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

/* The relative size of an update dx that led to x: max_i |dx_i| / max(|x_i|, 1). */
double nh_solver_relative_step(int n, const double *dx, const double *x);

/* The shared acceptance rule after an update (see solver.h). */
int nh_solver_accepts(const nh_nonlinear_problem *problem, double fnorm, double rel_step);
/* Whether a backend's factored matrix (built for matrix_key) serves this solve (NH_JACOBIAN_ACROSS_SOLVES). */
int nh_solver_keeps_matrix(const nh_nonlinear_problem *problem, int have_matrix, double matrix_key);
/* The end of every accepted solve, in both backends (solver.h): from x, whose residual f is at hand and
 * which the last update of relative size last_step reached, chord steps with the backend's factored matrix
 * (solve turns step = -f into J^-1 step; non-zero: cannot, stop) until one stops decreasing and is at
 * most NH_SOLVER_FLOOR_STEP (a larger one is taken: a contraction that oscillates), or is at most
 * NH_SOLVER_ROUNDOFF_STEP (taken, without a residual). x is left at the iterate after the smallest step;
 * f then need not belong to it. Returns the residuals it evaluated (each counts as an iteration). */
int nh_solver_finish(const nh_nonlinear_problem *problem, double *x, double *f, double last_step, double *step,
                     int (*solve)(double *step, void *ctx), void *ctx);

#endif
