/* The one table of methods (walked by lookup, `nhens list`, the audit and the test battery), method
 * specs "name:k=v,..." and the stepper life cycle. Adding a method = one file + one line here. */
#include "nhens/linalg.h"
#include "nhens/method.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const nh_method_type nh_method_dla;
extern const nh_method_type nh_method_dla01;
extern const nh_method_type nh_method_leapfrog;
extern const nh_method_type nh_method_dd;
extern const nh_method_type nh_method_rk4;
extern const nh_method_type nh_method_idla;
extern const nh_method_type nh_method_newmark;
extern const nh_method_type nh_method_newmark_psi;
extern const nh_method_type nh_method_adjoint;
extern const nh_method_type nh_method_triple_jump;
extern const nh_method_type nh_method_compose;
extern const nh_method_type nh_method_spark2;
extern const nh_method_type nh_method_genfun;
extern const nh_method_type nh_method_avf, nh_method_gonzalez, nh_method_itoh_abe, nh_method_gonzalez_r;
extern const nh_method_type nh_method_gonzalez_f;

static const nh_method_type *const registry[] = {
    &nh_method_dla, &nh_method_idla, &nh_method_dla01, &nh_method_leapfrog, &nh_method_dd, &nh_method_rk4,
    &nh_method_newmark, &nh_method_newmark_psi, &nh_method_adjoint, &nh_method_triple_jump, &nh_method_compose,
    &nh_method_spark2, &nh_method_genfun, &nh_method_avf, &nh_method_gonzalez, &nh_method_itoh_abe,
    &nh_method_gonzalez_r, &nh_method_gonzalez_f,
};

int nh_method_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const nh_method_type *nh_method_at(int i)
{
    return (i >= 0 && i < nh_method_count()) ? registry[i] : NULL;
}

const nh_method_type *nh_method_find(const char *name)
{
    for (int i = 0; i < nh_method_count(); ++i)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

static void method_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < nh_method_count() && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", registry[i]->name);
}

int nh_method_spec_parse(nh_method_spec *spec, const char *text, nh_error *err)
{
    char name[64];
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof name)
        return nh_fail(err, NH_ERR_INPUT, "method '%s' is not of the form NAME or NAME:k=v,...", text);
    memcpy(name, text, len);
    name[len] = '\0';
    spec->type = nh_method_find(name);
    if (!spec->type) {
        char names[256];
        method_names(names, sizeof names);
        return nh_fail(err, NH_ERR_INPUT, "unknown method '%s'; known methods: %s", name, names);
    }
    nh_params_defaults(&spec->params, spec->type->n_params, spec->type->params);
    return colon ? nh_params_apply_list(&spec->params, colon + 1, spec->type->name, err) : NH_OK;
}

unsigned nh_method_spec_flags(const nh_method_spec *spec)
{
    return spec->type->flags ? spec->type->flags(&spec->params) : spec->type->fixed_flags;
}

int nh_method_spec_order(const nh_method_spec *spec)
{
    return spec->type->order ? spec->type->order(&spec->params) : spec->type->fixed_order;
}

int nh_method_spec_check(const nh_method_spec *spec, const nh_system *sys, nh_error *err)
{
    if (nh_is_reduced(sys) && !(nh_method_spec_flags(spec) & NH_METHOD_REDUCED))
        return nh_fail(err, NH_ERR_INPUT,
                       "method %s needs the full configuration space, and %s is given in reduced form only "
                       "(Euler-Poincare equations on a Lie algebra); methods that serve it: rk4, avf, gonzalez, "
                       "itoh-abe, gonzalez-r",
                       spec->type->name, sys->type->name);
    if (nh_has_variable_mass(sys) && !(nh_method_spec_flags(spec) & NH_METHOD_GENERAL_MASS))
        return nh_fail(err, NH_ERR_INPUT,
                       "method %s assumes a constant mass matrix, and %s's depends on the configuration; methods "
                       "that serve it: rk4, avf, gonzalez, itoh-abe, gonzalez-r",
                       spec->type->name, sys->type->name);
    return spec->type->accepts ? spec->type->accepts(&spec->params, sys, err) : NH_OK;
}

void nh_method_spec_format(const nh_method_spec *spec, char *buf, size_t len)
{
    int used = snprintf(buf, len, "%s", spec->type->name);
    if (spec->params.count > 0 && used > 0 && (size_t)used + 1 < len) {
        buf[used] = ':';
        nh_params_format(&spec->params, buf + used + 1, len - (size_t)used - 1);
    }
}

nh_stepper *nh_stepper_create(const nh_method_spec *spec, const nh_system *sys, nh_solver_kind solver,
                              nh_error *err)
{
    if (nh_method_spec_check(spec, sys, err))
        return NULL;
    nh_stepper *st = calloc(1, sizeof *st);
    if (!st) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating a stepper");
        return NULL;
    }
    st->type = spec->type;
    st->params = spec->params;
    st->sys = sys;
    st->carried_dim = spec->type->carried_dim ? spec->type->carried_dim(sys) : 0;
    int dim = spec->type->solver_dim ? spec->type->solver_dim(&spec->params, sys) : 0;
    if (dim > 0 && !(st->solver = nh_solver_create(solver, dim, err))) {
        free(st);
        return NULL;
    }
    if (spec->type->create && spec->type->create(st, solver, err) != NH_OK) {
        nh_stepper_free(st);
        return NULL;
    }
    return st;
}

int nh_stepper_start(nh_stepper *st, const double *q, const double *v, double *carried)
{
    return st->type->start ? st->type->start(st, q, v, carried) : NH_OK;
}

int nh_stepper_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    int rc = st->type->step(st, h, q, v, carried);
    if (rc == NH_OK && !(nh_all_finite(st->sys->n, q) && nh_all_finite(st->sys->n, v)))
        rc = NH_STEP_NONFINITE;
    return rc;
}

void nh_stepper_free(nh_stepper *st)
{
    if (!st)
        return;
    if (st->type->destroy)
        st->type->destroy(st);
    nh_solver_free(st->solver);
    free(st);
}

void nh_method_flags_format(unsigned flags, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {NH_METHOD_IMPLICIT, "implicit"},
        {NH_METHOD_LINEARLY_IMPLICIT, "linearly-implicit"},
        {NH_METHOD_PRESERVES_ENERGY, "energy"},
        {NH_METHOD_PRESERVES_CONSTRAINT, "constraint"},
        {NH_METHOD_REVERSIBLE, "reversible"},
        {NH_METHOD_CARRIES_STATE, "carries-state"},
        {NH_METHOD_GENERAL_MASS, "M(q)"},
        {NH_METHOD_REDUCED, "reduced"},
    };
    size_t used = 0;
    buf[0] = '\0';
    if (!(flags & (NH_METHOD_IMPLICIT | NH_METHOD_LINEARLY_IMPLICIT)))
        used += (size_t)snprintf(buf, len, "explicit");
    for (size_t i = 0; i < sizeof names / sizeof names[0] && used < len; ++i)
        if (flags & names[i].bit)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
}
