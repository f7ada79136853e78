/* `nhens list`: systems, presets, methods, their parameters and flags, straight from the registries. */
#include "cli.h"

#include "nhens/method_type.h"
#include "nhens/registry.h"
#include "nhens/stats.h"
#include "nhens/system.h"

#include <string.h>

/* A number with its default and range; a text parameter (default_text) with its default text. */
static void print_params(FILE *out, int count, const nh_param_def *defs)
{
    for (int i = 0; i < count; ++i)
        if (defs[i].default_text)
            fprintf(out, "      %-8s default '%s' (text)  %s\n", defs[i].name, defs[i].default_text, defs[i].help);
        else
            fprintf(out, "      %-8s default %-6g range [%g, %g]%s  %s\n", defs[i].name, defs[i].default_value,
                    defs[i].min_value, defs[i].max_value, defs[i].integer ? " integer" : "", defs[i].help);
}

static void list_systems(const nh_registry *reg, FILE *out)
{
    fprintf(out, "Systems (--system NAME [--param k=v ...]):\n");
    for (int i = 0; i < nh_registry_system_count(reg); ++i) {
        const nh_system_type *t = nh_registry_system_at(reg, i);
        fprintf(out, "  %-10s %s\n", t->name, t->summary);
        fprintf(out, "      source: %s\n", t->reference);
        print_params(out, t->n_params, t->params);
        for (int p = 0; p < t->n_presets; ++p)
            fprintf(out, "      %-6s %-24s %s%s%s\n", nh_preset_is_shell(&t->presets[p]) ? "shell" : "preset",
                    t->presets[p].name, t->presets[p].description,
                    t->presets[p].param_overrides && t->presets[p].param_overrides[0] ? "; sets " : "",
                    t->presets[p].param_overrides ? t->presets[p].param_overrides : "");
    }
}

static void list_methods(const nh_registry *reg, FILE *out)
{
    char flags[128];
    fprintf(out, "\nMethods (--method NAME[:k=v,...]); flags and order at the default parameters:\n");
    for (int i = 0; i < nh_registry_method_count(reg); ++i) {
        const nh_method_type *t = nh_registry_method_at(reg, i);
        nh_method_spec spec;
        nh_method_spec_defaults(&spec, t, reg);
        nh_method_flags_format(nh_method_spec_flags(&spec), flags, sizeof flags);
        fprintf(out, "  %-10s order %d  [%s]\n      %s\n      source: %s\n", t->name, nh_method_spec_order(&spec),
                flags, t->summary, t->reference);
        print_params(out, t->n_params, t->params);
    }
}

static void list_observers(const nh_observer_table *t, FILE *out)
{
    fprintf(out, "\nObservers (--observe NAME; timeseries.csv columns after t, n_live; --reduce max:NAME, ...):\n");
    for (int i = 0; i < nh_observer_count(t); ++i) {
        const nh_observer *o = nh_observer_at(t, i);
        if (o->plugin && o->component == 0)
            fprintf(out, "  %-12s %s (plugin observer, %d value%s)\n", o->plugin->name, o->plugin->help, o->plugin->dim,
                    o->plugin->dim > 1 ? "s" : "");
        if (o->plugin)
            fprintf(out, "    %-10s component %d:", o->name, o->component + 1);
        else
            fprintf(out, "  %-12s %s:", o->name, o->help);
        for (int c = 0; c < o->n_columns; ++c)
            fprintf(out, " %s", o->columns[c].name);
        fputc('\n', out);
    }
    fprintf(out, "\nSolvers (--solver): kinsol (SUNDIALS KINSOL, default), newton (built-in dense Newton)\n");
}

typedef struct list_options {
    const char *names;
} list_options;

static const nh_option LIST_OPTIONS[] = {
    {"names", NH_OPTION_STRING, 0, 0, 0, "KIND",
     "only names, one a line, for scripts and shell completion: commands, systems, methods, presets, observers, "
     "or options:COMMAND", 0, 0},
};

const nh_option_table nh_cli_list_table = {"list", "[--names KIND]",
                                           "systems, presets, methods, parameters, flags and observers", LIST_OPTIONS,
                                           1, 0};

/* --names KIND: one name a line; 0, or 1 for an unknown kind. */
static int list_names(const nh_cli *cli, const char *kind, FILE *out)
{
    const nh_registry *reg = cli->registry;
    if (!strcmp(kind, "commands"))
        for (int i = 0; nh_cli_command_name(i); ++i)
            fprintf(out, "%s\n", nh_cli_command_name(i));
    else if (!strcmp(kind, "systems"))
        for (int i = 0; i < nh_registry_system_count(reg); ++i)
            fprintf(out, "%s\n", nh_registry_system_at(reg, i)->name);
    else if (!strcmp(kind, "methods"))
        for (int i = 0; i < nh_registry_method_count(reg); ++i)
            fprintf(out, "%s\n", nh_registry_method_at(reg, i)->name);
    else if (!strcmp(kind, "presets"))
        for (int i = 0; i < nh_registry_system_count(reg); ++i)
            for (int p = 0; p < nh_registry_system_at(reg, i)->n_presets; ++p)
                fprintf(out, "%s\n", nh_registry_system_at(reg, i)->presets[p].name);
    else if (!strcmp(kind, "observers"))
        for (int i = 0; i < nh_observer_count(cli->observers); ++i)
            fprintf(out, "%s\n", nh_observer_at(cli->observers, i)->name);
    else if (!strncmp(kind, "options:", 8) && nh_cli_command_table(kind + 8))
        for (int i = 0; i < nh_cli_command_table(kind + 8)->n_options; ++i)
            fprintf(out, "--%s\n", nh_cli_command_table(kind + 8)->options[i].name);
    else
        return 1;
    return 0;
}

int nh_cli_list(const nh_cli *cli, int argc, char **argv)
{
    uint64_t seen;
    int status;
    list_options o = {0};
    if (nh_cli_parse(&nh_cli_list_table, argc, argv, &o, &seen, NULL, NULL, &status))
        return status;
    if (o.names && list_names(cli, o.names, stdout)) {
        fprintf(stderr, "nhens list: --names '%s' is not one of commands, systems, methods, presets, observers, "
                        "options:COMMAND\n", o.names);
        return NH_EXIT_USAGE;
    }
    if (o.names)
        return NH_EXIT_OK;
    list_systems(cli->registry, stdout);
    list_methods(cli->registry, stdout);
    list_observers(cli->observers, stdout);
    return NH_EXIT_OK;
}
