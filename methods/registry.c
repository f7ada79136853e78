/* The registry object (include/nhens/registry.h) and configured methods ("name:k=v,..."): name
 * lookup, flags, order and the check of a method against a system. Built-in methods are listed once,
 * in builtin_methods.h; adding a method = one file + one line there. */
#include "nhens/registry.h"
#include "builtin_methods.h"
#include "registry_plugins.h"
#include "stepper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NH_METHOD_ENTRY(name) &nh_method_##name,
static const nh_method_type *const builtin_methods[] = {NH_BUILTIN_METHODS(NH_METHOD_ENTRY)};
#undef NH_METHOD_ENTRY

int nh_method_is_builtin(const nh_method_type *type)
{
    for (size_t i = 0; i < sizeof builtin_methods / sizeof builtin_methods[0]; ++i)
        if (builtin_methods[i] == type)
            return 1;
    return 0;
}

enum { MAX_ENTRIES = 128, MAX_PLUGINS = 64, MAX_OBSERVER_TYPES = 32 };

struct nh_registry {
    const nh_system_type *systems[MAX_ENTRIES];
    int n_systems;
    const nh_method_type *methods[MAX_ENTRIES];
    int n_methods;
    const nh_observer_type *observers[MAX_OBSERVER_TYPES];
    int n_observers;
    nh_plugin_info plugins[MAX_PLUGINS];   /* paths malloc'ed, freed with the registry */
    int n_plugins;
};

nh_registry *nh_registry_create(nh_error *err)
{
    nh_registry *reg = calloc(1, sizeof *reg);
    if (!reg) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating the registry");
        return NULL;
    }
    for (int i = 0; i < nh_builtin_system_count(); ++i)
        reg->systems[reg->n_systems++] = nh_builtin_system_at(i);
    for (size_t i = 0; i < sizeof builtin_methods / sizeof builtin_methods[0]; ++i)
        reg->methods[reg->n_methods++] = builtin_methods[i];
    return reg;
}

void nh_registry_free(nh_registry *reg)
{
    for (int i = 0; reg && i < reg->n_plugins; ++i)
        free((char *)reg->plugins[i].path);
    free(reg);
}

int nh_registry_note_plugin(nh_registry *reg, const char *path, const char *name, const char *sha256, nh_error *err)
{
    if (reg->n_plugins == MAX_PLUGINS)
        return nh_fail(err, NH_ERR_INPUT, "too many plugins (at most %d)", MAX_PLUGINS);
    nh_plugin_info *p = &reg->plugins[reg->n_plugins];
    if (!(p->path = strdup(path)))
        return nh_fail(err, NH_ERR_NOMEM, "out of memory recording plugin '%s'", path);
    p->name = name ? name : "?";
    snprintf(p->sha256, sizeof p->sha256, "%s", sha256);
    ++reg->n_plugins;
    return NH_OK;
}

int nh_registry_plugin_count(const nh_registry *reg)
{
    return reg->n_plugins;
}

const nh_plugin_info *nh_registry_plugin_at(const nh_registry *reg, int i)
{
    return i >= 0 && i < reg->n_plugins ? &reg->plugins[i] : NULL;
}

