/* The lane kernels (lanes_internal.h), written once over a lane system: the steps of dla01, lf, spark2, rk4 and
 * newmark with beta = 0 for one constraint and unit mass, each the scalar step's lines (dla01.c, leapfrog.c,
 * spark2.c, rk4.c, newmark.c through affine.h, common.h and mechanics_inline.h) for one lane, run in a loop over
 * the lanes (the fused kernels below). Within a lane the operations and their order are the scalar step's: a
 * product by the unit mass's 1.0 is left out (x * 1.0 is x), a structural zero of A is multiplied as the scalar
 * sums multiply it, and no value is summed over lanes. The includer defines LANE_SET (the kernel set's name),
 * LS_N (n), ls_matches(sys), the system's formulas for one lane, lp_gradient(par, q, g, exact, angles),
 * lp_constraint(par, q, a, exact, angles) (A's row) and lp_jacobian_velocity(par, q, u, out, exact, angles)
 * (d(A u)/dq), and for the batched Newton (lane_newton.h) the same over n x L arrays, ls_gradient(par, q, g, L),
 * ls_constraint, ls_jacobian_velocity and ls_hessian. */
#include "lanes_internal.h"

#include "nhens/linalg.h"
#include "trig_inline.h"

#include <float.h>
#include <math.h>

#define LANE_INLINE static inline __attribute__((always_inline))
/* component i of lane l of a structure-of-arrays array of L lanes */
#define AT(a, i) (a)[(i) * L + l]
#define LANES _Pragma("GCC unroll 1") for (int l = 0; l < L; ++l)
/* The loop's iterations are independent (no lane's arrays overlap another's): gcc's ivdep. clang's counterpart,
 * vectorize(assume_safety), warns wherever it cannot vectorise (the sanitizer builds), so clang is left to
 * check the arrays' overlap itself at run time. */
#if defined(__clang__)
#define LANES_INDEPENDENT
#else
#define LANES_INDEPENDENT _Pragma("GCC ivdep")
#endif
enum { N = LS_N, ML = NH_MAX_LANES };

/* ---- the fused kernels: one loop over the lanes, each lane's whole step in registers ---------------------
 * A method's step is written once for one lane (its n values in local arrays, which gcc keeps in registers) and
 * run in a loop over the lanes that gcc vectorises: each lane's values make one SIMD element, so that nothing
 * goes through memory between the step's lines (the lines of the scalar step, in its order; the system's
 * formulas one lane at a time, lp_* of lane_system_*.h). That pass computes sines with trig_inline.h's kernel
 * (exact = 0); a lane with an angle beyond the kernel's bound is left as it was and stepped again in
 * scalar code with nh_sin and nh_cos (exact = 1), which are the scalar callbacks' sines. */

/* the n values of lane l of an n x L array */
LANE_INLINE void get_lane(const double *restrict a, double *restrict x, int L, int l)
{
    for (int i = 0; i < N; ++i)
        x[i] = AT(a, i);
}

/* lane l's n new values */
LANE_INLINE void put_lane(double *a, const double *x, int L, int l)
{
    for (int i = 0; i < N; ++i)
        AT(a, i) = x[i];
}

/* A lane's solves succeeded (1.0) or one failed (0.0): a double, set by selects on comparisons of doubles. gcc
 * (12, AVX-512F) vectorises neither a loop that combines a double comparison's mask with an integer comparison's
 * nor one that converts a comparison to an int, so that the status is formed from it by one select at the lane's
 * end, and the finite test of the new state (64-bit integer operations) runs after the pass (failed_lanes). */
LANE_INLINE double solved_if(int condition, double solved)
{
    return condition ? solved : 0.0;
}

LANE_INLINE lane_flag status_of(double solved)
{
    return solved != 0.0 ? NH_OK : NH_STEP_SINGULAR;
}

/* The angles whose sines a pass took, summed as |x| (nh_sin_lane): the sum is within the kernel's bound only when
 * every angle is (a sum of magnitudes is at least its largest; NaN and inf stay), and a lane whose sum is not is
 * stepped again exactly, which gives the scalar bits whether or not one angle was beyond (a sum alone past 2^20
 * is). A flag set to a constant would let gcc thread the step's rest behind the first angle's test, and that
 * control flow keeps the loop from vectorising. */
