/* The lane kernels (lanes_internal.h), written once over a lane system: the steps of dla01, lf, spark2, rk4 and
 * newmark with beta = 0 for one constraint and unit mass, each line the scalar step's line (dla01.c, leapfrog.c,
 * spark2.c, rk4.c, newmark.c through affine.h, common.h and mechanics_inline.h) with a loop over the lanes
 * inside it. Within a lane the operations and their order are the scalar step's: a product by the unit mass's
 * 1.0 is left out (x * 1.0 is x), a structural zero of A is multiplied as the scalar sums multiply it, and no
 * value is summed over lanes. The includer defines LANE_SET (the kernel set's name), LS_N (n) and, always
 * inline with the lane count L a parameter: ls_gradient(par, q, g, L), ls_constraint(par, q, a, L) (A's row,
 * n x L), ls_jacobian_velocity(par, q, u, out, L) (d(A u)/dq, n x L) and ls_matches(sys). */
#include "lanes_internal.h"

#include "nhens/linalg.h"

#include <float.h>
#include <math.h>

#define LANE_INLINE static inline __attribute__((always_inline))
/* component i of lane l of a structure-of-arrays array of L lanes */
#define AT(a, i) (a)[(i) * L + l]
#define LANES _Pragma("GCC unroll 1") for (int l = 0; l < L; ++l)
enum { N = LS_N, ML = NH_MAX_LANES };

/* The step's n x L temporaries come from the batch's scratch (NH_LANE_SCRATCH_ARRAYS of them), not the stack:
 * at 32 lanes rk4's would take 35 kB of a thread's stack. Each function takes the scratch it may use and
 * passes what it has not taken to the functions it calls. */
LANE_INLINE double *take_array(double **scratch, int L)
{
    double *array = *scratch;
    *scratch += N * L;
    return array;
}
#define SCRATCH(name) double *restrict name = take_array(&scratch, L)

/* u = w + kick lam (affine.h's nh_affine_velocity for one constraint: base, then the product added) */
LANE_INLINE void kicked_lanes(const double *restrict w, const double *restrict kick, const double *restrict lam,
                              double *restrict u, int L)
{
    for (int i = 0; i < N; ++i)
        LANES AT(u, i) = AT(w, i) + AT(kick, i) * lam[l];
}

/* nh_solve_kicked_row: lam = -(row . w) / (row . kick), the row a, or (1 - weight) a_fixed + weight a */
LANE_INLINE void kicked_row_lanes(const double *restrict a_fixed, double weight, const double *restrict a,
                                  const double *restrict kick, const double *restrict w, double *restrict lam,
                                  lane_flag *restrict status, int L)
{
    LANES {
        double aw = 0.0, ak = 0.0;
        for (int i = 0; i < N; ++i) {
            const double row = a_fixed ? (1 - weight) * AT(a_fixed, i) + weight * AT(a, i) : AT(a, i);
            aw += row * AT(w, i);
            ak += row * AT(kick, i);
        }
        /* fabs(ak) <= DBL_MAX: isfinite without a call, so that the loop vectorises */
        status[l] = fabs(ak) > 0.0 && fabs(ak) <= DBL_MAX ? NH_OK : NH_STEP_SINGULAR;
        lam[l] = -aw / ak;
    }
}

/* nh_affine_multiplier for one constraint: A at base + reach w, the row (averaged with a_fixed when given) */
LANE_INLINE void affine_multiplier_lanes(const double *par, const double *restrict base, double reach,
                                         const double *restrict a_fixed, double weight, const double *restrict w,
                                         const double *restrict kick, double *restrict lam, lane_flag *restrict status,
                                         double *scratch, int L)
{
    SCRATCH(point);
    SCRATCH(a_star);
    for (int i = 0; i < N; ++i)
        LANES AT(point, i) = AT(base, i) + reach * AT(w, i);
    ls_constraint(par, point, a_star, L);
    kicked_row_lanes(a_fixed, weight, a_star, kick, w, lam, status, L);
}

