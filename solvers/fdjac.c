/* The shared finite-difference Jacobian rule (include/nhens/solver.h). */
#include "nhens/solver.h"

#include <math.h>
#include <string.h>

int nh_fd_jacobian(int dim, int (*residual)(const double *x, double *r, void *ctx), void *ctx, const double *x,
                   double *jac, double *work)
{
    double *base = work, *pert = work + dim, *xp = work + 2 * dim;
    if (residual(x, base, ctx))
        return 1;
    memcpy(xp, x, (size_t)dim * sizeof *x);
    for (int j = 0; j < dim; ++j) {
        const double d = NH_FD_STEP * fmax(1.0, fabs(x[j]));
        xp[j] = x[j] + d;
        if (residual(xp, pert, ctx))
            return 1;
        xp[j] = x[j];
        for (int i = 0; i < dim; ++i)
            jac[i * dim + j] = (pert[i] - base[i]) / d;
    }
    return 0;
}
