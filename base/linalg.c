/* Dense kernels for the tiny systems of one integration step (see include/nhens/linalg.h). */
#include "nhens/linalg.h"
#include "nhens/core.h"

#include <math.h>

/* Full unrolling of the SPD kernels' loops once the size is a constant (GCC; clang unrolls on its own
 * and warns where a size stays variable). */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 16")
#else
#define UNROLL
#endif

/* Step k of Gaussian elimination with partial pivoting on the n x n row-major a: the pivot row
 * swapped in (and its entry of the row permutation perm), the multipliers stored below the diagonal,
 * the rows below updated. 1 if column k has no finite non-zero pivot. */
static inline __attribute__((always_inline)) int lu_eliminate_column(const int n, const int k, double *a, int *perm)
{
    int p = k;
    double best = fabs(a[k * n + k]);
    for (int i = k + 1; i < n; ++i) {
        double cand = fabs(a[i * n + k]);
        if (cand > best) {
            best = cand;
            p = i;
        }
    }
    if (!(best > 0.0) || !isfinite(best))
        return 1;
    const int row_k = perm[k];
    perm[k] = perm[p];
    perm[p] = row_k;
    if (p != k) {
        for (int j = 0; j < n; ++j) {
            double t = a[k * n + j];
            a[k * n + j] = a[p * n + j];
            a[p * n + j] = t;
        }
    }
    const double inv = 1.0 / a[k * n + k];
    const double *restrict pivot_row = a + k * n;
    for (int i = k + 1; i < n; ++i) {
        double *restrict row = a + i * n;
        const double f = row[k] * inv;
        row[k] = f;
        if (f == 0.0)
            continue;
        for (int j = k + 1; j < n; ++j)
            row[j] -= f * pivot_row[j];
    }
    return 0;
}

/* The factorisation, its column steps unrolled: with the size a constant (SMALL_SIZES) every inner loop
 * then has a constant trip count (docs/decisions/0008-small-kernels-per-size.md). */
static inline __attribute__((always_inline)) int lu_factor_size(const int n, double *a, int *perm)
{
    UNROLL
    for (int k = 0; k < n; ++k)
        perm[k] = k;
    UNROLL
    for (int k = 0; k < n; ++k)
        if (lu_eliminate_column(n, k, a, perm))
            return 1;
    return 0;
}

static inline __attribute__((always_inline)) void lu_solve_size(const int n, const double *lu, const int *perm, double *b)
{
    double y[NH_MAX_UNKNOWNS];   /* b's rows in the factored order: independent loads, where swapping
                                    b's rows one after the other would chain stores and reloads */
    UNROLL
    for (int k = 0; k < n; ++k)
        y[k] = b[perm[k]];
    UNROLL
    for (int i = 1; i < n; ++i) {
        double s = y[i];
        for (int j = 0; j < i; ++j)
            s -= lu[i * n + j] * y[j];
        y[i] = s;
    }
    UNROLL   /* each row sums its newest unknown, x_(i+1), last: the products with the older ones run while
                x_(i+1) is divided out, instead of the whole row waiting on it (decisions/0008) */
    for (int i = n - 1; i >= 0; --i) {
        double s = y[i];
        for (int j = n - 1; j > i; --j)
            s -= lu[i * n + j] * y[j];
        y[i] = s / lu[i * n + i];
    }
    UNROLL
    for (int k = 0; k < n; ++k)
        b[k] = y[k];
}

/* The kernels above inlined for each size of the implicit steps' systems (n + m, 2n - m, ... up to 16):
 * with the size a constant the loops unroll, which halves the cost of these latency-bound solves. */
#define SMALL_SIZES(X) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)

int nh_lu_factor(int n, double *a, int *piv)
{
    switch (n) {
#define FACTOR_CASE(k)                                                                                             \
    case k:                                                                                                        \
        return lu_factor_size(k, a, piv);
        SMALL_SIZES(FACTOR_CASE)
#undef FACTOR_CASE
    default:   /* the solve keeps b's permuted rows in NH_MAX_UNKNOWNS doubles: no factors beyond that size */
        return n < 1 || n > NH_MAX_UNKNOWNS || lu_factor_size(n, a, piv);
    }
}

void nh_lu_solve(int n, const double *lu, const int *piv, double *b)
{
    switch (n) {
#define SOLVE_CASE(k)                                                                                              \
    case k:                                                                                                        \
        lu_solve_size(k, lu, piv, b);                                                                              \
        return;
        SMALL_SIZES(SOLVE_CASE)
#undef SOLVE_CASE
    default:
        lu_solve_size(n, lu, piv, b);
    }
}

/* b <- (D L^T)^-1 b for entries first..m-1 of b (stride `stride`), the entries before `first` zero:
 * the diagonal scaling (1/D_jj on c's diagonal), then the back substitution with L^T */
static inline __attribute__((always_inline)) void ldlt_back_substitute(const int m, const double *c, double *b,
                                                                     const int stride, const int first)
{
    UNROLL
    for (int i = first; i < m; ++i)
        b[i * stride] *= c[i * m + i];
    UNROLL
    for (int i = m - 2; i >= 0; --i) {
        double s = b[i * stride];
        UNROLL
        for (int k = i + 1; k < m; ++k)
            s -= c[k * m + i] * b[k * stride];
        b[i * stride] = s;
    }
}

