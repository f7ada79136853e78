/* Pendulum-driven continuously variable transmission (Modin & Verdier 2020, eq. 12; Anahory Simoes et al. 2022,
 * Sect. 5.2; Celledoni et al. 2019, eq. 24): q = (x1, x2, xi), M = I, V = 1/2|x|^2 + cos xi - eps sin(2 xi)/2,
 * constraint x1' + sin(xi) x2' = 0. Anahory Simoes et al. 2022 write (x, y) for our (x2, x1). With V = cos xi the
 * point xi = 0 is the top of the pendulum, so the oscillating driver starts at xi = pi.
 * Its sines and cosines are nh_sin and nh_cos (trig_inline.h), the lane kernels' too. */
#include "nhens/system.h"
#include "trig_inline.h"

#include <math.h>
#include <string.h>

enum { P_EPS = 0, P_SPREAD = 1 };

static const nh_param_def cvt_params[] = {
    {"eps", 0.0, -10.0, 10.0, 0, "perturbation of the driver potential cos xi - eps sin(2 xi)/2", NULL},
    {"spread", 1.0, 1e-3, 100, 0,
     "sampler: x1, x2 ~ N(0, spread^2), xi uniform on (-pi, pi) (the papers give single states only)", NULL},
};

static const nh_preset cvt_presets[] = {
    {"rotating", "Modin & Verdier 2020, Sect. 3.2 rotating driver (Figs. 6-8), H = 6.0, driver energy 5.0", "", 3,
     {1, 1, 0}, {0, 0, 2.82842712}, 0, 0},
    {"oscillating",
     "Modin & Verdier 2020, Sect. 3.2 oscillating driver (Figs. 6-8), xi(0) = pi (bottom), driver energy 0.8", "", 3,
     {1, 1, M_PI}, {0, 0, 1.8973666}, 0, 0},
    {"anahory2022-fig3",
     "Anahory Simoes et al. 2022, Sect. 5.2 / Fig. 3 (eps = 0), energy 0.2723; x1, x2 swapped to our convention",
     /* v: the printed (-0.4075, -0.4481, 0.1), rounded to 4 digits and 4.4e-5 off D_q, projected onto it (a move
      * of 3.2e-5), so that the preset passes the check of every preset against the constraint (1e-10) */
     "eps=0", 3, {0, 1, -2}, {-0.40747601132241695, -0.44812181284279917, 0.1}, 0, 0},
    {"anahory2022-fig4", "Anahory Simoes et al. 2022, Sect. 5.2 / Figs. 4-5 (eps = 0.1), energy 6.0", "eps=0.1", 3,
     {1, 1, 0}, {0, 0, 2.82842712}, 0, 0},
    {"gearbox", "Celledoni et al. 2019, eq. 24 / Fig. 4: gearbox driven by an asymmetric pendulum (eps = 0.4); "
     "random states on H = 2 (Celledoni et al. 2019 give no energy)", "eps=0.4", 0, {0}, {0}, 2.0, 1},
};

static double eps_of(const nh_system *s)
{
    return s->params.value[P_EPS];
}

static void cvt_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 3;
    *m = 1;
}

static double driver_potential(double eps, double xi)
{
    return nh_cos(xi) - 0.5 * eps * nh_sin(2.0 * xi);
}

static double cvt_potential(const nh_system *s, const double *q)
{
    return 0.5 * (q[0] * q[0] + q[1] * q[1]) + driver_potential(eps_of(s), q[2]);
}

static void cvt_gradient(const nh_system *s, const double *q, double *g)
{
    g[0] = q[0];
    g[1] = q[1];
    g[2] = -nh_sin(q[2]) - eps_of(s) * nh_cos(2.0 * q[2]);
}

static void cvt_hessian(const nh_system *s, const double *q, double *h)
{
    memset(h, 0, 9 * sizeof *h);
    h[0] = 1.0;
    h[4] = 1.0;
    h[8] = -nh_cos(q[2]) + 2.0 * eps_of(s) * nh_sin(2.0 * q[2]);
}

static void cvt_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = 1.0;
    a[1] = nh_sin(q[2]);
    a[2] = 0.0;
}