static int valid_name(const char *name)
{
    if (!name || !*name || strlen(name) > 48)
        return 0;
    for (const char *p = name; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_' || *p == '.'))
            return 0;
    return 1;
}

/* The texts `nhens list` prints: a summary and a reference. */
static int check_texts(const char *owner, const char *summary, const char *reference, nh_error *err)
{
    if (!summary || !reference)
        return nh_fail(err, NH_ERR_INPUT, "%s has no %s; a descriptor needs a summary and a reference (texts)", owner,
                       summary ? "reference" : "summary");
    return NH_OK;
}

/* Preset i of a system: a unique safe name, a description, and finite numbers. */
static int check_preset(const nh_system_type *type, int i, const char *owner, nh_error *err)
{
    const nh_preset *p = &type->presets[i];
    if (!valid_name(p->name))
        return nh_fail(err, NH_ERR_INPUT, "%s: preset %d has the name '%.40s'; 1-48 characters [A-Za-z0-9._-] are "
                       "allowed", owner, i + 1, p->name ? p->name : "(null)");
    for (int j = 0; j < i; ++j)
        if (!strcmp(type->presets[j].name, p->name))
            return nh_fail(err, NH_ERR_INPUT, "%s: presets %d and %d are both named '%s'", owner, j + 1, i + 1, p->name);
    if (!p->description)
        return nh_fail(err, NH_ERR_INPUT, "%s: preset '%s' has no description", owner, p->name);
    if (p->dim < 0 || p->dim > NH_MAX_DIM)
        return nh_fail(err, NH_ERR_INPUT, "%s: preset '%s' has dim = %d; 0 (an energy shell) to %d is allowed", owner,
                       p->name, p->dim, NH_MAX_DIM);
    int finite = isfinite(p->shell_energy) && p->shell_ensemble >= 0 && p->shell_ensemble <= NH_MAX_ENSEMBLE;
    for (int k = 0; k < p->dim; ++k)
        finite &= isfinite(p->q[k]) && isfinite(p->v[k]);
    if (!finite)
        return nh_fail(err, NH_ERR_INPUT, "%s: preset '%s' holds a value that is not finite (q, v or shell_energy) or "
                       "a shell_ensemble outside [0, %d]", owner, p->name, NH_MAX_ENSEMBLE);
    return NH_OK;
}

/* A system descriptor's fields beyond its callbacks: texts, flags, parameters, presets and the dimensions at
 * the default parameters. */
static int check_system_descriptor(const nh_system_type *type, nh_error *err)
{
    char owner[80];
    snprintf(owner, sizeof owner, "system '%s'", type->name);
    const unsigned known = NH_SYS_CVT_TYPE | NH_SYS_AFFINE_CONSTRAINT;
    if (check_texts(owner, type->summary, type->reference, err) ||
        nh_param_defs_check(type->n_params, type->params, owner, err))
        return NH_ERR_INPUT;
    if (type->flags & ~known)
        return nh_fail(err, NH_ERR_INPUT, "%s has flags 0x%x: bits 0x%x are no NH_SYS_* flag", owner, type->flags,
                       type->flags & ~known);
    for (int i = 0; i < type->n_presets; ++i)
        if (check_preset(type, i, owner, err))
            return NH_ERR_INPUT;
    nh_param_set defaults;
    nh_params_defaults(&defaults, type->n_params, type->params);
    int n = 0, m = 0;
    type->dimensions(defaults.value, &n, &m);
    if (n < 1 || n > NH_MAX_DIM || m < 1 || m > NH_MAX_CON || m >= n)
        return nh_fail(err, NH_ERR_INPUT, "%s: dimensions gives n = %d, m = %d at the default parameters; 1 <= m < n, "
                       "n <= %d and m <= %d are allowed", owner, n, m, NH_MAX_DIM, NH_MAX_CON);
    return NH_OK;
}

/* A method whose order at its defaults is not 1 to NH_MAX_METHOD_ORDER. A composite method's order function
 * typically gives 0 when its default inner spec does not parse: the message then says why, for the first text
 * parameter that nh_method_spec_parse_inner refuses. */
static int refuse_default_order(const nh_method_spec *spec, const char *owner, int order, nh_error *err)
{
    const nh_method_type *type = spec->type;
    for (int i = 0; i < type->n_params; ++i) {
        nh_method_spec inner;
        nh_error why;
        if (type->params[i].default_text && type->params[i].default_text[0] != '\0' &&
            nh_method_spec_parse_inner(spec, spec->params.text[i], &inner, &why))
            return nh_fail(err, NH_ERR_INPUT, "%s has order %d at its defaults, and its default %s = '%.60s' is no "
                           "method spec here: %.300s", owner, order, type->params[i].name, spec->params.text[i], why.msg);
    }
    return nh_fail(err, NH_ERR_INPUT, "%s has order %d at its defaults (%s); 1 to %d is allowed", owner, order,
                   type->order ? "its order function" : "fixed_order", NH_MAX_METHOD_ORDER);
}

/* A method descriptor's fields beyond its step: texts, parameters, and its order and flags at the defaults. */
static int check_method_descriptor(const nh_registry *reg, const nh_method_type *type, nh_error *err)
{
    char owner[80];
    snprintf(owner, sizeof owner, "method '%s'", type->name);
    if (check_texts(owner, type->summary, type->reference, err) ||
        nh_param_defs_check(type->n_params, type->params, owner, err))
        return NH_ERR_INPUT;
    nh_method_spec spec;
    nh_method_spec_defaults(&spec, type, reg);
    const int order = nh_method_spec_order(&spec);
    if (order < 1 || order > NH_MAX_METHOD_ORDER)
        return refuse_default_order(&spec, owner, order, err);
    const unsigned flags = nh_method_spec_flags(&spec), known = 2 * NH_METHOD_REDUCED - 1;
    if (flags & ~known)
        return nh_fail(err, NH_ERR_INPUT, "%s has flags 0x%x at its defaults (%s): bits 0x%x are no NH_METHOD_* flag",
                       owner, flags, type->flags ? "its flags function" : "fixed_flags", flags & ~known);
    return NH_OK;
}

int nh_registry_add_system(nh_registry *reg, const nh_system_type *type, nh_error *err)
{
    if (!type)
        return nh_fail(err, NH_ERR_INPUT, "no system descriptor to add (a NULL pointer)");
    if (!valid_name(type->name))
        return nh_fail(err, NH_ERR_INPUT, "system name '%s' is not allowed: it needs 1-48 characters [A-Za-z0-9._-]",
                       type->name ? type->name : "(none)");
    const int complete = nh_system_type_check(type, err);
    if (complete != NH_OK)
        return complete;
    if (check_system_descriptor(type, err))
        return NH_ERR_INPUT;
    if (nh_registry_find_system(reg, type->name))
        return nh_fail(err, NH_ERR_INPUT, "a system named '%s' is already registered", type->name);
    if (reg->n_systems == MAX_ENTRIES)
        return nh_fail(err, NH_ERR_INPUT, "too many systems (at most %d)", MAX_ENTRIES);
    reg->systems[reg->n_systems++] = type;
    return NH_OK;
}

int nh_registry_add_method(nh_registry *reg, const nh_method_type *type, nh_error *err)
{
    if (!type)
        return nh_fail(err, NH_ERR_INPUT, "no method descriptor to add (a NULL pointer)");
    if (!valid_name(type->name) || !type->step || type->n_params < 0 || type->n_params > NH_MAX_PARAMS ||
        (type->n_params > 0 && !type->params))
        return nh_fail(err, NH_ERR_INPUT,
                       "method '%s' is incomplete: it needs a name of 1-48 characters [A-Za-z0-9._-], a step "
                       "function and at most %d parameters with their definitions",
                       type->name ? type->name : "(none)", NH_MAX_PARAMS);
    if (nh_registry_find_method(reg, type->name))
        return nh_fail(err, NH_ERR_INPUT, "a method named '%s' is already registered", type->name);
    if (check_method_descriptor(reg, type, err))
        return NH_ERR_INPUT;
    if (reg->n_methods == MAX_ENTRIES)
        return nh_fail(err, NH_ERR_INPUT, "too many methods (at most %d)", MAX_ENTRIES);
    reg->methods[reg->n_methods++] = type;
    return NH_OK;
}

int nh_registry_add_observer(nh_registry *reg, const nh_observer_type *type, nh_error *err)
{
    if (nh_observer_type_check(type, err))
        return NH_ERR_INPUT;
    for (int i = 0; i < reg->n_observers; ++i)
        if (!strcmp(reg->observers[i]->name, type->name))
            return nh_fail(err, NH_ERR_INPUT, "an observer named '%s' is already registered", type->name);
    if (reg->n_observers == MAX_OBSERVER_TYPES)
        return nh_fail(err, NH_ERR_INPUT, "too many observers (at most %d)", MAX_OBSERVER_TYPES);
    reg->observers[reg->n_observers++] = type;
    return NH_OK;
}

int nh_registry_observer_count(const nh_registry *reg)
{
    return reg ? reg->n_observers : 0;
}

const nh_observer_type *nh_registry_observer_at(const nh_registry *reg, int i)
{
    return reg && i >= 0 && i < reg->n_observers ? reg->observers[i] : NULL;
}

int nh_registry_system_count(const nh_registry *reg)
{
    return reg->n_systems;
}

const nh_system_type *nh_registry_system_at(const nh_registry *reg, int i)
{
    return i >= 0 && i < reg->n_systems ? reg->systems[i] : NULL;
}

const nh_system_type *nh_registry_find_system(const nh_registry *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    for (int i = 0; i < reg->n_systems; ++i)
        if (strcmp(reg->systems[i]->name, name) == 0)
            return reg->systems[i];
    return NULL;
}

const nh_system_type *nh_registry_find_system_checked(const nh_registry *reg, const char *name, nh_error *err)
{
    if (!reg)
        return nh_fail(err, NH_ERR_INPUT, "system '%s': no registry to look it up in", name ? name : "(none)"), NULL;
    const nh_system_type *type = nh_registry_find_system(reg, name);
    if (!type) {
        const char *names[MAX_ENTRIES] = {0};
        char list[2048];
        for (int i = 0; i < reg->n_systems; ++i)
            names[i] = reg->systems[i]->name;
        char near[128];
        nh_join_names(names, reg->n_systems, list, sizeof list);
        nh_fail(err, NH_ERR_INPUT, "unknown system '%s'%s; known systems: %s", name ? name : "(none)",
                nh_did_you_mean(name, names, reg->n_systems, near, sizeof near), list);
    }
    return type;
}

int nh_registry_method_count(const nh_registry *reg)
{
    return reg->n_methods;
}

const nh_method_type *nh_registry_method_at(const nh_registry *reg, int i)
{
    return i >= 0 && i < reg->n_methods ? reg->methods[i] : NULL;
}

const nh_method_type *nh_registry_find_method(const nh_registry *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    for (int i = 0; i < reg->n_methods; ++i)
        if (strcmp(reg->methods[i]->name, name) == 0)
            return reg->methods[i];
    return NULL;
}

void nh_method_spec_defaults(nh_method_spec *spec, const nh_method_type *type, const nh_registry *reg)
{
    spec->type = type;
    spec->registry = reg;
    nh_params_defaults(&spec->params, type->n_params, type->params);
}

int nh_method_spec_parse(const nh_registry *reg, nh_method_spec *spec, const char *text, nh_error *err)
{
    char name[64];
    if (!reg)
        return nh_fail(err, NH_ERR_INPUT, "method '%s': no registry to look it up in", text);
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof name)
        return nh_fail(err, NH_ERR_INPUT, "method '%s' is not of the form NAME or NAME:k=v,...", text);
    memcpy(name, text, len);
    name[len] = '\0';
    const nh_method_type *type = nh_registry_find_method(reg, name);
    if (!type) {
        const char *names[MAX_ENTRIES];
        char list[2048];
        for (int i = 0; i < reg->n_methods; ++i)
            names[i] = reg->methods[i]->name;
        char near[128];
        nh_join_names(names, reg->n_methods, list, sizeof list);
        return nh_fail(err, NH_ERR_INPUT, "unknown method '%s'%s; known methods: %s", name,
                       nh_did_you_mean(name, names, reg->n_methods, near, sizeof near), list);
    }
    nh_method_spec_defaults(spec, type, reg);
    return colon ? nh_params_apply_list(&spec->params, colon + 1, type->name, err) : NH_OK;
}

