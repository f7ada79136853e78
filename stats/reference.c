/* CVODE reference integrator (see include/nhens/reference.h): one-shot solves, a tracker that follows a
 * trajectory output time by output time (the global-error observer), and the driver's section and
 * monodromy runs. Each owns its SUNDIALS context, so trackers of different threads share nothing. */
#include "nhens/reference.h"

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <math.h>

static int reference_rhs(realtype t, N_Vector y, N_Vector ydot, void *user_data)
{
    (void)t;
    const nh_system *s = user_data;
    const double *state = N_VGetArrayPointer(y);
    double *rate = N_VGetArrayPointer(ydot);
    return nh_index1_rhs(s, state, state + s->n, rate, rate + s->n, NULL) ? 1 : 0;
}

static void reference_silent(int code, const char *module, const char *function, char *msg, void *data)
{
    (void)code;
    (void)module;
    (void)function;
    (void)msg;
    (void)data;
}

/* CVODE (Adams, dense Newton) on the index-1 ODE of one system, restarted at each new initial state. */
struct nh_reference_tracker {
    const nh_system *s;
    double rtol, atol;
    SUNContext ctx;
    N_Vector y;
    SUNMatrix mat;
    SUNLinearSolver ls;
    void *mem;
    int initialized;
    double t;
};

nh_reference_tracker *nh_reference_tracker_create(const nh_system *s, double rtol, double atol)
{
    nh_reference_tracker *r = calloc(1, sizeof *r);
    const int dim = 2 * s->n;
    if (!r || SUNContext_Create(NULL, &r->ctx) != 0)
        return free(r), NULL;
    r->s = s;
    r->rtol = rtol;
    r->atol = atol;
    r->y = N_VNew_Serial(dim, r->ctx);
    r->mat = SUNDenseMatrix(dim, dim, r->ctx);
    r->ls = r->y && r->mat ? SUNLinSol_Dense(r->y, r->mat, r->ctx) : NULL;
    r->mem = CVodeCreate(CV_ADAMS, r->ctx);
    if (!(r->y && r->mat && r->ls && r->mem)) {
        nh_reference_tracker_free(r);
        return NULL;
    }
    N_VConst(0.0, r->y);
    return r;
}

int nh_reference_tracker_start(nh_reference_tracker *r, const double *q0, const double *v0)
{
    const int n = r->s->n;
    memcpy(N_VGetArrayPointer(r->y), q0, (size_t)n * sizeof *q0);
    memcpy(N_VGetArrayPointer(r->y) + n, v0, (size_t)n * sizeof *v0);
    int flag = r->initialized ? CVodeReInit(r->mem, 0.0, r->y) : CVodeInit(r->mem, reference_rhs, 0.0, r->y);
    if (!r->initialized && flag == 0) {
        flag |= CVodeSStolerances(r->mem, r->rtol, r->atol);
        flag |= CVodeSetUserData(r->mem, (void *)r->s);
        flag |= CVodeSetLinearSolver(r->mem, r->ls, r->mat);
        flag |= CVodeSetMaxNumSteps(r->mem, 50000000L);
        flag |= CVodeSetErrHandlerFn(r->mem, reference_silent, NULL);
        r->initialized = flag == 0;
    }
    r->t = 0.0;
    return flag == 0 ? NH_OK : NH_ERR_SOLVER;
}

int nh_reference_tracker_advance(nh_reference_tracker *r, double t, double *q, double *v)
{
    const int n = r->s->n;
    realtype reached = r->t;
    if (t > r->t && (CVodeSetStopTime(r->mem, t) != 0 || CVode(r->mem, t, r->y, &reached, CV_NORMAL) < 0))
        return NH_ERR_SOLVER;
    r->t = t;
    memcpy(q, N_VGetArrayPointer(r->y), (size_t)n * sizeof *q);
    memcpy(v, N_VGetArrayPointer(r->y) + n, (size_t)n * sizeof *v);
    return NH_OK;
}

void nh_reference_tracker_free(nh_reference_tracker *r)
{
    if (!r)
        return;
    CVodeFree(&r->mem);
    SUNLinSolFree(r->ls);
    SUNMatDestroy(r->mat);
    N_VDestroy(r->y);
    SUNContext_Free(&r->ctx);
    free(r);
}

