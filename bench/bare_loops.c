/* The bench's bare loops (see bare_loops.h): DLA^{0,1}, the nonholonomic leap-frog, SPARK s = 2 and RK4 on
 * the index-1 ODE, each for the quartic n = 3 only, in the formulas and order of operations of methods/.
 * Each step is written once here; the helpers below are the quartic's own formulas and inline into it.
 * The same four through the system's interface are in interface_loops.c. */
#include "bare_loops.h"

#include <string.h>

enum { K = 3, N = BARE_DIM };

/* grad V of the quartic n = 3 (Celledoni et al. 2019, eq. 20): q plus the quartic terms */
static inline void quartic_gradient(const double *q, double *g)
{
    const double *w = q + 1, *z = q + 1 + K;
    for (int i = 0; i < N; ++i)
        g[i] = q[i];
    g[1 + K] += z[0] * z[1] * z[1];
    g[2 + K] += z[1] * z[0] * z[0];
    for (int i = 0; i < K; ++i) {
        g[1 + i] += w[i] * z[i] * z[i];
        g[1 + K + i] += z[i] * w[i] * w[i];
    }
}

/* A(q) u = u_x + sum w_i u_{z_i} */
static inline double constraint_times(const double *q, const double *u)
{
    double sum = u[0];
    for (int i = 0; i < K; ++i)
        sum += q[1 + i] * u[1 + K + i];
    return sum;
}

/* C(q) = A A^T = 1 + |w|^2 */
static inline double constraint_gram(const double *q)
{
    double sum = 1.0;
    for (int i = 0; i < K; ++i)
        sum += q[1 + i] * q[1 + i];
    return sum;
}

/* u += scale A(q)^T lam: moves x and the z_i */
static inline void add_constraint_force(const double *q, double scale, double lam, double *u)
{
    u[0] += scale * lam;
    for (int i = 0; i < K; ++i)
        u[1 + K + i] += scale * (q[1 + i] * lam);
}

/* lambda*(q, v) = C^-1 (A grad V - d(A v)/dq v), with d(A v)/dq v = sum v_{w_i} v_{z_i} */
static inline double exact_multiplier(const double *q, const double *v, const double *g)
{
    double curvature = 0.0;
    for (int i = 0; i < K; ++i)
        curvature += v[1 + K + i] * v[1 + i];
    return (constraint_times(q, g) - curvature) / constraint_gram(q);
}

/* DLA^{0,1} (Modin & Verdier 2020, eq. 29): the row of A(q1) reads w, which the kick does not move, so the
 * multiplier is one division. */
static void bare_dla01(double *q, double *v, double h, long steps)
{
    for (long s = 0; s < steps; ++s) {
        double qh[N], g[N], w[N], a1[N] = {1}, kick[N] = {0};
        for (int i = 0; i < N; ++i)
            qh[i] = q[i] + 0.5 * h * v[i];
        quartic_gradient(qh, g);
        for (int i = 0; i < N; ++i)
            w[i] = v[i] - h * g[i];
        kick[0] = h;
        double num = w[0], den = h;
        for (int i = 0; i < K; ++i) {
            kick[1 + K + i] = h * qh[1 + i];                   /* h A(q_half)^T */
            a1[1 + K + i] = qh[1 + i] + 0.5 * h * w[1 + i];    /* A(q1): w moves without the kick */
            num += a1[1 + K + i] * w[1 + K + i];
            den += a1[1 + K + i] * kick[1 + K + i];
        }
        const double lam = -num / den;
        for (int i = 0; i < N; ++i) {
            v[i] = w[i] + kick[i] * lam;
            q[i] = qh[i] + 0.5 * h * v[i];
        }
    }
}

/* The nonholonomic leap-frog in velocity-Verlet form (Modin & Verdier 2020, eq. 30 as corrected in docs/METHODS.md
 * Sect. 3), its multiplier carried from step to step and started at lambda*(q0, v0). */
