/* The bench's lockstep loops (see lockstep_loops.h): DLA^{0,1}, the nonholonomic leap-frog, SPARK s = 2 and
 * RK4 on the index-1 ODE for the quartic n = 3, each line the scalar loop's line of bare_loops.c with a loop
 * over lanes inside it. A zero the scalar loop multiplies is multiplied here too (w + 0 lambda is not w
 * when w = -0), so that no lane's bits depend on the batching. Each step is written once, for any L; the
 * functions at the end fix L = 8, 16 and 32. Compiled once per instruction set; the includer defines LOCKSTEP_SET. */
#include "lockstep_loops.h"

enum { K = 3, N = BARE_DIM, MAX_L = LOCKSTEP_MAX_LANES };

#define ALWAYS_INLINE static inline __attribute__((always_inline))
/* component i of lane l of a structure-of-arrays state of L lanes */
#define AT(a, i) (a)[(i) * L + l]
#define LANES for (int l = 0; l < L; ++l)

/* grad V of the quartic n = 3, lane by lane: bare_loops.c's quartic_gradient */
ALWAYS_INLINE void gradient_lanes(const double *restrict q, double *restrict g, int L)
{
    for (int i = 0; i < N; ++i)
        LANES AT(g, i) = AT(q, i);
    LANES AT(g, 1 + K) += AT(q, 1 + K) * AT(q, 2 + K) * AT(q, 2 + K);
    LANES AT(g, 2 + K) += AT(q, 2 + K) * AT(q, 1 + K) * AT(q, 1 + K);
    for (int i = 0; i < K; ++i)
        LANES {
            AT(g, 1 + i) += AT(q, 1 + i) * AT(q, 1 + K + i) * AT(q, 1 + K + i);
            AT(g, 1 + K + i) += AT(q, 1 + K + i) * AT(q, 1 + i) * AT(q, 1 + i);
        }
}

/* out = A(q) u = u_x + sum w_i u_{z_i} */
ALWAYS_INLINE void constraint_times_lanes(const double *restrict q, const double *restrict u, double *restrict out,
                                          int L)
{
    LANES out[l] = AT(u, 0);
    for (int i = 0; i < K; ++i)
        LANES out[l] += AT(q, 1 + i) * AT(u, 1 + K + i);
}

/* out = C(q) = 1 + |w|^2 */
ALWAYS_INLINE void constraint_gram_lanes(const double *restrict q, double *restrict out, int L)
{
    LANES out[l] = 1.0;
    for (int i = 0; i < K; ++i)
        LANES out[l] += AT(q, 1 + i) * AT(q, 1 + i);
}

/* u += scale A(q)^T lam */
ALWAYS_INLINE void add_constraint_force_lanes(const double *restrict q, double scale, const double *restrict lam,
                                              double *restrict u, int L)
{
    LANES AT(u, 0) += scale * lam[l];
    for (int i = 0; i < K; ++i)
        LANES AT(u, 1 + K + i) += scale * (AT(q, 1 + i) * lam[l]);
}

/* lam = lambda*(q, v) = (A grad V - sum v_{w_i} v_{z_i}) / C */
ALWAYS_INLINE void exact_multiplier_lanes(const double *restrict q, const double *restrict v,
                                          const double *restrict g, double *restrict lam, int L)
{
    double curvature[MAX_L], force[MAX_L], gram[MAX_L];
    LANES curvature[l] = 0.0;
    for (int i = 0; i < K; ++i)
        LANES curvature[l] += AT(v, 1 + K + i) * AT(v, 1 + i);
    constraint_times_lanes(q, g, force, L);
    constraint_gram_lanes(q, gram, L);
    LANES lam[l] = (force[l] - curvature[l]) / gram[l];
}

