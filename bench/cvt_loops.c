/* The bench's bare loops of the CVT (cvt_loops.h): DLA^{0,1}, the nonholonomic leap-frog, SPARK s = 2 and RK4
 * on the index-1 ODE for the CVT at eps = 0.1 (cvt_formulas.h), in the formulas and order of operations of
 * nhens' steps (methods/lane_steps.h, the scalar steps' lines), with A = [1, sin xi, 0] written out: a term of a
 * structural zero or one is left out, and each sine or cosine is evaluated once per point (nh_sin, nh_cos). */
#include "cvt_loops.h"
#include "cvt_formulas.h"

#include <string.h>

enum { N = CVT_DIM, XI = CVT_XI };

/* DLA^{0,1}: q_half, w = v - h grad V(q_half), kick h A(q_half)^T, lam from A(q1) with q1's xi = xi_half +
 * h/2 w_xi (the kick does not move xi) */
static void cvt_dla01(double *q, double *v, double h, long steps)
{
    for (long s = 0; s < steps; ++s) {
        double qh[N], g[N], w[N];
        for (int i = 0; i < N; ++i)
            qh[i] = q[i] + 0.5 * h * v[i];
        const double sin_half = nh_sin(qh[XI]);
        cvt_loop_gradient(qh, sin_half, nh_cos(2.0 * qh[XI]), g);
        for (int i = 0; i < N; ++i)
            w[i] = v[i] - h * g[i];
        const double kick = h * sin_half;                       /* h A(q_half)^T = (h, kick, 0) */
        const double sin_end = nh_sin(qh[XI] + 0.5 * h * w[XI]);  /* A(q1) = (1, sin_end, 0) */
        const double lam = -(w[0] + sin_end * w[1]) / (h + sin_end * kick);
        v[0] = w[0] + h * lam;
        v[1] = w[1] + kick * lam;
        v[2] = w[2];
        for (int i = 0; i < N; ++i)
            q[i] = qh[i] + 0.5 * h * v[i];
        cvt_loop_recentre(&q[XI]);
    }
}

/* The leap-frog: grad V, sin xi and the multiplier carried from the last step's end point (recomputed when
 * xi is recentred), the multiplier started at lambda*(q0, v0). */
static void cvt_lf(double *q, double *v, double h, long steps)
{
    double g[N], lam = cvt_loop_exact_multiplier(q, v), sin_xi = nh_sin(q[XI]);
    cvt_loop_gradient(q, sin_xi, nh_cos(2.0 * q[XI]), g);
    for (long s = 0; s < steps; ++s) {
        v[0] += 0.5 * h * (lam - g[0]);
        v[1] += 0.5 * h * (sin_xi * lam - g[1]);
        v[2] += 0.5 * h * -g[2];
        for (int i = 0; i < N; ++i)
            q[i] += h * v[i];
        sin_xi = nh_sin(q[XI]);
        cvt_loop_gradient(q, sin_xi, nh_cos(2.0 * q[XI]), g);
        for (int i = 0; i < N; ++i)
            v[i] -= 0.5 * h * g[i];
        lam = (v[0] + sin_xi * v[1]) * (-2.0 / h) / (1.0 + sin_xi * sin_xi);
        v[0] += 0.5 * h * lam;
        v[1] += 0.5 * h * (sin_xi * lam);
        if (cvt_loop_recentre(&q[XI])) {
            sin_xi = nh_sin(q[XI]);
            cvt_loop_gradient(q, sin_xi, nh_cos(2.0 * q[XI]), g);
        }
    }
}

/* SPARK s = 2: w = v - h/2 grad V(q0), kick h/2 A(q0)^T, the row [A(q0) + A(q1)] / 2 with q1's xi = xi0 + h
 * w_xi, then grad V(q1) and the projection onto A(q1) v = 0 */