LANE_INLINE int beyond_kernel(double angles)
{
    return !(angles <= NH_TRIG_BOUND);
}

/* Where a lane's step starts (q0, v0 and lf's multiplier and end point lam0, grad0, a0) and where it writes its
 * end (q, v, lam, grad, a, status): the batch's arrays for the vectorised pass, which steps in place, and a copy
 * of the start for the exact one (the pass has written every lane's end). */
typedef struct lane_io {
    const double *par, *mpar;
    const double *q0, *v0, *lam0, *grad0, *a0;
    double *q, *v, *lam, *grad, *a;
    lane_flag *status;
} lane_io;

LANE_INLINE lane_io lane_io_of(nh_lane_batch *b)
{
    return (lane_io){b->system_par, b->method_par, b->q, b->v, b->carried, b->grad, b->a,
                     b->q, b->v, b->carried, b->grad, b->a, b->status};
}

/* The start of every lane copied to the scratch, for the exact pass (lf's multiplier and end point when kept) */
LANE_INLINE lane_io saved_start(nh_lane_batch *b, lane_io io, int L)
{
    double *next = b->scratch;
    const double *from[] = {b->q, b->v, b->keeps_point ? b->grad : NULL, b->keeps_point ? b->a : NULL};
    const double **to[] = {&io.q0, &io.v0, &io.grad0, &io.a0};
    for (int k = 0; k < 4; ++k)
        if (from[k]) {
            for (int j = 0; j < N * L; ++j)
                next[j] = from[k][j];
            *to[k] = next;
            next += N * L;
        }
    if (b->keeps_point) {
        LANES next[l] = b->carried[l];
        io.lam0 = next;
    }
    return io;
}

/* nh_solve_kicked_row: lam = -(row . w) / (row . kick), the row a, or (averaged) (1 - weight) a_fixed + weight a;
 * a_fixed is read only when averaged (a select on the values, not a test of a pointer, so that the loop
 * vectorises) */
LANE_INLINE double kicked_row_lane(int averaged, const double *a_fixed, double weight, const double *a,
                                   const double *kick, const double *w, double *solved)
{
    double aw = 0.0, ak = 0.0;
    for (int i = 0; i < N; ++i) {
        const double row = averaged ? (1 - weight) * a_fixed[i] + weight * a[i] : a[i];
        aw += row * w[i];
        ak += row * kick[i];
    }
    /* fabs(ak) <= DBL_MAX: isfinite without a call, so that the loop vectorises */
    *solved = solved_if(fabs(ak) > 0.0 && fabs(ak) <= DBL_MAX, *solved);
    return -aw / ak;
}

/* nh_affine_multiplier for one constraint: A at base + reach w, the row (averaged with a_fixed when given) */
LANE_INLINE double affine_multiplier_lane(const double *par, const double *base, double reach, int averaged,
                                          const double *a_fixed, double weight, const double *w, const double *kick,
                                          double *solved, int exact, double *angles)
{
    double point[N], a_star[N];
    for (int i = 0; i < N; ++i)
        point[i] = base[i] + reach * w[i];
    lp_constraint(par, point, a_star, exact, angles);
    return kicked_row_lane(averaged, a_fixed, weight, a_star, kick, w, solved);
}

/* nh_project_velocity (project_constant_mass_for, m = 1): out = w - A^T mu, mu = (A w) / (A A^T); the Gram value
 * summed as constant_mass_gram_for sums it (m = 1), A w as nh_dot */
LANE_INLINE void project_lane(const double *par, const double *q, const double *w, double *out, double *solved,
                              int exact, double *angles)
{
    double a[N], c = 0.0, mu = 0.0;
    lp_constraint(par, q, a, exact, angles);
    for (int i = 0; i < N; ++i)
        c += a[i] * a[i];
    for (int i = 0; i < N; ++i)
        mu += a[i] * w[i];
    *solved = solved_if(c > 0.0, *solved);
    mu /= c;
    for (int i = 0; i < N; ++i)
        out[i] = w[i] - a[i] * mu;
}

/* The step of every lane in the span (the lanes beyond hold no trajectory): the vectorised pass, then the exact one
 * for the active lanes whose angles it found beyond the sine kernel's bound (method##_lane(io, h, L, l, exact)
 * returns the sum of lane l's angles). A system without angles (LS_ANGLES 0) has no exact pass. Iteration l reads
 * and writes lane l's entries only, and the batch's arrays do not overlap: ivdep says so to gcc, which cannot see
 * it through the batch's pointers and would otherwise test every pair of them at run time (or give up). */
