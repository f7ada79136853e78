/* Rolling disk (unicycle) of Celledoni et al. 2019, Sect. 2: q = (x1, x2, theta, phi), M = diag(m, m, J_theta, J_phi),
 * V = 0, constraints x1' = r cos(theta) phi', x2' = r sin(theta) phi'. Adapted basis (Celledoni et al. 2019, Sect. 2)
 * X_1 = r cos(theta) d/dx1 + r sin(theta) d/dx2 + d/dphi, X_2 = d/dtheta. In D* coordinates rho is
 * constant along every solution (Celledoni et al. 2019, Sect. 3.2 example), which a test checks. */
#include "nhens/system.h"

#include <math.h>
#include <string.h>

enum { P_M = 0, P_R = 1, P_JT = 2, P_JP = 3 };
static const double DISK_BOX = 1.0; /* x ~ U[-1, 1]^2, angles uniform */

static const nh_param_def disk_params[] = {
    {"m", 1.0, 1e-6, 1e6, 0, "mass of the disk", NULL},
    {"r", 1.0, 1e-6, 1e6, 0, "radius", NULL},
    {"Jtheta", 1.0, 1e-6, 1e6, 0, "moment of inertia about the vertical axis (theta)", NULL},
    {"Jphi", 1.0, 1e-6, 1e6, 0, "moment of inertia about the rolling axis (phi)", NULL},
};

static double par(const nh_system *s, int i)
{
    return s->params.value[i];
}

static void disk_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 4;
    *m = 2;
}

static void disk_mass(const nh_system *s, double *diag)
{
    diag[0] = diag[1] = par(s, P_M);
    diag[2] = par(s, P_JT);
    diag[3] = par(s, P_JP);
}

static double disk_potential(const nh_system *s, const double *q)
{
    (void)s;
    (void)q;
    return 0.0;
}

static void disk_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    (void)q;
    memset(g, 0, 4 * sizeof *g);
}

static void disk_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 16 * sizeof *h);
}

static void disk_constraint(const nh_system *s, const double *q, double *a)
{
    const double r = par(s, P_R);
    memset(a, 0, 8 * sizeof *a);
    a[0 * 4 + 0] = 1.0;
    a[0 * 4 + 3] = -r * cos(q[2]);
    a[1 * 4 + 1] = 1.0;
    a[1 * 4 + 3] = -r * sin(q[2]);
}

/* only A_{.,phi} depends on theta */
static void disk_constraint_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    const double r = par(s, P_R);
    memset(out, 0, 8 * sizeof *out);
    out[0 * 4 + 2] = r * sin(q[2]) * u[3];
    out[1 * 4 + 2] = -r * cos(q[2]) * u[3];
}

static void disk_constraint_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    const double r = par(s, P_R);
    memset(out, 0, 16 * sizeof *out);
    out[3 * 4 + 2] = r * (sin(q[2]) * lam[0] - cos(q[2]) * lam[1]);
}

static void disk_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    const double r = par(s, P_R);
    memset(x, 0, 8 * sizeof *x);
    memset(dx, 0, 32 * sizeof *dx);
    x[0 * 2 + 0] = r * cos(q[2]);
    x[1 * 2 + 0] = r * sin(q[2]);
    x[3 * 2 + 0] = 1.0;
    x[2 * 2 + 1] = 1.0;
    dx[(0 * 2 + 0) * 4 + 2] = -r * sin(q[2]);
    dx[(1 * 2 + 0) * 4 + 2] = r * cos(q[2]);
}

static void disk_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = DISK_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[1] = DISK_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[2] = 2.0 * M_PI * nh_pcg32_uniform(rng);
    q[3] = 2.0 * M_PI * nh_pcg32_uniform(rng);
}

static double disk_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

/* theta (q[2]) and phi (q[3]) are angles; the position (q[0], q[1]) is ignorable: V = 0, A reads theta only */
static void disk_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[0] = NH_COORDINATE_IGNORABLE;
    kind[1] = NH_COORDINATE_IGNORABLE;
    kind[2] = NH_COORDINATE_ANGLE;
    kind[3] = NH_COORDINATE_ANGLE;
}

/* The shell of the cross-system tests and of `--preset shell` (every built-in system declares one). */
static const nh_preset disk_presets[] = {
    {"shell", "100 random states of the rolling disk on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};

const nh_system_type nh_system_disk = {
    .name = "disk",
    .summary = "rolling disk / unicycle (Celledoni et al. 2019, Sect. 2), purely kinetic",
    .reference = "Celledoni et al. 2019 Sect. 2, eq. 2",
    .n_params = 4,
    .params = disk_params,
    .flags = NH_SYS_CVT_TYPE,
    .n_presets = 1,
    .presets = disk_presets,
    .dimensions = disk_dimensions,
    .mass = disk_mass,
    .potential = disk_potential,
    .potential_gradient = disk_gradient,
    .potential_hessian = disk_hessian,
    .constraint = disk_constraint,
    .constraint_jacobian_velocity = disk_constraint_jacobian_velocity,
    .constraint_jacobian_multiplier = disk_constraint_jacobian_multiplier,
    .sample_configuration = disk_sample,
    .minimum_energy = disk_minimum_energy,
    .adapted_basis = disk_adapted_basis,
    .coordinate_kinds = disk_coordinate_kinds,
};
