/* The bench's lockstep loops of the CVT (see lockstep_loops.h): cvt_loops.c's DLA^{0,1}, leap-frog, SPARK s = 2
 * and RK4 at eps = 0.1, each line the scalar loop's line with a loop over lanes inside it. The sines and
 * cosines are trig_inline.h's kernels in every lane, with nh_sin / nh_cos in scalar code for a lane beyond
 * their bound (methods/lane_trig.h); where a point needs the sine and the cosine of xi (RK4), one
 * nh_sincos_kernel gives both, the same bits as nh_sin and nh_cos. The recentring of xi is tested in every lane
 * and done in scalar code for the lanes that need it (cvt_loop_recentre). Compiled once per instruction set,
 * like lockstep_loops.c; the includer defines LOCKSTEP_SET. */
#include "cvt_formulas.h"
#include "lane_trig.h"
#include "lockstep_loops.h"

enum { N = CVT_DIM, XI = CVT_XI, MAX_L = LOCKSTEP_MAX_LANES };

#define ALWAYS_INLINE static inline __attribute__((always_inline))
/* component i of lane l of a structure-of-arrays state of L lanes */
#define AT(a, i) (a)[(i) * L + l]
#define LANES _Pragma("GCC unroll 1") for (int l = 0; l < L; ++l)

/* sin x and cos x lane by lane: the kernel, then nh_sin / nh_cos beyond its bound */
ALWAYS_INLINE void sincos_lanes(const double *restrict x, double *restrict s, double *restrict c, int L)
{
    int beyond = 0;
    LANES {
        nh_sincos_kernel(x[l], &s[l], &c[l]);
        beyond |= !(fabs(x[l]) <= NH_TRIG_BOUND);
    }
    for (int l = 0; beyond && l < L; ++l)
        if (!(fabs(x[l]) <= NH_TRIG_BOUND)) {
            s[l] = nh_sin(x[l]);
            c[l] = nh_cos(x[l]);
        }
}

/* grad V lane by lane, sin xi given (cvt_loop_gradient) */
ALWAYS_INLINE void gradient_lanes(const double *restrict q, const double *restrict sin_xi, double *restrict g, int L)
{
    double cos_2xi[MAX_L];
    nh_cos_lanes(2.0, q + XI * L, cos_2xi, L);
    LANES {
        AT(g, 0) = AT(q, 0);
        AT(g, 1) = AT(q, 1);
        AT(g, 2) = -sin_xi[l] - CVT_LOOP_EPS * cos_2xi[l];
    }
}

/* cvt_loop_recentre in the lanes beyond 2 pi; 1 when one moved */
ALWAYS_INLINE int recentre_lanes(double *restrict q, int L)
{
    long long beyond = 0;
    LANES beyond |= fabs(AT(q, XI)) > 2.0 * M_PI;
    int moved = 0;
    for (int l = 0; beyond && l < L; ++l)
        moved |= cvt_loop_recentre(&AT(q, XI));
    return moved;
}

ALWAYS_INLINE void dla01_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    for (long s = 0; s < steps; ++s) {
        double qh[N * MAX_L], g[N * MAX_L], w[N * MAX_L], sin_half[MAX_L], kick[MAX_L], end[MAX_L], sin_end[MAX_L],
            lam[MAX_L];
        for (int i = 0; i < N; ++i)
            LANES AT(qh, i) = AT(q, i) + 0.5 * h * AT(v, i);
        nh_sin_lanes(1.0, qh + XI * L, sin_half, L);
        gradient_lanes(qh, sin_half, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(w, i) = AT(v, i) - h * AT(g, i);
        LANES {
            kick[l] = h * sin_half[l];
            end[l] = AT(qh, XI) + 0.5 * h * AT(w, XI);
        }
        nh_sin_lanes(1.0, end, sin_end, L);
        LANES {
            lam[l] = -(AT(w, 0) + sin_end[l] * AT(w, 1)) / (h + sin_end[l] * kick[l]);
            AT(v, 0) = AT(w, 0) + h * lam[l];
            AT(v, 1) = AT(w, 1) + kick[l] * lam[l];
            AT(v, 2) = AT(w, 2);
        }
        for (int i = 0; i < N; ++i)
            LANES AT(q, i) = AT(qh, i) + 0.5 * h * AT(v, i);
        recentre_lanes(q, L);
    }
}