/* out = a . x lane by lane, summed from 0 in the coordinates' order (nh_dot) */
LANE_INLINE void dot_lanes(const double *restrict a, const double *restrict x, double *restrict out, int L)
{
    LANES {
        double sum = 0.0;
        for (int i = 0; i < N; ++i)
            sum += AT(a, i) * AT(x, i);
        out[l] = sum;
    }
}

/* The Gram value A A^T (constant_mass_gram_for, m = 1) and the solve of nh_spd_solve_scalar */
LANE_INLINE void gram_lanes(const double *restrict a, double *restrict c, int L)
{
    LANES {
        double sum = 0.0;
        for (int i = 0; i < N; ++i)
            sum += AT(a, i) * AT(a, i);
        c[l] = sum;
    }
}

LANE_INLINE void spd_solve_lanes(const double *restrict c, double *restrict b, lane_flag *restrict status, int L)
{
    LANES {
        status[l] = c[l] > 0.0 ? status[l] : NH_STEP_SINGULAR;
        b[l] /= c[l];
    }
}

/* nh_project_velocity (project_constant_mass_for, m = 1): out = w - A^T mu, mu = (A w) / (A A^T) */
LANE_INLINE void project_lanes(const double *par, const double *restrict q, const double *restrict w,
                               double *restrict out, lane_flag *restrict status, double *scratch, int L)
{
    SCRATCH(a);
    double c[ML], mu[ML];
    ls_constraint(par, q, a, L);
    gram_lanes(a, c, L);
    dot_lanes(a, w, mu, L);
    spd_solve_lanes(c, mu, status, L);
    for (int i = 0; i < N; ++i)
        LANES AT(out, i) = AT(w, i) - AT(a, i) * mu[l];
}

/* ---- DLA^{0,1} (dla01.c): base q_half, reach h/2, A_* = A(q1) ---------------------------------------- */
LANE_INLINE void dla01_lanes(nh_lane_batch *b, double h, int L)
{
    const double *par = b->system_par;
    double *restrict q = b->q, *restrict v = b->v, *scratch = b->scratch;
    SCRATCH(q_half);
    SCRATCH(grad);
    SCRATCH(a_half);
    SCRATCH(w);
    SCRATCH(kick);
    double lam[ML];
    for (int i = 0; i < N; ++i)
        LANES AT(q_half, i) = AT(q, i) + 0.5 * h * AT(v, i);
    const double reach = 0.5 * h;
    ls_gradient(par, q_half, grad, L);
    ls_constraint(par, q_half, a_half, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(w, i) = AT(v, i) - h * AT(grad, i);
            AT(kick, i) = h * AT(a_half, i);
        }
    affine_multiplier_lanes(par, q_half, reach, NULL, 0.0, w, kick, lam, b->status, scratch, L);
    kicked_lanes(w, kick, lam, v, L);
    for (int i = 0; i < N; ++i)
        LANES AT(q, i) = AT(q_half, i) + reach * AT(v, i);
}

/* ---- the nonholonomic leap-frog (leapfrog.c): grad V and A at q kept from the last step's end point ---- */
LANE_INLINE void lf_lanes(nh_lane_batch *b, double h, int L)
{
    const double *par = b->system_par;
    double *restrict q = b->q, *restrict v = b->v, *restrict lam = b->carried;
    double *restrict grad = b->grad, *restrict a = b->a;
    double c[ML];
    for (int i = 0; i < N; ++i)
        LANES {
            AT(v, i) += 0.5 * h * (AT(a, i) * lam[l] - AT(grad, i));
            AT(q, i) += h * AT(v, i);
        }
    ls_gradient(par, q, grad, L);
    for (int i = 0; i < N; ++i)
        LANES AT(v, i) -= 0.5 * h * AT(grad, i);
    ls_constraint(par, q, a, L);
    gram_lanes(a, c, L);
    dot_lanes(a, v, lam, L);
    LANES {
        lam[l] = lam[l] * (-2.0 / h);
        b->status[l] = NH_OK;
    }
    spd_solve_lanes(c, lam, b->status, L);
    for (int i = 0; i < N; ++i)
        LANES AT(v, i) += 0.5 * h * (AT(a, i) * lam[l]);
}