static void bare_lf(double *q, double *v, double h, long steps)
{
    double g[N];
    quartic_gradient(q, g);
    double lam = exact_multiplier(q, v, g);
    for (long s = 0; s < steps; ++s) {
        quartic_gradient(q, g);
        add_constraint_force(q, 0.5 * h, lam, v);
        for (int i = 0; i < N; ++i) {
            v[i] -= 0.5 * h * g[i];
            q[i] += h * v[i];
        }
        quartic_gradient(q, g);
        for (int i = 0; i < N; ++i)
            v[i] -= 0.5 * h * g[i];
        lam = -2.0 / h * constraint_times(q, v) / constraint_gram(q);
        add_constraint_force(q, 0.5 * h, lam, v);
    }
}

/* SPARK s = 2 (Lobatto IIIA-B, docs/METHODS.md Sect. 5): V = W + h/2 A(q0)^T L1 with the averaged
 * constraint [A(q0) + A(q1)]/2 V = 0 (A(q1) reads w1 = w0 + h W_w, which L1 does not move), then the
 * end point's projection. */
static void bare_spark2(double *q, double *v, double h, long steps)
{
    for (long s = 0; s < steps; ++s) {
        double g[N], vs[N], a_mid[N] = {1};
        quartic_gradient(q, g);
        for (int i = 0; i < N; ++i)
            vs[i] = v[i] - 0.5 * h * g[i];
        double num = vs[0], den = 0.5 * h;
        for (int i = 0; i < K; ++i) {
            a_mid[1 + K + i] = 0.5 * q[1 + i] + 0.5 * (q[1 + i] + h * vs[1 + i]);
            num += a_mid[1 + K + i] * vs[1 + K + i];
            den += a_mid[1 + K + i] * (0.5 * h * q[1 + i]);
        }
        add_constraint_force(q, 0.5 * h, -num / den, vs);
        for (int i = 0; i < N; ++i)
            q[i] += h * vs[i];
        quartic_gradient(q, g);
        for (int i = 0; i < N; ++i)
            vs[i] -= 0.5 * h * g[i];
        const double mu = constraint_times(q, vs) / constraint_gram(q);
        memcpy(v, vs, sizeof vs);
        add_constraint_force(q, -1.0, mu, v);
    }
}

/* q' = v, v' = A^T lambda*(q, v) - grad V: the index-1 ODE of docs/METHODS.md Sect. 0 */
static inline void index1_rhs(const double *q, const double *v, double *dv)
{
    double g[N];
    quartic_gradient(q, g);
    const double lam = exact_multiplier(q, v, g);
    for (int i = 0; i < N; ++i)
        dv[i] = -g[i];
    add_constraint_force(q, 1.0, lam, dv);
}

/* Classical RK4 on the index-1 ODE. */
static void bare_rk4(double *q, double *v, double h, long steps)
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
            index1_rhs(qs, vs, kv[stage]);
        }
        for (int i = 0; i < N; ++i) {
            q[i] += h / 6.0 * (kq[0][i] + 2.0 * kq[1][i] + 2.0 * kq[2][i] + kq[3][i]);
            v[i] += h / 6.0 * (kv[0][i] + 2.0 * kv[1][i] + 2.0 * kv[2][i] + kv[3][i]);
        }
    }
}

static const bare_loop LOOPS[] = {
    {"dla01", "DLA^{0,1}, Modin & Verdier 2020, eq. 29", bare_dla01, interface_dla01},
    {"lf", "nonholonomic leap-frog, Modin & Verdier 2020, eq. 30 (docs/METHODS.md Sect. 3)", bare_lf, interface_lf},
    {"spark2", "SPARK s = 2, Lobatto IIIA-B (docs/METHODS.md Sect. 5)", bare_spark2, interface_spark2},
    {"rk4", "classical RK4 on the index-1 ODE (docs/METHODS.md Sect. 0)", bare_rk4, interface_rk4},
};

const bare_loop *bare_loops(int *count)
{
    *count = (int)(sizeof LOOPS / sizeof LOOPS[0]);
    return LOOPS;
}

const bare_loop *bare_loop_for(const char *method)
{
    for (size_t i = 0; i < sizeof LOOPS / sizeof LOOPS[0]; ++i)
        if (strcmp(LOOPS[i].method, method) == 0)
            return &LOOPS[i];
    return NULL;
}