/* b = (L D L^T)^-1 b: L unit lower triangular below the diagonal, 1/D_jj on it */
static inline __attribute__((always_inline)) void ldlt_solves(const int m, const double *c, double *b)
{
    UNROLL
    for (int i = 1; i < m; ++i) {
        double s = b[i];
        UNROLL
        for (int k = 0; k < i; ++k)
            s -= c[i * m + k] * b[k];
        b[i] = s;
    }
    ldlt_back_substitute(m, c, b, 1, 0);
}

void nh_spd_solve_factored(int m, const double *c, double *b)
{
    if (m == 1)
        b[0] /= c[0];
    else
        ldlt_solves(m, c, b);
}

/* Column i of c^-1 into inv (stride m): ldlt_solves on e_i, whose forward sums start at its 1 and
 * whose zeros before it stay zero until the back substitution */
static inline __attribute__((always_inline)) void ldlt_inverse_column(const int m, const double *c, int i,
                                                                    double *inv)
{
    double *b = inv + i;   /* b[j m] is entry j of the column */
    for (int j = 0; j < i; ++j)
        b[j * m] = 0.0;
    b[i * m] = 1.0;
    UNROLL
    for (int j = i + 1; j < m; ++j) {
        double s = -c[j * m + i];
        UNROLL
        for (int k = i + 1; k < j; ++k)
            s -= c[j * m + k] * b[k * m];
        b[j * m] = s;
    }
    ldlt_back_substitute(m, c, b, m, i);
}

static inline __attribute__((always_inline)) void ldlt_inverse(const int m, const double *c, double *inv)
{
    UNROLL
    for (int i = 0; i < m; ++i)
        ldlt_inverse_column(m, c, i, inv);
}

void nh_spd_inverse_factored(int m, const double *c, double *inv)
{
    switch (m) {
    case 1:
        inv[0] = 1.0 / c[0];
        return;
#define INVERSE_CASE(k)                                                                                            \
    case k:                                                                                                        \
        ldlt_inverse(k, c, inv);                                                                                   \
        return;
        SMALL_SIZES(INVERSE_CASE)
#undef INVERSE_CASE
    default:
        ldlt_inverse(m, c, inv);
    }
}

/* The SPD solve for one size m, inlined per size like the LU (the D* frames solve with g = X^T M X of
 * size r several times per residual). L D L^T rather than Cholesky: the factorisation is a chain of
 * dependent columns, and without the square root each column waits for one division only. The upper
 * triangle holds W = D L^T (the unscaled column entries) while the lower one receives L. */
static inline __attribute__((always_inline)) int spd_solve_size(const int m, double *c, double *b)
{
    UNROLL
    for (int j = 0; j < m; ++j) {
        double d = c[j * m + j];
        UNROLL
        for (int k = 0; k < j; ++k)
            d -= c[j * m + k] * c[k * m + j];
        if (!(d > 0.0) || !isfinite(d))
            return 1;
        const double inv = 1.0 / d;
        c[j * m + j] = inv;
        UNROLL
        for (int i = j + 1; i < m; ++i) {
            double s = c[i * m + j];
            UNROLL
            for (int k = 0; k < j; ++k)
                s -= c[i * m + k] * c[k * m + j];
            c[j * m + i] = s;
            c[i * m + j] = s * inv;
        }
    }
    ldlt_solves(m, c, b);
    return 0;
}

int nh_spd_solve(int m, double *c, double *b)
{
    switch (m) {
    case 1:
        return nh_spd_solve_scalar(c, b);
#define SPD_CASE(k)                                                                                                \
    case k:                                                                                                        \
        return spd_solve_size(k, c, b);
        SMALL_SIZES(SPD_CASE)
#undef SPD_CASE
    default:
        return spd_solve_size(m, c, b);
    }
}

/* the external definitions of the header's inline functions */
extern inline double nh_norm_inf(int n, const double *x);
extern inline double nh_dot(int n, const double *x, const double *y);
extern inline int nh_all_finite(int n, const double *x);
extern inline unsigned long long nh_nonfinite_bit(double x);
extern inline int nh_all_finite_pair(int n, const double *x, const double *y);

void nh_matvec(int rows, int cols, const double *restrict a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < rows; ++i)
        y[i] = nh_dot(cols, a + (size_t)i * cols, x);
}

void nh_matvec_t(int rows, int cols, const double *restrict a, const double *restrict x, double *restrict y)
{
    if (rows < 1) {
        for (int j = 0; j < cols; ++j)
            y[j] = 0.0;
        return;
    }
    /* the first row's products, then the other rows' added in turn */
    const double x0 = x[0];
    for (int j = 0; j < cols; ++j)
        y[j] = a[j] * x0;
    for (int i = 1; i < rows; ++i) {
        const double xi = x[i], *restrict row = a + (size_t)i * cols;
        for (int j = 0; j < cols; ++j)
            y[j] += row[j] * xi;
    }
}