/* ---- SPARK s = 2 (spark2.c): base q0, reach h, A_* = [A(q0) + A(q1)] / 2, then the projection ----------- */
LANE_INLINE void spark2_lanes(nh_lane_batch *b, double h, int L)
{
    const double *par = b->system_par;
    double *restrict q = b->q, *restrict v = b->v, *scratch = b->scratch;
    SCRATCH(q0);
    SCRATCH(grad);
    SCRATCH(a0);
    SCRATCH(w);
    SCRATCH(kick);
    SCRATCH(vs);
    double l1[ML];
    for (int i = 0; i < N; ++i)
        LANES AT(q0, i) = AT(q, i);
    ls_gradient(par, q0, grad, L);
    ls_constraint(par, q0, a0, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(w, i) = AT(v, i) - 0.5 * h * AT(grad, i);
            AT(kick, i) = 0.5 * h * AT(a0, i);
        }
    affine_multiplier_lanes(par, q0, h, a0, 0.5, w, kick, l1, b->status, scratch, L);
    kicked_lanes(w, kick, l1, vs, L);
    for (int i = 0; i < N; ++i)
        LANES AT(q, i) = AT(q0, i) + h * AT(vs, i);
    ls_gradient(par, q, grad, L);
    for (int i = 0; i < N; ++i)
        LANES AT(vs, i) -= 0.5 * h * AT(grad, i);
    lane_flag projected[ML];
    LANES projected[l] = NH_OK;
    project_lanes(par, q, vs, v, projected, scratch, L);
    LANES b->status[l] = b->status[l] ? b->status[l] : projected[l];
}

/* ---- RK4 on the index-1 ODE (rk4.c, nh_index1_rhs_inline with m = 1 and unit mass) --------------------- */
LANE_INLINE void index1_rhs_lanes(const double *par, const double *restrict q, const double *restrict v,
                                  double *restrict dq, double *restrict dv, lane_flag *restrict status, double *scratch,
                                  int L)
{
    SCRATCH(a);
    SCRATCH(grad);
    SCRATCH(dav);
    double lam[ML], c[ML];
    ls_constraint(par, q, a, L);
    ls_gradient(par, q, grad, L);
    ls_jacobian_velocity(par, q, v, dav, L);
    LANES {
        double force = 0.0, bend = 0.0, gram = 0.0;
        for (int i = 0; i < N; ++i) {
            force += AT(a, i) * AT(grad, i);
            bend += AT(dav, i) * AT(v, i);
            gram += AT(a, i) * AT(a, i);
        }
        lam[l] = force - bend;
        c[l] = gram;
    }
    spd_solve_lanes(c, lam, status, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(dq, i) = AT(v, i);
            AT(dv, i) = AT(a, i) * lam[l] - AT(grad, i);
        }
}

LANE_INLINE void rk4_stage_lanes(const double *par, const double *restrict q, const double *restrict v, double c,
                                 const double *restrict dq, const double *restrict dv, double *restrict kq,
                                 double *restrict kv, lane_flag *restrict status, double *scratch, int L)
{
    SCRATCH(qs);
    SCRATCH(vs);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(qs, i) = AT(q, i) + c * AT(dq, i);
            AT(vs, i) = AT(v, i) + c * AT(dv, i);
        }
    index1_rhs_lanes(par, qs, vs, kq, kv, status, scratch, L);
}

