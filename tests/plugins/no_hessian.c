/* A plugin whose system has no potential Hessian, which the implicit methods' Newton matrices call: the
 * registry must refuse it by name, and the loader must pass that on (else dla would call the missing Hessian). */
#include <nhens/nhens.h>

#include <string.h>

static void plane_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 2;
    *m = 1;
}

static double plane_potential(const nh_system *s, const double *q)
{
    (void)s;
    return 0.5 * (q[0] * q[0] + q[1] * q[1]);
}

static void plane_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    g[0] = q[0];
    g[1] = q[1];
}

static void plane_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = 1.0;
    a[1] = q[0];
}

static void plane_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    out[0] = u[1];
    out[1] = 0.0;
}

static void plane_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    memset(out, 0, 4 * sizeof *out);
    out[1 * 2 + 0] = lam[0];
}

static void plane_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = nh_pcg32_gaussian(rng);
    q[1] = nh_pcg32_gaussian(rng);
}

static double plane_minimum(const nh_system *s)
{
    (void)s;
    return 0.0;
}

static const nh_system_type PLANE_WITHOUT_HESSIAN = {
    .name = "plane-without-hessian", .summary = "test", .reference = "test", .dimensions = plane_dimensions,
    .potential = plane_potential, .potential_gradient = plane_gradient, .constraint = plane_constraint,
    .constraint_jacobian_velocity = plane_jacobian_velocity,
    .constraint_jacobian_multiplier = plane_jacobian_multiplier, .sample_configuration = plane_sample,
    .minimum_energy = plane_minimum};

static int register_plane(nh_registry *reg, nh_error *err)
{
    return nh_registry_add_system(reg, &PLANE_WITHOUT_HESSIAN, err);
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "no-hessian",
                                                    "a system without a potential Hessian", register_plane};
