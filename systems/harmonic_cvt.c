/* Harmonically driven CVT ("contact oscillator") and the nonholonomic particle of Modin & Verdier 2020
 * Sect. 2.2.1: q = (x1, x2, xi), M = I, V = 1/2 |kappa x|^2 + xi^2/2, constraint x1' + xi x2' = 0.
 * hcvt has kappa = I (both shafts sprung), mvparticle kappa = [0 1] (the first shaft free), so its
 * passenger energy is 1/2|x'|^2 + 1/2 x2^2. Adapted basis X_1 = -xi d/dx1 + d/dx2, X_2 = d/dxi. */
#include "nhens/system.h"

#include <math.h>
#include <string.h>

static int first_shaft_sprung(const nh_system *s);

static void coupled_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 3;
    *m = 1;
}

static double coupled_potential(const nh_system *s, const double *q)
{
    double x1 = first_shaft_sprung(s) ? q[0] : 0.0;
    return 0.5 * (x1 * x1 + q[1] * q[1] + q[2] * q[2]);
}

static void coupled_gradient(const nh_system *s, const double *q, double *g)
{
    g[0] = first_shaft_sprung(s) ? q[0] : 0.0;
    g[1] = q[1];
    g[2] = q[2];
}

static void coupled_hessian(const nh_system *s, const double *q, double *h)
{
    (void)q;
    memset(h, 0, 9 * sizeof *h);
    h[0] = first_shaft_sprung(s) ? 1.0 : 0.0;
    h[4] = 1.0;
    h[8] = 1.0;
}

static void coupled_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = 1.0;
    a[1] = q[2];
    a[2] = 0.0;
}

static void coupled_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    out[0] = out[1] = 0.0;
    out[2] = u[1];
}

static void coupled_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    memset(out, 0, 9 * sizeof *out);
    out[1 * 3 + 2] = lam[0];
}

static void coupled_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = -q[2];
    x[1 * 2 + 0] = 1.0;
    x[2 * 2 + 1] = 1.0;
    dx[(0 * 2 + 0) * 3 + 2] = -1.0;
}

static double coupled_driver_energy(const nh_system *s, const double *q, const double *v)
{
    (void)s;
    return 0.5 * (v[2] * v[2] + q[2] * q[2]);
}

static void coupled_structure(const nh_system *s, double xi, double *k, double *kappa, int *rows, double *f)
{
    const double norm = sqrt(1.0 + xi * xi);
    k[0] = -xi / norm;
    k[1] = 1.0 / norm;
    if (first_shaft_sprung(s)) {
        kappa[0] = 1.0, kappa[1] = 0.0, kappa[2] = 0.0, kappa[3] = 1.0;
        *rows = 2;
    } else {
        kappa[0] = 0.0, kappa[1] = 1.0;
        *rows = 1;
    }
    f[0] = f[1] = 0.0;
}

/* x2, xi ~ N(0, 1); x1 ~ N(0, 1) too (it only sets the reference point of the free shaft) */
static void coupled_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    for (int i = 0; i < 3; ++i)
        q[i] = nh_pcg32_gaussian(rng);
}

static double coupled_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

/* mvparticle's x1 (q[0]) is ignorable: its potential and A read x2 and xi only (hcvt's spring reads x1) */
static void coupled_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    if (!first_shaft_sprung(s))
        kind[0] = NH_COORDINATE_IGNORABLE;
}

#define COUPLED_SYSTEM(var, nm, summ, shells)                                                                      \
    const nh_system_type var = {.name = nm, .summary = summ, .reference = "Modin-Verdier 2020 Sect. 2.2.1, Table 1", \
                                .n_presets = 1, .presets = shells,                                                 \
                                .flags = NH_SYS_CVT_TYPE | NH_SYS_AFFINE_CONSTRAINT,                               \
                                .dimensions = coupled_dimensions,                                                  \
                                .potential = coupled_potential, .potential_gradient = coupled_gradient,            \
                                .potential_hessian = coupled_hessian, .constraint = coupled_constraint,            \
                                .constraint_jacobian_velocity = coupled_jacobian_velocity,                         \
                                .constraint_jacobian_multiplier = coupled_jacobian_multiplier,                     \
                                .sample_configuration = coupled_sample, .minimum_energy = coupled_minimum_energy,  \
                                .adapted_basis = coupled_adapted_basis, .driver_energy = coupled_driver_energy,   \
                                .coupled_structure = coupled_structure,                                            \
                                .coordinate_kinds = coupled_coordinate_kinds}

/* The shells of the cross-system tests and of `--preset shell` (every built-in system declares one). */
static const nh_preset hcvt_presets[] = {
    {"shell", "100 random states of the harmonically driven CVT on H = 1.2 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.2, 100},
};
static const nh_preset mvparticle_presets[] = {
    {"shell", "100 random states of the particle on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};

COUPLED_SYSTEM(nh_system_hcvt, "hcvt",
               "harmonically driven CVT / contact oscillator (Modin & Verdier 2020, Sect. 2.2.1, kappa = I)",
               hcvt_presets);
COUPLED_SYSTEM(nh_system_mvparticle, "mvparticle",
               "nonholonomic particle of Modin & Verdier 2020 (degenerate CVT, kappa = [0 1], Sect. 2.2.1)",
               mvparticle_presets);

static int first_shaft_sprung(const nh_system *s)
{
    return s->type == &nh_system_hcvt;
}