int nh_method_spec_parse_inner(const nh_method_spec *self, const char *text, nh_method_spec *inner, nh_error *err)
{
    char buf[NH_PARAM_TEXT_MAX];
    if (!text || !*text || strlen(text) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "%s: inner method '%.60s' must be NAME or NAME/k=v/... of 1 to %d characters",
                       self->type->name, text ? text : "", NH_PARAM_TEXT_MAX - 1);
    snprintf(buf, sizeof buf, "%s", text);
    char *slash = strchr(buf, '/');
    if (slash) {
        *slash = ':';
        for (char *p = slash + 1; *p; ++p)
            if (*p == '/')
                *p = ',';
    }
    int rc = nh_method_spec_parse(self->registry, inner, buf, err);
    if (rc) {   /* "unknown method 'x'; ..." becomes "suzuki5: inner method: unknown method 'x'; ..." */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        nh_fail(err, rc, "%s: inner method '%.60s': %s", self->type->name, text, why);
    }
    return rc;
}

const char *nh_method_type_name(const nh_method_type *type)
{
    return type->name;
}

const char *nh_method_spec_name(const nh_method_spec *spec)
{
    return spec->type->name;
}

unsigned nh_method_spec_flags(const nh_method_spec *spec)
{
    return spec->type->flags ? spec->type->flags(spec) : spec->type->fixed_flags;
}

