/* Plugins with one hostile descriptor field each: tests/CMakeLists.txt builds this file once per case as
 * hostile_CASE.so with HOSTILE_CASE_<CASE> defined, beside a valid system and method. The registry must
 * refuse every one with a message naming the plugin, the descriptor and the field (tests/cli/hostile_files.tsv,
 * class 8); the cases preset_off_constraint and wrong_cvt_flag load, and a run refuses the preset, `nhens check`
 * the preset and the flag. */
#include <nhens/nhens.h>

#include <limits.h>
#include <math.h>
#include <string.h>

static void plane_dimensions(const double *par, int *n, int *m)
{
#if defined(HOSTILE_CASE_TOO_MANY_DIMENSIONS)
    (void)par;
    *n = 40;
#elif defined(HOSTILE_CASE_NO_CONSTRAINT)
    (void)par;
    *n = 2, *m = 0;
    return;
#else
    *n = par[0] > 0 ? 2 : 2;
#endif
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
    g[0] = q[0], g[1] = q[1];
}

static void plane_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s, (void)q;
    h[0] = h[3] = 1.0, h[1] = h[2] = 0.0;
}

static void plane_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = 1.0, a[1] = q[0];
}

static void plane_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s, (void)q;
    out[0] = u[1], out[1] = 0.0;
}

static void plane_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s, (void)q;
    memset(out, 0, 4 * sizeof *out);
    out[2] = lam[0];
}

static void plane_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = nh_pcg32_gaussian(rng), q[1] = nh_pcg32_gaussian(rng);
}

static double plane_minimum(const nh_system *s)
{
    (void)s;
    return 0.0;
}

static int still_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)st, (void)h, (void)q, (void)v, (void)carried;
    return NH_OK;
}

static int two_hundred(const nh_method_spec *self)
{
    (void)self;
    return 200;
}

/* a composite's order: its inner method's + 2, 0 when the inner spec does not parse */
static int inner_order_plus_two(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    return nh_method_spec_parse_inner(self, self->params.text[1], &inner, &err) ? 0 : nh_method_spec_order(&inner) + 2;
}

#define PARAM(name, value, lo, hi) {name, value, lo, hi, 0, "a parameter", NULL}

/* the system's parameters and presets */
#if defined(HOSTILE_CASE_SYSTEM_MIN_ABOVE_MAX)
static const nh_param_def SYSTEM_PARAMS[] = {PARAM("k", 1.0, 2.0, 0.5)};
#elif defined(HOSTILE_CASE_SYSTEM_DEFAULT_OUTSIDE)
static const nh_param_def SYSTEM_PARAMS[] = {PARAM("k", 5.0, 0.0, 1.0)};
#elif defined(HOSTILE_CASE_SYSTEM_UNSAFE_PARAM_NAME)
static const nh_param_def SYSTEM_PARAMS[] = {PARAM("k=1,j", 1.0, 0.0, 2.0)};
#else
static const nh_param_def SYSTEM_PARAMS[] = {PARAM("k", 1.0, 0.0, INFINITY)};
#endif

static const nh_preset PRESETS[] = {
    {.name = "rest", .description = "at rest", .param_overrides = "", .dim = 2, .q = {1.0, 0.0}},
#if defined(HOSTILE_CASE_DUPLICATE_PRESET)
    {.name = "rest", .description = "at rest again", .param_overrides = "", .dim = 2, .q = {0.5, 0.0}},
#elif defined(HOSTILE_CASE_PRESET_NAN)
    {.name = "lost", .description = "nowhere", .param_overrides = "", .dim = 2, .q = {NAN, 0.0}},
#elif defined(HOSTILE_CASE_PRESET_OFF_CONSTRAINT)
    /* A = (1, q_0): |A(q) v| = 0.51, as a velocity copied with a wrong sign or from another convention */
    {.name = "drift", .description = "a velocity off D_q", .param_overrides = "", .dim = 2, .q = {1.0, 0.0},
     .v = {0.51, 0.0}},
#elif defined(HOSTILE_CASE_HUGE_SHELL)
    {.name = "crowd", .description = "more trajectories than a run may have", .param_overrides = "", .dim = 0,
     .shell_energy = 1.0, .shell_ensemble = LONG_MAX},
#endif
};

static const nh_system_type PLANE = {
    .name = "hostile-plane", .summary = "a plane with one constraint", .reference = "test",
    .n_params = 1, .params = SYSTEM_PARAMS,
#if defined(HOSTILE_CASE_SYSTEM_UNKNOWN_FLAGS)
    .flags = 1u << 12,
#elif defined(HOSTILE_CASE_WRONG_CVT_FLAG)
    .flags = NH_SYS_CVT_TYPE,   /* A = (1, q_0) reads q_0, which the force A^T lam = (lam, q_0 lam) moves */
#endif
    .n_presets = sizeof PRESETS / sizeof PRESETS[0], .presets = PRESETS,
    .dimensions = plane_dimensions, .potential = plane_potential, .potential_gradient = plane_gradient,
    .potential_hessian = plane_hessian, .constraint = plane_constraint,
    .constraint_jacobian_velocity = plane_jacobian_velocity,
    .constraint_jacobian_multiplier = plane_jacobian_multiplier, .sample_configuration = plane_sample,
    .minimum_energy = plane_minimum};