#define FUSED_LANES(method)                                                                                      \
    do {                                                                                                         \
        const lane_io io = lane_io_of(b);                                                                        \
        const lane_io saved = LS_ANGLES ? saved_start(b, io, L) : io;                                           \
        const int span = b->span;                                                                                \
        double angles[ML];                                                                                       \
        LANES_INDEPENDENT _Pragma("GCC unroll 1") for (int l = 0; l < span; ++l)                                 \
            angles[l] = method##_lane(&io, h, L, l, 0);                                                          \
        for (int l = 0; LS_ANGLES && l < span; ++l)                                                              \
            if (beyond_kernel(angles[l]) && b->active[l])                                                        \
                (void)method##_lane(&saved, h, L, l, 1);                                                         \
    } while (0)

/* ---- DLA^{0,1} (dla01.c): base q_half, reach h/2, A_* = A(q1) ---------------------------------------- */
LANE_INLINE double dla01_lane(const lane_io *io, double h, int L, int l, int exact)
{
    const double *par = io->par;
    double q0[N], v0[N], q_half[N], grad[N], a_half[N], w[N], kick[N], v1[N], q1[N];
    double angles = 0.0, solved = 1.0;
    get_lane(io->q0, q0, L, l);
    get_lane(io->v0, v0, L, l);
    for (int i = 0; i < N; ++i)
        q_half[i] = q0[i] + 0.5 * h * v0[i];
    const double reach = 0.5 * h;
    lp_gradient(par, q_half, grad, exact, &angles);
    lp_constraint(par, q_half, a_half, exact, &angles);
    for (int i = 0; i < N; ++i) {
        w[i] = v0[i] - h * grad[i];
        kick[i] = h * a_half[i];
    }
    const double lam = affine_multiplier_lane(par, q_half, reach, 0, a_half, 0.0, w, kick, &solved, exact, &angles);
    for (int i = 0; i < N; ++i) {
        v1[i] = w[i] + kick[i] * lam;
        q1[i] = q_half[i] + reach * v1[i];
    }
    put_lane(io->q, q1, L, l);
    put_lane(io->v, v1, L, l);
    io->status[l] = status_of(solved);
    return angles;
}

LANE_INLINE void dla01_lanes(nh_lane_batch *b, double h, int L)
{
    FUSED_LANES(dla01);
}

/* ---- the nonholonomic leap-frog (leapfrog.c): grad V and A at q kept from the last step's end point ----
 * A system whose grad V and A cost less than their loads and stores (LS_POINT_FROM_Q 1: the quartic's are a few
 * products of q, A's entries q's own) computes them from q instead: the kept values are those of q's bits
 * (leapfrog.c's key, nh_lane_keep_point), so that they are the same bits, and the batch's arrays are not read. */
LANE_INLINE double lf_lane(const lane_io *io, double h, int L, int l, int exact)
{
    const double *par = io->par;
    double q0[N], v0[N], grad0[N], a0[N], q1[N], v1[N], grad[N], a[N];
    double angles = 0.0, solved = 1.0;
    get_lane(io->q0, q0, L, l);
    get_lane(io->v0, v0, L, l);
    if (LS_POINT_FROM_Q) {   /* the kept end point's values, from the same q bits */
        lp_gradient(par, q0, grad0, exact, &angles);
        lp_constraint(par, q0, a0, exact, &angles);
    } else {
        get_lane(io->grad0, grad0, L, l);
        get_lane(io->a0, a0, L, l);
    }
    const double lam0 = io->lam0[l];
    for (int i = 0; i < N; ++i) {
        v1[i] = v0[i] + 0.5 * h * (a0[i] * lam0 - grad0[i]);
        q1[i] = q0[i] + h * v1[i];
    }
    lp_gradient(par, q1, grad, exact, &angles);
    for (int i = 0; i < N; ++i)
        v1[i] -= 0.5 * h * grad[i];
    lp_constraint(par, q1, a, exact, &angles);
    double c = 0.0, lam = 0.0;
    for (int i = 0; i < N; ++i)
        c += a[i] * a[i];
    for (int i = 0; i < N; ++i)
        lam += a[i] * v1[i];
    lam = lam * (-2.0 / h);
    solved = solved_if(c > 0.0, solved);
    lam /= c;
    for (int i = 0; i < N; ++i)
        v1[i] += 0.5 * h * (a[i] * lam);
    put_lane(io->q, q1, L, l);
    put_lane(io->v, v1, L, l);
    if (!LS_POINT_FROM_Q) {
        put_lane(io->grad, grad, L, l);
        put_lane(io->a, a, L, l);
    }
    io->lam[l] = lam;
    io->status[l] = status_of(solved);
    return angles;
}

