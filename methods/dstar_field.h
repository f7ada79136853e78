/* The D* form of a system as a vector field (methods-private; `nhens check` (engine/check.c) and the tests
 * read it): with the system's adapted basis, zeta = (q, rho = X^T M v) and zeta' = Pi(zeta) grad H(zeta)
 * (Celledoni et al. 2019, eq. 9). */
#ifndef NHENS_METHODS_DSTAR_FIELD_H
#define NHENS_METHODS_DSTAR_FIELD_H

#include "nhens/method.h"
#include "nhens/system.h"

/* zdot has n + (n - m) entries. 0, or 1 if the system has no D* form or g is singular. */
int nh_dstar_vector_field(const nh_system *s, const double *q, const double *v, double *zdot);

/* H(zeta) and (grad may be NULL) its gradient; out = Pi(zeta) g. Same conventions. */
int nh_dstar_hamiltonian(const nh_system *s, const double *z, double *value, double *grad);
int nh_dstar_pi_times(const nh_system *s, const double *z, const double *g, double *out);

#endif
