/* Example plugin: a system none of the papers has. "contact-eps" is McLachlan and Perlmutter's (2006)
 * contact oscillator on R^{2k+1}, with its anharmonic coupling: q = (x_1..x_k, y_1..y_k, z), M = I,
 *     V = 1/2 |q|^2 + 1/2 eps z^2 sum_i x_i^2,      constraint  z' = sum_i y_i x_i'
 * (the standard contact distribution, A = [-y_1 .. -y_k, 0 .. 0, 1]). For k = 1 and eps = 0 it is the
 * integrable contact oscillator (Modin & Verdier 2020, Sect. 2.2.1, built in as hcvt in other coordinates); eps > 0
 * couples the oscillators through the potential and breaks that structure; k > 1 gives a larger
 * distribution of the same kind. Everything a method or `nhens check` needs is written here through the
 * public API only: derivatives of V and A, an adapted basis of ker A (for the D*-form methods) and a
 * configuration sampler. The parameters k and eps are read from the instance on every call. */
#include <nhens/nhens.h>

#include <string.h>

enum { PARAM_K, PARAM_EPS };

static const nh_param_def PARAMS[] = {
    {"k", 1, 1, (NH_MAX_DIM - 1) / 2, 1, "number of (x_i, y_i) pairs: n = 2k + 1", NULL},
    {"eps", 0.5, 0.0, 100.0, 0, "strength of the coupling 1/2 eps z^2 sum x_i^2", NULL},
};

static const nh_preset PRESETS[] = {
    {"orbit", "one state on the constraint (z' = y x') with k = 1: H = 0.6718 at eps = 0.5", "k=1", 3,
     {0.5, -0.4, 0.3}, {0.8, 0.3, -0.32}, 0, 0},
    {"shell", "200 random states on H = 1 (any k)", NULL, 0, {0}, {0}, 1.0, 200},
};

static void contact_dimensions(const double *par, int *n, int *m)
{
    *n = 2 * (int)par[PARAM_K] + 1;
    *m = 1;
}

static int pairs(const nh_system *s)
{
    return (s->n - 1) / 2;
}

static double sum_x_squared(const nh_system *s, const double *q)
{
    double sum = 0.0;
    for (int i = 0; i < pairs(s); ++i)
        sum += q[i] * q[i];
    return sum;
}

static double contact_potential(const nh_system *s, const double *q)
{
    const double z = q[s->n - 1], eps = nh_system_param(s, PARAM_EPS);
    double square = 0.0;
    for (int i = 0; i < s->n; ++i)
        square += q[i] * q[i];
    return 0.5 * square + 0.5 * eps * z * z * sum_x_squared(s, q);
}

static void contact_gradient(const nh_system *s, const double *q, double *g)
{
    const int k = pairs(s), iz = s->n - 1;
    const double z = q[iz], eps = nh_system_param(s, PARAM_EPS);
    for (int i = 0; i < k; ++i) {
        g[i] = q[i] * (1.0 + eps * z * z);
        g[k + i] = q[k + i];
    }
    g[iz] = z * (1.0 + eps * sum_x_squared(s, q));
}

static void contact_hessian(const nh_system *s, const double *q, double *h)
{
    const int n = s->n, k = pairs(s), iz = n - 1;
    const double z = q[iz], eps = nh_system_param(s, PARAM_EPS);
    memset(h, 0, (size_t)n * n * sizeof *h);
    for (int i = 0; i < k; ++i) {
        h[i * n + i] = 1.0 + eps * z * z;
        h[i * n + iz] = h[iz * n + i] = 2.0 * eps * q[i] * z;
        h[(k + i) * n + k + i] = 1.0;
    }
    h[iz * n + iz] = 1.0 + eps * sum_x_squared(s, q);
}

static void contact_constraint(const nh_system *s, const double *q, double *a)
{
    const int k = pairs(s);
    for (int i = 0; i < k; ++i) {
        a[i] = -q[k + i];
        a[k + i] = 0.0;
    }
    a[s->n - 1] = 1.0;
}

/* A u = u_z - sum_i y_i u_{x_i}: its y_i-derivative is -u_{x_i}, all others vanish */
static void contact_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)q;
    const int k = pairs(s);
    memset(out, 0, (size_t)s->n * sizeof *out);
    for (int i = 0; i < k; ++i)
        out[k + i] = -u[i];
}

/* (A^T lam)_{x_i} = -y_i lam is the only q-dependent entry */
static void contact_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)q;
    const int n = s->n, k = pairs(s);
    memset(out, 0, (size_t)n * n * sizeof *out);
    for (int i = 0; i < k; ++i)
        out[i * n + k + i] = -lam[0];
}

/* X_i = d/dx_i + y_i d/dz and X_{k+i} = d/dy_i span ker A; dX_i^z / dy_i = 1 */
static void contact_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    const int n = s->n, k = pairs(s), r = n - 1, iz = n - 1;
    memset(x, 0, (size_t)n * r * sizeof *x);
    memset(dx, 0, (size_t)n * r * n * sizeof *dx);
    for (int i = 0; i < k; ++i) {
        x[i * r + i] = 1.0;
        x[iz * r + i] = q[k + i];
        x[(k + i) * r + k + i] = 1.0;
        dx[(iz * r + i) * n + k + i] = 1.0;
    }
}

static void contact_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    for (int i = 0; i < s->n; ++i)
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
    .summary = "contact oscillator on R^{2k+1} with the coupling 1/2 eps z^2 |x|^2 (example plugin)",
    .reference = "McLachlan-Perlmutter 2006 (contact oscillator); Modin & Verdier 2020, Sect. 2.2.1 at k = 1, eps = 0",
    .n_params = 2,
    .params = PARAMS,
    /* A depends on the y_i only, and the constraint force moves x and z; A is linear in the y_i */
    .flags = NH_SYS_CVT_TYPE | NH_SYS_AFFINE_CONSTRAINT,
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
