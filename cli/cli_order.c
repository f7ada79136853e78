/* `nhens order`: a convergence study of one method on one initial state. The method runs at each
 * step size of a list to the same T; the max-norm error of (q, v) against a CVODE reference at tight
 * tolerance and the observed order between consecutive step sizes are printed as a table. */
#include "cli.h"

#include "nhens/ensemble.h"
#include "nhens/method.h"
#include "nhens/reference.h"

#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STEP_SIZES = 16 };

typedef struct order_options {
    const char *system, *method, *preset, *solver, *steps;
    const char *params[NH_CLI_MAX_PARAMS];
    int n_params, quiet, project;
    double T, energy, rtol;
    uint64_t seed, seen;
} order_options;

#define ORDER_OPT(name, kind, field, lo, hi, meta, help) {name, kind, offsetof(order_options, field), lo, hi, meta, help, 0, 0}
static const nh_option ORDER_OPTIONS[] = {
    ORDER_OPT("system", NH_OPTION_STRING, system, 0, 0, "S", "system (nhens list)"),
    {"param", NH_OPTION_LIST, offsetof(order_options, params), 0, 0, "k=v", "system parameter",
     offsetof(order_options, n_params), NH_CLI_MAX_PARAMS},
    ORDER_OPT("method", NH_OPTION_STRING, method, 0, 0, "M[:k=v,...]", "method and its parameters"),
    ORDER_OPT("T", NH_OPTION_DOUBLE, T, 1e-9, 1e6, "T", "horizon of every run"),
    ORDER_OPT("h", NH_OPTION_STRING, steps, 0, 0, "H1,H2,...", "at least two step sizes, each dividing T"),
    ORDER_OPT("preset", NH_OPTION_STRING, preset, 0, 0, "P", "a paper's initial state"),
    ORDER_OPT("project", NH_OPTION_FLAG, project, 0, 0, NULL,
              "project the preset's velocity onto D_q when it is off it (default: refuse it)"),
    ORDER_OPT("energy", NH_OPTION_DOUBLE, energy, -1e12, 1e12, "E", "start from a state on the energy shell H = E"),
    ORDER_OPT("seed", NH_OPTION_U64, seed, 0, 0, "S", "seed of that state (default 1)"),
    ORDER_OPT("solver", NH_OPTION_STRING, solver, 0, 0, "kinsol|newton", "nonlinear solver (default " NH_CLI_DEFAULT_SOLVER ")"),
    ORDER_OPT("rtol", NH_OPTION_DOUBLE, rtol, 1e-15, 1e-3, "R", "CVODE tolerance of the reference (default 1e-13)"),
    ORDER_OPT("quiet", NH_OPTION_FLAG, quiet, 0, 0, NULL, "no progress on stderr (order prints none: its table is stdout)"),
};

const nh_option_table nh_cli_order_table = {
    "order", "--system S [--param k=v ...] --method M --T T --h H1,H2,... (--preset P [--project] | --energy E [--seed S]) [--quiet]",
    "convergence study of one method against CVODE: errors and observed orders", ORDER_OPTIONS,
    sizeof ORDER_OPTIONS / sizeof ORDER_OPTIONS[0], 0};

static int order_usage_error(const char *fmt, const char *value)
{
    fprintf(stderr, "nhens order: ");
    fprintf(stderr, fmt, value);
    fprintf(stderr, " (nhens help order lists the options)\n");
    return NH_EXIT_USAGE;
}

static int parse_order_options(int argc, char **argv, order_options *o, int *status)
{
    *o = (order_options){.solver = NH_CLI_DEFAULT_SOLVER, .rtol = 1e-13, .seed = 1};
    if (nh_cli_parse(&nh_cli_order_table, argc, argv, o, &o->seen, NULL, NULL, status))
        return 1;
    const nh_option_table *t = &nh_cli_order_table;
    if (!o->system || !o->method || !o->steps || !nh_cli_given(t, o->seen, "T"))
        return *status = order_usage_error("%s", "--system, --method, --T and --h are required"), 1;
    if (!nh_cli_given(t, o->seen, "energy") == !o->preset)
        return *status = order_usage_error("%s", "give exactly one of --preset P or --energy E"), 1;
    return 0;
}

/* "0.1,0.05" -> values; each h > 0 and T/h an integer. */
static int parse_step_sizes(const char *text, double T, double *h, int *count)
{
    char buf[512], *save = NULL;
    if (strlen(text) >= sizeof buf)
        return order_usage_error("--h list too long: '%s'", text);
    strcpy(buf, text);
    *count = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (*count == MAX_STEP_SIZES || nh_parse_double_in(tok, 1e-9, 1e6, &v))
            return order_usage_error("step size '%s' must be a number in [1e-9, 1e6] (at most 16 of them)", tok);
        double steps = round(T / v);
        if (steps < 1 || steps > 1e9 || fabs(steps * v - T) > 1e-9 * T)
            return order_usage_error("step size '%s' does not divide T into a whole number of steps (1 to 1e9)", tok);
        for (int k = 0; k < *count; ++k)
            if (h[k] == v)
                return order_usage_error("step size '%s' is given twice", tok);
        h[(*count)++] = v;
    }
    return *count >= 2 ? NH_EXIT_OK : order_usage_error("%s", "--h needs at least two step sizes");
}