LANE_INLINE void rk4_lanes(nh_lane_batch *b, double h, int L)
{
    const double *par = b->system_par;
    double *restrict q = b->q, *restrict v = b->v, *scratch = b->scratch;
    lane_flag *restrict status = b->status;
    SCRATCH(k1q);
    SCRATCH(k1v);
    SCRATCH(k2q);
    SCRATCH(k2v);
    SCRATCH(k3q);
    SCRATCH(k3v);
    SCRATCH(k4q);
    SCRATCH(k4v);
    LANES status[l] = NH_OK;
    index1_rhs_lanes(par, q, v, k1q, k1v, status, scratch, L);
    rk4_stage_lanes(par, q, v, 0.5 * h, k1q, k1v, k2q, k2v, status, scratch, L);
    rk4_stage_lanes(par, q, v, 0.5 * h, k2q, k2v, k3q, k3v, status, scratch, L);
    rk4_stage_lanes(par, q, v, h, k3q, k3v, k4q, k4v, status, scratch, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(q, i) += h / 6.0 * (AT(k1q, i) + 2.0 * AT(k2q, i) + 2.0 * AT(k3q, i) + AT(k4q, i));
            AT(v, i) += h / 6.0 * (AT(k1v, i) + 2.0 * AT(k2v, i) + 2.0 * AT(k3v, i) + AT(k4v, i));
        }
}

/* ---- Newmark with beta = 0 (newmark.c's split step): lam from Phi_alpha, q1, then lam' ------------------ */
enum { NEWMARK_BETA2 = 1, NEWMARK_ALPHA = 2, NEWMARK_DISC = 3 };

/* final_velocity: v1 = u1 + K1 lam' with A(q1) v1 = 0 */
LANE_INLINE void newmark_final_lanes(const double *par, double h, double beta2, const double *restrict gamma0_force,
                                     const double *restrict a0, const double *restrict lam,
                                     const double *restrict u, const double *restrict q1, double *restrict v1,
                                     lane_flag *restrict status, double *scratch, int L)
{
    const double w0 = h * beta2, w1 = 0.5 * h * (1 - 2 * beta2);
    SCRATCH(grad);
    SCRATCH(a1);
    SCRATCH(kick1);
    SCRATCH(u1);
    double lam1[ML];
    lane_flag final_status[ML];
    ls_gradient(par, q1, grad, L);
    ls_constraint(par, q1, a1, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(u1, i) = AT(u, i) - w1 * AT(grad, i);
            AT(kick1, i) = w1 * AT(a1, i);
        }
    if (w0 != 0.0)
        for (int i = 0; i < N; ++i)
            LANES AT(u1, i) += w0 * (AT(gamma0_force, i) + AT(a0, i) * lam[l]);
    kicked_row_lanes(NULL, 0.0, a1, kick1, u1, lam1, final_status, L);
    kicked_lanes(u1, kick1, lam1, v1, L);
    LANES status[l] = status[l] ? status[l] : final_status[l];
}

LANE_INLINE void newmark0_lanes(nh_lane_batch *b, double h, int L)
{
    const double *par = b->system_par, *mpar = b->method_par;
    double *restrict q = b->q, *restrict v = b->v, *scratch = b->scratch;
    const int averaged = mpar[NEWMARK_DISC] == 16;
    const double reach = averaged ? h : mpar[NEWMARK_ALPHA] * h, weight = mpar[NEWMARK_ALPHA];
    SCRATCH(q0);
    SCRATCH(grad);
    SCRATCH(a0);
    SCRATCH(gamma0_force);
    SCRATCH(w);
    SCRATCH(kick);
    SCRATCH(u);
    double lam[ML];
    for (int i = 0; i < N; ++i)
        LANES AT(q0, i) = AT(q, i);
    ls_gradient(par, q0, grad, L);
    ls_constraint(par, q0, a0, L);
    for (int i = 0; i < N; ++i)
        LANES {
            AT(gamma0_force, i) = -AT(grad, i);
            AT(w, i) = AT(v, i) + 0.5 * h * AT(gamma0_force, i);
            AT(kick, i) = 0.5 * h * AT(a0, i);
        }
    affine_multiplier_lanes(par, q0, reach, averaged ? a0 : NULL, weight, w, kick, lam, b->status, scratch, L);
    kicked_lanes(w, kick, lam, u, L);
    for (int i = 0; i < N; ++i)
        LANES AT(q, i) = AT(q0, i) + h * AT(u, i);
    newmark_final_lanes(par, h, mpar[NEWMARK_BETA2], gamma0_force, a0, lam, u, q, v, b->status, scratch, L);
}

