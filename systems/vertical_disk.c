/* Vertical rolling disk and mobile robot of Modin & Verdier 2020, Sect. 2.2.3, eq. 15: q = (x1, x2, x3, xi), M = I,
 * constraints x1' + cos(xi) x3' = 0, x2' + sin(xi) x3' = 0; V = 0 (vdisk) or V = sin(xi) (robot).
 * The passenger speed x3' is constant and xi'' = -V'(xi), so the vertical disk has the closed-form
 * solution xi = xi0 + w t, x1 = x1(0) - u [sin(xi) - sin(xi0)]/w, x2 = x2(0) + u [cos(xi) - cos(xi0)]/w
 * (a test checks it). Adapted basis X_1 = -cos(xi) d/dx1 - sin(xi) d/dx2 + d/dx3, X_2 = d/dxi. */
#include "nhens/system.h"

#include <math.h>
#include <string.h>

static int has_potential(const nh_system *s);

static void vd_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 4;
    *m = 2;
}

static double vd_potential(const nh_system *s, const double *q)
{
    return has_potential(s) ? sin(q[3]) : 0.0;
}

static void vd_gradient(const nh_system *s, const double *q, double *g)
{
    memset(g, 0, 4 * sizeof *g);
    g[3] = has_potential(s) ? cos(q[3]) : 0.0;
}

static void vd_hessian(const nh_system *s, const double *q, double *h)
{
    memset(h, 0, 16 * sizeof *h);
    h[15] = has_potential(s) ? -sin(q[3]) : 0.0;
}

static void vd_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    memset(a, 0, 8 * sizeof *a);
    a[0 * 4 + 0] = 1.0;
    a[0 * 4 + 2] = cos(q[3]);
    a[1 * 4 + 1] = 1.0;
    a[1 * 4 + 2] = sin(q[3]);
}

static void vd_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    memset(out, 0, 8 * sizeof *out);
    out[0 * 4 + 3] = -sin(q[3]) * u[2];
    out[1 * 4 + 3] = cos(q[3]) * u[2];
}

static void vd_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    memset(out, 0, 16 * sizeof *out);
    out[2 * 4 + 3] = -sin(q[3]) * lam[0] + cos(q[3]) * lam[1];
}

static void vd_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    memset(x, 0, 8 * sizeof *x);
    memset(dx, 0, 32 * sizeof *dx);
    x[0 * 2 + 0] = -cos(q[3]);
    x[1 * 2 + 0] = -sin(q[3]);
    x[2 * 2 + 0] = 1.0;
    x[3 * 2 + 1] = 1.0;
    dx[(0 * 2 + 0) * 4 + 3] = sin(q[3]);
    dx[(1 * 2 + 0) * 4 + 3] = -cos(q[3]);
}

static double vd_driver_energy(const nh_system *s, const double *q, const double *v)
{
    return 0.5 * v[3] * v[3] + vd_potential(s, q);
}

static void vd_coupled_structure(const nh_system *s, double xi, double *k, double *kappa, int *rows, double *f)
{
    (void)s;
    (void)kappa;
    k[0] = -cos(xi) / sqrt(2.0);
    k[1] = -sin(xi) / sqrt(2.0);
    k[2] = 1.0 / sqrt(2.0);
    *rows = 0;
    f[0] = f[1] = f[2] = 0.0;
}

static void vd_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    for (int i = 0; i < 3; ++i)
        q[i] = 2.0 * nh_pcg32_uniform(rng) - 1.0;
    q[3] = 2.0 * M_PI * nh_pcg32_uniform(rng);
}

static double vd_minimum_energy(const nh_system *s)
{
    return has_potential(s) ? -1.0 : 0.0;
}

/* xi (q[3]) is an angle; x1, x2, x3 are ignorable: V and A read xi only */
static void vertical_disk_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[0] = NH_COORDINATE_IGNORABLE;
    kind[1] = NH_COORDINATE_IGNORABLE;
    kind[2] = NH_COORDINATE_IGNORABLE;
    kind[3] = NH_COORDINATE_ANGLE;
}

#define VERTICAL_DISK_SYSTEM(var, nm, summ, shells)                                                                \
    const nh_system_type var = {.name = nm, .summary = summ, .reference = "Modin-Verdier 2020 Sect. 2.2.3, eq. 15",  \
                                .n_presets = 1, .presets = shells,                                                 \
                                .flags = NH_SYS_CVT_TYPE, .dimensions = vd_dimensions, .potential = vd_potential,  \
                                .potential_gradient = vd_gradient, .potential_hessian = vd_hessian,                \
                                .constraint = vd_constraint, .constraint_jacobian_velocity = vd_jacobian_velocity, \
                                .constraint_jacobian_multiplier = vd_jacobian_multiplier,                          \
                                .sample_configuration = vd_sample, .minimum_energy = vd_minimum_energy,            \
                                .adapted_basis = vd_adapted_basis, .driver_energy = vd_driver_energy,             \
                                .coupled_structure = vd_coupled_structure,                                          \
                                .coordinate_kinds = vertical_disk_coordinate_kinds}

/* The shells of the cross-system tests and of `--preset shell` (every built-in system declares one). */
static const nh_preset vdisk_presets[] = {
    {"shell", "100 random states of the rolling penny on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};
static const nh_preset robot_presets[] = {
    {"shell", "100 random states of the robot on H = 2 (no paper fixes an ensemble)", "", 0, {0}, {0}, 2.0, 100},
};

VERTICAL_DISK_SYSTEM(nh_system_vdisk, "vdisk", "vertical rolling disk / rolling penny (Modin & Verdier 2020, eq. 15)",
                     vdisk_presets);
VERTICAL_DISK_SYSTEM(nh_system_robot, "robot",
                     "mobile robot: vertical disk with driver potential sin(xi) (Modin & Verdier 2020, Sect. 2.2.3)",
                     robot_presets);

static int has_potential(const nh_system *s)
{
    return s->type == &nh_system_robot;
}