/* A = [1, sin xi, 0]: only d/dxi is non-zero */
static void cvt_constraint_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    out[0] = 0.0;
    out[1] = 0.0;
    out[2] = nh_cos(q[2]) * u[1];
}

static void cvt_constraint_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    memset(out, 0, 9 * sizeof *out);
    out[1 * 3 + 2] = nh_cos(q[2]) * lam[0];
}

/* X_1 = -sin(xi) d/dx1 + d/dx2 (passenger), X_2 = d/dxi (driver) */
static void cvt_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = -nh_sin(q[2]);
    x[1 * 2 + 0] = 1.0;
    x[2 * 2 + 1] = 1.0;
    dx[(0 * 2 + 0) * 3 + 2] = -nh_cos(q[2]);
}

static double cvt_driver_energy(const nh_system *s, const double *q, const double *v)
{
    return 0.5 * v[2] * v[2] + driver_potential(eps_of(s), q[2]);
}

static void cvt_coupled_structure(const nh_system *s, double xi, double *k, double *kappa, int *rows, double *f)
{
    (void)s;
    const double norm = sqrt(1.0 + nh_sin(xi) * nh_sin(xi));
    k[0] = -nh_sin(xi) / norm;
    k[1] = 1.0 / norm;
    kappa[0] = 1.0, kappa[1] = 0.0, kappa[2] = 0.0, kappa[3] = 1.0;
    *rows = 2;
    f[0] = f[1] = 0.0;
}

static void cvt_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    q[0] = s->params.value[P_SPREAD] * nh_pcg32_gaussian(rng);
    q[1] = s->params.value[P_SPREAD] * nh_pcg32_gaussian(rng);
    q[2] = M_PI * (2.0 * nh_pcg32_uniform(rng) - 1.0);
}

/* min over xi of the driver potential (x = 0 is in the support): a grid, then golden section. */
static double cvt_minimum_energy(const nh_system *s)
{
    const double eps = eps_of(s);
    const int grid = 720;
    double best_xi = 0.0, best = INFINITY;
    for (int i = 0; i < grid; ++i) {
        double xi = -M_PI + 2.0 * M_PI * i / grid, v = driver_potential(eps, xi);
        if (v < best) {
            best = v;
            best_xi = xi;
        }
    }
    double lo = best_xi - 2.0 * M_PI / grid, hi = best_xi + 2.0 * M_PI / grid;
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    for (int it = 0; it < 80; ++it) {
        double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        if (driver_potential(eps, a) < driver_potential(eps, b))
            hi = b;
        else
            lo = a;
    }
    double v = driver_potential(eps, 0.5 * (lo + hi));
    return v < best ? v : best;
}

/* xi (q[2]) is an angle */
static void cvt_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[2] = NH_COORDINATE_ANGLE;
}

const nh_system_type nh_system_cvt = {
    .name = "cvt",
    .summary = "pendulum-driven continuously variable transmission (Modin & Verdier 2020, eq. 12)",
    .reference = "Modin & Verdier 2020 eqs. 11-12; Anahory Simoes et al. 2022 Sect. 5.2; Celledoni et al. 2019 eq. 24",
    .n_params = sizeof cvt_params / sizeof cvt_params[0],
    .params = cvt_params,
    .flags = NH_SYS_CVT_TYPE,
    .n_presets = 5,
    .presets = cvt_presets,
    .dimensions = cvt_dimensions,
    .potential = cvt_potential,
    .potential_gradient = cvt_gradient,
    .potential_hessian = cvt_hessian,
    .constraint = cvt_constraint,
    .constraint_jacobian_velocity = cvt_constraint_jacobian_velocity,
    .constraint_jacobian_multiplier = cvt_constraint_jacobian_multiplier,
    .sample_configuration = cvt_sample,
    .minimum_energy = cvt_minimum_energy,
    .adapted_basis = cvt_adapted_basis,
    .driver_energy = cvt_driver_energy,
    .coupled_structure = cvt_coupled_structure,
    .coordinate_kinds = cvt_coordinate_kinds,
};
