/* Chaplygin sleigh of Celledoni et al. 2019, Sect. 4.2: q = (x1, x2, theta), V = 0, configuration-dependent mass matrix
 *   M(theta) = [[m, 0, -m a sin], [0, m, m a cos], [-m a sin, m a cos, J + m a^2]],
 * constraint -sin(theta) x1' + cos(theta) x2' = 0 (the blade slides only along itself). D* form in the
 * orthonormal adapted basis X_1 = d/dtheta / sqrt(J + m a^2), X_2 = (cos d/dx1 + sin d/dx2)/sqrt(m), so
 * H = 1/2 |rho|^2 and the D* equations are Celledoni et al. 2019, eq. 22; the preset of Fig. 3 is given in rho. */
#include "nhens/system.h"

#include <math.h>
#include <string.h>

enum { P_J = 0, P_A = 1, P_M = 2 };
static const double SLEIGH_BOX = 5.0; /* x ~ U[-5, 5]^2, theta uniform */

static const nh_param_def sleigh_params[] = {
    {"J", 8.0, 1e-6, 1e6, 0, "moment of inertia about the centre of mass", NULL},
    {"a", 1.0, 0.0, 1e3, 0, "distance from the centre of mass to the blade's contact point", NULL},
    {"m", 1.0, 1e-6, 1e6, 0, "mass", NULL},
};

/* Celledoni et al. 2019, Fig. 3, give (x1, x2, theta, rho1, rho2) with J = 8, a = m = 1: v = rho1 X_1 + rho2 X_2. */
#define FIG3_V(rho1) {-0.6 * 0.99500416527802582, -0.6 * 0.099833416646828155, (rho1) / 3.0}
static const nh_preset sleigh_presets[] = {
    {"celledoni2019-fig3-plus",
     "Celledoni et al. 2019, Fig. 3: J = 8, a = m = 1, x = (-5, 0), theta = 0.1, rho = (+0.001, -0.6); "
     "run with h = 0.5",
     "J=8,a=1,m=1", 3, {-5, 0, 0.1}, FIG3_V(0.001), 0, 0},
    {"celledoni2019-fig3-minus", "Celledoni et al. 2019, Fig. 3: as -plus with rho1 = -0.001", "J=8,a=1,m=1", 3,
     {-5, 0, 0.1}, FIG3_V(-0.001), 0, 0},
    {"shell", "100 random states of the sleigh at the default parameters on H = 1 (no paper fixes an ensemble)", "", 0, {0}, {0}, 1.0, 100},
};

static double par(const nh_system *s, int i)
{
    return s->params.value[i];
}

static void sleigh_dimensions(const double *p, int *n, int *m)
{
    (void)p;
    *n = 3;
    *m = 1;
}

static void sleigh_mass_matrix(const nh_system *s, const double *q, double *mm)
{
    const double m = par(s, P_M), a = par(s, P_A), J = par(s, P_J), sn = sin(q[2]), cs = cos(q[2]);
    double rows[9] = {m, 0, -m * a * sn, 0, m, m * a * cs, -m * a * sn, m * a * cs, J + m * a * a};
    memcpy(mm, rows, sizeof rows);
}

static void sleigh_mass_matrix_derivative(const nh_system *s, const double *q, double *dm)
{
    const double m = par(s, P_M), a = par(s, P_A), sn = sin(q[2]), cs = cos(q[2]);
    memset(dm, 0, 27 * sizeof *dm);
    dm[(0 * 3 + 2) * 3 + 2] = dm[(2 * 3 + 0) * 3 + 2] = -m * a * cs;
    dm[(1 * 3 + 2) * 3 + 2] = dm[(2 * 3 + 1) * 3 + 2] = -m * a * sn;
}

static double sleigh_potential(const nh_system *s, const double *q)
{
    (void)s;
    (void)q;
    return 0.0;
}

static void sleigh_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    (void)q;
    memset(g, 0, 3 * sizeof *g);
}

static void sleigh_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 9 * sizeof *h);
}

static void sleigh_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = -sin(q[2]);
    a[1] = cos(q[2]);
    a[2] = 0.0;
}

static void sleigh_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    out[0] = out[1] = 0.0;
    out[2] = -cos(q[2]) * u[0] - sin(q[2]) * u[1];
}

static void sleigh_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    memset(out, 0, 9 * sizeof *out);
    out[0 * 3 + 2] = -cos(q[2]) * lam[0];
    out[1 * 3 + 2] = -sin(q[2]) * lam[0];
}

static void sleigh_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    const double rm = 1.0 / sqrt(par(s, P_M)), ri = 1.0 / sqrt(par(s, P_J) + par(s, P_M) * par(s, P_A) * par(s, P_A));
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[2 * 2 + 0] = ri;
    x[0 * 2 + 1] = rm * cos(q[2]);
    x[1 * 2 + 1] = rm * sin(q[2]);
    dx[(0 * 2 + 1) * 3 + 2] = -rm * sin(q[2]);
    dx[(1 * 2 + 1) * 3 + 2] = rm * cos(q[2]);
}

static void sleigh_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = SLEIGH_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[1] = SLEIGH_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[2] = 2.0 * M_PI * nh_pcg32_uniform(rng);
}

static double sleigh_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

/* theta (q[2]) is an angle; the position (q[0], q[1]) is ignorable: V = 0, and M and A read theta only */
static void sleigh_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[0] = NH_COORDINATE_IGNORABLE;
    kind[1] = NH_COORDINATE_IGNORABLE;
    kind[2] = NH_COORDINATE_ANGLE;
}

const nh_system_type nh_system_sleigh = {
    .name = "sleigh",
    .summary = "Chaplygin sleigh, configuration-dependent mass matrix (Celledoni et al. 2019, Sect. 4.2)",
    .reference = "Celledoni et al. 2019 Sect. 4.2, eqs. 22-23, Prop. 4.1",
    .n_params = 3,
    .params = sleigh_params,
    .n_presets = 3,
    .presets = sleigh_presets,
    .dimensions = sleigh_dimensions,
    .potential = sleigh_potential,
    .potential_gradient = sleigh_gradient,
    .potential_hessian = sleigh_hessian,
    .constraint = sleigh_constraint,
    .constraint_jacobian_velocity = sleigh_jacobian_velocity,
    .constraint_jacobian_multiplier = sleigh_jacobian_multiplier,
    .sample_configuration = sleigh_sample,
    .minimum_energy = sleigh_minimum_energy,
    .adapted_basis = sleigh_adapted_basis,
    .mass_matrix = sleigh_mass_matrix,
    .mass_matrix_derivative = sleigh_mass_matrix_derivative,
    .coordinate_kinds = sleigh_coordinate_kinds,
};