LANE_INLINE void lf_lanes(nh_lane_batch *b, double h, int L)
{
    FUSED_LANES(lf);
}

/* ---- SPARK s = 2 (spark2.c): base q0, reach h, A_* = [A(q0) + A(q1)] / 2, then the projection ----------- */
LANE_INLINE double spark2_lane(const lane_io *io, double h, int L, int l, int exact)
{
    const double *par = io->par;
    double q0[N], v0[N], grad[N], a0[N], w[N], kick[N], vs[N], q1[N], v1[N];
    double angles = 0.0, solved = 1.0;
    get_lane(io->q0, q0, L, l);
    get_lane(io->v0, v0, L, l);
    lp_gradient(par, q0, grad, exact, &angles);
    lp_constraint(par, q0, a0, exact, &angles);
    for (int i = 0; i < N; ++i) {
        w[i] = v0[i] - 0.5 * h * grad[i];
        kick[i] = 0.5 * h * a0[i];
    }
    const double l1 = affine_multiplier_lane(par, q0, h, 1, a0, 0.5, w, kick, &solved, exact, &angles);
    for (int i = 0; i < N; ++i) {
        vs[i] = w[i] + kick[i] * l1;
        q1[i] = q0[i] + h * vs[i];
    }
    lp_gradient(par, q1, grad, exact, &angles);
    for (int i = 0; i < N; ++i)
        vs[i] -= 0.5 * h * grad[i];
    project_lane(par, q1, vs, v1, &solved, exact, &angles);
    put_lane(io->q, q1, L, l);
    put_lane(io->v, v1, L, l);
    io->status[l] = status_of(solved);
    return angles;
}

LANE_INLINE void spark2_lanes(nh_lane_batch *b, double h, int L)
{
    FUSED_LANES(spark2);
}

/* ---- RK4 on the index-1 ODE (rk4.c, nh_index1_rhs_inline with m = 1 and unit mass) --------------------- */
/* dv = A^T lambda*(q, v) - grad V (dq = v is the caller's): constant_mass_multiplier_for's sums, in its order */
LANE_INLINE void index1_rhs_lane(const double *par, const double *q, const double *v, double *dv, double *solved,
                                 int exact, double *angles)
{
    double a[N], grad[N], dav[N], force = 0.0, bend = 0.0, gram = 0.0;
    lp_constraint(par, q, a, exact, angles);
    lp_gradient(par, q, grad, exact, angles);
    lp_jacobian_velocity(par, q, v, dav, exact, angles);
    for (int i = 0; i < N; ++i) {
        force += a[i] * grad[i];
        bend += dav[i] * v[i];
        gram += a[i] * a[i];
    }
    double lam = force - bend;
    *solved = solved_if(gram > 0.0, *solved);
    lam /= gram;
    for (int i = 0; i < N; ++i)
        dv[i] = a[i] * lam - grad[i];
}

/* One stage from (q + c dq, v + c dv): its derivatives (kq = the stage's v, kv), and the weighted sums of the
 * stages' derivatives, h/6 (k1 + 2 k2 + 2 k3 + k4) summed left to right, taken on by the stage's term. */
LANE_INLINE void rk4_stage_lane(const double *par, const double *q, const double *v, double c, const double *dq,
                                const double *dv, double weight, double *kq, double *kv, double *sum_q, double *sum_v,
                                double *solved, int exact, double *angles)
{
    double qs[N];
    for (int i = 0; i < N; ++i) {
        qs[i] = q[i] + c * dq[i];
        kq[i] = v[i] + c * dv[i];
    }
    index1_rhs_lane(par, qs, kq, kv, solved, exact, angles);
    for (int i = 0; i < N; ++i) {
        sum_q[i] += weight * kq[i];
        sum_v[i] += weight * kv[i];
    }
}

