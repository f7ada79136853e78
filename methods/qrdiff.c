/* Householder QR with forward-mode derivatives (see qrdiff.h). For the directions q_j the
 * derivative of every quantity is propagated next to its value, which is Algorithm 1 of Celledoni et al. 2019
 * written for a kernel basis: B = A^T is reduced by reflectors H_k = I - 2 v_k v_k^T and the basis
 * vectors are Q e_c = H_0 ... H_{m-1} e_c for c >= m. Each direction's derivatives are linear in its
 * seed dB/dq_j, so a direction along which A does not vary at q (a zero seed) has zero derivatives
 * throughout: only the others are propagated, and none when dX is not asked for. */
#include "qrdiff.h"

#include "nhens/linalg.h"

#include <math.h>
#include <string.h>

enum { N = NH_MAX_DIM, M = NH_MAX_CON };

struct nh_qr_work {
    int n, m;
    double b[N * M], db[N][N * M];        /* B = A^T (n x m) and d B / d q_j */
    double v[M][N], dv[M][N][N];          /* reflectors and their derivatives dv[k][j][i] */
    double dat[N * N];                    /* d(A^T e_k)/dq while loading */
    double dy[N][N];                      /* derivatives of one basis vector */
    int dir_count, dir[N];                /* the directions q_j propagated: those with a nonzero seed */
};
typedef struct nh_qr_work qr_work;

size_t nh_qr_work_bytes(void)
{
    return sizeof(qr_work);
}

/* B = A^T and, when derivatives are wanted, their seeds dB/dq_j and the directions with a nonzero one. */
static void load_transpose(const nh_system *s, const double *q, int derivatives, qr_work *w)
{
    const int n = w->n, m = w->m;
    double a[M * N], lam[M], *dat = w->dat;
    s->type->constraint(s, q, a);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < m; ++k)
            w->b[i * m + k] = a[k * n + i];
    w->dir_count = 0;
    if (!derivatives)
        return;
    for (int k = 0; k < m; ++k) {   /* d(A^T e_k)/dq gives the derivatives of row k of A */
        memset(lam, 0, sizeof lam);
        lam[k] = 1.0;
        s->type->constraint_jacobian_multiplier(s, q, lam, dat);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                w->db[j][i * m + k] = dat[i * n + j];
    }
    for (int j = 0; j < n; ++j) {
        int seeded = 0;
        for (int e = 0; e < n * m; ++e)
            seeded |= w->db[j][e] != 0.0;
        if (seeded)
            w->dir[w->dir_count++] = j;
    }
}

/* Reflector k from column k of B (rows k..n-1) and its derivatives. */
static int make_reflector(qr_work *w, int k, double *signs, int choose)
{
    const int n = w->n, m = w->m;
    double *v = w->v[k], norm = 0.0;
    memset(v, 0, sizeof w->v[k]);
    for (int i = k; i < n; ++i)
        norm += w->b[i * m + k] * w->b[i * m + k];
    norm = sqrt(norm);
    if (choose)
        signs[k] = w->b[k * m + k] >= 0 ? 1.0 : -1.0;
    const double alpha = -signs[k] * norm;
    for (int i = k; i < n; ++i)
        v[i] = w->b[i * m + k];
    v[k] -= alpha;
    double unorm = sqrt(nh_dot(n, v, v));
    if (!(unorm > 0.0) || !(norm > 0.0))
        return 1;
    for (int i = k; i < n; ++i)
        v[i] /= unorm;
    for (int d = 0; d < w->dir_count; ++d) {
        const int j = w->dir[d];
        double du[N] = {0}, xdx = 0.0;
        for (int i = k; i < n; ++i) {
            du[i] = w->db[j][i * m + k];
            xdx += w->b[i * m + k] * du[i];
        }
        du[k] -= -signs[k] * xdx / norm;   /* d alpha = -s x.dx / |x| */
        double vdu = nh_dot(n, v, du);
        for (int i = 0; i < n; ++i)
            w->dv[k][j][i] = (du[i] - v[i] * vdu) / unorm;
    }
    return 0;
}

