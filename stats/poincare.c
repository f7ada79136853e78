/* Driver sections and the latitude integral (see include/nhens/poincare.h). */
#include "nhens/poincare.h"

#include "nhens/linalg.h"
#include "nhens/reference.h"

#include <math.h>
#include <string.h>

double nh_latitude(const double *axis, const double *u)
{
    double norm = sqrt(nh_dot(3, u, u));
    if (!(norm > 0.0))
        return 0.0;
    double c = nh_dot(3, axis, u) / norm;
    return asin(c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c);
}

int nh_section_start(nh_section_tracker *tr, const nh_system *s, const double *q0, const double *v0, double section)
{
    nh_error err;
    double u[NH_MAX_DIM], qs[NH_MAX_DIM], vs[NH_MAX_DIM], t;
    memset(tr, 0, sizeof *tr);
    if (!nh_has_latitude(s) || v0[s->n - 1] == 0.0)
        return 0;
    memcpy(qs, q0, (size_t)s->n * sizeof *q0);
    memcpy(vs, v0, (size_t)s->n * sizeof *v0);
    if (isfinite(section) && (nh_driver_time_to_section(s, q0, v0, section, &t, &err) ||
                              nh_reference_solve(s, q0, v0, t, 1e-12, 1e-12, qs, vs, &err)))
        return 0;
    if (nh_driver_monodromy(s, qs, vs, 1e-12, &tr->period, tr->axis, &err) != NH_OK)
        return 0;
    q0 = qs;
    v0 = vs;
    tr->xi0 = isfinite(section) ? section : q0[s->n - 1];
    tr->direction = v0[s->n - 1] > 0 ? 1.0 : -1.0;
    nh_reduced_vector(s, q0, v0, u);
    tr->latitude0 = nh_latitude(tr->axis, u);
    tr->active = 1;
    return 1;
}

/* cubic Hermite on [0, 1]: value at tau from end values and end slopes times h */
static double hermite(double a, double da, double b, double db, double h, double tau)
{
    const double t2 = tau * tau, t3 = t2 * tau;
    return (2 * t3 - 3 * t2 + 1) * a + (t3 - 2 * t2 + tau) * h * da + (-2 * t3 + 3 * t2) * b + (t3 - t2) * h * db;
}

int nh_section_crossing(const nh_section_tracker *tr, const nh_system *s, const double *qa, const double *va,
                        const double *qb, const double *vb, double ta, double h, double *t_cross, double *error)
{
    if (!tr->active)
        return 0;
    const int n = s->n, p = n - 1;
    const double two_pi = 2.0 * M_PI, pa = tr->direction * (qa[p] - tr->xi0), pb = tr->direction * (qb[p] - tr->xi0);
    const double target = two_pi * (floor(pa / two_pi) + 1.0);
    if (!(pa < target && target <= pb))
        return 0;
    /* (with xi0 the section angle, not the start) */
    /* bisection on the Hermite interpolant of the phase, which changes sign on [0, 1] */
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 60; ++it) {
        double mid = 0.5 * (lo + hi);
        double phase = tr->direction * (hermite(qa[p], va[p], qb[p], vb[p], h, mid) - tr->xi0);
        if (phase < target)
            lo = mid;
        else
            hi = mid;
    }
    const double tau = 0.5 * (lo + hi);
    double dq[NH_MAX_DIM], aa[NH_MAX_DIM], ab[NH_MAX_DIM], q[NH_MAX_DIM], v[NH_MAX_DIM], u[NH_MAX_DIM];
    if (nh_index1_rhs(s, qa, va, dq, aa, NULL) || nh_index1_rhs(s, qb, vb, dq, ab, NULL))
        return 0;
    for (int i = 0; i < n; ++i) {
        q[i] = hermite(qa[i], va[i], qb[i], vb[i], h, tau);
        v[i] = hermite(va[i], aa[i], vb[i], ab[i], h, tau);
    }
    nh_reduced_vector(s, q, v, u);
    *t_cross = ta + tau * h;
    *error = nh_latitude(tr->axis, u) - tr->latitude0;
    return 1;
}
