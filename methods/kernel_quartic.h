/* The template of the quartic's step kernels (kernels.h), instantiated by kernel_quartic2.c and
 * kernel_quartic3.c with QUARTIC_KERNEL_PAIRS, the pair count k (n = 2k + 1, m = 1). It defines the
 * accessors of system.h (nh_dim, nh_constraint_count, nh_type, nh_inv_mass, nh_has_variable_mass,
 * nh_is_reduced) as the quartic's constants (M = I), the mechanics a step calls and the 1 x 1 SPD solve as
 * their inline forms, then includes the methods' sources: their steps compile with the quartic's formulas
 * inline, and their registrations are left out (NH_STEP_KERNEL). Only a stepper whose system is the
 * built-in quartic with k pairs and unit mass runs them (kernels.c). */
#ifndef QUARTIC_KERNEL_PAIRS
#error "define QUARTIC_KERNEL_PAIRS before including kernel_quartic.h"
#endif

#include "nhens/linalg.h"
#include "nhens/system.h"

#include "quartic_formulas.h"
#include "kernels.h"

#define NH_STEP_KERNEL 1
enum { KERNEL_PAIRS = QUARTIC_KERNEL_PAIRS };

static void kernel_gradient(const nh_system *s, const double *restrict q, double *restrict g)
{
    (void)s;
    gradient_of(KERNEL_PAIRS, q, g);
}

static void kernel_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    constraint_of(KERNEL_PAIRS, q, a);
}

static void kernel_constraint_jacobian_velocity(const nh_system *s, const double *q, const double *restrict u,
                                                double *restrict out)
{
    (void)s;
    (void)q;
    constraint_jacobian_velocity_of(KERNEL_PAIRS, u, out);
}

/* The quartic's M = I (kernels.c checks the instance's) */
static const double kernel_unit_mass[7] = {1, 1, 1, 1, 1, 1, 1};
_Static_assert(2 * KERNEL_PAIRS + 1 <= 7, "the unit mass covers the quartic's coordinates");

/* The callbacks the steps call; the other entries stay NULL (no variable mass, not reduced). */
static const nh_system_type kernel_type = {
    .potential_gradient = kernel_gradient,
    .constraint = kernel_constraint,
    .constraint_jacobian_velocity = kernel_constraint_jacobian_velocity,
};

#define nh_dim(s) ((void)(s), 2 * KERNEL_PAIRS + 1)
#define nh_constraint_count(s) ((void)(s), 1)
#define nh_type(s) ((void)(s), &kernel_type)
#define nh_has_variable_mass(s) ((void)(s), kernel_type.mass_matrix != NULL)
#define nh_is_reduced(s) ((void)(s), kernel_type.lie_bracket != NULL)
#define nh_inv_mass(s) ((void)(s), kernel_unit_mass)
#define nh_spd_solve(m, c, b) ((m) == 1 ? nh_spd_solve_scalar(c, b) : nh_spd_solve(m, c, b))
#define nh_constraint_row_dot(s, row, x)                                                                  \
    ((void)(s), nh_dot_zeros_apart(2 * KERNEL_PAIRS + 1, row, x, constraint_zeros_of(KERNEL_PAIRS)))
#define nh_constraint_gram nh_constraint_gram_inline
#define nh_project_velocity nh_project_velocity_inline
#define nh_index1_rhs nh_index1_rhs_inline

#include "mechanics_inline.h"

#include "dla01.c"
#include "leapfrog.c"
#include "rk4.c"
#include "spark2.c"

#define KERNEL_TABLE(k) KERNEL_TABLE_OF(k)
#define KERNEL_TABLE_OF(k) nh_quartic##k##_kernels
const nh_step_kernel KERNEL_TABLE(QUARTIC_KERNEL_PAIRS)[NH_KERNEL_METHODS] = {
    {&nh_method_dla01, dla01_step_fn},
    {&nh_method_leapfrog, lf_step},
    {&nh_method_rk4, rk4_step},
    {&nh_method_spark2, spark_step_fn},
};