static void cvt_spark2(double *q, double *v, double h, long steps)
{
    for (long s = 0; s < steps; ++s) {
        double g[N], w[N];
        const double sin0 = nh_sin(q[XI]);
        cvt_loop_gradient(q, sin0, nh_cos(2.0 * q[XI]), g);
        for (int i = 0; i < N; ++i)
            w[i] = v[i] - 0.5 * h * g[i];
        const double kick = 0.5 * h * sin0;
        const double row = (1 - 0.5) * sin0 + 0.5 * nh_sin(q[XI] + h * w[XI]);
        const double l1 = -(w[0] + row * w[1]) / (0.5 * h + row * kick);
        w[0] += 0.5 * h * l1;
        w[1] += kick * l1;
        for (int i = 0; i < N; ++i)
            q[i] += h * w[i];
        const double sin1 = nh_sin(q[XI]);
        cvt_loop_gradient(q, sin1, nh_cos(2.0 * q[XI]), g);
        for (int i = 0; i < N; ++i)
            w[i] -= 0.5 * h * g[i];
        const double mu = (w[0] + sin1 * w[1]) / (1.0 + sin1 * sin1);
        v[0] = w[0] - mu;
        v[1] = w[1] - sin1 * mu;
        v[2] = w[2];
        cvt_loop_recentre(&q[XI]);
    }
}

/* q' = v, v' = A^T lambda*(q, v) - grad V, lambda* = (A grad V - cos xi v2 v3) / (1 + sin^2 xi) */
static inline void cvt_index1_rhs(const double *q, const double *v, double *dv)
{
    double g[N];
    const double s = nh_sin(q[XI]), c = nh_cos(q[XI]);
    cvt_loop_gradient(q, s, nh_cos(2.0 * q[XI]), g);
    const double lam = (g[0] + s * g[1] - c * v[1] * v[2]) / (1.0 + s * s);
    dv[0] = lam - g[0];
    dv[1] = s * lam - g[1];
    dv[2] = -g[2];
}

/* Classical RK4 on the index-1 ODE */
static void cvt_rk4(double *q, double *v, double h, long steps)
{
    for (long s = 0; s < steps; ++s) {
        double kq[4][N], kv[4][N], qs[N], vs[N];
        const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
        for (int stage = 0; stage < 4; ++stage) {
            for (int i = 0; i < N; ++i) {
                qs[i] = stage ? q[i] + c[stage] * kq[stage - 1][i] : q[i];
                vs[i] = stage ? v[i] + c[stage] * kv[stage - 1][i] : v[i];
                kq[stage][i] = vs[i];
            }
            cvt_index1_rhs(qs, vs, kv[stage]);
        }
        for (int i = 0; i < N; ++i) {
            q[i] += h / 6.0 * (kq[0][i] + 2.0 * kq[1][i] + 2.0 * kq[2][i] + kq[3][i]);
            v[i] += h / 6.0 * (kv[0][i] + 2.0 * kv[1][i] + 2.0 * kv[2][i] + kv[3][i]);
        }
        cvt_loop_recentre(&q[XI]);
    }
}

static const bare_loop LOOPS[] = {
    {"dla01", "DLA^{0,1}, Modin & Verdier 2020, eq. 29", cvt_dla01, NULL},
    {"lf", "nonholonomic leap-frog, Modin & Verdier 2020, eq. 30 (docs/METHODS.md Sect. 3)", cvt_lf, NULL},
    {"spark2", "SPARK s = 2, Lobatto IIIA-B (docs/METHODS.md Sect. 5)", cvt_spark2, NULL},
    {"rk4", "classical RK4 on the index-1 ODE (docs/METHODS.md Sect. 0)", cvt_rk4, NULL},
};

const bare_loop *cvt_bare_loop_for(const char *method)
{
    for (size_t i = 0; i < sizeof LOOPS / sizeof LOOPS[0]; ++i)
        if (strcmp(LOOPS[i].method, method) == 0)
            return &LOOPS[i];
    return NULL;
}
