/* Pieces shared by the subcommands: building a system instance from names given on the command line. */
#include "cli.h"

#include <string.h>

int nh_cli_usage_error(const char *command, const char *usage, const char *fmt, const char *value)
{
    fprintf(stderr, "nhens %s: ", command);
    fprintf(stderr, fmt, value);
    fprintf(stderr, "\n%s", usage);
    return NH_EXIT_USAGE;
}

int nh_cli_build_system(const char *name, const char *preset_name, const char *const *params, int n_params,
                        nh_system *sys, const nh_preset **preset, nh_error *err)
{
    const nh_system_type *type = nh_system_find(name);
    if (!type) {
        char names[256] = "";
        for (int i = 0; i < nh_system_count(); ++i) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, nh_system_at(i)->name, sizeof names - strlen(names) - 1);
        }
        return nh_fail(err, NH_ERR_INPUT, "unknown system '%s'; known systems: %s", name, names);
    }
    *preset = NULL;
    if (preset_name && !(*preset = nh_system_find_preset(type, preset_name))) {
        char names[256] = "";
        for (int i = 0; i < type->n_presets; ++i) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, type->presets[i].name, sizeof names - strlen(names) - 1);
        }
        return nh_fail(err, NH_ERR_INPUT, "system %s has no preset '%s'; its presets are: %s", type->name,
                       preset_name, names);
    }
    return nh_system_init(sys, type, *preset, params, n_params, err);
}

