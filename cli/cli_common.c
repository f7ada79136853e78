/* Pieces shared by the subcommands: the option-parsing policy and building a system instance from
 * names given on the command line. */
#include "cli.h"

#include <ctype.h>
#include <string.h>

void nh_cli_print_help(const nh_option_table *table, FILE *out)
{
    char buf[8192];
    nh_options_format_help(table, buf, sizeof buf);
    fputs(buf, out);
}

int nh_cli_parse(const nh_option_table *table, int argc, char **argv, void *target, uint64_t *seen,
                 const char **positional, int *n_positional, int *status)
{
    nh_error err;
    int help, n_pos = 0;
    const char *unused[1];
    if (nh_options_parse(table, argc, argv, target, seen, positional ? positional : unused,
                         n_positional ? n_positional : &n_pos, &help, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        *status = NH_EXIT_USAGE;
        return 1;
    }
    if (help) {
        nh_cli_print_help(table, stdout);
        *status = NH_EXIT_OK;
        return 1;
    }
    return 0;
}

int nh_cli_given(const nh_option_table *table, uint64_t seen, const char *name)
{
    int idx = nh_options_index(table, name);
    return idx >= 0 && (seen >> idx & 1u);
}

int nh_cli_solver(const char *name, nh_solver_kind *kind, nh_error *err)
{
    if (nh_solver_kind_parse(name, kind))
        return nh_fail(err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", name);
    return NH_OK;
}

int nh_cli_build_system(const nh_cli *cli, const char *name, const char *preset_name, const char *const *params,
                        int n_params, nh_system *sys, const nh_preset **preset, nh_error *err)
{
    const nh_system_type *type = nh_registry_find_system_checked(cli->registry, name, err);
    if (!type)
        return NH_ERR_INPUT;
    *preset = NULL;
    if (preset_name && !(*preset = nh_system_find_preset(type, preset_name))) {
        char names[256];
        const char *list[32];
        const int n = type->n_presets < 32 ? type->n_presets : 32;
        for (int i = 0; i < n; ++i)
            list[i] = type->presets[i].name;
        nh_join_names(list, n, names, sizeof names);
        return nh_fail(err, NH_ERR_INPUT, "system %s has no preset '%s'; its presets are: %s", type->name,
                       preset_name, names[0] ? names : "(none)");
    }
    return nh_system_init(sys, type, *preset, params, n_params, err);
}

int nh_cli_check_name(const char *what, const char *value, size_t max, const char *extra, nh_error *err)
{
    size_t len = strlen(value);
    if (len == 0 || len >= max || value[0] == '.')
        return nh_fail(err, NH_ERR_INPUT, "%s '%.80s' must have 1 to %zu characters and not start with '.'", what, value,
                       max - 1);
    for (const char *c = value; *c; ++c)
        if (!isalnum((unsigned char)*c) && !strchr("._-", *c) && !strchr(extra, *c))
            return nh_fail(err, NH_ERR_INPUT, "%s '%.80s': character 0x%02x is not allowed; allowed: letters, digits, ._-%s",
                           what, value, (unsigned char)*c, extra);
    return NH_OK;
}
