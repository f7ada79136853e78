/* `nhens audit`: the table a user reads before choosing a method. For every method of a list
 * (default: every registered method at its defaults plus the variants the papers single out) it
 * prints the formal and observed order, the constraint residual and energy error over a long run,
 * and the reversibility defect, on one system and one initial state. */
#include "cli.h"

#include "nhens/audit.h"
#include "nhens/ensemble.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static const char *const EXTRA_VARIANTS[] = {"dla:alpha=0.4", "newmark:alpha=0", "newmark:alpha=1",
                                             "newmark:beta=0.1,beta2=0.1", "genfun:variant=5",
                                             "gonzalez-r:fd=1"};

static const char AUDIT_USAGE[] =
    "usage: nhens audit --system S [--param k=v ...] (--preset P | --energy E [--seed S])\n"
    "                   [--method M ...] [--h H] [--T-order T] [--T-long T] [--solver kinsol|newton] [--markdown]\n";

typedef struct audit_options {
    const char *system, *preset, *solver;
    const char *params[16], *methods[64];
    int n_params, n_methods, have_energy, markdown;
    double energy, h, order_T, long_T, seed;
} audit_options;

static int audit_number(const char *name, const char *text, double *out)
{
    char fmt[96];
    snprintf(fmt, sizeof fmt, "--%s needs a non-negative number, not '%%s'", name);
    if (nh_parse_double(text, out) || !(*out >= 0))
        return nh_cli_usage_error("audit", AUDIT_USAGE, fmt, text) != 0;
    return 0;
}

static int parse_audit_options(int argc, char **argv, audit_options *o)
{
    static const struct option longopts[] = {
        {"system", required_argument, 0, 0}, {"param", required_argument, 0, 0},   {"preset", required_argument, 0, 0},
        {"energy", required_argument, 0, 0}, {"seed", required_argument, 0, 0},    {"method", required_argument, 0, 0},
        {"h", required_argument, 0, 0},      {"T-order", required_argument, 0, 0}, {"T-long", required_argument, 0, 0},
        {"solver", required_argument, 0, 0}, {"markdown", no_argument, 0, 0},      {0, 0, 0, 0}};
    *o = (audit_options){.solver = "newton", .h = 0.1, .order_T = 2.0, .long_T = 100.0, .seed = 1};
    optind = 0;
    opterr = 0;
    int idx, c;
    while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        if (c != 0)
            return nh_cli_usage_error("audit", AUDIT_USAGE, "unknown or incomplete option '%s'", argv[optind - 1]);
        const char *name = longopts[idx].name;
        int rc = 0;
        if (!strcmp(name, "system")) o->system = optarg;
        else if (!strcmp(name, "preset")) o->preset = optarg;
        else if (!strcmp(name, "solver")) o->solver = optarg;
        else if (!strcmp(name, "markdown")) o->markdown = 1;
        else if (!strcmp(name, "param") && o->n_params < 16) o->params[o->n_params++] = optarg;
        else if (!strcmp(name, "method") && o->n_methods < 64) o->methods[o->n_methods++] = optarg;
        else if (!strcmp(name, "energy")) { rc = nh_parse_double(optarg, &o->energy) ? nh_cli_usage_error("audit", AUDIT_USAGE, "--energy '%s' is not a number", optarg) : 0; o->have_energy = 1; }
        else if (!strcmp(name, "seed")) rc = audit_number(name, optarg, &o->seed);
        else if (!strcmp(name, "h")) rc = audit_number(name, optarg, &o->h);
        else if (!strcmp(name, "T-order")) rc = audit_number(name, optarg, &o->order_T);
        else if (!strcmp(name, "T-long")) rc = audit_number(name, optarg, &o->long_T);
        else return nh_cli_usage_error("audit", AUDIT_USAGE, "too many --param or --method options at '%s'", optarg);
        if (rc)
            return NH_EXIT_USAGE;
    }
    if (optind < argc)
        return nh_cli_usage_error("audit", AUDIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!o->system || !o->have_energy == !o->preset)
        return nh_cli_usage_error("audit", AUDIT_USAGE, "%s", "--system and exactly one of --preset or --energy are required");
    if (!(o->h > 0) || !(o->order_T >= 4 * o->h) || !(o->long_T >= o->h))
        return nh_cli_usage_error("audit", AUDIT_USAGE, "%s", "need h > 0, T-order >= 4h and T-long >= h");
    return NH_EXIT_OK;
}

static int audit_state(const audit_options *o, const nh_system *s, const nh_preset *p, double *q, double *v,
                       nh_error *err)
{
    if (p && !nh_preset_is_shell(p)) {
        double change;
        return nh_preset_state(s, p, q, v, &change);
    }
    double energy = p ? p->shell_energy : o->energy;
    int rc = nh_energy_shell_check(s, energy, err);
    if (rc)
        return rc;
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, (uint64_t)o->seed, 0);
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

static int audit_one(const audit_options *o, const nh_audit_config *cfg, const char *text)
{
    nh_method_spec spec;
    nh_audit_row row;
    nh_error err;
    char name[256];
    if (nh_method_spec_parse(&spec, text, &err) || nh_method_spec_check(&spec, cfg->system, &err)) {
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

int nh_cli_audit(int argc, char **argv)
{
    audit_options o;
    int rc = parse_audit_options(argc, argv, &o);
    if (rc)
        return rc;
    nh_system sys;
    const nh_preset *preset;
    nh_error err;
    nh_solver_kind kind;
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM];
    if (nh_cli_build_system(o.system, o.preset, o.params, o.n_params, &sys, &preset, &err) ||
        audit_state(&o, &sys, preset, q0, v0, &err) ||
        (nh_solver_kind_parse(o.solver, &kind) && nh_fail(&err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", o.solver))) {
        fprintf(stderr, "nhens audit: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    nh_audit_config cfg = {&sys, q0, v0, kind, o.h, o.order_T, o.long_T};
    print_header(&o, &sys);
    int failed = 0;
    if (o.n_methods) {
        for (int i = 0; i < o.n_methods; ++i)
            failed |= audit_one(&o, &cfg, o.methods[i]);
    } else {
        for (int i = 0; i < nh_method_count(); ++i)
            failed |= audit_one(&o, &cfg, nh_method_at(i)->name);
        for (size_t i = 0; i < sizeof EXTRA_VARIANTS / sizeof EXTRA_VARIANTS[0]; ++i)
            failed |= audit_one(&o, &cfg, EXTRA_VARIANTS[i]);
    }
    return failed ? NH_EXIT_ERROR : NH_EXIT_OK;
}
