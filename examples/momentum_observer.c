/* An observer plugin: the momentum p = M(q) v of a system with three coordinates (the knife edge, the CVT),
 * recorded as p_1, p_2, p_3 with the built-in observers' statistics, quantiles, sample paths, figures and
 * per-trajectory reductions, and the kinetic energy's share of H, T(q, v) / H(0), a scalar of every system.
 *
 *     nhens --plugin build/examples/momentum.so list | grep -A4 '^  p '
 *     nhens --plugin build/examples/momentum.so run --system knife --preset modin2020-fig4 --perturb 0.05 \
 *         --ensemble 64 --method dla01 --h 0.05 --T 50 --paths 2 --reduce 'final,max:|p|,first:kinetic_share<0.5' */
#include <nhens/nhens.h>

/* p = M(q) v; the mass matrix is M's full n x n matrix (the identity for most systems). */
static void momentum(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
                     const nh_initial_values *init, double *out)
{
    (void)self, (void)init;
    double m[3 * 3];
    nh_mass_matrix(s, q, m);
    for (int i = 0; i < 3; ++i)
        out[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
}

static int three_coordinates(const nh_observer_type *self, const nh_system *s)
{
    (void)self;
    return s->n == 3;
}

/* T(q, v) / H(0): 1 where all the energy is kinetic (divided by 1 when H(0) = 0). */
static void kinetic_share(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
                          const nh_initial_values *init, double *out)
{
    (void)self;
    out[0] = nh_kinetic_energy(s, q, v) / (init->energy != 0.0 ? init->energy : 1.0);
}

static const nh_observer_type momentum_observer = {
    .name = "p", .help = "momentum p = M(q) v (systems of three coordinates)", .dim = 3, .value = momentum,
    .applies = three_coordinates};
static const nh_observer_type kinetic_observer = {
    .name = "kinetic_share", .help = "kinetic energy over the initial energy, T(q, v) / H(0)", .dim = 1,
    .value = kinetic_share};

static int register_all(nh_registry *reg, nh_error *err)
{
    int rc = nh_registry_add_observer(reg, &momentum_observer, err);
    return rc ? rc : nh_registry_add_observer(reg, &kinetic_observer, err);
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "momentum",
                                                    "the momentum p = M(q) v and the kinetic share of H(0)",
                                                    register_all};
