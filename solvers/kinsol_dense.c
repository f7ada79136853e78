/* Small dense SUNMatrix / SUNLinearSolver pair and the optimised vector operations for KINSOL (see
 * kinsol_dense.h). */
#include "kinsol_dense.h"

#include "nhens/linalg.h"

#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>

typedef struct small_dense {
    int n;
    double *a;     /* row-major; LU factors after the solver's setup */
    int *pivots;
} small_dense;

static small_dense *content(SUNMatrix m)
{
    return m->content;
}

static SUNMatrix_ID small_dense_id(SUNMatrix m)
{
    (void)m;
    return SUNMATRIX_CUSTOM;
}

/* KINSOL zeroes the matrix before each call of its Jacobian function. Ours writes every entry
 * (nh_nonlinear_problem's contract, which the Newton backend's unzeroed, reused matrix relies on too), and
 * it may find the matrix already filled with F' from the residual's call (solver_kinsol.c): so zeroing
 * leaves it as it is. */
static int small_dense_zero(SUNMatrix m)
{
    (void)m;
    return 0;
}

static void small_dense_destroy(SUNMatrix m)
{
    if (!m)
        return;
    small_dense *d = content(m);
    if (d) {
        free(d->a);
        free(d->pivots);
        free(d);
    }
    m->content = NULL;
    SUNMatFreeEmpty(m);
}

SUNMatrix nh_small_dense_matrix(SUNContext context, int n)
{
    SUNMatrix m = SUNMatNewEmpty(context);
    if (!m)
        return NULL;
    m->ops->getid = small_dense_id;
    m->ops->zero = small_dense_zero;
    m->ops->destroy = small_dense_destroy;
    small_dense *d = calloc(1, sizeof *d);
    m->content = d;
    if (d) {
        d->n = n;
        d->a = calloc((size_t)n * n, sizeof *d->a);
        d->pivots = calloc((size_t)n, sizeof *d->pivots);
    }
    if (!d || !d->a || !d->pivots) {
        small_dense_destroy(m);
        return NULL;
    }
    return m;
}

double *nh_small_dense_data(SUNMatrix matrix)
{
    return content(matrix)->a;
}

static SUNLinearSolver_Type solver_type(SUNLinearSolver s)
{
    (void)s;
    return SUNLINEARSOLVER_DIRECT;
}

static SUNLinearSolver_ID solver_id(SUNLinearSolver s)
{
    (void)s;
    return SUNLINEARSOLVER_CUSTOM;
}

static int solver_setup(SUNLinearSolver s, SUNMatrix a)
{
    (void)s;
    small_dense *d = content(a);
    return nh_lu_factor(d->n, d->a, d->pivots) ? SUNLS_LUFACT_FAIL : SUNLS_SUCCESS;
}

void nh_small_dense_solve(SUNMatrix factored, double *b)
{
    const small_dense *d = content(factored);
    nh_lu_solve(d->n, d->a, d->pivots, b);
}

static int solver_solve(SUNLinearSolver s, SUNMatrix a, N_Vector x, N_Vector b, realtype tol)
{
    (void)s;
    (void)tol;
    double *out = NV_DATA_S(x);
    const double *rhs = NV_DATA_S(b);
    if (out != rhs)
        memcpy(out, rhs, (size_t)content(a)->n * sizeof *out);
    nh_small_dense_solve(a, out);
    return SUNLS_SUCCESS;
}

static int solver_free(SUNLinearSolver s)
{
    SUNLinSolFreeEmpty(s);
    return SUNLS_SUCCESS;
}

SUNLinearSolver nh_small_dense_solver(SUNContext context)
{
    SUNLinearSolver s = SUNLinSolNewEmpty(context);
    if (!s)
        return NULL;
    s->ops->gettype = solver_type;
    s->ops->getid = solver_id;
    s->ops->setup = solver_setup;
    s->ops->solve = solver_solve;
    s->ops->free = solver_free;
    return s;
}

/* ---- vector operations: the serial N_Vector's loops, compiled with the project's optimisation ---- */

#define LEN(v) ((int)NV_LENGTH_S(v))
#define DATA(v) NV_DATA_S(v)

static void small_linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z)
{
    const double *xd = DATA(x), *yd = DATA(y);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = a * xd[i] + b * yd[i];
}

static void small_const(realtype c, N_Vector z)
{
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = c;
}

static void small_prod(N_Vector x, N_Vector y, N_Vector z)
{
    const double *xd = DATA(x), *yd = DATA(y);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = xd[i] * yd[i];
}

static void small_div(N_Vector x, N_Vector y, N_Vector z)
{
    const double *xd = DATA(x), *yd = DATA(y);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = xd[i] / yd[i];
}

static void small_scale(realtype c, N_Vector x, N_Vector z)
{
    const double *xd = DATA(x);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = c * xd[i];
}

static void small_abs(N_Vector x, N_Vector z)
{
    const double *xd = DATA(x);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = fabs(xd[i]);
}

static void small_inv(N_Vector x, N_Vector z)
{
    const double *xd = DATA(x);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = 1.0 / xd[i];
}

static void small_add_const(N_Vector x, realtype b, N_Vector z)
{
    const double *xd = DATA(x);
    double *zd = DATA(z);
    for (int i = 0; i < LEN(z); ++i)
        zd[i] = xd[i] + b;
}

static realtype small_dot(N_Vector x, N_Vector y)
{
    const double *xd = DATA(x), *yd = DATA(y);
    double sum = 0.0;
    for (int i = 0; i < LEN(x); ++i)
        sum += xd[i] * yd[i];
    return sum;
}

/* The Newton backend's norm: a NaN entry gives NaN. N_VMaxNorm's own comparison skips NaN entries,
 * with which KINSOL would accept an iterate whose residual is (0, NaN) (tests/solvers). */
static realtype small_max_norm(N_Vector x)
{
    return nh_norm_inf(LEN(x), DATA(x));
}

static realtype small_weighted_l2_norm(N_Vector x, N_Vector w)
{
    const double *xd = DATA(x), *wd = DATA(w);
    double sum = 0.0;
    for (int i = 0; i < LEN(x); ++i)
        sum += (xd[i] * wd[i]) * (xd[i] * wd[i]);
    return sqrt(sum);
}

static realtype small_min(N_Vector x)
{
    const double *xd = DATA(x);
    double min = xd[0];
    for (int i = 1; i < LEN(x); ++i)
        if (xd[i] < min)
            min = xd[i];
    return min;
}

static realtype small_l1_norm(N_Vector x)
{
    const double *xd = DATA(x);
    double sum = 0.0;
    for (int i = 0; i < LEN(x); ++i)
        sum += fabs(xd[i]);
    return sum;
}

N_Vector nh_small_vector(SUNContext context, int n)
{
    N_Vector v = N_VNew_Serial(n, context);
    if (!v)
        return NULL;
    N_Vector_Ops ops = v->ops;
    ops->nvlinearsum = small_linear_sum;
    ops->nvconst = small_const;
    ops->nvprod = small_prod;
    ops->nvdiv = small_div;
    ops->nvscale = small_scale;
    ops->nvabs = small_abs;
    ops->nvinv = small_inv;
    ops->nvaddconst = small_add_const;
    ops->nvdotprod = small_dot;
    ops->nvmaxnorm = small_max_norm;
    ops->nvwl2norm = small_weighted_l2_norm;
    ops->nvmin = small_min;
    ops->nvl1norm = small_l1_norm;
    return v;
}
