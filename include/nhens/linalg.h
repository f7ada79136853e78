/* Small dense linear algebra for n <= NH_MAX_UNKNOWNS: row-major matrices, LU with partial
 * pivoting and SPD (L D L^T) solves. No allocation; callers pass workspace. */
#ifndef NHENS_LINALG_H
#define NHENS_LINALG_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Factor the n x n row-major matrix a in place; piv receives the row permutation (row k of the factors
 * is row piv[k] of a). Returns 0, or 1 if a pivot is exactly zero or not finite, or n is outside
 * [1, NH_MAX_UNKNOWNS]. */
int nh_lu_factor(int n, double *a, int *piv);
/* Solve with a factored matrix; b is overwritten by the solution. */
void nh_lu_solve(int n, const double *lu, const int *piv, double *b);

/* Solve the SPD system c x = b (c is m x m; its lower triangle is read, and c is overwritten by the factors
 * of c = L D L^T: L below the diagonal, 1/D_jj on it, D L^T above). 1 if not SPD. */
int nh_spd_solve(int m, double *c, double *b);
/* nh_spd_solve for m = 1 (one division), inline */
static inline int nh_spd_solve_scalar(double *c, double *b)
{
    if (!(c[0] > 0.0))
        return 1;
    b[0] /= c[0];
    return 0;
}
/* Solve c x = b again with the c that a successful nh_spd_solve left factored. */
void nh_spd_solve_factored(int m, const double *c, double *b);
/* inv (m x m, row-major) = c^-1 from the c that a successful nh_spd_solve left factored: column i is
 * nh_spd_solve_factored of e_i, the same sums without their terms in the zeros above e_i's 1. */
void nh_spd_inverse_factored(int m, const double *c, double *inv);

/* nh_norm_inf, nh_dot and the finiteness tests are inline here (the hot loops of every step call them on a few
 * entries) and exported from the library as well. */
inline double nh_norm_inf(int n, const double *x)   /* a NaN entry gives NaN */
{
    double r = 0.0;
    int nan_seen = 0;
    for (int i = 0; i < n; ++i) {   /* without a branch: which entry is largest is data, not a pattern */
        const double a = fabs(x[i]);
        r = a > r ? a : r;
        nan_seen |= a != a;
    }
    return nan_seen ? NAN : r;
}

inline double nh_dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

/* y = a x (a is rows x cols, row-major). For both products y must not overlap a or x (they are defined
 * with restrict arrays). */
void nh_matvec(int rows, int cols, const double *a, const double *x, double *y);
/* y = a^T x (a is rows x cols, row-major; y has cols entries) */
void nh_matvec_t(int rows, int cols, const double *a, const double *x, double *y);
/* Entry j of a^T x, summed as nh_matvec_t sums it (row by row, from the first row's product): for a loop
 * over j that uses a^T x where it computes it (inlined with `rows` a constant, one multiply-add per
 * constraint after the first). */
static inline double nh_matvec_t_entry(int rows, int cols, const double *a, const double *x, int j)
{
    if (rows < 1)
        return 0.0;
    double sum = a[j] * x[0];
    for (int i = 1; i < rows; ++i)
        sum += a[i * cols + j] * x[i];
    return sum;
}
/* The finiteness test of one entry: an inf's or NaN's exponent field is all ones, and adding one to that
 * field carries into bit 63. Independent integer operations ORed together over the entries, where a sum of
 * x - x would be a chain of dependent additions on every step's path (the stepper checks q and v after every
 * step). */
inline unsigned long long nh_nonfinite_bit(double x)
{
    unsigned long long bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits & 0x7ff0000000000000ull) + 0x0010000000000000ull;
}

/* Whether every entry is finite. */
inline int nh_all_finite(int n, const double *x)
{
    unsigned long long top = 0;
    for (int i = 0; i < n; ++i)
        top |= nh_nonfinite_bit(x[i]);
    return !(top >> 63);
}

/* Whether every entry of x and of y (n each) is finite, in one loop: a step's q and v. */
inline int nh_all_finite_pair(int n, const double *x, const double *y)
{
    unsigned long long top = 0;
    for (int i = 0; i < n; ++i)
        top |= nh_nonfinite_bit(x[i]) | nh_nonfinite_bit(y[i]);
    return !(top >> 63);
}

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
