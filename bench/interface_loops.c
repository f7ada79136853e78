/* The bench's loops through the system's interface (see bare_loops.h): DLA^{0,1}, the leap-frog, SPARK s = 2
 * and RK4 in the formulas of bare_loops.c, with grad V, the row A(q) and d(A u)/dq from the system's
 * callbacks, n = s->n, a dense row of n entries and M^-1 from s->inv_mass: the calls the methods make, and
 * nothing else of the library. One constraint. Built with scalar loops, as the library's step kernels are
 * (CMakeLists.txt): a vectorised loop's two-double loads of the entries a callback has just stored one at a
 * time wait for the stores to reach the cache (docs/decisions/0010-scalar-loops-in-step-code.md). */
#include "bare_loops.h"

/* lambda*(q, v) = (A M^-1 grad V - d(A v)/dq v) / (A M^-1 A^T), with a = A(q) and g = grad V(q) */
static double interface_multiplier(const nh_system *s, const double *q, const double *v, const double *a,
                                   const double *g)
{
    double dav[NH_MAX_DIM], force = 0.0, curvature = 0.0, gram = 0.0;
    s->type->constraint_jacobian_velocity(s, q, v, dav);
    for (int i = 0; i < s->n; ++i) {
        force += a[i] * (s->inv_mass[i] * g[i]);
        curvature += dav[i] * v[i];
        gram += a[i] * (s->inv_mass[i] * a[i]);
    }
    return (force - curvature) / gram;
}

/* u -= M^-1 A^T mu with mu = A u / (A M^-1 A^T): u projected onto A u = 0 */
static void interface_project(const nh_system *s, const double *a, double *u)
{
    double au = 0.0, gram = 0.0;
    for (int i = 0; i < s->n; ++i) {
        au += a[i] * u[i];
        gram += a[i] * (s->inv_mass[i] * a[i]);
    }
    const double mu = au / gram;
    for (int i = 0; i < s->n; ++i)
        u[i] -= s->inv_mass[i] * (a[i] * mu);
}

/* DLA^{0,1}: the kick h M^-1 A(q_half)^T and the row of A(q1), which the kick does not move on a CVT-type
 * system, give the multiplier as one division. */
void interface_dla01(const nh_system *s, double *q, double *v, double h, long steps)
{
    const int n = s->n;
    const double *inv_mass = s->inv_mass;
    for (long step = 0; step < steps; ++step) {
        double qh[NH_MAX_DIM], g[NH_MAX_DIM], a_half[NH_MAX_DIM], w[NH_MAX_DIM], kick[NH_MAX_DIM];
        double point[NH_MAX_DIM], a1[NH_MAX_DIM], num = 0.0, den = 0.0;
        for (int i = 0; i < n; ++i)
            qh[i] = q[i] + 0.5 * h * v[i];
        s->type->potential_gradient(s, qh, g);
        s->type->constraint(s, qh, a_half);
        for (int i = 0; i < n; ++i) {
            w[i] = v[i] - h * inv_mass[i] * g[i];
            kick[i] = h * inv_mass[i] * a_half[i];
            point[i] = qh[i] + 0.5 * h * w[i];
        }
        s->type->constraint(s, point, a1);
        for (int i = 0; i < n; ++i) {
            num += a1[i] * w[i];
            den += a1[i] * kick[i];
        }
        const double lam = -num / den;
        for (int i = 0; i < n; ++i) {
            v[i] = w[i] + kick[i] * lam;
            q[i] = qh[i] + 0.5 * h * v[i];
        }
    }
}

