/* The engine's one implicit-solver interface. A method hands it a residual, an analytic Jacobian
 * and an initial guess; never a solver. Two backends with the same convergence test:
 *   kinsol: SUNDIALS KINSOL, full Newton, dense direct linear solver (the default);
 *   newton: a built-in dense Newton with LU, for speed on tiny systems.
 * A solver is created once per worker (per stepper) with a fixed dimension and reused for every
 * step of every trajectory; nothing is allocated in nh_solver_solve. Not thread-safe: one per thread.
 *
 * Convergence (both backends): an iterate x reached by a full update x += dx is accepted if
 *   |F(x)|_inf <= NH_SOLVER_FTOL * scale, or
 *   max_i |dx_i| / max(|x_i|, 1) <= NH_SOLVER_STEPTOL (and F(x) is finite);
 * every accepted solve then ends the same way (the round-off rule of Hairer, McLachlan & Razakarivony
 * 2008): chord steps dx = -J^-1 F(x) with the factored matrix are taken until one stops decreasing
 * while at most NH_SOLVER_FLOOR_STEP (the rounding floor; a larger step that does not decrease belongs to
 * a contraction that oscillates and is taken), at most NH_SOLVER_FINISH_STEPS of them, and the solve ends
 * at the iterate after the smallest; a step of at most NH_SOLVER_ROUNDOFF_STEP (a few ulps) is the last.
 * The solution is therefore at the floor of the residual's rounding, wherever that floor lies (large
 * coordinates lift it above FTOL * scale, and a scale that overestimates a row's terms would stop above
 * it); the tolerances above only decide that the iteration has converged. An accepted guess (below) is
 * the exception: it is returned as it is.
 * An initial guess with |F| <= 0.01 * NH_SOLVER_FTOL * scale is accepted unchanged.
 * `scale` is the magnitude of the terms summed in the residual, supplied by the method. */
#ifndef NHENS_SOLVER_H
#define NHENS_SOLVER_H

#include "nhens/core.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define NH_SOLVER_FTOL 5.0e-16       /* ~2 ulp of the largest term: at the floor of a sum of a few terms */
#define NH_SOLVER_STEPTOL 1.0e-11     /* after a Newton step this small the error is O(step^2): converged */
#define NH_SOLVER_FINISH_STEPS 20     /* chord steps at most in the end of a solve */
#define NH_SOLVER_ROUNDOFF_STEP 8.9e-16 /* 4 DBL_EPSILON: a relative step of a few ulps */
#define NH_SOLVER_FLOOR_STEP 1e-12    /* a floor above it would take a condition number over ~1e4 */
#define NH_SOLVER_MAX_ITERS 20
/* A relative Newton step after which a full Newton solve cannot have converged (the next iterate's error,
 * O(step^2), is far above round-off): the built-in Newton builds its matrix at the new iterate, so a problem with
 * residual_and_jacobian gives it with the residual there (and the lane kernels do as it does). */
#define NH_SOLVER_FAR_STEP 1e-3

typedef enum nh_solver_kind { NH_SOLVER_KINSOL = 0, NH_SOLVER_NEWTON = 1 } nh_solver_kind;

typedef struct nh_nonlinear_problem {
    int dim;
    /* r = F(x); return 0, or non-zero if F cannot be evaluated there. */
    int (*residual)(const double *x, double *r, void *ctx);
    /* jac (dim x dim, row-major) = F'(x), every entry written (the backends do not zero it). */
    int (*jacobian)(const double *x, double *jac, void *ctx);
    void *ctx;
    double scale;
    /* When the Newton matrix is rebuilt (an nh_jacobian_reuse); the chord variants are for expensive
     * finite-difference Jacobians that are only accurate to ~1e-7 anyway. */
    int reuse_jacobian;
    /* NH_JACOBIAN_ACROSS_SOLVES only: the matrix is kept while this key (e.g. the step size) is the
     * same; a different key, nh_solver_forget or slow convergence rebuild it. */
    double jacobian_key;
    /* Optional (NULL: unused): r = F(x), bit for bit what `residual` gives, and jac = F'(x) in one call,
     * for a problem whose matrix reuses the residual's work at the same point. The built-in Newton
     * backend calls it where it knows a matrix will follow: at the initial guess of a solve that builds
     * its matrix there, and in full Newton (NH_JACOBIAN_EACH_ITERATION) after a step of relative size
     * over 1e-3, after which the solve cannot have converged. A non-zero return sends it back to
     * `residual` and `jacobian`. The KINSOL backend calls it at the same points and hands the matrix to
     * KINSOL when KINSOL asks for it there. */
    int (*residual_and_jacobian)(const double *x, double *r, double *jac, void *ctx);
} nh_nonlinear_problem;

