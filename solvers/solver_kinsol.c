/* SUNDIALS KINSOL backend: one SUNContext and one full solver set (KINSOL memory, and the project's
 * vectors, small dense matrix and LU solver of kinsol_dense.h) per instance, created once per worker and
 * reused. Settings from docs/TOOLCHAIN.md: strategy KIN_NONE, tolerances at round-off, silent error
 * handler; the problem's Newton matrix policy (nh_jacobian_reuse) as max setup calls and no-init-setup.
 * Every accepted solve ends as the Newton backend's does (nh_solver_finish); KIN_STEP_LT_STPTOL is
 * accepted with a finite residual; a guess KINSOL accepts is kept only if it passes solver.h's guess rule;
 * a residual that cannot be evaluated ends the attempt, as in the Newton backend. Where the Newton backend
 * would take the matrix with the residual (residual_and_jacobian), so does this one, and hands it to
 * KINSOL when KINSOL asks for it there. */
#include "kinsol_dense.h"
#include "solver_internal.h"

#include "nhens/linalg.h"

#include <kinsol/kinsol.h>
#include <float.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>

/* KINSOL's stopping tolerance (times scale) in a chord solve, 2000 times FTOL. */
static const double KINSOL_CHORD_FTOL = 1e-12;

typedef struct kinsol_impl {
    int dim;
    SUNContext context;
    void *memory;
    N_Vector unknowns, ones;
    SUNMatrix matrix;
    SUNLinearSolver linear_solver;
    const nh_nonlinear_problem *problem;  /* the problem of the solve in progress */
    double *last_x, *last_f;              /* the latest residual evaluation: F(last_x) = last_f ... */
    double *previous_x;                   /* ... and the point of the one before it (the previous iterate) */
    int jacobian_at_last_x;               /* the matrix holds F'(last_x), unfactored: it came with F */
    int at_guess, stale;                  /* the next residual is the attempt's guess; the attempt keeps a matrix */
    int have_matrix;                      /* KINSOL's linear solver holds a factored Newton matrix ... */
    double matrix_key;                    /* ... built for a problem with this jacobian_key */
    int policy;                           /* kinsol_set_policy's last settings (0: none yet) */
    double tolerance;                     /* the FuncNormTol last set (-1: none yet) */
} kinsol_impl;

/* Whether KINSOL will ask for the Newton matrix at x, whose residual it asks for now: the Newton
 * backend's rule (solver_newton.c). At the guess of an attempt that builds its matrix there; in full
 * Newton after a far step from the previous iterate (KIN_NONE: x = that iterate + the full step). */
static int matrix_follows(const kinsol_impl *k, const double *x)
{
    if (k->at_guess)
        return !k->stale;
    if (k->problem->reuse_jacobian != NH_JACOBIAN_EACH_ITERATION)
        return 0;
    for (int i = 0; i < k->dim; ++i)   /* nh_solver_relative_step > NH_SOLVER_FAR_STEP, without its divisions */
        if (fabs(x[i] - k->last_x[i]) > NH_SOLVER_FAR_STEP * (fabs(x[i]) > 1.0 ? fabs(x[i]) : 1.0))
            return 1;
    return 0;
}

static int kinsol_residual(N_Vector u, N_Vector f, void *user_data)
{
    kinsol_impl *k = user_data;
    const nh_nonlinear_problem *pb = k->problem;
    const double *x = NV_DATA_S(u);
    double *r = NV_DATA_S(f);
    k->jacobian_at_last_x = 0;
    if (pb->residual_and_jacobian && matrix_follows(k, x)) {
        k->have_matrix = 0;   /* its factors are overwritten, whatever the call returns */
        k->jacobian_at_last_x = !pb->residual_and_jacobian(x, r, nh_small_dense_data(k->matrix), pb->ctx);
    }
    k->at_guess = 0;
    /* A failed evaluation ends the attempt, as in the Newton backend: KINSOL's recovery from a
     * positive return (halving the step, up to five times) would converge where Newton fails. */
    if (!k->jacobian_at_last_x && pb->residual(x, r, pb->ctx))
        return -1;
    memcpy(k->previous_x, k->last_x, (size_t)k->dim * sizeof *x);
    memcpy(k->last_x, x, (size_t)k->dim * sizeof *x);
    memcpy(k->last_f, r, (size_t)k->dim * sizeof *r);
    return 0;
}

static int kinsol_jacobian(N_Vector u, N_Vector fu, SUNMatrix jac, void *user_data, N_Vector t1, N_Vector t2)
{
    (void)fu;
    (void)t1;
    (void)t2;
    kinsol_impl *k = user_data;
    const double *x = NV_DATA_S(u);
    const int filled = k->jacobian_at_last_x && memcmp(k->last_x, x, (size_t)k->dim * sizeof *x) == 0;
    k->jacobian_at_last_x = 0;
    k->have_matrix = 0;
    if (!filled && k->problem->jacobian(x, nh_small_dense_data(jac), k->problem->ctx))
        return 1;
    k->have_matrix = 1;   /* KINSOL factors it next; a failed factorisation fails the solve */
    k->matrix_key = k->problem->jacobian_key;
    return 0;
}

