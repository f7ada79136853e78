/* Euler-Poincare-Suslov problem on so(3) of Celledoni et al. 2019, Sect. 4.3, reduced form only: v = omega in
 * so(3) ~ R^3 with the bracket [u, w] = u x w, kinetic energy 1/2 omega^T I omega in a frame with
 * I12 = 0 and the constraint omega_3 = 0 (a = e_3). There is no configuration: q is a dummy coordinate that
 * does not move, and methods that need the configuration space refuse the system. D = span{e_1, e_2},
 * so rho = (I11 w1 + I13 w3, I22 w2 + I23 w3) and H = rho1^2/(2 I11) + rho2^2/(2 I22) on D, with the
 * projected structure constants C_12^1 = I13/I11, C_12^2 = I23/I22 (Celledoni et al. 2019). I33 does not enter the
 * constrained motion; it is set to 1 + I13^2/I11 + I23^2/I22 so that the inertia matrix is definite. */
#include "nhens/system.h"

#include <string.h>

enum { P_I11 = 0, P_I22 = 1, P_I13 = 2, P_I23 = 3 };

static const nh_param_def suslov_params[] = {
    {"I11", 1.0, 1e-3, 1e3, 0, "inertia I11", NULL},
    {"I22", 2.0, 1e-3, 1e3, 0, "inertia I22", NULL},
    {"I13", 0.5, -1e3, 1e3, 0, "inertia I13", NULL},
    {"I23", 0.3, -1e3, 1e3, 0, "inertia I23", NULL},
};

static double par(const nh_system *s, int i)
{
    return s->params.value[i];
}

static void suslov_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 3;
    *m = 1;
}

static void suslov_inertia(const nh_system *s, const double *q, double *mm)
{
    (void)q;
    const double i11 = par(s, P_I11), i22 = par(s, P_I22), i13 = par(s, P_I13), i23 = par(s, P_I23);
    const double i33 = 1.0 + i13 * i13 / i11 + i23 * i23 / i22;
    double rows[9] = {i11, 0, i13, 0, i22, i23, i13, i23, i33};
    memcpy(mm, rows, sizeof rows);
}

static void suslov_inertia_derivative(const nh_system *s, const double *q, double *dm)
{
    (void)s;
    (void)q;
    memset(dm, 0, 27 * sizeof *dm);
}

static void suslov_cross(const nh_system *s, const double *u, const double *w, double *out)
{
    (void)s;
    out[0] = u[1] * w[2] - u[2] * w[1];
    out[1] = u[2] * w[0] - u[0] * w[2];
    out[2] = u[0] * w[1] - u[1] * w[0];
}

static double suslov_potential(const nh_system *s, const double *q)
{
    (void)s;
    (void)q;
    return 0.0;
}

static void suslov_zero_vector(const nh_system *s, const double *q, double *g)
{
    (void)s;
    (void)q;
    memset(g, 0, 3 * sizeof *g);
}

static void suslov_zero_matrix(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 9 * sizeof *h);
}

static void suslov_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    (void)q;
    a[0] = a[1] = 0.0;
    a[2] = 1.0;
}

static void suslov_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)u;
    suslov_zero_vector(s, q, out);
}

static void suslov_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)lam;
    suslov_zero_matrix(s, q, out);
}

static void suslov_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    (void)q;
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = 1.0;
    x[1 * 2 + 1] = 1.0;
}

static void suslov_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    (void)rng;
    memset(q, 0, 3 * sizeof *q);   /* no configuration */
}

static double suslov_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

/* The shell of the cross-system tests and of `--preset shell` (every built-in system declares one). */
static const nh_preset suslov_presets[] = {
    {"shell", "100 random states of the Suslov problem on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};

const nh_system_type nh_system_suslov = {
    .name = "suslov",
    .summary = "Euler-Poincare-Suslov problem on so(3), reduced form only (Celledoni et al. 2019, Sect. 4.3)",
    .reference = "Celledoni et al. 2019 Sect. 4.3",
    .n_params = 4,
    .params = suslov_params,
    .n_presets = 1,
    .presets = suslov_presets,
    .dimensions = suslov_dimensions,
    .potential = suslov_potential,
    .potential_gradient = suslov_zero_vector,
    .potential_hessian = suslov_zero_matrix,
    .constraint = suslov_constraint,
    .constraint_jacobian_velocity = suslov_jacobian_velocity,
    .constraint_jacobian_multiplier = suslov_jacobian_multiplier,
    .sample_configuration = suslov_sample,
    .minimum_energy = suslov_minimum_energy,
    .adapted_basis = suslov_adapted_basis,
    .mass_matrix = suslov_inertia,
    .mass_matrix_derivative = suslov_inertia_derivative,
    .lie_bracket = suslov_cross,
};