ALWAYS_INLINE void lf_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    double g[N * MAX_L], lam[MAX_L], sin_xi[MAX_L];
    for (int l = 0; l < L; ++l) {   /* the start, lane by lane in scalar code: cvt_lf's */
        double ql[N], vl[N];
        for (int i = 0; i < N; ++i) {
            ql[i] = AT(q, i);
            vl[i] = AT(v, i);
        }
        lam[l] = cvt_loop_exact_multiplier(ql, vl);
    }
    nh_sin_lanes(1.0, q + XI * L, sin_xi, L);
    gradient_lanes(q, sin_xi, g, L);
    for (long s = 0; s < steps; ++s) {
        LANES {
            AT(v, 0) += 0.5 * h * (lam[l] - AT(g, 0));
            AT(v, 1) += 0.5 * h * (sin_xi[l] * lam[l] - AT(g, 1));
            AT(v, 2) += 0.5 * h * -AT(g, 2);
        }
        for (int i = 0; i < N; ++i)
            LANES AT(q, i) += h * AT(v, i);
        nh_sin_lanes(1.0, q + XI * L, sin_xi, L);
        gradient_lanes(q, sin_xi, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(v, i) -= 0.5 * h * AT(g, i);
        LANES {
            lam[l] = (AT(v, 0) + sin_xi[l] * AT(v, 1)) * (-2.0 / h) / (1.0 + sin_xi[l] * sin_xi[l]);
            AT(v, 0) += 0.5 * h * lam[l];
            AT(v, 1) += 0.5 * h * (sin_xi[l] * lam[l]);
        }
        if (recentre_lanes(q, L)) {   /* rare: the end point's values again, every lane (the same bits elsewhere) */
            nh_sin_lanes(1.0, q + XI * L, sin_xi, L);
            gradient_lanes(q, sin_xi, g, L);
        }
    }
}

ALWAYS_INLINE void spark2_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    for (long s = 0; s < steps; ++s) {
        double g[N * MAX_L], w[N * MAX_L], sin0[MAX_L], kick[MAX_L], end[MAX_L], sin_end[MAX_L], l1[MAX_L],
            sin1[MAX_L];
        nh_sin_lanes(1.0, q + XI * L, sin0, L);
        gradient_lanes(q, sin0, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(w, i) = AT(v, i) - 0.5 * h * AT(g, i);
        LANES {
            kick[l] = 0.5 * h * sin0[l];
            end[l] = AT(q, XI) + h * AT(w, XI);
        }
        nh_sin_lanes(1.0, end, sin_end, L);
        LANES {
            const double row = (1 - 0.5) * sin0[l] + 0.5 * sin_end[l];
            l1[l] = -(AT(w, 0) + row * AT(w, 1)) / (0.5 * h + row * kick[l]);
            AT(w, 0) += 0.5 * h * l1[l];
            AT(w, 1) += kick[l] * l1[l];
        }
        for (int i = 0; i < N; ++i)
            LANES AT(q, i) += h * AT(w, i);
        nh_sin_lanes(1.0, q + XI * L, sin1, L);
        gradient_lanes(q, sin1, g, L);
        for (int i = 0; i < N; ++i)
            LANES AT(w, i) -= 0.5 * h * AT(g, i);
        LANES {
            const double mu = (AT(w, 0) + sin1[l] * AT(w, 1)) / (1.0 + sin1[l] * sin1[l]);
            AT(v, 0) = AT(w, 0) - mu;
            AT(v, 1) = AT(w, 1) - sin1[l] * mu;
            AT(v, 2) = AT(w, 2);
        }
        recentre_lanes(q, L);
    }
}

/* dv = A^T lambda*(q, v) - grad V (cvt_index1_rhs) */
ALWAYS_INLINE void index1_rhs_lanes(const double *restrict q, const double *restrict v, double *restrict dv, int L)
{
    double g[N * MAX_L], s[MAX_L], c[MAX_L];
    sincos_lanes(q + XI * L, s, c, L);
    gradient_lanes(q, s, g, L);
    LANES {
        const double lam = (AT(g, 0) + s[l] * AT(g, 1) - c[l] * AT(v, 1) * AT(v, 2)) / (1.0 + s[l] * s[l]);
        AT(dv, 0) = lam - AT(g, 0);
        AT(dv, 1) = s[l] * lam - AT(g, 1);
        AT(dv, 2) = -AT(g, 2);
    }
}

#define LOCKSTEP_AFTER_STEP(q, L) recentre_lanes(q, L)
#include "lockstep_rk4.h"

LOCKSTEP_METHODS_AND_SET(dla01, lf, spark2, rk4)