static void kinsol_silent(int code, const char *module, const char *function, char *msg, void *data)
{
    (void)code;
    (void)module;
    (void)function;
    (void)msg;
    (void)data;
}

static void kinsol_destroy(void *p)
{
    kinsol_impl *k = p;
    if (!k)
        return;
    if (k->memory)
        KINFree(&k->memory);
    if (k->linear_solver)
        SUNLinSolFree(k->linear_solver);
    if (k->matrix)
        SUNMatDestroy(k->matrix);
    if (k->unknowns)
        N_VDestroy(k->unknowns);
    if (k->ones)
        N_VDestroy(k->ones);
    if (k->context)
        SUNContext_Free(&k->context);
    free(k->last_x);
    free(k->last_f);
    free(k->previous_x);
    free(k);
}

static int kinsol_configure(kinsol_impl *k)
{
    int rc = 0;
    rc |= KINInit(k->memory, kinsol_residual, k->unknowns);
    rc |= KINSetUserData(k->memory, k);
    rc |= KINSetLinearSolver(k->memory, k->linear_solver, k->matrix);
    rc |= KINSetJacFn(k->memory, kinsol_jacobian);
    rc |= KINSetErrHandlerFn(k->memory, kinsol_silent, NULL);
    rc |= KINSetScaledStepTol(k->memory, NH_SOLVER_STEPTOL);
    /* No cap on the Newton step, as in the Newton backend. KINSOL's default cap, 1000 |u0|, costs a
     * norm of the guess every solve (one of its ~27 vector operations for dla) and could only make the
     * two backends' iterates differ. */
    rc |= KINSetMaxNewtonStep(k->memory, DBL_MAX);
    return rc;
}

static void *kinsol_create(int dim, nh_error *err)
{
    kinsol_impl *k = calloc(1, sizeof *k);
    if (!k) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating KINSOL");
        return NULL;
    }
    k->dim = dim;
    k->tolerance = -1.0;
    k->last_x = malloc((size_t)dim * sizeof(double));
    k->last_f = malloc((size_t)dim * sizeof(double));
    k->previous_x = malloc((size_t)dim * sizeof(double));
    if (!k->last_x || !k->last_f || !k->previous_x || SUNContext_Create(NULL, &k->context) != 0)
        goto fail;
    k->unknowns = nh_small_vector(k->context, dim);
    k->ones = nh_small_vector(k->context, dim);
    k->matrix = nh_small_dense_matrix(k->context, dim);
    if (!k->unknowns || !k->ones || !k->matrix)
        goto fail;
    N_VConst(1.0, k->ones);
    k->linear_solver = nh_small_dense_solver(k->context);
    k->memory = KINCreate(k->context);
    if (!k->linear_solver || !k->memory || kinsol_configure(k) != 0)
        goto fail;
    return k;
fail:
    kinsol_destroy(k);
    nh_fail(err, NH_ERR_SOLVER, "could not create the KINSOL solver set (dimension %d)", dim);
    return NULL;
}

/* The Newton matrix policy (nh_jacobian_reuse) in KINSOL's terms: how many iterations between matrix
 * set-ups, and whether the first iteration reuses the matrix of an earlier solve. Set only when it
 * changes: each setter is a call into the unoptimised library. */
static void kinsol_set_policy(kinsol_impl *k, const nh_nonlinear_problem *pb, int stale)
{
    const int full = pb->reuse_jacobian == NH_JACOBIAN_EACH_ITERATION, policy = 1 + 2 * full + stale;
    if (policy == k->policy)
        return;
    k->policy = policy;
    KINSetMaxSetupCalls(k->memory, full ? 1 : NH_SOLVER_MAX_ITERS);
    KINSetNoInitSetup(k->memory, stale ? SUNTRUE : SUNFALSE);
    KINSetNumMaxIters(k->memory, stale ? NH_SOLVER_STALE_ITERS : NH_SOLVER_MAX_ITERS);
}

/* KINSOL's stopping tolerance on ||F||, set only when it changes. */
static void kinsol_set_tolerance(kinsol_impl *k, double tolerance)
{
    if (tolerance == k->tolerance)
        return;
    k->tolerance = tolerance;
    KINSetFuncNormTol(k->memory, tolerance);
}

static int kinsol_solve_step(double *step, void *ctx)
{
    kinsol_impl *k = ctx;
    nh_small_dense_solve(k->matrix, step);   /* what SUNLinSolSolve would do, without two copies */
    return 0;
}

/* The end of an accepted solve (solver.h), as the Newton backend takes it: chord steps with KINSOL's
 * factored matrix from the solution, whose residual is the last one KINSOL evaluated (a matrix that came
 * with that residual is factored first). */
