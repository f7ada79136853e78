/* Example plugin: a method none of the papers has. "suzuki5" is Suzuki's 5-stage symmetric composition
 * (fractions p, p, 1 - 4p, p, p with p = 1/(4 - 4^{1/3})) of a registered symmetric method (inner=NAME,
 * default newmark; NAME/k=v/... with parameters, read by nh_method_spec_parse_inner): order 4 from an order-2
 * method. It uses only the public API: the inner method is a stepper owned by this one (nh_stepper_create_inner),
 * so its solver statistics are counted. Its flags are the inner method's without CARRIES_STATE (the composition
 * keeps no state of its own between steps), its order the inner's + 2. */
#include <nhens/nhens.h>

#include <math.h>
#include <stdio.h>

static const nh_param_def PARAMS[] = {
    {"inner", 0, 0, 0, 0, "symmetric inner method, NAME/k=v/...", "newmark"},
};

static double fraction(int stage)
{
    const double p = 1.0 / (4.0 - cbrt(4.0));
    return stage == 2 ? 1.0 - 4.0 * p : p;
}

static int inner_spec(const nh_method_spec *self, nh_method_spec *inner, nh_error *err)
{
    int rc = nh_method_spec_parse_inner(self, self->params.text[0], inner, err);   /* "newmark/beta=0.1" too */
    if (!rc && !(nh_method_spec_flags(inner) & NH_METHOD_REVERSIBLE))
        return nh_fail(err, NH_ERR_INPUT, "suzuki5: inner method '%s' is not symmetric", self->params.text[0]);
    return rc;
}

static unsigned suzuki_flags(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    return inner_spec(self, &inner, &err) ? 0u : nh_method_spec_flags(&inner) & ~NH_METHOD_CARRIES_STATE;
}

static int suzuki_order(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    return inner_spec(self, &inner, &err) ? 0 : nh_method_spec_order(&inner) + 2;
}

static int suzuki_accepts(const nh_method_spec *self, const nh_system *sys, nh_error *err)
{
    nh_method_spec inner;
    int rc = inner_spec(self, &inner, err);
    return rc ? rc : nh_method_spec_check(&inner, sys, err);
}

static int suzuki_create(nh_stepper *st, nh_error *err)
{
    nh_method_spec inner;
    int rc = inner_spec(nh_stepper_method(st), &inner, err);
    if (rc)
        return rc;
    nh_stepper *in = nh_stepper_create_inner(st, &inner, err);
    nh_stepper_set_data(st, in);
    return in ? NH_OK : NH_ERR_INPUT;
}

static int suzuki_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    nh_stepper *inner = nh_stepper_data(st);
    for (int stage = 0; stage < 5; ++stage) {
        int rc = nh_stepper_step(inner, fraction(stage) * h, q, v, NULL);
        if (rc)
            return rc;
    }
    return NH_OK;
}

static const nh_method_type SUZUKI5 = {
    .name = "suzuki5",
    .summary = "Suzuki's 5-stage symmetric composition of a symmetric method (example plugin)",
    .reference = "Suzuki 1990; Hairer-Lubich-Wanner Sect. V.3.2",
    .n_params = 1,
    .params = PARAMS,
    .flags = suzuki_flags,
    .order = suzuki_order,
    .accepts = suzuki_accepts,
    .create = suzuki_create,
    .step = suzuki_step,
};

static int register_all(nh_registry *reg, nh_error *err)
{
    return nh_registry_add_method(reg, &SUZUKI5, err);
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "suzuki5",
                                                    "Suzuki's 5-stage composition", register_all};
