/* Discrete gradients of the potential (methods-private): grad_bar V(q0, q1) with
 * grad_bar V . (q1 - q0) = V(q1) - V(q0) and grad_bar V(q, q) = grad V(q), plus the derivative
 * d grad_bar V / d q1 that Newton needs. */
#ifndef NHENS_DISCRETE_GRADIENT_H
#define NHENS_DISCRETE_GRADIENT_H

#include "nhens/system.h"

/* Below this |D|^2 relative to 1 + |q_bar|^2 the correction term is rounding noise (its true size is
 * O(|D|^3)); the midpoint gradient is then exact to round-off (the dd lane kernel, methods/lane_dd.h, too). */
#define NH_GONZALEZ_TINY_STEP2 1e-24

/* Gonzalez midpoint discrete gradient (Celledoni et al. 2019, eq. 12, docs/METHODS.md Sect. 4):
 *   grad V(q_bar) + [V(q1) - V(q0) - grad V(q_bar).D] / |D|^2 * D,  D = q1 - q0.
 * potential0 = V(q0) (constant over a step's iterations); jac (n x n, may be NULL) = d/dq1. Falls back to grad V(q_bar) when |D| is at round-off. */
void nh_gonzalez_gradient(const nh_system *s, const double *q0, double potential0, const double *q1, double *grad,
                          double *jac);

/* The Gonzalez correction on R^dim for any function f: grad (in: grad f at the midpoint; out: the
 * discrete gradient) += coef delta, coef = [f1 - f0 - grad . delta] / |delta|^2; skipped (returning 0
 * with coef = 0) when |delta| is at round-off relative to 1 + |mid|^2 (mid2), else returns 1. */
int nh_gonzalez_correct(int dim, double f0, double f1, const double *delta, double mid2, double *grad, double *coef);

/* The derivative of an applied correction coef delta with respect to the end point z1:
 *   jac += coef I + delta row^T,  row = [grad f(z1) - grad f(mid) - 1/2 Hess f(mid) delta - 2 coef delta] / |delta|^2
 * (hess_delta = Hess f(mid) delta; grad_mid is grad f(mid) before the correction). */
void nh_gonzalez_correct_jacobian(int dim, const double *delta, double coef, const double *grad1,
                                  const double *grad_mid, const double *hess_delta, double *jac);

#endif
