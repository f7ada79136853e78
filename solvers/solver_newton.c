/* Built-in dense Newton backend: full Newton steps with partial-pivoting LU, the convergence
 * rule of include/nhens/solver.h. Workspace is allocated once at creation. */
#include "nhens/linalg.h"
#include "solver_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct newton_impl {
    int dim;
    double *residual, *jacobian, *step;
    int *pivots;
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

static double relative_step(int n, const double *dx, const double *x)
{
    double r = 0.0;
    for (int i = 0; i < n; ++i) {
        double denom = fabs(x[i]) > 1.0 ? fabs(x[i]) : 1.0;
        double t = fabs(dx[i]) / denom;
        if (t > r)
            r = t;
    }
    return r;
}

/* A chord iteration converges linearly and stops just below the tolerance; one more chord step takes
 * the residual to its floor (kept only if it did not grow), which is what the energy-preserving methods
 * need: their energy error per step is the residual. */
static int polish(newton_impl *w, const nh_nonlinear_problem *pb, double *x, double fnorm)
{
    const int n = w->dim;
    double saved[NH_MAX_UNKNOWNS];
    memcpy(saved, x, (size_t)n * sizeof *x);
    for (int i = 0; i < n; ++i)
        w->step[i] = -w->residual[i];
    nh_lu_solve(n, w->jacobian, w->pivots, w->step);
    for (int i = 0; i < n; ++i)
        x[i] += w->step[i];
    if (pb->residual(x, w->residual, pb->ctx) || !(nh_norm_inf(n, w->residual) <= fnorm))
        memcpy(x, saved, (size_t)n * sizeof *x);
    return NH_OK;
}

static int newton_solve(void *p, const nh_nonlinear_problem *pb, double *x, long *iterations)
{
    newton_impl *w = p;
    const int n = w->dim;
    if (pb->residual(x, w->residual, pb->ctx))
        return NH_STEP_NO_CONVERGENCE;
    double fnorm = nh_norm_inf(n, w->residual);
    if (fnorm <= 0.01 * NH_SOLVER_FTOL * pb->scale)
        return NH_OK;
    for (int it = 1; it <= NH_SOLVER_MAX_ITERS; ++it) {
        *iterations = it;
        if ((it == 1 || !pb->reuse_jacobian) &&
            (pb->jacobian(x, w->jacobian, pb->ctx) || nh_lu_factor(n, w->jacobian, w->pivots)))
            return NH_STEP_NO_CONVERGENCE;
        for (int i = 0; i < n; ++i)
            w->step[i] = -w->residual[i];
        nh_lu_solve(n, w->jacobian, w->pivots, w->step);
        for (int i = 0; i < n; ++i)
            x[i] += w->step[i];
        if (pb->residual(x, w->residual, pb->ctx))
            return NH_STEP_NO_CONVERGENCE;
        fnorm = nh_norm_inf(n, w->residual);
        if (!isfinite(fnorm))
            return NH_STEP_NO_CONVERGENCE;
        if (nh_solver_accepts(fnorm, relative_step(n, w->step, x), pb->scale))
            return pb->reuse_jacobian ? polish(w, pb, x, fnorm) : NH_OK;
    }
    return NH_STEP_NO_CONVERGENCE;
}

const nh_solver_backend nh_solver_backend_newton = {
    .create = newton_create,
    .solve = newton_solve,
    .destroy = newton_destroy,
};
