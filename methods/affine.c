/* Steps whose velocity is affine in the multipliers (see affine.h): the residual and analytic Newton
 * matrix of the equations in lam where they are nonlinear, and their Newton solve. */
#include "affine.h"

int nh_affine_is_linear(const nh_system *s, double reach, int averaged, double weight)
{
    return (s->type->flags & NH_SYS_CVT_TYPE) || (averaged ? weight == 0.0 : reach == 0.0);
}

static int affine_residual(const double *lam, double *r, void *ctx)
{
    const nh_affine_step *c = ctx;
    double u[NH_MAX_DIM], point[NH_MAX_DIM], a_star[NH_MAX_CON * NH_MAX_DIM];
    nh_affine_velocity(c, lam, u);
    nh_affine_constraint_matrix(c, u, a_star, point);
    nh_matvec(c->sys->m, c->sys->n, a_star, u, r);
    return 0;
}

/* d(A_* u)/dlam = [A_* + (weight of A(point)) reach d(A(q) u)/dq at the point] K */
static int affine_jacobian(const double *lam, double *jac, void *ctx)
{
    const nh_affine_step *c = ctx;
    const nh_system *s = c->sys;
    const int n = s->n, m = s->m;
    const double moved = (c->a_fixed ? c->weight : 1.0) * c->reach;
    double u[NH_MAX_DIM], point[NH_MAX_DIM], a_star[NH_MAX_CON * NH_MAX_DIM], dav[NH_MAX_CON * NH_MAX_DIM];
    nh_affine_velocity(c, lam, u);
    nh_affine_constraint_matrix(c, u, a_star, point);
    s->type->constraint_jacobian_velocity(s, point, u, dav);
    for (int k = 0; k < m; ++k)
        for (int l = 0; l < m; ++l) {
            double sum = 0.0;
            for (int i = 0; i < n; ++i)
                sum += (a_star[k * n + i] + moved * dav[k * n + i]) * c->kick[i * m + l];
            jac[k * m + l] = sum;
        }
    return 0;
}

int nh_affine_newton(nh_solver *solver, const nh_affine_step *c, const double *v0, double *lam)
{
    const double scale = fmax(nh_norm_inf(c->sys->n, v0), 1e-300);
    nh_nonlinear_problem pb = {c->sys->m, affine_residual, affine_jacobian, (void *)c, scale,
                               NH_JACOBIAN_EACH_ITERATION, 0, NULL};
    return nh_solver_solve(solver, &pb, lam);
}
