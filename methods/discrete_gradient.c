/* Discrete gradients (see discrete_gradient.h). */
#include "discrete_gradient.h"

#include "nhens/linalg.h"

#include <math.h>
#include <string.h>

int nh_gonzalez_correct(int dim, double f0, double f1, const double *delta, double mid2, double *grad, double *coef)
{
    double d2 = nh_dot(dim, delta, delta);
    *coef = 0.0;
    if (d2 <= NH_GONZALEZ_TINY_STEP2 * (1.0 + mid2))
        return 0;
    *coef = (f1 - f0 - nh_dot(dim, grad, delta)) / d2;
    for (int i = 0; i < dim; ++i)
        grad[i] += *coef * delta[i];
    return 1;
}

void nh_gonzalez_correct_jacobian(int dim, const double *delta, double coef, const double *grad1,
                                  const double *grad_mid, const double *hess_delta, double *jac)
{
    const double inv_d2 = 1.0 / nh_dot(dim, delta, delta);
    double row[NH_MAX_UNKNOWNS];
    for (int j = 0; j < dim; ++j)
        row[j] = (grad1[j] - grad_mid[j] - 0.5 * hess_delta[j] - 2.0 * coef * delta[j]) * inv_d2;
    for (int i = 0; i < dim; ++i) {
        const double delta_i = delta[i];
        double *restrict jac_row = jac + i * dim;
        for (int j = 0; j < dim; ++j)
            jac_row[j] += delta_i * row[j];
        jac_row[i] += coef;
    }
}

void nh_gonzalez_gradient(const nh_system *s, const double *q0, double potential0, const double *q1, double *grad,
                          double *jac)
{
    const int n = nh_dim(s);
    double mid[NH_MAX_DIM], delta[NH_MAX_DIM], hess[NH_MAX_DIM * NH_MAX_DIM], g1[NH_MAX_DIM];
    for (int i = 0; i < n; ++i) {
        mid[i] = 0.5 * (q0[i] + q1[i]);
        delta[i] = q1[i] - q0[i];
    }
    s->type->potential_gradient(s, mid, grad);
    if (jac) {
        s->type->potential_hessian(s, mid, hess);
        for (int i = 0; i < n * n; ++i)
            jac[i] = 0.5 * hess[i];
    }
    double d2 = nh_dot(n, delta, delta);
    if (d2 <= NH_GONZALEZ_TINY_STEP2 * (1.0 + nh_dot(n, mid, mid)))
        return;
    const double inv_d2 = 1.0 / d2;
    const double coef = (s->type->potential(s, q1) - potential0 - nh_dot(n, grad, delta)) * inv_d2;
    if (jac) {
        double hd[NH_MAX_DIM];
        s->type->potential_gradient(s, q1, g1);
        nh_matvec(n, n, hess, delta, hd);
        nh_gonzalez_correct_jacobian(n, delta, coef, g1, grad, hd, jac);
    }
    for (int i = 0; i < n; ++i)
        grad[i] += coef * delta[i];
}