int nh_reference_solve(const nh_system *s, const double *q0, const double *v0, double T, double rtol,
                       double atol, double *q, double *v, nh_error *err)
{
    nh_reference_tracker *r = nh_reference_tracker_create(s, rtol, atol);
    int rc = r ? nh_reference_tracker_start(r, q0, v0) : NH_ERR_NOMEM;
    if (rc == NH_OK)
        rc = nh_reference_tracker_advance(r, T, q, v);
    nh_reference_tracker_free(r);
    if (rc)
        nh_fail(err, NH_ERR_SOLVER, "CVODE could not integrate %s to T = %g at rtol %g", s->type->name, T, rtol);
    return rc;
}

/* A CVODE run to the first root of a set of event functions (Adams with a fixed-point nonlinear solver:
 * the driver and monodromy equations are not stiff). The caller fills `y` between create and run. */
typedef struct root_run {
    SUNContext ctx;
    N_Vector y;
    void *mem;
    SUNNonlinearSolver nls;
} root_run;

static int root_run_create(root_run *r, int dim)
{
    memset(r, 0, sizeof *r);
    if (SUNContext_Create(NULL, &r->ctx) != 0)
        return 1;
    r->y = N_VNew_Serial(dim, r->ctx);
    r->mem = CVodeCreate(CV_ADAMS, r->ctx);
    r->nls = r->y ? SUNNonlinSol_FixedPoint(r->y, 0, r->ctx) : NULL;
    if (r->y)
        N_VConst(0.0, r->y);
    return !(r->y && r->mem && r->nls);
}

/* Time t > 0 of the first root (in the directions dirs), or -1. */
static double root_run_until(root_run *r, CVRhsFn rhs, CVRootFn roots, int n_roots, int *dirs, void *user,
                             double rtol)
{
    int flag = CVodeInit(r->mem, rhs, 0.0, r->y);
    flag |= CVodeSStolerances(r->mem, rtol, rtol);
    flag |= CVodeSetUserData(r->mem, user);
    flag |= CVodeSetNonlinearSolver(r->mem, r->nls);
    flag |= CVodeSetMaxNumSteps(r->mem, 10000000L);
    flag |= CVodeRootInit(r->mem, n_roots, roots);
    flag |= CVodeSetRootDirection(r->mem, dirs);
    flag |= CVodeSetErrHandlerFn(r->mem, reference_silent, NULL);
    realtype t = 0.0;
    return flag == 0 && CVode(r->mem, 1e6, r->y, &t, CV_NORMAL) == CV_ROOT_RETURN && t > 0 ? t : -1.0;
}

static void root_run_free(root_run *r)
{
    CVodeFree(&r->mem);
    SUNNonlinSolFree(r->nls);
    N_VDestroy(r->y);
    SUNContext_Free(&r->ctx);
}

int nh_has_latitude(const nh_system *s)
{
    if (!s->type->coupled_structure || s->n > NH_MAX_DIM)
        return 0;
    double k[NH_MAX_DIM], kappa[NH_MAX_DIM * NH_MAX_DIM], f[NH_MAX_DIM];
    int rows = 0;
    s->type->coupled_structure(s, 0.0, k, kappa, &rows, f);
    for (int i = 0; i < s->n - 1; ++i)
        if (f[i] != 0.0)
            return 0;
    return rows == 2;
}

typedef struct monodromy_ctx {
    const nh_system *s;
    double xi0, direction;
} monodromy_ctx;

/* y = (xi, xi', U column-major 3 x 3) */
static int monodromy_rhs(realtype t, N_Vector yv, N_Vector ydot, void *user)
{
    (void)t;
    const monodromy_ctx *c = user;
    const nh_system *s = c->s;
    const int n = s->n, p = n - 1;
    const double *y = N_VGetArrayPointer(yv);
    double *dy = N_VGetArrayPointer(ydot);
    double q[NH_MAX_DIM] = {0}, g[NH_MAX_DIM], k[NH_MAX_DIM], kappa[NH_MAX_DIM * NH_MAX_DIM], f[NH_MAX_DIM], k0[2];
    int rows;
    q[p] = y[0];
    s->type->potential_gradient(s, q, g);
    dy[0] = y[1];
    dy[1] = -g[p];
    s->type->coupled_structure(s, y[0], k, kappa, &rows, f);
    for (int r = 0; r < 2; ++r) {
        k0[r] = 0.0;
        for (int i = 0; i < p; ++i)
            k0[r] += kappa[r * p + i] * k[i];
    }
    const double b[9] = {0, 0, k0[0], 0, 0, k0[1], -k0[0], -k0[1], 0};   /* row-major B */
    for (int col = 0; col < 3; ++col)
        for (int i = 0; i < 3; ++i)
            dy[2 + col * 3 + i] = b[i * 3 + 0] * y[2 + col * 3 + 0] + b[i * 3 + 1] * y[2 + col * 3 + 1] +
                                  b[i * 3 + 2] * y[2 + col * 3 + 2];
    return 0;
}