/* B <- H_k B and dB <- d(H_k B) on columns k..m-1. */
static void apply_reflector(qr_work *w, int k)
{
    const int n = w->n, m = w->m;
    const double *v = w->v[k];
    double vb[M];
    for (int c = k; c < m; ++c) {
        vb[c] = 0.0;
        for (int i = 0; i < n; ++i)
            vb[c] += v[i] * w->b[i * m + c];
    }
    for (int d = 0; d < w->dir_count; ++d) {
        const int j = w->dir[d];
        const double *dv = w->dv[k][j];
        for (int c = k; c < m; ++c) {
            double dvb = 0.0, vdb = 0.0;
            for (int i = 0; i < n; ++i) {
                dvb += dv[i] * w->b[i * m + c];
                vdb += v[i] * w->db[j][i * m + c];
            }
            for (int i = 0; i < n; ++i)
                w->db[j][i * m + c] -= 2.0 * (dv[i] * vb[c] + v[i] * (dvb + vdb));
        }
    }
    for (int c = k; c < m; ++c)   /* in place: vb holds the products with the old columns */
        for (int i = 0; i < n; ++i)
            w->b[i * m + c] -= 2.0 * v[i] * vb[c];
}

/* y = H_0 ... H_{m-1} e_c with derivatives dy[j][i] along the propagated directions. The first reflector
 * applied, H_{m-1}, meets the unit vector e_c and dy = 0: v.y = v_c and dv_j.y = dv_j[c] are read, not
 * summed. */
static void basis_vector(const qr_work *w, int c, double *y, double dy[N][N])
{
    const int n = w->n, last = w->m - 1;
    const double *v_last = w->v[last];
    for (int d = 0; d < w->dir_count; ++d) {
        const int j = w->dir[d];
        const double *dv = w->dv[last][j];
        for (int i = 0; i < n; ++i)
            dy[j][i] = -2.0 * (dv[i] * v_last[c] + v_last[i] * dv[c]);
    }
    for (int i = 0; i < n; ++i)
        y[i] = 0.0 - 2.0 * v_last[i] * v_last[c];
    y[c] = 1.0 - 2.0 * v_last[c] * v_last[c];
    for (int k = last - 1; k >= 0; --k) {
        const double *v = w->v[k];
        double vy = nh_dot(n, v, y);
        for (int d = 0; d < w->dir_count; ++d) {
            const int j = w->dir[d];
            double dvy = nh_dot(n, w->dv[k][j], y), vdy = nh_dot(n, v, dy[j]);
            for (int i = 0; i < n; ++i)
                dy[j][i] -= 2.0 * (w->dv[k][j][i] * vy + v[i] * (dvy + vdy));
        }
        for (int i = 0; i < n; ++i)
            y[i] -= 2.0 * v[i] * vy;
    }
}

int nh_qr_kernel_basis(const nh_system *s, const double *q, double *signs, int choose, double *x, double *dx,
                       nh_qr_work *work)
{
    qr_work *w = work;
    w->n = s->n;
    w->m = s->m;
    const int n = w->n, m = w->m, r = n - m;
    load_transpose(s, q, dx != NULL, w);
    for (int k = 0; k < m; ++k) {
        if (make_reflector(w, k, signs, choose))
            return 1;
        apply_reflector(w, k);
    }
    double y[N], (*dy)[N] = w->dy;
    for (int k = 0; dx && k < n * r * n; ++k)   /* zero along the directions not propagated */
        dx[k] = 0.0;
    for (int a = 0; a < r; ++a) {
        basis_vector(w, m + a, y, dy);
        for (int i = 0; i < n; ++i)
            x[i * r + a] = y[i];
        for (int d = 0; dx && d < w->dir_count; ++d) {
            const int j = w->dir[d];
            for (int i = 0; i < n; ++i)
                dx[(i * r + a) * n + j] = dy[j][i];
        }
    }
    return 0;
}
