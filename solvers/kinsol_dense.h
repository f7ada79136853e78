/* The project's small dense SUNMatrix, SUNLinearSolver and vector operations for KINSOL (engine-
 * private): a row-major matrix that the methods' Jacobians fill directly, factored and solved by the LU
 * of base/linalg.c, and serial vectors whose hot operations are the project's loops. On the small systems of
 * one step, SUNDIALS' own dense LU and vector operations cost more than KINSOL's iteration
 * (docs/decisions/0001-kinsol-with-own-dense-matrix.md). */
#ifndef NHENS_KINSOL_DENSE_H
#define NHENS_KINSOL_DENSE_H

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nvector.h>

/* An n x n matrix (NULL when out of memory); SUNMatDestroy frees it. */
SUNMatrix nh_small_dense_matrix(SUNContext context, int n);
/* Its row-major storage: a[i n + j]. */
double *nh_small_dense_data(SUNMatrix matrix);
/* b = A^-1 b with the factors that the direct solver's setup left in the matrix. */
void nh_small_dense_solve(SUNMatrix factored, double *b);
/* The direct solver: setup factors the matrix in place (partial pivoting), solve uses the factors.
 * NULL when out of memory; SUNLinSolFree frees it. */
SUNLinearSolver nh_small_dense_solver(SUNContext context);
/* A serial N_Vector of length n whose operations used by KINSOL (linear sum, scale, products, norms,
 * ...) are replaced by the same loops compiled here; its clones inherit them. NULL when out of memory. */
N_Vector nh_small_vector(SUNContext context, int n);

#endif
