/* Built-in dense Newton backend: Newton or chord steps with partial-pivoting LU (the matrix policy
 * nh_jacobian_reuse), the convergence rule and the end of a solve of include/nhens/solver.h; the first
 * matrix of a solve comes with the guess's residual when the problem has residual_and_jacobian. Workspace
 * is allocated once at creation; a Newton matrix kept across solves lives here until nh_solver_forget. */
#include "nhens/linalg.h"
#include "solver_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct newton_impl {
    int dim;
    double *residual, *jacobian, *step;
    int *pivots;
    int have_matrix;      /* jacobian holds a factored Newton matrix ... */
    double matrix_key;    /* ... built for a problem with this jacobian_key */
    int filled;           /* jacobian holds F' at the solve's guess from residual_and_jacobian, unfactored */
} newton_impl;

static void newton_destroy(void *p)
{
    newton_impl *w = p;
    if (!w)
        return;
    free(w->residual);
    free(w->jacobian);
    free(w->step);
    free(w->pivots);
    free(w);
}

static void *newton_create(int dim, nh_error *err)
{
    newton_impl *w = calloc(1, sizeof *w);
    if (w) {
        w->dim = dim;
        w->residual = malloc((size_t)dim * sizeof(double));
        w->jacobian = malloc((size_t)dim * dim * sizeof(double));
        w->step = malloc((size_t)dim * sizeof(double));
        w->pivots = malloc((size_t)dim * sizeof(int));
    }
    if (!w || !w->residual || !w->jacobian || !w->step || !w->pivots) {
        newton_destroy(w);
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating the Newton solver");
        return NULL;
    }
    return w;
}

static int lu_solve_step(double *step, void *ctx)
{
    const newton_impl *w = ctx;
    nh_lu_solve(w->dim, w->jacobian, w->pivots, step);
    return 0;
}

enum { RETRY_FRESH = -1 };   /* a kept matrix converged too slowly: rebuild it and start again */

/* The Newton matrix at x (the first build of a solve without a kept matrix is at its guess, where
 * residual_at_guess may have filled it already), factored. */
static int build_matrix(newton_impl *w, const nh_nonlinear_problem *pb, const double *x)
{
    const int filled = w->filled;
    w->filled = 0;
    w->have_matrix = (filled || !pb->jacobian(x, w->jacobian, pb->ctx)) && !nh_lu_factor(w->dim, w->jacobian, w->pivots);
    w->matrix_key = pb->jacobian_key;
    return !w->have_matrix;
}

/* F at the guess x into w->residual. When the matrix will be built there (no kept matrix: `stale` 0)
 * and the problem has residual_and_jacobian, F' comes with it; if that call fails, F alone as before. */
static int residual_at_guess(newton_impl *w, const nh_nonlinear_problem *pb, const double *x, int stale)
{
    w->filled = !stale && pb->residual_and_jacobian &&
                !pb->residual_and_jacobian(x, w->residual, w->jacobian, pb->ctx);
    return !w->filled && pb->residual(x, w->residual, pb->ctx);
}

/* F at the new iterate x of a full Newton iteration whose relative step was `step`. After a step this
 * large the next iterate's error, O(step^2), is far above round-off: the solve will go on and build its
 * matrix here, so a problem with residual_and_jacobian gives it with F (which overwrites the factors in
 * w->jacobian: full Newton refactors every iteration). Otherwise, or if that call fails, F alone. */
static int residual_after_step(newton_impl *w, const nh_nonlinear_problem *pb, const double *x, double step)
{
    const int combined = pb->reuse_jacobian == NH_JACOBIAN_EACH_ITERATION && step > NH_SOLVER_FAR_STEP &&
                         pb->residual_and_jacobian;
    w->filled = combined && !pb->residual_and_jacobian(x, w->residual, w->jacobian, pb->ctx);
    w->have_matrix &= !combined;   /* the call overwrote the factors, whatever it returned */
    return !w->filled && pb->residual(x, w->residual, pb->ctx);
}

/* Newton or chord iterations from x, whose residual is in w->residual. With a kept matrix (`stale`),
 * an iteration that contracts the residual by less than NH_SOLVER_STALE_RATE, or no convergence after
 * NH_SOLVER_STALE_ITERS iterations, returns RETRY_FRESH. */
static int iterate(newton_impl *w, const nh_nonlinear_problem *pb, double *x, long *iterations, int stale)
{
    const int n = w->dim, fail = stale ? RETRY_FRESH : NH_STEP_NO_CONVERGENCE;
    double fnorm = nh_norm_inf(n, w->residual);
    for (int it = 1; it <= NH_SOLVER_MAX_ITERS; ++it) {
        ++*iterations;
        if ((pb->reuse_jacobian == NH_JACOBIAN_EACH_ITERATION || !w->have_matrix) && build_matrix(w, pb, x))
            return NH_STEP_NO_CONVERGENCE;
        for (int i = 0; i < n; ++i)
            w->step[i] = -w->residual[i];
        nh_lu_solve(n, w->jacobian, w->pivots, w->step);
        for (int i = 0; i < n; ++i)
            x[i] += w->step[i];
        const double step = nh_solver_relative_step(n, w->step, x);
        if (residual_after_step(w, pb, x, step))
            return fail;
        const double previous = fnorm;
        fnorm = nh_norm_inf(n, w->residual);
        if (!isfinite(fnorm))
            return fail;
        if (nh_solver_accepts(pb, fnorm, step)) {
            if (w->filled)   /* F' came with F after a far step (a nearly linear problem): factor it for the end */
                build_matrix(w, pb, x);
            if (w->have_matrix)
                *iterations += nh_solver_finish(pb, x, w->residual, step, w->step, lu_solve_step, w);
            return NH_OK;
        }
        if (stale && (fnorm > NH_SOLVER_STALE_RATE * previous || it >= NH_SOLVER_STALE_ITERS))
            return RETRY_FRESH;
    }
    return fail;
}

static int newton_solve(void *p, const nh_nonlinear_problem *pb, double *x, long *iterations)
{
    newton_impl *w = p;
    const int n = w->dim;
    const int stale = nh_solver_keeps_matrix(pb, w->have_matrix, w->matrix_key);
    if (residual_at_guess(w, pb, x, stale))
        return NH_STEP_NO_CONVERGENCE;
    if (nh_norm_inf(n, w->residual) <= 0.01 * NH_SOLVER_FTOL * pb->scale)
        return NH_OK;
    if (!stale)
        w->have_matrix = 0;
    double guess[NH_MAX_UNKNOWNS], guess_residual[NH_MAX_UNKNOWNS];
    memcpy(guess, x, (size_t)n * sizeof *x);
    memcpy(guess_residual, w->residual, (size_t)n * sizeof *x);
    int rc = iterate(w, pb, x, iterations, stale);
    if (rc == RETRY_FRESH) {
        memcpy(x, guess, (size_t)n * sizeof *x);
        memcpy(w->residual, guess_residual, (size_t)n * sizeof *x);
        w->have_matrix = 0;
        rc = iterate(w, pb, x, iterations, 0);
    }
    return rc;
}

static void newton_forget(void *p)
{
    ((newton_impl *)p)->have_matrix = 0;
}

const nh_solver_backend nh_solver_backend_newton = {
    .create = newton_create,
    .solve = newton_solve,
    .forget = newton_forget,
    .destroy = newton_destroy,
};
