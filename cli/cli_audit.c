/* `nhens audit`: the table a user reads before choosing a method. For every method of a list
 * (default: every registered method at its defaults plus the variants the papers single out) it
 * prints the formal and observed order, the constraint residual and energy error over a long run,
 * and the reversibility defect, on one system and one initial state. */
#include "cli.h"

#include "nhens/audit.h"
#include "nhens/ensemble.h"

#include <stddef.h>
#include <math.h>
#include <string.h>

static const char *const EXTRA_VARIANTS[] = {"dla:alpha=0.4", "newmark:alpha=0", "newmark:alpha=1",
                                             "newmark:beta=0.1,beta2=0.1", "genfun:variant=5",
                                             "gonzalez-r:fd=1"};

enum { MAX_AUDIT_METHODS = 64 };

typedef struct audit_options {
    const char *system, *preset, *solver;
    const char *params[NH_CLI_MAX_PARAMS], *methods[MAX_AUDIT_METHODS];
    int n_params, n_methods, markdown, quiet, project;
    double energy, h, order_T, long_T;
    uint64_t seed, seen;
} audit_options;

#define AUDIT_OPT(name, kind, field, lo, hi, meta, help) {name, kind, offsetof(audit_options, field), lo, hi, meta, help, 0, 0}
static const nh_option AUDIT_OPTIONS[] = {
    AUDIT_OPT("system", NH_OPTION_STRING, system, 0, 0, "S", "system (nhens list)"),
    {"param", NH_OPTION_LIST, offsetof(audit_options, params), 0, 0, "k=v", "system parameter",
     offsetof(audit_options, n_params), NH_CLI_MAX_PARAMS},
    AUDIT_OPT("preset", NH_OPTION_STRING, preset, 0, 0, "P", "an initial state from a paper, or an energy shell"),
    AUDIT_OPT("project", NH_OPTION_FLAG, project, 0, 0, NULL,
              "project the preset's velocity onto D_q when it is off it (default: refuse it)"),
    AUDIT_OPT("energy", NH_OPTION_DOUBLE, energy, -1e12, 1e12, "E", "start from a state on the energy shell H = E"),
    AUDIT_OPT("seed", NH_OPTION_U64, seed, 0, 0, "S", "seed of that state (default 1)"),
    {"method", NH_OPTION_LIST, offsetof(audit_options, methods), 0, 0, "M", "method to audit (default: all)",
     offsetof(audit_options, n_methods), MAX_AUDIT_METHODS},
    AUDIT_OPT("h", NH_OPTION_DOUBLE, h, 1e-6, 10, "H", "step size (default 0.1)"),
    AUDIT_OPT("T-order", NH_OPTION_DOUBLE, order_T, 1e-6, 1e4, "T", "horizon of the order study (default 2)"),
    AUDIT_OPT("T-long", NH_OPTION_DOUBLE, long_T, 1e-6, 1e6, "T", "horizon of the long run (default 100)"),
    AUDIT_OPT("solver", NH_OPTION_STRING, solver, 0, 0, "kinsol|newton", "nonlinear solver (default " NH_CLI_DEFAULT_SOLVER ")"),
    AUDIT_OPT("markdown", NH_OPTION_FLAG, markdown, 0, 0, NULL, "print a Markdown table"),
    AUDIT_OPT("quiet", NH_OPTION_FLAG, quiet, 0, 0, NULL, "no progress on stderr (audit prints none: its table is stdout)"),
};

const nh_option_table nh_cli_audit_table = {
    "audit", "--system S [--param k=v ...] (--preset P | --energy E [--seed S]) [--method M ...] [options]",
    "order, constraint, energy and reversibility of every method on a system", AUDIT_OPTIONS,
    sizeof AUDIT_OPTIONS / sizeof AUDIT_OPTIONS[0], 0};

/* T is a whole number of steps h (to round-off). */
static int whole_steps(double T, double h)
{
    const double n = T / h;
    return fabs(n - nearbyint(n)) <= 1e-9 * n;
}

static int parse_audit_options(int argc, char **argv, audit_options *o, int *status)
{
    *o = (audit_options){.solver = NH_CLI_DEFAULT_SOLVER, .h = 0.1, .order_T = 2.0, .long_T = 100.0, .seed = 1};
    if (nh_cli_parse(&nh_cli_audit_table, argc, argv, o, &o->seen, NULL, NULL, status))
        return 1;
    char problem[256] = "";
    if (!o->system || !nh_cli_given(&nh_cli_audit_table, o->seen, "energy") == !o->preset)
        snprintf(problem, sizeof problem, "--system and exactly one of --preset or --energy are required");
    else if (!(o->order_T >= 4 * o->h) || !(o->long_T >= o->h) || o->long_T / o->h > 1e8)
        snprintf(problem, sizeof problem, "need T-order >= 4h and h <= T-long <= 1e8 h (got h=%g, T-order=%g, T-long=%g)",
                 o->h, o->order_T, o->long_T);
    else if (!whole_steps(o->long_T, o->h) || !whole_steps(o->order_T, o->h / 4))
        snprintf(problem, sizeof problem,
                 "T-long=%g and T-order=%g must be whole numbers of steps (of h=%g, and of h/4 for T-order): "
                 "T-long/h = %.6g, T-order/(h/4) = %.6g", o->long_T, o->order_T, o->h, o->long_T / o->h,
                 4 * o->order_T / o->h);
    if (problem[0]) {
        fprintf(stderr, "nhens audit: %s (nhens help audit lists the options)\n", problem);
        *status = NH_EXIT_USAGE;
        return 1;
    }
    return 0;
}