LANE_INLINE double rk4_lane(const lane_io *io, double h, int L, int l, int exact)
{
    const double *par = io->par;
    double q0[N], v0[N], kq[N], kv[N], k2q[N], k2v[N], sum_q[N], sum_v[N], q1[N], v1[N];
    double angles = 0.0, solved = 1.0;
    get_lane(io->q0, q0, L, l);
    get_lane(io->v0, v0, L, l);
    /* k1: the derivatives at (q0, v0); the sums start with k1, then add 2 k2, 2 k3 and k4 in turn */
    index1_rhs_lane(par, q0, v0, kv, &solved, exact, &angles);
    for (int i = 0; i < N; ++i) {
        sum_q[i] = v0[i];
        sum_v[i] = kv[i];
    }
    rk4_stage_lane(par, q0, v0, 0.5 * h, v0, kv, 2.0, k2q, k2v, sum_q, sum_v, &solved, exact, &angles);
    rk4_stage_lane(par, q0, v0, 0.5 * h, k2q, k2v, 2.0, kq, kv, sum_q, sum_v, &solved, exact, &angles);
    for (int i = 0; i < N; ++i) {
        k2q[i] = kq[i];
        k2v[i] = kv[i];
    }
    rk4_stage_lane(par, q0, v0, h, k2q, k2v, 1.0, kq, kv, sum_q, sum_v, &solved, exact, &angles);
    for (int i = 0; i < N; ++i) {
        q1[i] = q0[i] + h / 6.0 * sum_q[i];
        v1[i] = v0[i] + h / 6.0 * sum_v[i];
    }
    put_lane(io->q, q1, L, l);
    put_lane(io->v, v1, L, l);
    io->status[l] = status_of(solved);
    return angles;
}

LANE_INLINE void rk4_lanes(nh_lane_batch *b, double h, int L)
{
    FUSED_LANES(rk4);
}

/* ---- Newmark with beta = 0 (newmark.c's split step): lam from Phi_alpha, q1, then lam' ------------------ */
enum { NEWMARK_BETA2 = 1, NEWMARK_ALPHA = 2, NEWMARK_DISC = 3 };

LANE_INLINE double newmark0_lane(const lane_io *io, double h, int L, int l, int exact)
{
    const double *par = io->par, *mpar = io->mpar;
    const int averaged = mpar[NEWMARK_DISC] == 16;
    const double reach = averaged ? h : mpar[NEWMARK_ALPHA] * h, weight = mpar[NEWMARK_ALPHA];
    const double beta2 = mpar[NEWMARK_BETA2], w0 = h * beta2, w1 = 0.5 * h * (1 - 2 * beta2);
    double q0[N], v0[N], grad[N], a0[N], gamma0_force[N], w[N], kick[N], u[N], q1[N], a1[N], u1[N], kick1[N], v1[N];
    double angles = 0.0, solved = 1.0;
    get_lane(io->q0, q0, L, l);
    get_lane(io->v0, v0, L, l);
    lp_gradient(par, q0, grad, exact, &angles);
    lp_constraint(par, q0, a0, exact, &angles);
    for (int i = 0; i < N; ++i) {
        gamma0_force[i] = -grad[i];
        w[i] = v0[i] + 0.5 * h * gamma0_force[i];
        kick[i] = 0.5 * h * a0[i];
    }
    const double lam = affine_multiplier_lane(par, q0, reach, averaged, a0, weight, w, kick, &solved, exact,
                                              &angles);
    for (int i = 0; i < N; ++i) {
        u[i] = w[i] + kick[i] * lam;
        q1[i] = q0[i] + h * u[i];
    }
    /* final_velocity: v1 = u1 + K1 lam' with A(q1) v1 = 0 */
    lp_gradient(par, q1, grad, exact, &angles);
    lp_constraint(par, q1, a1, exact, &angles);
    for (int i = 0; i < N; ++i) {
        u1[i] = u[i] - w1 * grad[i];
        kick1[i] = w1 * a1[i];
    }
    for (int i = 0; i < N; ++i)   /* when w0 != 0: a select, so that the loop vectorises */
        u1[i] = w0 != 0.0 ? u1[i] + w0 * (gamma0_force[i] + a0[i] * lam) : u1[i];
    const double lam1 = kicked_row_lane(0, a1, 0.0, a1, kick1, u1, &solved);
    for (int i = 0; i < N; ++i)
        v1[i] = u1[i] + kick1[i] * lam1;
    put_lane(io->q, q1, L, l);
    put_lane(io->v, v1, L, l);
    io->status[l] = status_of(solved);
    return angles;
}