/* g0 = s (xi - xi0) (oscillating return), g1 = s (xi - xi0) - 2 pi (rotating return); both upward */
static int monodromy_roots(realtype t, N_Vector yv, realtype *g, void *user)
{
    (void)t;
    const monodromy_ctx *c = user;
    const double phase = c->direction * (N_VGetArrayPointer(yv)[0] - c->xi0);
    g[0] = phase;
    g[1] = phase - 2.0 * M_PI;
    return 0;
}

int nh_driver_monodromy(const nh_system *s, const double *q0, const double *v0, double rtol, double *period,
                        double *axis, nh_error *err)
{
    const int p = s->n - 1;
    if (!nh_has_latitude(s) || v0[p] == 0.0)
        return nh_fail(err, NH_ERR_INPUT, "%s: no driver monodromy (needs a 3-component reduced vector and xi' != 0)",
                       s->type->name);
    monodromy_ctx mc = {s, q0[p], v0[p] > 0 ? 1.0 : -1.0};
    root_run run;
    int rc = NH_ERR_SOLVER, up[2] = {1, 1};
    if (!root_run_create(&run, 11)) {
        double *yy = N_VGetArrayPointer(run.y);
        yy[0] = q0[p];
        yy[1] = v0[p];
        yy[2] = yy[6] = yy[10] = 1.0;
        double t = root_run_until(&run, monodromy_rhs, monodromy_roots, 2, up, &mc, rtol);
        if (t > 0) {
            const double *u = yy + 2;   /* R column-major: R_ij = u[j*3 + i] */
            double a[3] = {u[1 * 3 + 2] - u[2 * 3 + 1], u[2 * 3 + 0] - u[0 * 3 + 2], u[0 * 3 + 1] - u[1 * 3 + 0]};
            double norm = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            if (norm > 1e-12) {
                double u0[3], sign;
                nh_reduced_vector(s, q0, v0, u0);
                sign = a[0] * u0[0] + a[1] * u0[1] + a[2] * u0[2] >= 0 ? 1.0 : -1.0;
                for (int i = 0; i < 3; ++i)
                    axis[i] = sign * a[i] / norm;
                *period = t;
                rc = NH_OK;
            }
        }
    }
    if (rc)
        nh_fail(err, NH_ERR_SOLVER, "%s: the driver-period monodromy could not be computed (no return to the section, "
                "or a rotation by 0 or pi)", s->type->name);
    root_run_free(&run);
    return rc;
}

typedef struct section_ctx {
    const nh_system *s;
    double section;
} section_ctx;

static int driver_rhs(realtype t, N_Vector yv, N_Vector ydot, void *user)
{
    (void)t;
    const section_ctx *c = user;
    const int p = c->s->n - 1;
    const double *y = N_VGetArrayPointer(yv);
    double q[NH_MAX_DIM] = {0}, g[NH_MAX_DIM];
    q[p] = y[0];
    c->s->type->potential_gradient(c->s, q, g);
    N_VGetArrayPointer(ydot)[0] = y[1];
    N_VGetArrayPointer(ydot)[1] = -g[p];
    return 0;
}

/* sin(xi - section) crosses zero upward (times the direction) exactly at the wanted crossings */
static int section_root(realtype t, N_Vector yv, realtype *g, void *user)
{
    (void)t;
    const section_ctx *c = user;
    g[0] = sin(N_VGetArrayPointer(yv)[0] - c->section);
    return 0;
}

int nh_driver_time_to_section(const nh_system *s, const double *q0, const double *v0, double section, double *t,
                              nh_error *err)
{
    const int p = s->n - 1;
    section_ctx sc = {s, section};
    int direction[1] = {v0[p] > 0 ? 1 : -1}, rc = NH_ERR_SOLVER;
    root_run run;
    if (!root_run_create(&run, 2)) {
        N_VGetArrayPointer(run.y)[0] = q0[p];
        N_VGetArrayPointer(run.y)[1] = v0[p];
        *t = root_run_until(&run, driver_rhs, section_root, 1, direction, &sc, 1e-12);
        rc = *t > 0 ? NH_OK : NH_ERR_SOLVER;
    }
    if (rc)
        nh_fail(err, NH_ERR_SOLVER, "%s: the driver never reaches the section xi = %g", s->type->name, section);
    root_run_free(&run);
    return rc;
}