static int audit_state(const audit_options *o, const nh_system *s, const nh_preset *p, double *q, double *v,
                       nh_error *err)
{
    if (p && !nh_preset_is_shell(p)) {
        double change;
        if (nh_preset_check(s, p, o->project, err))
            return NH_ERR_INPUT;
        return nh_preset_state(s, p, q, v, &change) ? nh_fail(err, NH_ERR_INPUT, "preset %s: A(q) is singular", p->name)
                                                     : NH_OK;
    }
    double energy = p ? p->shell_energy : o->energy;
    int rc = nh_energy_shell_check(s, energy, err);
    if (rc)
        return rc;
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, o->seed, 0);
    return nh_energy_shell_sample(s, energy, &rng, q, v) ? nh_fail(err, NH_ERR_INPUT, "could not sample the shell") : 0;
}

static void print_header(const audit_options *o, const nh_system *s)
{
    char params[256];
    nh_params_format(&s->params, params, sizeof params);
    printf("audit of %s(%s) from %s%s: orders from h = %g, %g, %g at T = %g against CVODE (1e-13); "
           "constraint and energy over T = %g at h = %g; reversibility |Phi_h(rho Phi_h x) - rho x| at h = %g\n\n",
           s->type->name, params, o->preset ? "preset " : "a state on the energy shell",
           o->preset ? o->preset : "", o->h, o->h / 2, o->h / 4, o->order_T, o->long_T, o->h, o->h);
    if (o->markdown)
        printf("| method | order | observed | error at h | max \\|A v\\| | max \\|dH\\|/\\|H0\\| | reversibility | flags |\n"
               "|---|---|---|---|---|---|---|---|\n");
    else
        printf("%-44s %5s %8s %11s %11s %11s %11s  %s\n", "method", "order", "observed", "error(h)", "max|Av|",
               "max|dH|/H0", "reversib.", "flags");
}

static void print_row(const audit_options *o, const char *name, const nh_audit_row *r, unsigned flags)
{
    char f[128], status[64] = "";
    nh_method_flags_format(flags, f, sizeof f);
    if (r->status)
        snprintf(status, sizeof status, " (long run failed at t = %g)", r->failed_at);
    if (o->markdown)
        printf("| `%s` | %d | %.2f | %.2e | %.1e | %.1e | %.1e | %s%s |\n", name, r->formal_order, r->observed_order,
               r->error[0], r->constraint_max, r->energy_rel_max, r->reversibility, f, status);
    else
        printf("%-44s %5d %8.2f %11.3e %11.2e %11.2e %11.2e  %s%s\n", name, r->formal_order, r->observed_order,
               r->error[0], r->constraint_max, r->energy_rel_max, r->reversibility, f, status);
}

static int audit_one(const nh_cli *cli, const audit_options *o, const nh_audit_config *cfg, const char *text)
{
    nh_method_spec spec;
    nh_audit_row row;
    nh_error err;
    char name[256];
    if (nh_cli_parse_method(cli, text, &spec, &err)) {
        fprintf(stderr, "nhens audit: %s\n", err.msg);
        return 2;
    }
    if (nh_method_spec_check(&spec, cfg->system, &err)) {
        printf("%-44s refused: %s\n", text, err.msg);
        return 0;
    }
    nh_method_spec_format(&spec, name, sizeof name);
    if (nh_audit_method(cfg, &spec, &row, &err)) {
        fprintf(stderr, "nhens audit: %s: %s\n", name, err.msg);
        return 1;
    }
    print_row(o, name, &row, nh_method_spec_flags(&spec));
    fflush(stdout);
    return 0;
}

int nh_cli_audit(const nh_cli *cli, int argc, char **argv)
{
    audit_options o;
    int rc;
    if (parse_audit_options(argc, argv, &o, &rc))
        return rc;
    nh_system sys;
    const nh_preset *preset;
    nh_error err;
    nh_solver_kind kind;
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM];
    if (nh_cli_build_system(cli, o.system, o.preset, o.params, o.n_params, &sys, &preset, &err) ||
        audit_state(&o, &sys, preset, q0, v0, &err) || nh_cli_solver(o.solver, &kind, &err)) {
        fprintf(stderr, "nhens audit: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    nh_audit_config cfg = {&sys, q0, v0, kind, o.h, o.order_T, o.long_T};
    print_header(&o, &sys);
    int failed = 0;
    if (o.n_methods) {
        for (int i = 0; i < o.n_methods; ++i)
            failed |= audit_one(cli, &o, &cfg, o.methods[i]);
    } else {
        for (int i = 0; i < nh_registry_method_count(cli->registry); ++i)
            failed |= audit_one(cli, &o, &cfg, nh_method_type_name(nh_registry_method_at(cli->registry, i)));
        for (size_t i = 0; i < sizeof EXTRA_VARIANTS / sizeof EXTRA_VARIANTS[0]; ++i)
            failed |= audit_one(cli, &o, &cfg, EXTRA_VARIANTS[i]);
    }
    return failed & 2 ? NH_EXIT_USAGE : failed ? NH_EXIT_ERROR : NH_EXIT_OK;
}
