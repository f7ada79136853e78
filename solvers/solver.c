/* Front of the implicit-solver interface: backend dispatch, statistics, shared convergence rule. */
#include "solver_internal.h"

#include "nhens/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct nh_solver {
    const nh_solver_backend *backend;
    void *impl;
    int dim;
    nh_solver_stats stats;
    nh_solver_probe *probe;   /* set: the next solve only records its problem's Newton matrices */
};

const char *nh_solver_kind_name(nh_solver_kind kind)
{
    return kind == NH_SOLVER_NEWTON ? "newton" : "kinsol";
}

int nh_solver_kind_parse(const char *name, nh_solver_kind *kind)
{
    if (strcmp(name, "kinsol") == 0)
        *kind = NH_SOLVER_KINSOL;
    else if (strcmp(name, "newton") == 0)
        *kind = NH_SOLVER_NEWTON;
    else
        return 1;
    return 0;
}

int nh_solver_accepts(const nh_nonlinear_problem *problem, double fnorm, double rel_step)
{
    if (fnorm <= NH_SOLVER_FTOL * problem->scale)
        return 1;
    return rel_step <= NH_SOLVER_STEPTOL && isfinite(fnorm);
}

double nh_solver_relative_step(int n, const double *dx, const double *x)
{
    double r = 0.0;
    for (int i = 0; i < n; ++i) {
        double denom = fabs(x[i]) > 1.0 ? fabs(x[i]) : 1.0;
        double t = fabs(dx[i]) / denom;
        if (isnan(t))   /* a NaN step is the largest */
            return t;
        if (t > r)
            r = t;
    }
    return r;
}

int nh_solver_keeps_matrix(const nh_nonlinear_problem *problem, int have_matrix, double matrix_key)
{
    return problem->reuse_jacobian == NH_JACOBIAN_ACROSS_SOLVES && have_matrix && matrix_key == problem->jacobian_key;
}

int nh_solver_finish(const nh_nonlinear_problem *problem, double *x, double *f, double last_step, double *step,
                     int (*solve)(double *step, void *ctx), void *ctx)
{
    const int n = problem->dim;
    double best[NH_MAX_UNKNOWNS], best_size = last_step;
    int evaluations = 0;
    memcpy(best, x, (size_t)n * sizeof *x);
    for (int i = 0; i < NH_SOLVER_FINISH_STEPS; ++i) {
        for (int j = 0; j < n; ++j)
            step[j] = -f[j];
        if (solve(step, ctx))
            break;
        const double size = nh_solver_relative_step(n, step, x);
        const int smaller = size < best_size;
        if (!smaller && !(size > NH_SOLVER_FLOOR_STEP))   /* not decreasing, and small: the floor */
            break;
        for (int j = 0; j < n; ++j)   /* (a larger step above the floor: a contraction that oscillates) */
            x[j] += step[j];
        if (smaller && size <= NH_SOLVER_ROUNDOFF_STEP) {   /* a step of a few ulps: the fixed point, without F */
            memcpy(best, x, (size_t)n * sizeof *x);
            break;
        }
        if (problem->residual(x, f, problem->ctx))   /* x cannot be evaluated: the best so far stands */
            break;
        ++evaluations;
        if (smaller) {
            best_size = size;
            memcpy(best, x, (size_t)n * sizeof *x);
        }
    }
    memcpy(x, best, (size_t)n * sizeof *x);   /* the iterate after the smallest step */
    return evaluations;
}

nh_solver *nh_solver_create(nh_solver_kind kind, int dim, nh_error *err)
{
    if (dim < 1 || dim > NH_MAX_UNKNOWNS) {
        nh_fail(err, NH_ERR_INPUT, "solver dimension %d outside [1, %d]", dim, NH_MAX_UNKNOWNS);
        return NULL;
    }
    nh_solver *s = calloc(1, sizeof *s);
    if (!s) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating a solver");
        return NULL;
    }
    s->backend = kind == NH_SOLVER_NEWTON ? &nh_solver_backend_newton : &nh_solver_backend_kinsol;
    s->dim = dim;
    s->impl = s->backend->create(dim, err);
    if (!s->impl) {
        free(s);
        return NULL;
    }
    return s;
}

void nh_solver_set_probe(nh_solver *solver, nh_solver_probe *probe)
{
    solver->probe = probe;
}

/* 1 if the problem's residual_and_jacobian gives at x the bits of its residual and of `jac` (its
 * jacobian there), else 0; -1 without one. */
static int combined_call_agrees(const nh_nonlinear_problem *problem, const double *x, const double *jac)
{
    if (!problem->residual_and_jacobian)
        return -1;
    const size_t dim = (size_t)problem->dim;
    double residual[NH_MAX_UNKNOWNS], combined[NH_MAX_UNKNOWNS], *matrix = malloc(dim * dim * sizeof *matrix);
    int agrees = matrix && !problem->residual(x, residual, problem->ctx) &&
                 !problem->residual_and_jacobian(x, combined, matrix, problem->ctx) &&
                 !memcmp(residual, combined, dim * sizeof *combined) && !memcmp(jac, matrix, dim * dim * sizeof *jac);
    free(matrix);
    return agrees;
}

/* The probed solve: the problem's own Newton matrix at x and forward differences of its residual there,
 * and the check of residual_and_jacobian; x is left unchanged and the solve reports no convergence, so
 * the step goes no further. */
static int probe_matrices(nh_solver_probe *probe, const nh_nonlinear_problem *problem, const double *x)
{
    double work[NH_FD_WORK(NH_MAX_UNKNOWNS)];
    probe->dim = problem->dim;
    probe->recorded = !problem->jacobian(x, probe->analytic, problem->ctx) &&
                      !nh_fd_jacobian(problem->dim, problem->residual, problem->ctx, x, probe->differences, work);
    probe->combined = probe->recorded ? combined_call_agrees(problem, x, probe->analytic) : -1;
    return NH_STEP_NO_CONVERGENCE;
}

int nh_solver_solve(nh_solver *solver, const nh_nonlinear_problem *problem, double *x)
{
    if (solver->probe)
        return probe_matrices(solver->probe, problem, x);
    long iterations = 0;
    int rc = problem->dim == solver->dim ? solver->backend->solve(solver->impl, problem, x, &iterations)
                                         : NH_STEP_NO_CONVERGENCE;
    solver->stats.solves++;
    solver->stats.iterations += iterations;
    if (rc != NH_OK)
        solver->stats.failures++;
    return rc;
}

nh_solver_stats nh_solver_get_stats(const nh_solver *solver)
{
    return solver->stats;
}

void nh_solver_forget(nh_solver *solver)
{
    solver->backend->forget(solver->impl);
}

void nh_solver_free(nh_solver *solver)
{
    if (!solver)
        return;
    solver->backend->destroy(solver->impl);
    free(solver);
}
