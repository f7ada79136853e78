/* Knife edge (skate on an inclined plane) of Modin & Verdier 2020, Sect. 2.2.2, eq. 13, with the perturbation
 * A(xi) = [-sin xi, cos xi - eps]: q = (x1, x2, xi), M = I, V = -x1 (gravity f = (1, 0) along the
 * slope), free driver xi'' = 0. eps != 0 makes the averaged kernel direction non-zero and destroys
 * integrability (Modin & Verdier 2020, Prop. 5.4).
 * Its sines and cosines are nh_sin and nh_cos (trig_inline.h), the lane kernels' too. */
#include "nhens/system.h"
#include "trig_inline.h"

#include <math.h>
#include <string.h>

enum { P_EPS = 0 };
static const double KNIFE_BOX = 1.0; /* x1, x2 ~ U[-1, 1] in the configuration distribution */

static const nh_param_def knife_params[] = {
    {"eps", 0.0, -0.9, 0.9, 0, "perturbation of the constraint [-sin xi, cos xi - eps]", NULL},
};

static const nh_preset knife_presets[] = {
    {"modin2020-fig4", "Modin & Verdier 2020, Sect. 3.1 / Fig. 4: horizontal skate turned by the driver", "", 3,
     {0, 0, M_PI / 2}, {0, 0, 1}, 0, 0},
    /* the shell of the cross-system tests: the edge slides downhill, so H's terms grow while H stays 1.5 */
    {"shell", "100 random states of the inclined knife edge (eps = 0.3) on H = 1.5 (no paper fixes an ensemble)", "eps=0.3", 0, {0}, {0}, 1.5,
     100},
};

static void knife_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 3;
    *m = 1;
}

static double knife_potential(const nh_system *s, const double *q)
{
    (void)s;
    return -q[0];
}

static void knife_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    (void)q;
    g[0] = -1.0;
    g[1] = 0.0;
    g[2] = 0.0;
}

static void knife_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 9 * sizeof *h);
}

static void knife_constraint(const nh_system *s, const double *q, double *a)
{
    a[0] = -nh_sin(q[2]);
    a[1] = nh_cos(q[2]) - s->params.value[P_EPS];
    a[2] = 0.0;
}

/* A = [-sin xi, cos xi - eps, 0]: only d/dxi is non-zero */
static void knife_constraint_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    out[0] = 0.0;
    out[1] = 0.0;
    out[2] = -nh_cos(q[2]) * u[0] - nh_sin(q[2]) * u[1];
}

static void knife_constraint_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    memset(out, 0, 9 * sizeof *out);
    out[0 * 3 + 2] = -nh_cos(q[2]) * lam[0];
    out[1 * 3 + 2] = -nh_sin(q[2]) * lam[0];
}

/* X_1 = (cos xi - eps) d/dx1 + sin(xi) d/dx2 (along the blade), X_2 = d/dxi */
static void knife_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = nh_cos(q[2]) - s->params.value[P_EPS];
    x[1 * 2 + 0] = nh_sin(q[2]);
    x[2 * 2 + 1] = 1.0;
    dx[(0 * 2 + 0) * 3 + 2] = -nh_sin(q[2]);
    dx[(1 * 2 + 0) * 3 + 2] = nh_cos(q[2]);
}

static double knife_driver_energy(const nh_system *s, const double *q, const double *v)
{
    (void)s;
    (void)q;
    return 0.5 * v[2] * v[2];   /* V(xi) = 0: the free driver */
}

static void knife_coupled_structure(const nh_system *s, double xi, double *k, double *kappa, int *rows, double *f)
{
    (void)kappa;
    const double c = nh_cos(xi) - s->params.value[P_EPS], norm = sqrt(c * c + nh_sin(xi) * nh_sin(xi));
    k[0] = c / norm;
    k[1] = nh_sin(xi) / norm;
    *rows = 0;          /* kappa = 0: U = -f^T x with f = (1, 0) */
    f[0] = 1.0;
    f[1] = 0.0;
}

static void knife_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = KNIFE_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[1] = KNIFE_BOX * (2.0 * nh_pcg32_uniform(rng) - 1.0);
    q[2] = 2.0 * M_PI * nh_pcg32_uniform(rng);
}

static double knife_minimum_energy(const nh_system *s)
{
    (void)s;
    return -KNIFE_BOX;
}

/* xi (q[2]) is an angle; x2 (q[1]) is ignorable: V = -x1 and A read neither */
static void knife_coordinate_kinds(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[1] = NH_COORDINATE_IGNORABLE;
    kind[2] = NH_COORDINATE_ANGLE;
}

const nh_system_type nh_system_knife = {
    .name = "knife",
    .summary = "knife edge on an inclined plane, optionally perturbed (Modin & Verdier 2020, eq. 13)",
    .reference = "Modin & Verdier 2020 Sect. 2.2.2",
    .n_params = 1,
    .params = knife_params,
    .flags = NH_SYS_CVT_TYPE,
    .n_presets = 2,
    .presets = knife_presets,
    .dimensions = knife_dimensions,
    .potential = knife_potential,
    .potential_gradient = knife_gradient,
    .potential_hessian = knife_hessian,
    .constraint = knife_constraint,
    .constraint_jacobian_velocity = knife_constraint_jacobian_velocity,
    .constraint_jacobian_multiplier = knife_constraint_jacobian_multiplier,
    .sample_configuration = knife_sample,
    .minimum_energy = knife_minimum_energy,
    .adapted_basis = knife_adapted_basis,
    .driver_energy = knife_driver_energy,
    .coupled_structure = knife_coupled_structure,
    .coordinate_kinds = knife_coordinate_kinds,
};