/* the method's parameters */
#if defined(HOSTILE_CASE_NULL_PARAM_NAME)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), PARAM(NULL, 1.0, 0.0, 2.0)};
#elif defined(HOSTILE_CASE_EMPTY_PARAM_NAME)
static const nh_param_def METHOD_PARAMS[] = {PARAM("", 0.5, 0.0, 1.0), PARAM("beta", 1.0, 0.0, 2.0)};
#elif defined(HOSTILE_CASE_DUPLICATE_PARAM)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), PARAM("alpha", 1.0, 0.0, 2.0)};
#elif defined(HOSTILE_CASE_MIN_ABOVE_MAX)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), PARAM("beta", 1.0, 2.0, 0.5)};
#elif defined(HOSTILE_CASE_NAN_DEFAULT)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", NAN, 0.0, 1.0), PARAM("beta", 1.0, 0.0, 2.0)};
#elif defined(HOSTILE_CASE_NAN_BOUND)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, NAN, 1.0), PARAM("beta", 1.0, 0.0, 2.0)};
#elif defined(HOSTILE_CASE_FRACTIONAL_INTEGER)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), {"stages", 2.5, 1, 9, 1, "stages", NULL}};
#elif defined(HOSTILE_CASE_WRONG_INNER_DEFAULT)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0),
                                             {"inner", 0, 0, 0, 0, "inner method", "nemwark"}};
#elif defined(HOSTILE_CASE_NO_HELP)
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), {"beta", 1.0, 0.0, 2.0, 0, NULL, NULL}};
#else
static const nh_param_def METHOD_PARAMS[] = {PARAM("alpha", 0.5, 0.0, 1.0), PARAM("beta", 1.0, -INFINITY, INFINITY)};
#endif

static const nh_method_type STILL = {
#if defined(HOSTILE_CASE_BUILTIN_NAME)
    .name = "dla",
#else
    .name = "hostile-still",
#endif
#if !defined(HOSTILE_CASE_NO_SUMMARY)
    .summary = "stands still (a test of the registry, never run)",
#endif
    .reference = "test", .n_params = 2, .params = METHOD_PARAMS,
#if defined(HOSTILE_CASE_ORDER_200)
    .fixed_order = 200,
#elif defined(HOSTILE_CASE_ORDER_NEGATIVE)
    .fixed_order = -3,
#elif defined(HOSTILE_CASE_ORDER_FUNCTION)
    .order = two_hundred,
#elif defined(HOSTILE_CASE_WRONG_INNER_DEFAULT)
    .order = inner_order_plus_two,
#else
    .fixed_order = 2,
#endif
#if defined(HOSTILE_CASE_UNKNOWN_FLAGS)
    .fixed_flags = NH_METHOD_REVERSIBLE | 1u << 20,
#else
    .fixed_flags = NH_METHOD_REVERSIBLE,
#endif
    .step = still_step};

/* An observer of the plane: its position, with one hostile field per observer case. */
static void position(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
                     const nh_initial_values *init, double *out)
{
    (void)self, (void)s, (void)v, (void)init;
    out[0] = q[0], out[1] = q[1];
}

static const nh_observer_type POSITION = {
#if defined(HOSTILE_CASE_OBSERVER_BAD_NAME)
    .name = "x;rm",
#elif defined(HOSTILE_CASE_OBSERVER_BUILTIN_NAME)
    .name = "dH",
#else
    .name = "position",
#endif
#if !defined(HOSTILE_CASE_OBSERVER_NO_HELP)
    .help = "the plane's position (x, y)",
#endif
#if defined(HOSTILE_CASE_OBSERVER_DIM_ZERO)
    .dim = 0,
#elif defined(HOSTILE_CASE_OBSERVER_DIM_HUGE)
    .dim = 17,
#else
    .dim = 2,
#endif
#if !defined(HOSTILE_CASE_OBSERVER_NULL_VALUE)
    .value = position,
#endif
};

static int register_all(nh_registry *reg, nh_error *err)
{
    (void)position; /* unused where the observer has no value function */
#if defined(HOSTILE_CASE_SILENT_FAILURE)
    (void)reg, (void)err;
    (void)PLANE, (void)STILL, (void)POSITION, (void)two_hundred, (void)inner_order_plus_two;
    return NH_ERR_INPUT; /* and no message */
#else
    (void)two_hundred, (void)inner_order_plus_two;
    int rc = nh_registry_add_system(reg, &PLANE, err);
    if (!rc)
        rc = nh_registry_add_observer(reg, &POSITION, err);
#if defined(HOSTILE_CASE_OBSERVER_DUPLICATE)
    if (!rc)
        rc = nh_registry_add_observer(reg, &POSITION, err);
#endif
    return rc ? rc : nh_registry_add_method(reg, &STILL, err);
#endif
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "hostile", "hostile descriptors",
                                                    register_all};