static int kinsol_finish(kinsol_impl *k, const nh_nonlinear_problem *pb, N_Vector u)
{
    const int n = k->dim;
    double *x = NV_DATA_S(u), f[NH_MAX_UNKNOWNS], step[NH_MAX_UNKNOWNS], last_step[NH_MAX_UNKNOWNS];
    if (memcmp(k->last_x, x, (size_t)n * sizeof *x) != 0)
        return 0;
    if (!k->have_matrix && k->jacobian_at_last_x) {   /* F' came with the last F: factor it, as Newton does */
        k->jacobian_at_last_x = 0;
        k->have_matrix = SUNLinSolSetup(k->linear_solver, k->matrix) == 0;
        k->matrix_key = pb->jacobian_key;
    }
    if (!k->have_matrix)
        return 0;
    for (int i = 0; i < n; ++i)
        last_step[i] = x[i] - k->previous_x[i];
    memcpy(f, k->last_f, (size_t)n * sizeof *f);
    return nh_solver_finish(pb, x, f, nh_solver_relative_step(n, last_step, x), step, kinsol_solve_step, k);
}

/* One KINSol call from the guess; its iterations are counted unless the guess was accepted. */
static int kinsol_run(kinsol_impl *k, const double *guess, long *iterations, int stale)
{
    memcpy(NV_DATA_S(k->unknowns), guess, (size_t)k->dim * sizeof *guess);
    k->at_guess = 1;
    k->stale = stale;
    k->jacobian_at_last_x = 0;
    const int flag = KINSol(k->memory, k->unknowns, KIN_NONE, k->ones, k->ones);
    long nni = 0;
    KINGetNumNonlinSolvIters(k->memory, &nni);
    *iterations += flag == KIN_INITIAL_GUESS_OK ? 0 : nni;
    return flag;
}

/* Whether a guess that KINSOL accepted passes solver.h's rule, |F| <= 0.01 FTOL scale. KINSOL's test is
 * 0.01 times its stopping tolerance, which for a chord solve is KINSOL_CHORD_FTOL, 2000 times looser:
 * it returned guesses with |F| up to 1e-14 scale unchanged (tests/solvers). A chord solve keeps the
 * guess's residual in last_f; a full Newton solve's tolerance is FTOL, so KINSOL's test is the rule. */
static int guess_meets_the_rule(const kinsol_impl *k, const nh_nonlinear_problem *pb)
{
    return pb->reuse_jacobian == NH_JACOBIAN_EACH_ITERATION ||
           nh_norm_inf(k->dim, k->last_f) <= 0.01 * NH_SOLVER_FTOL * pb->scale;
}

static int kinsol_attempt(kinsol_impl *k, const nh_nonlinear_problem *pb, const double *guess, long *iterations,
                          int stale)
{
    kinsol_set_policy(k, pb, stale);
    /* A chord solve stops at KINSOL_CHORD_FTOL and the end of the solve takes it to the floor: below it
     * KINSOL, finding its matrix not current, would build a new one at every stall (nearly every solve). */
    const int chord = pb->reuse_jacobian != NH_JACOBIAN_EACH_ITERATION;
    kinsol_set_tolerance(k, (chord ? KINSOL_CHORD_FTOL : NH_SOLVER_FTOL) * pb->scale);
    int flag = kinsol_run(k, guess, iterations, stale);
    if (flag == KIN_INITIAL_GUESS_OK && !guess_meets_the_rule(k, pb)) {
        kinsol_set_tolerance(k, NH_SOLVER_FTOL * pb->scale);   /* KINSOL's guess test is then the rule */
        flag = kinsol_run(k, guess, iterations, stale);
    }
    /* KINSOL stops on its residual test (FTOL in the max norm, as the Newton backend's) or on its scaled
     * step, |dx_i| / (1 + |x_i|) <= NH_SOLVER_STEPTOL (up to twice as strict as the shared step test); a
     * stop on the step is accepted when the residual there is finite, as the shared test does. */
    const int at_end = memcmp(k->last_x, NV_DATA_S(k->unknowns), (size_t)k->dim * sizeof *k->last_x) == 0;
    const int ok = flag == KIN_SUCCESS || flag == KIN_INITIAL_GUESS_OK ||
                   (flag == KIN_STEP_LT_STPTOL && at_end && isfinite(nh_norm_inf(k->dim, k->last_f)));
    if (ok && flag != KIN_INITIAL_GUESS_OK)
        *iterations += kinsol_finish(k, pb, k->unknowns);
    return ok;
}

static int kinsol_solve(void *p, const nh_nonlinear_problem *pb, double *x, long *iterations)
{
    kinsol_impl *k = p;
    k->problem = pb;
    const int stale = nh_solver_keeps_matrix(pb, k->have_matrix, k->matrix_key);
    int ok = kinsol_attempt(k, pb, x, iterations, stale);
    if (!ok && stale)   /* the kept matrix converged too slowly: a fresh one from the same guess */
        ok = kinsol_attempt(k, pb, x, iterations, 0);
    k->problem = NULL;
    if (!ok)
        return NH_STEP_NO_CONVERGENCE;
    memcpy(x, NV_DATA_S(k->unknowns), (size_t)k->dim * sizeof *x);
    return NH_OK;
}

static void kinsol_forget(void *p)
{
    ((kinsol_impl *)p)->have_matrix = 0;
}

const nh_solver_backend nh_solver_backend_kinsol = {
    .create = kinsol_create,
    .solve = kinsol_solve,
    .forget = kinsol_forget,
    .destroy = kinsol_destroy,
};
