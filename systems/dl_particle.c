/* Nonholonomic particle of de Leon et al. 2004, Example 4.2: q = (x, y, z), M = I, V = x^2 + y^2 (L = 1/2|v|^2 -
 * (x^2 + y^2)), constraint z' - y x' = 0. Named dlparticle to keep it apart from the particle of Modin & Verdier 2020
 * (mvparticle). Adapted basis X_1 = d/dx + y d/dz, X_2 = d/dy. */
#include "nhens/system.h"

#include <string.h>

static void dl_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 3;
    *m = 1;
}

static double dl_potential(const nh_system *s, const double *q)
{
    (void)s;
    return q[0] * q[0] + q[1] * q[1];
}

static void dl_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    g[0] = 2.0 * q[0];
    g[1] = 2.0 * q[1];
    g[2] = 0.0;
}

static void dl_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 9 * sizeof *h);
    h[0] = h[4] = 2.0;
}

static void dl_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = -q[1];
    a[1] = 0.0;
    a[2] = 1.0;
}

static void dl_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    out[0] = out[2] = 0.0;
    out[1] = -u[0];
}

static void dl_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    memset(out, 0, 9 * sizeof *out);
    out[0 * 3 + 1] = -lam[0];
}

static void dl_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = 1.0;
    x[2 * 2 + 0] = q[1];
    x[1 * 2 + 1] = 1.0;
    dx[(2 * 2 + 0) * 3 + 1] = 1.0;
}

static void dl_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    for (int i = 0; i < 3; ++i)
        q[i] = nh_pcg32_gaussian(rng);
}

static double dl_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

/* z (q[2]) is ignorable: V = x^2 + y^2 and A = [-y, 0, 1] do not read it */
static void dl_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[2] = NH_COORDINATE_IGNORABLE;
}

/* The shell of the cross-system tests and of `--preset shell` (every built-in system declares one). */
static const nh_preset dl_presets[] = {
    {"shell", "100 random states of the particle on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};

const nh_system_type nh_system_dlparticle = {
    .name = "dlparticle",
    .summary = "nonholonomic particle of de Leon et al. 2004, Example 4.2 (z' = y x', V = x^2 + y^2)",
    .reference = "de Leon et al. 2004 Example 4.2",
    .flags = NH_SYS_CVT_TYPE | NH_SYS_AFFINE_CONSTRAINT,
    .n_presets = 1,
    .presets = dl_presets,
    .dimensions = dl_dimensions,
    .potential = dl_potential,
    .potential_gradient = dl_gradient,
    .potential_hessian = dl_hessian,
    .constraint = dl_constraint,
    .constraint_jacobian_velocity = dl_jacobian_velocity,
    .constraint_jacobian_multiplier = dl_jacobian_multiplier,
    .sample_configuration = dl_sample,
    .minimum_energy = dl_minimum_energy,
    .adapted_basis = dl_adapted_basis,
    .coordinate_kinds = dl_coordinate_kinds,
};