/* NH_JACOBIAN_EACH_ITERATION: full Newton. NH_JACOBIAN_EACH_SOLVE: the matrix of the first iteration
 * for the whole solve (chord iteration). NH_JACOBIAN_ACROSS_SOLVES: chord iteration with the matrix
 * of an earlier solve of the same trajectory (the steps' Jacobians differ by O(h)), rebuilt at the
 * solve's initial guess and the solve restarted when an iteration contracts the residual by less
 * than NH_SOLVER_STALE_RATE or the solve has not converged after NH_SOLVER_STALE_ITERS iterations. The
 * end point passes the same convergence test in every mode; only the iteration count differs. */
typedef enum nh_jacobian_reuse {
    NH_JACOBIAN_EACH_ITERATION = 0,
    NH_JACOBIAN_EACH_SOLVE = 1,
    NH_JACOBIAN_ACROSS_SOLVES = 2
} nh_jacobian_reuse;
#define NH_SOLVER_STALE_RATE 0.25
#define NH_SOLVER_STALE_ITERS 8

typedef struct nh_solver_stats {
    long solves;
    long iterations;
    long failures;
} nh_solver_stats;

/* into += from (a sign of -1 subtracts: the work between two readings of a solver's counters) */
static inline void nh_solver_stats_add(nh_solver_stats *into, nh_solver_stats from, long sign)
{
    into->solves += sign * from.solves;
    into->iterations += sign * from.iterations;
    into->failures += sign * from.failures;
}

typedef struct nh_solver nh_solver;

const char *nh_solver_kind_name(nh_solver_kind kind);
/* 0 and the kind for "kinsol" / "newton"; non-zero otherwise. */
int nh_solver_kind_parse(const char *name, nh_solver_kind *kind);

nh_solver *nh_solver_create(nh_solver_kind kind, int dim, nh_error *err);
/* x: initial guess in, solution out. NH_OK or NH_STEP_NO_CONVERGENCE. */
int nh_solver_solve(nh_solver *solver, const nh_nonlinear_problem *problem, double *x);
nh_solver_stats nh_solver_get_stats(const nh_solver *solver);
/* Drop a Newton matrix kept across solves: called when a trajectory starts (nh_stepper_start), so a
 * trajectory's steps never depend on which trajectories the worker integrated before. */
void nh_solver_forget(nh_solver *solver);
void nh_solver_free(nh_solver *solver);

/* A probe (nh_stepper_newton_matrices in method.h): while one is set, a solve only records the Newton
 * matrix its problem supplies and forward differences of its residual (nh_fd_jacobian) at the initial
 * guess, checks residual_and_jacobian there against residual and jacobian, leaves the guess unchanged
 * and returns NH_STEP_NO_CONVERGENCE, so the step goes no further. */
typedef struct nh_solver_probe {
    double *analytic, *differences;   /* NH_MAX_UNKNOWNS^2 doubles each; dim x dim, row-major */
    int dim;                          /* the problem's dimension, written by the solve */
    int recorded;                     /* 1 once both matrices are written */
    int combined;                     /* -1: no residual_and_jacobian; 1: it gave the bits of residual and
                                         jacobian; 0: it did not (or failed where they did not) */
} nh_solver_probe;
void nh_solver_set_probe(nh_solver *solver, nh_solver_probe *probe);   /* NULL: solve again */

/* The one finite-difference Jacobian rule, for every method without an analytic Newton matrix:
 * forward differences jac[i*dim + j] = (F(x + d_j e_j) - F(x))_i / d_j with d_j = NH_FD_STEP max(1, |x_j|),
 * an error of about 1e-7 relative, which a chord iteration followed by the end of the solve (solver.h's
 * reuse_jacobian) turns into one or two extra iterations and no loss at convergence. work holds
 * NH_FD_WORK(dim) doubles. Returns non-zero, and leaves jac undefined, when any evaluation of F fails. */
#define NH_FD_STEP 1.0e-7
#define NH_FD_WORK(dim) (3 * (dim))
int nh_fd_jacobian(int dim, int (*residual)(const double *x, double *r, void *ctx), void *ctx, const double *x,
                   double *jac, double *work);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
