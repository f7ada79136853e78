/* Nonholonomic leap-frog of McLachlan-Perlmutter 2006 Sect. 5.1 / Ferraro-Iglesias-de Diego 2008,
 * Modin & Verdier 2020, App. A.2 eq. 30 with the corrections of docs/METHODS.md Sect. 3 (A(q0), lam_30 = -lam), in
 * velocity-Verlet form. Order 2, reversible on D x R^m, constraint exact; one m x m SPD solve per
 * step for any A(q). The multiplier is genuine state: it starts at lambda*(q0, v0) (docs/METHODS.md
 * Sect. 3: any O(1) error there leaves a permanent period-2 oscillation in lam).
 *   v_half = v + h/2 M^-1(-grad V(q) + A(q)^T lam)
 *   q1 = q + h v_half,   w = v_half - h/2 M^-1 grad V(q1)
 *   lam1 = -(2/h) C(q1)^-1 A(q1) w,   v1 = w + h/2 M^-1 A(q1)^T lam1 */
#include "common.h"

#include "../systems/mechanics_inline.h"

#include <string.h>

/* grad V and A at a step's end point, kept in the stepper's workspace for the next step, whose first
 * half-kick reads them at the same q: [key, q (n), grad (n), A (m x n)]. Keyed on q's bits, so a step from
 * any other q (a new trajectory, a composition's other stage, a resumed run) computes them afresh; the
 * values are the same bits either way. Evaluating them is a large part of a step. */
typedef struct kept_point {
    double *key, *q, *grad, *a;   /* key: 1 when q, grad and a belong together */
} kept_point;

/* Where the step computes the end point's grad V and A. Through the system's callbacks: straight into the
 * slots (a copy would add loads and stores to the step), and the key moves to the end point as soon as they
 * are there (nothing in between can fail; moving it after the SPD solve would lengthen the step). In a step kernel
 * (kernels.h), where the formulas are inline: into locals, which stay in registers while the step uses
 * them, copied to the slots after the step has succeeded (the slots' stores and reloads would be on the
 * step's chain of dependent operations). */
#ifdef NH_STEP_KERNEL
enum { LF_END_POINT_IN_REGISTERS = 1 };
#else
enum { LF_END_POINT_IN_REGISTERS = 0 };
#endif

static kept_point kept_slots(const nh_system *s, double *workspace)
{
    return (kept_point){workspace, workspace + 1, workspace + 1 + nh_dim(s), workspace + 1 + 2 * nh_dim(s)};
}

/* grad V(q) and A(q) in the slots: kept when q is the last end point, else computed */
static void start_point(const nh_system *s, const kept_point *kept, const double *q)
{
    if (*kept->key != 0.0 && memcmp(kept->q, q, (size_t)nh_dim(s) * sizeof *q) == 0)
        return;
    nh_type(s)->potential_gradient(s, q, kept->grad);
    nh_type(s)->constraint(s, q, kept->a);
}

/* The slots take the end point q1 as their key, with its grad V and A (copied when the step computed them
 * in locals). */
static inline __attribute__((always_inline)) void keep_end_point(const nh_system *s, const int m,
                                                                 const kept_point *kept, const double *q,
                                                                 const double *grad, const double *a)
{
    const int n = nh_dim(s);
    nh_copy(n, q, kept->q);
    if (LF_END_POINT_IN_REGISTERS) {
        nh_copy(n, grad, kept->grad);
        nh_copy(m * n, a, kept->a);
    }
    *kept->key = 1.0;
}

/* The step with the m multipliers' loops inlined for a constant m (NH_WITH_CONSTRAINT_COUNT); A^T lam is
 * summed in each coordinate's loop (nh_matvec_t_entry), so the bits are those of the separate products.
 * lf requires a constant mass (no NH_METHOD_GENERAL_MASS): M^-1 is nh_inv_mass(s). */
static inline __attribute__((always_inline)) int lf_step_for(nh_stepper *st, const int m, double h, double *q,
                                                             double *v, double *lam)
{
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    const double *restrict inv_mass = nh_inv_mass(s);
    const kept_point kept = kept_slots(s, st->workspace);
    double local_grad[NH_MAX_DIM], local_a[NH_MAX_CON * NH_MAX_DIM], c[NH_MAX_CON * NH_MAX_CON];
    double *restrict grad = LF_END_POINT_IN_REGISTERS ? local_grad : kept.grad;
    double *restrict a = LF_END_POINT_IN_REGISTERS ? local_a : kept.a;
    start_point(s, &kept, q);
    for (int i = 0; i < n; ++i) {
        v[i] += 0.5 * h * inv_mass[i] * (nh_matvec_t_entry(m, n, kept.a, lam, i) - kept.grad[i]);
        q[i] += h * v[i];
    }
    nh_type(s)->potential_gradient(s, q, grad);
    for (int i = 0; i < n; ++i)
        v[i] -= 0.5 * h * inv_mass[i] * grad[i];
    nh_type(s)->constraint(s, q, a);
    if (!LF_END_POINT_IN_REGISTERS)
        keep_end_point(s, m, &kept, q, grad, a);
    nh_constraint_gram(s, q, a, c);
    for (int k = 0; k < m; ++k)
        lam[k] = nh_constraint_row_dot(s, a + k * n, v) * (-2.0 / h);
    if (nh_spd_solve(m, c, lam))
        return NH_STEP_SINGULAR;
    for (int i = 0; i < n; ++i)
        v[i] += 0.5 * h * inv_mass[i] * nh_matvec_t_entry(m, n, a, lam, i);
    if (LF_END_POINT_IN_REGISTERS)
        keep_end_point(s, m, &kept, q, grad, a);
    return NH_OK;
}

static int lf_step(nh_stepper *st, double h, double *q, double *v, double *lam)
{
#define LF_STEP(m) lf_step_for(st, m, h, q, v, lam)
    return NH_WITH_CONSTRAINT_COUNT(nh_constraint_count(st->sys), LF_STEP);
#undef LF_STEP
}

#ifndef NH_STEP_KERNEL /* the method's registration: compiled once, not again in a step kernel (kernels.h) */
static int lf_carried_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return sys->m;
}

static int lf_start(nh_stepper *st, const double *q, const double *v, double *lam)
{
    return nh_exact_multiplier(st->sys, q, v, lam);
}

/* the slots of kept_point */
static long lf_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 1L + 2L * sys->n + (long)sys->m * sys->n;
}

const nh_method_type nh_method_leapfrog = {
    .name = "lf",
    .summary = "nonholonomic leap-frog, velocity-Verlet form (Modin & Verdier 2020, eq. 30, corrected)",
    .reference = "McLachlan-Perlmutter 2006 Sect. 5.1; Modin & Verdier 2020 App. A.2; docs/METHODS.md Sect. 3",
    .fixed_flags = NH_METHOD_LINEARLY_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE |
           NH_METHOD_CARRIES_STATE,
    .fixed_order = 2,
    .carried_dim = lf_carried_dim,
    .workspace_size = lf_workspace_size,
    .start = lf_start,
    .step = lf_step,
};
#endif
