/* Chaotic quartic of Celledoni et al. 2019, eqs. 19-20 (after McLachlan-Perlmutter 2006): q = (x, w_1..w_n,
 * z_1..z_n) in R^{2n+1}, M = I, V = 1/2(|q|^2 + z_1^2 z_2^2 + sum w_i^2 z_i^2), one constraint
 * x' + sum w_i z_i' = 0. n = 3 is the study of Celledoni et al. 2019 (energy 3.06); n = 2 is the
 * "chaotic particle" of Anahory Simoes et al. 2022. The constraint depends on w only and its force moves x and z:
 * CVT-type. */
#include "quartic_formulas.h"

#include <string.h>

enum { P_N = 0, P_SPREAD = 1 };

static const nh_param_def quartic_params[] = {
    {"n", 3, 2, 15, 1, "number of (w, z) pairs; dimension is 2n+1", NULL},
    {"spread", 0.5, 1e-3, 100, 0,
     "sampler: q ~ N(0, spread^2 I) before the energy-shell rejection (Celledoni et al. 2019 leave the distribution "
     "open)", NULL},
};

static const nh_preset quartic_presets[] = {
    {"anahory2022-fig1", "Anahory Simoes et al. 2022, Sect. 5.1 / Fig. 1: chaotic particle (n = 2), energy 3.2575",
     "n=2", 5, {1, 0, 1, -1, -1}, {0.05, 0.5, -0.5, -0.1, -0.05}, 0, 0},
    /* the first shell is the one the tests that run on every system take (tests/helpers.h, test_shell) */
    {"anahory2022-fig2",
     "Anahory Simoes et al. 2022, Sect. 5.1 / Fig. 2: 100 random states of the chaotic particle (n = 2) on H = 1.535",
     "n=2", 0, {0}, {0}, 1.535, 100},
    {"celledoni2019-fig2",
     "Celledoni et al. 2019, Sect. 4.1.3 / Fig. 2: 200 random states of the n = 3 quartic on H = 3.06", "n=3", 0,
     {0}, {0}, 3.06, 200},
};

static int pairs(const nh_system *s)
{
    return (int)s->params.value[P_N];
}

static void quartic_dimensions(const double *par, int *n, int *m)
{
    *n = 2 * (int)par[P_N] + 1;
    *m = 1;
}

/* Each formula (quartic_formulas.h) is an always-inline function of the pair count k, and its callback
 * calls it with k a constant for the papers' sizes (n = 3 of Celledoni et al. 2019, n = 2 of Anahory Simoes
 * et al. 2022) or with k read at run time: the same operations in the same order, with the loops over the
 * pairs unrolled where k is known. */
#define QUARTIC_WITH_PAIRS(k, call) ((k) == 3 ? call(3) : (k) == 2 ? call(2) : call(k))

static double quartic_potential(const nh_system *s, const double *q)
{
#define POTENTIAL(k) potential_of(k, q)
    return QUARTIC_WITH_PAIRS(pairs(s), POTENTIAL);
#undef POTENTIAL
}

static void quartic_gradient(const nh_system *s, const double *restrict q, double *restrict g)
{
#define GRADIENT(k) gradient_of(k, q, g)
    QUARTIC_WITH_PAIRS(pairs(s), GRADIENT);
#undef GRADIENT
}

static void quartic_hessian(const nh_system *s, const double *q, double *h)
{
#define HESSIAN(k) hessian_of(k, q, h)
    QUARTIC_WITH_PAIRS(pairs(s), HESSIAN);
#undef HESSIAN
}

static void quartic_constraint(const nh_system *s, const double *q, double *a)
{
#define CONSTRAINT(k) constraint_of(k, q, a)
    QUARTIC_WITH_PAIRS(pairs(s), CONSTRAINT);
#undef CONSTRAINT
}

static void quartic_constraint_jacobian_velocity(const nh_system *s, const double *q, const double *restrict u,
                                                 double *restrict out)
{
    (void)q;
#define JACOBIAN_VELOCITY(k) constraint_jacobian_velocity_of(k, u, out)
    QUARTIC_WITH_PAIRS(pairs(s), JACOBIAN_VELOCITY);
#undef JACOBIAN_VELOCITY
}

static void quartic_constraint_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)q;
#define JACOBIAN_MULTIPLIER(k) constraint_jacobian_multiplier_of(k, lam[0], out)
    QUARTIC_WITH_PAIRS(pairs(s), JACOBIAN_MULTIPLIER);
#undef JACOBIAN_MULTIPLIER
}

/* X_i = d/dw_i, X_{k+i} = w_i d/dx - d/dz_i (Celledoni et al. 2019, Sect. 4.1.1): pair i owns four entries,
 * X_i^{w_i}, X_{k+i}^x, X_{k+i}^{z_i} and d X_{k+i}^x / d w_i (entry[0..2] in X, entry[3] in dX), and the basis
 * writes only these (its declared pattern). */
static void pair_entries(const nh_system *s, int i, int entry[4])
{
    const int n = s->n, k = pairs(s), r = 2 * k;
    entry[0] = (1 + i) * r + i;
    entry[1] = 0 * r + k + i;
    entry[2] = (1 + k + i) * r + k + i;
    entry[3] = (0 * r + k + i) * n + 1 + i;
}

static void quartic_adapted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    for (int i = 0; i < pairs(s); ++i) {
        int entry[4];
        pair_entries(s, i, entry);
        x[entry[0]] = 1.0;
        x[entry[1]] = q[1 + i];
        x[entry[2]] = -1.0;
        dx[entry[3]] = 1.0;
    }
}

static void quartic_adapted_basis_pattern(const nh_system *s, unsigned char *x, unsigned char *dx)
{
    for (int i = 0; i < pairs(s); ++i) {
        int entry[4];
        pair_entries(s, i, entry);
        x[entry[0]] = x[entry[1]] = x[entry[2]] = 1;
        dx[entry[3]] = 1;
    }
}

static void quartic_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    for (int i = 0; i < s->n; ++i)
        q[i] = s->params.value[P_SPREAD] * nh_pcg32_gaussian(rng);
}

static double quartic_minimum_energy(const nh_system *s)
{
    (void)s;
    return 0.0; /* V >= 0 with V(0) = 0 */
}

const nh_system_type nh_system_quartic = {
    .name = "quartic",
    .summary = "chaotic quartic particle in R^{2n+1}, one constraint (Celledoni et al. 2019, eqs. 19-20)",
    .reference = "Celledoni et al. 2019 eqs. 19-20; Anahory Simoes et al. 2022 Sect. 5.1",
    .n_params = sizeof quartic_params / sizeof quartic_params[0],
    .params = quartic_params,
    .flags = NH_SYS_CVT_TYPE | NH_SYS_AFFINE_CONSTRAINT,
    .n_presets = 3,
    .presets = quartic_presets,
    .dimensions = quartic_dimensions,
    .mass = NULL,
    .potential = quartic_potential,
    .potential_gradient = quartic_gradient,
    .potential_hessian = quartic_hessian,
    .constraint = quartic_constraint,
    .constraint_jacobian_velocity = quartic_constraint_jacobian_velocity,
    .constraint_jacobian_multiplier = quartic_constraint_jacobian_multiplier,
    .sample_configuration = quartic_sample,
    .minimum_energy = quartic_minimum_energy,
    .adapted_basis = quartic_adapted_basis,
    .adapted_basis_pattern = quartic_adapted_basis_pattern,
};
