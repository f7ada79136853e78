/* `nhens list`: systems, presets, methods, their parameters and flags, straight from the registries. */
#include "cli.h"

#include "nhens/method.h"
#include "nhens/stats.h"
#include "nhens/system.h"

static void print_params(FILE *out, int count, const nh_param_def *defs)
{
    for (int i = 0; i < count; ++i)
        fprintf(out, "      %-8s default %-6g range [%g, %g]%s  %s\n", defs[i].name, defs[i].default_value,
                defs[i].min_value, defs[i].max_value, defs[i].integer ? " integer" : "", defs[i].help);
}

static void list_systems(FILE *out)
{
    fprintf(out, "Systems (--system NAME [--param k=v ...]):\n");
    for (int i = 0; i < nh_system_count(); ++i) {
        const nh_system_type *t = nh_system_at(i);
        fprintf(out, "  %-10s %s\n", t->name, t->summary);
        fprintf(out, "      source: %s\n", t->reference);
        print_params(out, t->n_params, t->params);
        for (int p = 0; p < t->n_presets; ++p)
            fprintf(out, "      %-6s %-14s %s%s%s\n", nh_preset_is_shell(&t->presets[p]) ? "shell" : "preset",
                    t->presets[p].name, t->presets[p].description, t->presets[p].param_overrides[0] ? "; sets " : "",
                    t->presets[p].param_overrides);
    }
}

static void list_methods(FILE *out)
{
    char flags[128];
    fprintf(out, "\nMethods (--method NAME[:k=v,...]); flags and order at the default parameters:\n");
    for (int i = 0; i < nh_method_count(); ++i) {
        const nh_method_type *t = nh_method_at(i);
        nh_param_set defaults;
        nh_params_defaults(&defaults, t->n_params, t->params);
        nh_method_spec spec = {t, defaults};
        nh_method_flags_format(nh_method_spec_flags(&spec), flags, sizeof flags);
        fprintf(out, "  %-10s order %d  [%s]\n      %s\n      source: %s\n", t->name, nh_method_spec_order(&spec),
                flags, t->summary, t->reference);
        print_params(out, t->n_params, t->params);
    }
}

static void list_observers(FILE *out)
{
    fprintf(out, "\nObservers (timeseries.csv columns after t, n_live):\n");
    for (int i = 0; i < nh_observer_count(); ++i) {
        const nh_observer *o = nh_observer_at(i);
        fprintf(out, "  %-12s %s:", o->name, o->help);
        for (int c = 0; c < o->n_columns; ++c)
            fprintf(out, " %s", o->columns[c].name);
        fputc('\n', out);
    }
    fprintf(out, "\nSolvers (--solver): kinsol (SUNDIALS KINSOL, default), newton (built-in dense Newton)\n");
}

int nh_cli_list(FILE *out)
{
    list_systems(out);
    list_methods(out);
    list_observers(out);
    return NH_EXIT_OK;
}
