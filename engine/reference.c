/* CVODE reference integrator (see include/nhens/reference.h). One context per call: it is used
 * outside the step loop only. */
#include "nhens/reference.h"

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

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

int nh_reference_solve(const nh_system *s, const double *q0, const double *v0, double T, double rtol,
                       double atol, double *q, double *v, nh_error *err)
{
    const int n = s->n;
    SUNContext ctx = NULL;
    if (SUNContext_Create(NULL, &ctx) != 0)
        return nh_fail(err, NH_ERR_SOLVER, "CVODE: cannot create a SUNDIALS context");
    N_Vector y = N_VNew_Serial(2 * n, ctx);
    SUNMatrix mat = SUNDenseMatrix(2 * n, 2 * n, ctx);
    SUNLinearSolver ls = y && mat ? SUNLinSol_Dense(y, mat, ctx) : NULL;
    void *mem = CVodeCreate(CV_ADAMS, ctx);
    int rc = NH_ERR_SOLVER;
    if (y && mat && ls && mem) {
        memcpy(N_VGetArrayPointer(y), q0, (size_t)n * sizeof *q0);
        memcpy(N_VGetArrayPointer(y) + n, v0, (size_t)n * sizeof *v0);
        int flag = CVodeInit(mem, reference_rhs, 0.0, y);
        flag |= CVodeSStolerances(mem, rtol, atol);
        flag |= CVodeSetUserData(mem, (void *)s);
        flag |= CVodeSetLinearSolver(mem, ls, mat);
        flag |= CVodeSetMaxNumSteps(mem, 50000000L);
        flag |= CVodeSetStopTime(mem, T);
        flag |= CVodeSetErrHandlerFn(mem, reference_silent, NULL);
        realtype t = 0.0;
        if (flag == 0 && CVode(mem, T, y, &t, CV_NORMAL) >= 0) {
            memcpy(q, N_VGetArrayPointer(y), (size_t)n * sizeof *q);
            memcpy(v, N_VGetArrayPointer(y) + n, (size_t)n * sizeof *v);
            rc = NH_OK;
        }
    }
    if (rc)
        nh_fail(err, NH_ERR_SOLVER, "CVODE could not integrate %s to T = %g at rtol %g", s->type->name, T, rtol);
    CVodeFree(&mem);
    SUNLinSolFree(ls);
    SUNMatDestroy(mat);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    return rc;
}