int nh_method_spec_order(const nh_method_spec *spec)
{
    return spec->type->order ? spec->type->order(spec) : spec->type->fixed_order;
}

unsigned nh_method_flags_required(const nh_system *sys)
{
    return (nh_is_reduced(sys) ? NH_METHOD_REDUCED : 0u) | (nh_has_variable_mass(sys) ? NH_METHOD_GENERAL_MASS : 0u);
}

/* Does `type` at its defaults serve `sys`? (flags and accepts, no message) */
static int serves(const nh_registry *reg, const nh_method_type *type, const nh_system *sys)
{
    nh_method_spec spec;
    nh_error ignored;
    nh_method_spec_defaults(&spec, type, reg);
    if (nh_method_flags_required(sys) & ~nh_method_spec_flags(&spec))
        return 0;
    return !type->accepts || type->accepts(&spec, sys, &ignored) == NH_OK;
}

void nh_registry_methods_serving(const nh_registry *reg, const nh_system *sys, char *buf, size_t len)
{
    const char *names[MAX_ENTRIES];
    int n = 0;
    for (int i = 0; i < reg->n_methods; ++i)
        if (serves(reg, reg->methods[i], sys))
            names[n++] = reg->methods[i]->name;
    nh_join_names(names, n, buf, len);
}

