/* Example plugin: a system none of the papers has. "contact-eps" is the contact oscillator of
 * McLachlan and Perlmutter (2006) with its anharmonic coupling: q = (x, y, z), M = I,
 *     V = 1/2 (x^2 + y^2 + z^2) + 1/2 eps x^2 z^2,      constraint  z' = y x'   (A = [-y, 0, 1]).
 * At eps = 0 it is the integrable contact oscillator of seed 004 Sect. 2.2.1 (built in as hcvt, in other
 * coordinates); eps > 0 couples the shafts through the potential and breaks the coupled structure.
 * Everything a method or `nhens check` needs is written out here through the public API only:
 * derivatives of V and A, an adapted basis of the kernel (for the D*-form methods) and a sampler. */
#include <nhens/nhens.h>

#include <string.h>

enum { CONTACT_EPS };

static const nh_param_def PARAMS[] = {
    {"eps", 0.5, 0.0, 100.0, 0, "strength of the coupling 1/2 eps x^2 z^2", NULL},
};

static const nh_preset PRESETS[] = {
    {"orbit", "one state on the constraint (y x' = z'): H = 0.6718 at eps = 0.5", NULL, 3, {0.5, -0.4, 0.3},
     {0.8, 0.3, -0.32}, 0, 0},
    {"shell", "200 random states on H = 1", NULL, 0, {0}, {0}, 1.0, 200},
};

static void contact_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 3;
    *m = 1;
}

static double eps(const nh_system *s)
{
    return nh_system_param(s, CONTACT_EPS);
}

static double contact_potential(const nh_system *s, const double *q)
{
    const double x = q[0], y = q[1], z = q[2];
    return 0.5 * (x * x + y * y + z * z) + 0.5 * eps(s) * x * x * z * z;
}

static void contact_gradient(const nh_system *s, const double *q, double *g)
{
    const double x = q[0], y = q[1], z = q[2], e = eps(s);
    g[0] = x + e * x * z * z;
    g[1] = y;
    g[2] = z + e * x * x * z;
}

static void contact_hessian(const nh_system *s, const double *q, double *h)
{
    const double x = q[0], z = q[2], e = eps(s);
    memset(h, 0, 9 * sizeof *h);
    h[0] = 1.0 + e * z * z;
    h[2] = h[6] = 2.0 * e * x * z;
    h[4] = 1.0;
    h[8] = 1.0 + e * x * x;
}

static void contact_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = -q[1];
    a[1] = 0.0;
    a[2] = 1.0;
}

/* d(A u)/dq = [0, -u_x, 0] */
static void contact_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    out[0] = out[2] = 0.0;
    out[1] = -u[0];
}

/* d(A^T lam)/dq: only the x-row depends on q, through y */
static void contact_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    memset(out, 0, 9 * sizeof *out);
    out[0 * 3 + 1] = -lam[0];
}

/* X_1 = d/dx + y d/dz, X_2 = d/dy span ker A; the only non-constant entry is X_1^z = y */
static void contact_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    memset(x, 0, 6 * sizeof *x);
    memset(dx, 0, 18 * sizeof *dx);
    x[0 * 2 + 0] = 1.0;
    x[2 * 2 + 0] = q[1];
    x[1 * 2 + 1] = 1.0;
    dx[(2 * 2 + 0) * 3 + 1] = 1.0;
}

static void contact_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    for (int i = 0; i < 3; ++i)
        q[i] = nh_pcg32_gaussian(rng);
}

/* V >= 0 = V(0) for eps >= 0 */
static double contact_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0;
}

static const nh_system_type CONTACT_EPS_SYSTEM = {
    .name = "contact-eps",
    .summary = "contact oscillator with the coupling 1/2 eps x^2 z^2 (example plugin)",
    .reference = "McLachlan-Perlmutter 2006 (contact oscillator); seed 004 Sect. 2.2.1 at eps = 0",
    .n_params = 1,
    .params = PARAMS,
    .flags = NH_SYS_CVT_TYPE, /* A depends on y only, and the constraint force moves x and z */
    .n_presets = 2,
    .presets = PRESETS,
    .dimensions = contact_dimensions,
    .potential = contact_potential,
    .potential_gradient = contact_gradient,
    .potential_hessian = contact_hessian,
    .constraint = contact_constraint,
    .constraint_jacobian_velocity = contact_jacobian_velocity,
    .constraint_jacobian_multiplier = contact_jacobian_multiplier,
    .sample_configuration = contact_sample,
    .minimum_energy = contact_minimum_energy,
    .adapted_basis = contact_adapted_basis,
};

static int register_all(nh_registry *reg, nh_error *err)
{
    return nh_registry_add_system(reg, &CONTACT_EPS_SYSTEM, err);
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "contact-eps",
                                                    "McLachlan-Perlmutter contact oscillator with coupling eps",
                                                    register_all};