ALWAYS_INLINE void dla01_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    for (long s = 0; s < steps; ++s) {
        double qh[N * MAX_L], g[N * MAX_L], w[N * MAX_L], a1[N * MAX_L], kick[N * MAX_L], num[MAX_L], den[MAX_L];
        for (int i = 0; i < N; ++i)
            LANES {
                AT(qh, i) = AT(q, i) + 0.5 * h * AT(v, i);
                AT(kick, i) = 0.0;
            }
        gradient_lanes(qh, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(w, i) = AT(v, i) - h * AT(g, i);
        LANES {
            AT(kick, 0) = h;
            num[l] = AT(w, 0);
            den[l] = h;
        }
        for (int i = 0; i < K; ++i)
            LANES {
                AT(kick, 1 + K + i) = h * AT(qh, 1 + i);
                AT(a1, 1 + K + i) = AT(qh, 1 + i) + 0.5 * h * AT(w, 1 + i);
                num[l] += AT(a1, 1 + K + i) * AT(w, 1 + K + i);
                den[l] += AT(a1, 1 + K + i) * AT(kick, 1 + K + i);
            }
        LANES num[l] = -num[l] / den[l]; /* the multiplier */
        for (int i = 0; i < N; ++i)
            LANES {
                AT(v, i) = AT(w, i) + AT(kick, i) * num[l];
                AT(q, i) = AT(qh, i) + 0.5 * h * AT(v, i);
            }
    }
}

ALWAYS_INLINE void lf_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    double g[N * MAX_L], lam[MAX_L], ct[MAX_L], gram[MAX_L];
    gradient_lanes(q, g, L);
    exact_multiplier_lanes(q, v, g, lam, L);
    for (long s = 0; s < steps; ++s) {
        gradient_lanes(q, g, L);
        add_constraint_force_lanes(q, 0.5 * h, lam, v, L);
        for (int i = 0; i < N; ++i)
            LANES {
                AT(v, i) -= 0.5 * h * AT(g, i);
                AT(q, i) += h * AT(v, i);
            }
        gradient_lanes(q, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(v, i) -= 0.5 * h * AT(g, i);
        constraint_times_lanes(q, v, ct, L);
        constraint_gram_lanes(q, gram, L);
        LANES lam[l] = -2.0 / h * ct[l] / gram[l];
        add_constraint_force_lanes(q, 0.5 * h, lam, v, L);
    }
}

ALWAYS_INLINE void spark2_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    for (long s = 0; s < steps; ++s) {
        double g[N * MAX_L], vs[N * MAX_L], a_mid[N * MAX_L], num[MAX_L], den[MAX_L], gram[MAX_L];
        gradient_lanes(q, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(vs, i) = AT(v, i) - 0.5 * h * AT(g, i);
        LANES {
            num[l] = AT(vs, 0);
            den[l] = 0.5 * h;
        }
        for (int i = 0; i < K; ++i)
            LANES {
                AT(a_mid, 1 + K + i) = 0.5 * AT(q, 1 + i) + 0.5 * (AT(q, 1 + i) + h * AT(vs, 1 + i));
                num[l] += AT(a_mid, 1 + K + i) * AT(vs, 1 + K + i);
                den[l] += AT(a_mid, 1 + K + i) * (0.5 * h * AT(q, 1 + i));
            }
        LANES num[l] = -num[l] / den[l]; /* L1 */
        add_constraint_force_lanes(q, 0.5 * h, num, vs, L);
        for (int i = 0; i < N; ++i)
            LANES AT(q, i) += h * AT(vs, i);
        gradient_lanes(q, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(vs, i) -= 0.5 * h * AT(g, i);
        constraint_times_lanes(q, vs, num, L);
        constraint_gram_lanes(q, gram, L);
        LANES num[l] = num[l] / gram[l]; /* mu */
        for (int i = 0; i < N; ++i)
            LANES AT(v, i) = AT(vs, i);
        add_constraint_force_lanes(q, -1.0, num, v, L);
    }
}

/* dv = A^T lambda*(q, v) - grad V */
ALWAYS_INLINE void index1_rhs_lanes(const double *restrict q, const double *restrict v, double *restrict dv, int L)
{
    double g[N * MAX_L], lam[MAX_L];
    gradient_lanes(q, g, L);
    exact_multiplier_lanes(q, v, g, lam, L);
    for (int i = 0; i < N; ++i)
        LANES AT(dv, i) = -AT(g, i);
    add_constraint_force_lanes(q, 1.0, lam, dv, L);
}

#define LOCKSTEP_AFTER_STEP(q, L) ((void)(q), (void)(L))
#include "lockstep_rk4.h"

LOCKSTEP_METHODS_AND_SET(dla01, lf, spark2, rk4)