static int refuse_unserved(const nh_method_spec *spec, const nh_system *sys, unsigned missing, nh_error *err)
{
    char serving[1024] = "";
    if (spec->registry)
        nh_registry_methods_serving(spec->registry, sys, serving, sizeof serving);
    const char *why = missing & NH_METHOD_REDUCED
                          ? "needs the full configuration space, and %s is given in reduced form only (Euler-Poincare "
                            "equations on a Lie algebra)"
                          : "assumes a constant mass matrix, and %s's depends on the configuration";
    char reason[256];
    snprintf(reason, sizeof reason, why, sys->type->name);
    return nh_fail(err, NH_ERR_INPUT, "method %s %s; methods that serve it at their defaults: %s", spec->type->name,
                   reason, serving[0] ? serving : "(none)");
}

int nh_method_spec_check(const nh_method_spec *spec, const nh_system *sys, nh_error *err)
{
    unsigned missing = nh_method_flags_required(sys) & ~nh_method_spec_flags(spec);
    if (missing)
        return refuse_unserved(spec, sys, missing, err);
    const int rc = spec->type->accepts ? spec->type->accepts(spec, sys, err) : NH_OK;
    const int order = rc ? 1 : nh_method_spec_order(spec);
    if (order < 1 || order > NH_MAX_METHOD_ORDER)
        return nh_fail(err, NH_ERR_INPUT, "method %s has order %d with these parameters; 1 to %d is allowed",
                       spec->type->name, order, NH_MAX_METHOD_ORDER);
    return rc;
}

void nh_method_spec_format(const nh_method_spec *spec, char *buf, size_t len)
{
    int used = snprintf(buf, len, "%s", spec->type->name);
    if (spec->params.count > 0 && used > 0 && (size_t)used + 1 < len) {
        buf[used] = ':';
        nh_params_format(&spec->params, buf + used + 1, len - (size_t)used - 1);
    }
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