LANE_INLINE void newmark0_lanes(nh_lane_batch *b, double h, int L)
{
    FUSED_LANES(newmark0);
}

#include "lane_newton.h"

/* ---- after each step: the failures (nh_stepper_step's test of a finite state, which the fused kernels made in
 * their pass: `tested`), then the recentring ------- */
LANE_INLINE int failed_lanes(nh_lane_batch *b, int tested, int L)
{
    const int span = b->span;   /* the lanes stepped: those beyond are inactive */
    if (!tested) {
        unsigned long long top[ML];
        for (int l = 0; l < span; ++l)
            top[l] = 0;
        for (int i = 0; i < N; ++i)
            for (int l = 0; l < span; ++l)
                top[l] |= nh_nonfinite_bit(AT(b->q, i)) | nh_nonfinite_bit(AT(b->v, i));
        for (int l = 0; l < span; ++l)
            b->status[l] = b->status[l] == NH_OK && top[l] >> 63 ? NH_STEP_NONFINITE : b->status[l];
    }
    lane_flag any = 0;
    for (int l = 0; l < span; ++l)
        any |= b->status[l] != NH_OK ? b->active[l] : 0;
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
#define LANE_ADVANCE(method, tested, suffix, width)                                                              \
    static long method##_advance_##suffix(nh_lane_batch *b, double h, long steps)                                 \
    {                                                                                                            \
        const int L = width;                                                                                     \
        for (long s = 1; s <= steps; ++s) {                                                                      \
            method##_lanes(b, h, L);                                                                             \
            const int failed = failed_lanes(b, tested, L);                                                       \
            if (b->recentred_kinds && !b->defer_recentring)                                                      \
                recentre_lanes(b, L);                                                                            \
            if (failed)                                                                                          \
                return s;                                                                                        \
        }                                                                                                        \
        return steps;                                                                                            \
    }
/* Each method for the widths 4, 8, 16 and 32 as constants and for any width read at run time. A build with
 * NH_LANE_FIXED_WIDTHS 0 (the sanitizer build: instrumented, 30 instances take minutes to compile per file) steps
 * every width with the run-time one, the same operations in the same order. */
#ifndef NH_LANE_FIXED_WIDTHS
#define NH_LANE_FIXED_WIDTHS 1
#endif
#if NH_LANE_FIXED_WIDTHS
#define LANE_ADVANCE_WIDTHS(method, tested)                                                                      \
    LANE_ADVANCE(method, tested, 4, 4)                                                                           \
    LANE_ADVANCE(method, tested, 8, 8)                                                                           \
    LANE_ADVANCE(method, tested, 16, 16)                                                                         \
    LANE_ADVANCE(method, tested, 32, 32)                                                                         \
    LANE_ADVANCE(method, tested, any, b->lanes)
#define LANE_TABLE_ROW(method)                                                                                   \
    {method##_advance_4, method##_advance_8, method##_advance_16, method##_advance_32, method##_advance_any}
#else
#define LANE_ADVANCE_WIDTHS(method, tested) LANE_ADVANCE(method, tested, any, b->lanes)
#define LANE_TABLE_ROW(method)                                                                                   \
    {method##_advance_any, method##_advance_any, method##_advance_any, method##_advance_any, method##_advance_any}
#endif

LANE_ADVANCE_WIDTHS(dla01, 0)
LANE_ADVANCE_WIDTHS(lf, 0)
LANE_ADVANCE_WIDTHS(spark2, 0)
LANE_ADVANCE_WIDTHS(rk4, 0)
LANE_ADVANCE_WIDTHS(newmark0, 0)
LANE_ADVANCE_WIDTHS(dla, 0)
LANE_ADVANCE_WIDTHS(dd, 0)

const nh_lane_kernel_set LANE_SET = {
    .matches = ls_matches,
    .advance = {LANE_TABLE_ROW(dla01), LANE_TABLE_ROW(lf), LANE_TABLE_ROW(spark2), LANE_TABLE_ROW(rk4),
                LANE_TABLE_ROW(newmark0), LANE_TABLE_ROW(dla), LANE_TABLE_ROW(dd)},
};