#include "lane_newton.h"

/* ---- after each step: the failures (nh_stepper_step's test of a finite state), then the recentring ------- */
LANE_INLINE int failed_lanes(nh_lane_batch *b, int L)
{
    unsigned long long top[ML];
    LANES top[l] = 0;
    for (int i = 0; i < N; ++i)
        LANES top[l] |= nh_nonfinite_bit(AT(b->q, i)) | nh_nonfinite_bit(AT(b->v, i));
    lane_flag any = 0;
    LANES {
        b->status[l] = b->status[l] == NH_OK && top[l] >> 63 ? NH_STEP_NONFINITE : b->status[l];
        any |= b->status[l] != NH_OK ? b->active[l] : 0;
    }
    return any != 0;
}

LANE_INLINE void recentre_lanes(nh_lane_batch *b, int L)
{
    for (int i = 0; i < N; ++i) {
        if (b->kind[i] == NH_COORDINATE_PLAIN)
            continue;
        int beyond = 0;
        LANES beyond |= fabs(AT(b->q, i)) > 2.0 * M_PI;
        for (int l = 0; beyond && l < L; ++l)
            if (fabs(AT(b->q, i)) > 2.0 * M_PI && b->active[l] && b->status[l] == NH_OK &&
                nh_lane_recentre_coordinate(b, i, l) && b->keeps_point)
                nh_lane_keep_point(b, l);
    }
}

/* method_advance_SUFFIX: the steps of `method` with L = width (a constant, or b->lanes for "any") */
#define LANE_ADVANCE(method, suffix, width)                                                                      \
    static long method##_advance_##suffix(nh_lane_batch *b, double h, long steps)                                 \
    {                                                                                                            \
        const int L = width;                                                                                     \
        for (long s = 1; s <= steps; ++s) {                                                                      \
            method##_lanes(b, h, L);                                                                             \
            const int failed = failed_lanes(b, L);                                                               \
            if (b->recentred_kinds && !b->defer_recentring)                                                      \
                recentre_lanes(b, L);                                                                            \
            if (failed)                                                                                          \
                return s;                                                                                        \
        }                                                                                                        \
        return steps;                                                                                            \
    }
#define LANE_ADVANCE_WIDTHS(method)                                                                              \
    LANE_ADVANCE(method, 4, 4)                                                                                   \
    LANE_ADVANCE(method, 8, 8)                                                                                   \
    LANE_ADVANCE(method, 16, 16)                                                                                 \
    LANE_ADVANCE(method, 32, 32)                                                                                 \
    LANE_ADVANCE(method, any, b->lanes)

LANE_ADVANCE_WIDTHS(dla01)
LANE_ADVANCE_WIDTHS(lf)
LANE_ADVANCE_WIDTHS(spark2)
LANE_ADVANCE_WIDTHS(rk4)
LANE_ADVANCE_WIDTHS(newmark0)
LANE_ADVANCE_WIDTHS(dla)

#define LANE_TABLE_ROW(method)                                                                                   \
    {method##_advance_4, method##_advance_8, method##_advance_16, method##_advance_32, method##_advance_any}

const nh_lane_kernel_set LANE_SET = {
    .matches = ls_matches,
    .advance = {LANE_TABLE_ROW(dla01), LANE_TABLE_ROW(lf), LANE_TABLE_ROW(spark2), LANE_TABLE_ROW(rk4),
                LANE_TABLE_ROW(newmark0), LANE_TABLE_ROW(dla)},
};
