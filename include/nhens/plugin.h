/* Plugins: a shared object that adds systems and methods to a registry through one entry point.
 * The object exports a constant named `nh_plugin_entry` of type nh_plugin:
 *
 *     #include <nhens/nhens.h>
 *     static int add_all(nh_registry *reg, nh_error *err)
 *     {
 *         return nh_registry_add_system(reg, &my_system, err);
 *     }
 *     NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "my-plugin",
 *                                                         "what it adds", add_all};
 *
 * The loader refuses a plugin built against another ABI version (the layout of the descriptors
 * and of nh_system) with a message naming both versions. A loaded plugin stays loaded for the life
 * of the process (its descriptors are referenced by the registry and by steppers). */
#ifndef NHENS_PLUGIN_H
#define NHENS_PLUGIN_H

#include "nhens/method_type.h"
#include "nhens/registry.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Bumped whenever nh_system_type, nh_method_type, nh_system, nh_method_spec, nh_param_def or the solver
 * interface a plugin method builds (nh_nonlinear_problem, nh_solver_probe) change; 4: residual_and_jacobian. */
#define NH_PLUGIN_ABI_VERSION NH_ABI_VERSION
#define NH_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef struct nh_plugin {
    int abi_version;        /* NH_PLUGIN_ABI_VERSION of the headers the plugin was built with */
    const char *name;
    const char *description;
    int (*register_all)(nh_registry *reg, nh_error *err);
} nh_plugin;

/* dlopen PATH, check nh_plugin_entry's ABI version, call its register_all. The message of a failure
 * names the path and the reason (not found, not a plugin, ABI mismatch, or the plugin's own error). */
int nh_registry_load_plugin(nh_registry *reg, const char *path, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
