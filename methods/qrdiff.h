/* Householder QR with derivatives (Celledoni et al. 2019, Algorithm 1), methods-private: an orthonormal basis of
 * ker A(q) from the QR factorisation of A^T, with its derivatives, for methods that need an adapted
 * basis of D_q without the system's analytic D* form (Gonzalez-R). */
#ifndef NHENS_QRDIFF_H
#define NHENS_QRDIFF_H

#include "nhens/system.h"

#include <stddef.h>

/* Basis X (n x r, r = n - m, X[i*r + a]) of ker A(q) = the last r columns of Q in A^T = Q R, and
 * dX[(i*r + a)*n + j] = d X_a^i / d q_j (dx may be NULL). signs[k] = +-1 are the Householder sign
 * choices; with choose != 0 they are chosen at q (and written), else used as given, so that all
 * factorisations of one step sample the same smooth basis field. Returns 1 on a breakdown. */
typedef struct nh_qr_work nh_qr_work;
/* Scratch of nh_qr_kernel_basis (reflectors with their derivatives), allocated by the caller once. */
size_t nh_qr_work_bytes(void);
int nh_qr_kernel_basis(const nh_system *s, const double *q, double *signs, int choose, double *x, double *dx,
                       nh_qr_work *work);

#endif
