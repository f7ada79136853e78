/* The registry: which systems, methods and plugin observers a program can use. It starts with the built-in ones and
 * grows by nh_registry_add_* (a plugin's entry point calls these; see plugin.h). Names are unique:
 * adding a second "quartic" is refused. The registry owns nothing it is given: descriptors are
 * const and must outlive it (a plugin's stay loaded for the life of the process).
 * Lookup, `nhens list`, `nhens check` and the test battery all walk one registry. */
#ifndef NHENS_REGISTRY_H
#define NHENS_REGISTRY_H

#include "nhens/method.h"
#include "nhens/observer.h"
#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* A registry holding the built-in systems and methods. */
nh_registry *nh_registry_create(nh_error *err);
void nh_registry_free(nh_registry *reg);

int nh_registry_add_system(nh_registry *reg, const nh_system_type *type, nh_error *err);
int nh_registry_add_method(nh_registry *reg, const nh_method_type *type, nh_error *err);
/* A plugin's observer (nhens/observer.h), checked by nh_observer_type_check; its name must differ from the other
 * plugins' observers (a run refuses one named like a built-in observer or its components, nhens/stats.h). */
int nh_registry_add_observer(nh_registry *reg, const nh_observer_type *type, nh_error *err);

int nh_registry_system_count(const nh_registry *reg);
const nh_system_type *nh_registry_system_at(const nh_registry *reg, int i);
/* By name, or NULL; the _checked forms fill err with the list of known names. */
const nh_system_type *nh_registry_find_system(const nh_registry *reg, const char *name);
const nh_system_type *nh_registry_find_system_checked(const nh_registry *reg, const char *name, nh_error *err);

int nh_registry_method_count(const nh_registry *reg);
const nh_method_type *nh_registry_method_at(const nh_registry *reg, int i);
const nh_method_type *nh_registry_find_method(const nh_registry *reg, const char *name);

/* The plugins' observers, in the order they were added. */
int nh_registry_observer_count(const nh_registry *reg);
const nh_observer_type *nh_registry_observer_at(const nh_registry *reg, int i);

/* The plugins loaded into the registry (nh_registry_load_plugin, plugin.h), in load order: what a run's
 * summary.json records as its provenance. */
typedef struct nh_plugin_info {
    const char *path;       /* the shared object's absolute path, as resolved when it was loaded */
    const char *name;       /* its nh_plugin.name ("?" when it has none) */
    char sha256[65];        /* SHA-256 of its bytes when it was loaded: 64 lowercase hex digits */
} nh_plugin_info;
int nh_registry_plugin_count(const nh_registry *reg);
const nh_plugin_info *nh_registry_plugin_at(const nh_registry *reg, int i);

/* "a, b, c": the names of the methods whose flags serve `sys` (computed, never written by hand). */
void nh_registry_methods_serving(const nh_registry *reg, const nh_system *sys, char *buf, size_t len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