/* The leap-frog, grad V and A of each end point kept for the next step's first half-kick. */
void interface_lf(const nh_system *s, double *q, double *v, double h, long steps)
{
    const int n = s->n;
    const double *inv_mass = s->inv_mass;
    double g[NH_MAX_DIM], a[NH_MAX_DIM];
    s->type->potential_gradient(s, q, g);
    s->type->constraint(s, q, a);
    double lam = interface_multiplier(s, q, v, a, g);
    for (long step = 0; step < steps; ++step) {
        for (int i = 0; i < n; ++i) {
            v[i] += 0.5 * h * inv_mass[i] * (a[i] * lam - g[i]);
            q[i] += h * v[i];
        }
        s->type->potential_gradient(s, q, g);
        for (int i = 0; i < n; ++i)
            v[i] -= 0.5 * h * inv_mass[i] * g[i];
        s->type->constraint(s, q, a);
        double av = 0.0, gram = 0.0;
        for (int i = 0; i < n; ++i) {
            av += a[i] * v[i];
            gram += a[i] * (inv_mass[i] * a[i]);
        }
        lam = -2.0 / h * av / gram;
        for (int i = 0; i < n; ++i)
            v[i] += 0.5 * h * inv_mass[i] * (a[i] * lam);
    }
}

/* SPARK s = 2: V = W + h/2 M^-1 A(q0)^T L1 with [A(q0) + A(q1)]/2 V = 0, A(q1) read where W takes q
 * (CVT type), then the end point's projection. */
void interface_spark2(const nh_system *s, double *q, double *v, double h, long steps)
{
    const int n = s->n;
    const double *inv_mass = s->inv_mass;
    for (long step = 0; step < steps; ++step) {
        double g[NH_MAX_DIM], a0[NH_MAX_DIM], a1[NH_MAX_DIM], kick[NH_MAX_DIM], point[NH_MAX_DIM];
        double num = 0.0, den = 0.0;
        s->type->potential_gradient(s, q, g);
        s->type->constraint(s, q, a0);
        for (int i = 0; i < n; ++i) {
            v[i] -= 0.5 * h * inv_mass[i] * g[i];
            kick[i] = 0.5 * h * inv_mass[i] * a0[i];
            point[i] = q[i] + h * v[i];
        }
        s->type->constraint(s, point, a1);
        for (int i = 0; i < n; ++i) {
            const double a_mid = 0.5 * a0[i] + 0.5 * a1[i];
            num += a_mid * v[i];
            den += a_mid * kick[i];
        }
        const double l1 = -num / den;
        for (int i = 0; i < n; ++i) {
            v[i] += kick[i] * l1;
            q[i] += h * v[i];
        }
        s->type->potential_gradient(s, q, g);
        for (int i = 0; i < n; ++i)
            v[i] -= 0.5 * h * inv_mass[i] * g[i];
        s->type->constraint(s, q, a1);
        interface_project(s, a1, v);
    }
}

/* v' = M^-1 (A^T lambda*(q, v) - grad V) */
static void interface_index1_rhs(const nh_system *s, const double *q, const double *v, double *dv)
{
    double g[NH_MAX_DIM], a[NH_MAX_DIM];
    s->type->potential_gradient(s, q, g);
    s->type->constraint(s, q, a);
    const double lam = interface_multiplier(s, q, v, a, g);
    for (int i = 0; i < s->n; ++i)
        dv[i] = s->inv_mass[i] * (a[i] * lam - g[i]);
}

void interface_rk4(const nh_system *s, double *q, double *v, double h, long steps)
{
    const int n = s->n;
    for (long step = 0; step < steps; ++step) {
        double kq[4][NH_MAX_DIM], kv[4][NH_MAX_DIM], qs[NH_MAX_DIM], vs[NH_MAX_DIM];
        const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
        for (int stage = 0; stage < 4; ++stage) {
            for (int i = 0; i < n; ++i) {
                qs[i] = stage ? q[i] + c[stage] * kq[stage - 1][i] : q[i];
                vs[i] = stage ? v[i] + c[stage] * kv[stage - 1][i] : v[i];
                kq[stage][i] = vs[i];
            }
            interface_index1_rhs(s, qs, vs, kv[stage]);
        }
        for (int i = 0; i < n; ++i) {
            q[i] += h / 6.0 * (kq[0][i] + 2.0 * kq[1][i] + 2.0 * kq[2][i] + kq[3][i]);
            v[i] += h / 6.0 * (kv[0][i] + 2.0 * kv[1][i] + 2.0 * kv[2][i] + kv[3][i]);
        }
    }
}