static int initial_order_state(const order_options *o, const nh_system *s, const nh_preset *p, double *q, double *v,
                               nh_error *err)
{
    if (p && nh_preset_is_shell(p))
        return nh_fail(err, NH_ERR_INPUT, "preset %s is an energy shell; use --energy %g with --seed", p->name,
                       p->shell_energy);
    if (p) {
        double change;
        if (nh_preset_check(s, p, o->project, err))
            return NH_ERR_INPUT;
        return nh_preset_state(s, p, q, v, &change) ? nh_fail(err, NH_ERR_INPUT, "preset %s: A(q) is singular", p->name)
                                                     : NH_OK;
    }
    int rc = nh_energy_shell_check(s, o->energy, err);
    if (rc)
        return rc;
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, o->seed, 0);
    return nh_energy_shell_sample(s, o->energy, &rng, q, v) ? nh_fail(err, NH_ERR_INPUT, "could not sample the shell")
                                                             : NH_OK;
}

static double run_error(nh_stepper *st, const nh_system *s, const double *q0, const double *v0, double h, long steps,
                        const double *qr, const double *vr, int *status)
{
    double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS], err = 0;
    memcpy(q, q0, sizeof(double) * s->n);
    memcpy(v, v0, sizeof(double) * s->n);
    *status = nh_stepper_start(st, q, v, carried);
    for (long k = 0; k < steps && *status == NH_OK; ++k)
        *status = nh_stepper_step(st, h, q, v, carried);
    for (int i = 0; i < s->n; ++i)
        err = fmax(err, fmax(fabs(q[i] - qr[i]), fabs(v[i] - vr[i])));
    return err;
}

int nh_cli_order(const nh_cli *cli, int argc, char **argv)
{
    order_options o;
    double h[MAX_STEP_SIZES], q0[NH_MAX_DIM], v0[NH_MAX_DIM], qr[NH_MAX_DIM], vr[NH_MAX_DIM];
    int count, rc;
    if (parse_order_options(argc, argv, &o, &rc) || (rc = parse_step_sizes(o.steps, o.T, h, &count)))
        return rc;
    nh_system sys;
    nh_method_spec spec;
    nh_solver_kind kind;
    const nh_preset *preset;
    nh_error err;
    if (nh_cli_build_system(cli, o.system, o.preset, o.params, o.n_params, &sys, &preset, &err) ||
        nh_cli_parse_method(cli, o.method, &spec, &err) || nh_method_spec_check(&spec, &sys, &err) ||
        initial_order_state(&o, &sys, preset, q0, v0, &err) || nh_cli_solver(o.solver, &kind, &err)) {
        fprintf(stderr, "nhens order: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    if (nh_reference_solve(&sys, q0, v0, o.T, o.rtol, o.rtol, qr, vr, &err)) {
        fprintf(stderr, "nhens order: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    nh_stepper *st = nh_stepper_create(&spec, &sys, kind, &err);
    if (!st) {
        fprintf(stderr, "nhens order: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    char name[256];
    nh_method_spec_format(&spec, name, sizeof name);
    printf("order study: %s on %s, T = %g, reference CVODE rtol = atol = %g; formal order %d\n", name, o.system, o.T,
           o.rtol, nh_method_spec_order(&spec));
    printf("%12s %10s %14s %10s\n", "h", "steps", "max error", "order");
    double previous = NAN;
    int failed = 0;
    for (int k = 0; k < count; ++k) {
        long steps = lround(o.T / h[k]);
        int status;
        double e = run_error(st, &sys, q0, v0, h[k], steps, qr, vr, &status);
        if (status) {
            printf("%12g %10ld %14s %10s  (%s)\n", h[k], steps, "failed", "-", nh_status_name(status));
            failed = 1;
            previous = NAN;
            continue;
        }
        if (k > 0 && isfinite(previous))
            printf("%12g %10ld %14.6e %10.3f\n", h[k], steps, e, log(previous / e) / log(h[k - 1] / h[k]));
        else
            printf("%12g %10ld %14.6e %10s\n", h[k], steps, e, "-");
        previous = e;
    }
    nh_stepper_free(st);
    return failed ? NH_EXIT_FAILED_TRAJECTORIES : NH_EXIT_OK;
}
