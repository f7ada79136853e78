/* System instances: parameters, presets and the constant mass matrix (see include/nhens/system.h). */
#include "nhens/system.h"

#include <stdio.h>
#include <string.h>

const nh_preset *nh_system_find_preset(const nh_system_type *type, const char *name)
{
    for (int i = 0; i < type->n_presets; ++i)
        if (strcmp(type->presets[i].name, name) == 0)
            return &type->presets[i];
    return NULL;
}

double nh_system_param(const nh_system *s, int index)
{
    return s->params.value[index];
}

/* The name of the first required callback that the descriptor lacks, or NULL: the nine that every system
 * has, and the partner of an optional one that needs it. */
static const char *missing_callback(const nh_system_type *t)
{
    const struct { const char *name; int present; } required[] = {
        {"dimensions", t->dimensions != NULL},
        {"potential", t->potential != NULL},
        {"potential_gradient", t->potential_gradient != NULL},
        {"potential_hessian", t->potential_hessian != NULL},
        {"constraint", t->constraint != NULL},
        {"constraint_jacobian_velocity", t->constraint_jacobian_velocity != NULL},
        {"constraint_jacobian_multiplier", t->constraint_jacobian_multiplier != NULL},
        {"sample_configuration", t->sample_configuration != NULL},
        {"minimum_energy", t->minimum_energy != NULL},
        {"mass_matrix_derivative (it has mass_matrix)", !t->mass_matrix || t->mass_matrix_derivative},
        {"mass_matrix (it has mass_matrix_derivative)", !t->mass_matrix_derivative || t->mass_matrix},
        {"adapted_basis (it has adapted_basis_pattern)", !t->adapted_basis_pattern || t->adapted_basis}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i)
        if (!required[i].present)
            return required[i].name;
    return NULL;
}

int nh_system_type_check(const nh_system_type *type, nh_error *err)
{
    if (!type)
        return nh_fail(err, NH_ERR_INPUT, "no system descriptor (a NULL pointer: a failed lookup such as "
                                          "nh_registry_find_system of an unknown name?)");
    char owner[80];
    if (type->name)
        snprintf(owner, sizeof owner, "system '%.48s'", type->name);
    else
        snprintf(owner, sizeof owner, "a system descriptor without a name");
    if (type->n_params < 0 || type->n_params > NH_MAX_PARAMS || (type->n_params > 0 && !type->params))
        return nh_fail(err, NH_ERR_INPUT, "%s has n_params = %d%s; 0 to %d, with their definitions, are allowed",
                       owner, type->n_params, type->n_params > 0 && !type->params ? " and no params" : "",
                       NH_MAX_PARAMS);
    if (type->n_presets < 0 || (type->n_presets > 0 && !type->presets))
        return nh_fail(err, NH_ERR_INPUT, "%s has n_presets = %d%s; a count >= 0, with its presets, is allowed",
                       owner, type->n_presets, type->n_presets > 0 && !type->presets ? " and no presets" : "");
    if (type->n_params > 0 && nh_param_defs_check(type->n_params, type->params, owner, err))
        return NH_ERR_INPUT;
    const char *missing = missing_callback(type);
    if (missing)
        return nh_fail(err, NH_ERR_INPUT,
                       "%s is incomplete: it has no %s; a system needs dimensions, potential, "
                       "potential_gradient, potential_hessian, constraint, constraint_jacobian_velocity, "
                       "constraint_jacobian_multiplier, sample_configuration and minimum_energy, a mass_matrix its "
                       "mass_matrix_derivative and an adapted_basis_pattern its adapted_basis",
                       owner, missing);
    return NH_OK;
}

static int apply_user_overrides(nh_system *s, const nh_param_set *preset_values, unsigned preset_mask,
                                const char *const *overrides, int n_overrides, nh_error *err)
{
    for (int k = 0; k < n_overrides; ++k) {
        int rc = nh_params_apply(&s->params, overrides[k], s->type->name, err);
        if (rc)
            return rc;
    }
    for (int i = 0; i < s->params.count; ++i) {
        if ((preset_mask & (1u << i)) && s->params.value[i] != preset_values->value[i])
            return nh_fail(err, NH_ERR_INPUT,
                           "%s: parameter %s=%g contradicts the preset, which needs %s=%g; drop one of them",
                           s->type->name, s->params.defs[i].name, s->params.value[i], s->params.defs[i].name,
                           preset_values->value[i]);
    }
    return NH_OK;
}

int nh_system_init(nh_system *s, const nh_system_type *type, const nh_preset *preset,
                   const char *const *overrides, int n_overrides, nh_error *err)
{
    if (!s)
        return nh_fail(err, NH_ERR_INPUT, "nh_system_init: no nh_system to initialise (a NULL pointer)");
    memset(s, 0, sizeof *s);
    const int complete = nh_system_type_check(type, err);
    if (complete != NH_OK)
        return complete;
    s->type = type;
    nh_params_defaults(&s->params, type->n_params, type->params);
    nh_param_set preset_values = s->params;
    if (preset) {
        int rc = nh_params_apply_list(&preset_values, preset->param_overrides, type->name, err);
        if (rc)
            return rc;
        s->params = preset_values;
    }
    unsigned preset_mask = preset_values.explicit_mask;
    s->params.explicit_mask = 0;
    int rc = apply_user_overrides(s, &preset_values, preset_mask, overrides, n_overrides, err);
    if (rc)
        return rc;
    type->dimensions(s->params.value, &s->n, &s->m);
    if (s->n > NH_MAX_DIM || s->m > NH_MAX_CON || s->n <= s->m)
        return nh_fail(err, NH_ERR_INPUT, "%s: dimensions n=%d, m=%d exceed the engine's limits (n <= %d, m <= %d)",
                       type->name, s->n, s->m, NH_MAX_DIM, NH_MAX_CON);
    if (type->mass_matrix && s->n > NH_MAX_VARIABLE_MASS_DIM)
        return nh_fail(err, NH_ERR_INPUT, "%s: n=%d with a configuration-dependent mass matrix exceeds the limit n <= %d",
                       type->name, s->n, NH_MAX_VARIABLE_MASS_DIM);
    if (s->n < 1 || s->m < 1)
        return nh_fail(err, NH_ERR_INPUT, "%s: dimensions n=%d, m=%d; nhens needs n >= 1 and at least one constraint",
                       type->name, s->n, s->m);
    for (int i = 0; i < s->n; ++i)
        s->mass[i] = 1.0;
    if (type->mass)
        type->mass(s, s->mass);
    for (int i = 0; i < s->n; ++i)
        s->inv_mass[i] = 1.0 / s->mass[i];
    if (preset && !nh_preset_is_shell(preset) && preset->dim != s->n)
        return nh_fail(err, NH_ERR_INPUT, "%s: preset %s has dimension %d but the system has n=%d",
                       type->name, preset->name, preset->dim, s->n);
    return NH_OK;
}
