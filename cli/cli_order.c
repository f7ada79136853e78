/* `nhens order`: a convergence study of one method on one initial state. The method runs at each
 * step size of a list to the same T; the max-norm error of (q, v) against a CVODE reference at tight
 * tolerance and the observed order between consecutive step sizes are printed as a table. */
#include "cli.h"

#include "nhens/ensemble.h"
#include "nhens/method.h"
#include "nhens/reference.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STEP_SIZES = 16, MAX_ORDER_PARAMS = 16 };

typedef struct order_options {
    const char *system, *method, *preset, *solver, *steps;
    const char *params[MAX_ORDER_PARAMS];
    int n_params, have_energy;
    double T, energy, rtol;
    unsigned long long seed;
} order_options;

static const char ORDER_USAGE[] =
    "usage: nhens order --system S [--param k=v ...] --method M[:k=v,...] --T T --h H1,H2,...\n"
    "                   (--preset P | --energy E [--seed S]) [--solver kinsol|newton] [--rtol R]\n";

static int parse_order_options(int argc, char **argv, order_options *o)
{
    static const struct option longopts[] = {
        {"system", required_argument, 0, 0}, {"param", required_argument, 0, 0},
        {"method", required_argument, 0, 0}, {"T", required_argument, 0, 0},
        {"h", required_argument, 0, 0},      {"preset", required_argument, 0, 0},
        {"energy", required_argument, 0, 0}, {"seed", required_argument, 0, 0},
        {"solver", required_argument, 0, 0}, {"rtol", required_argument, 0, 0},
        {0, 0, 0, 0}};
    *o = (order_options){.solver = "kinsol", .rtol = 1e-13, .seed = 1, .T = NAN};
    optind = 0;
    opterr = 0;
    int idx, c;
    while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        if (c != 0)
            return nh_cli_usage_error("order", ORDER_USAGE, "unknown or incomplete option '%s'", argv[optind - 1]);
        const char *name = longopts[idx].name;
        double value = 0;
        int numeric = !strcmp(name, "T") || !strcmp(name, "energy") || !strcmp(name, "rtol") || !strcmp(name, "seed");
        if (numeric && nh_parse_double(optarg, &value))
            return nh_cli_usage_error("order", ORDER_USAGE, "'%s' is not a finite number", optarg);
        if (!strcmp(name, "system")) o->system = optarg;
        else if (!strcmp(name, "method")) o->method = optarg;
        else if (!strcmp(name, "preset")) o->preset = optarg;
        else if (!strcmp(name, "solver")) o->solver = optarg;
        else if (!strcmp(name, "h")) o->steps = optarg;
        else if (!strcmp(name, "T")) o->T = value;
        else if (!strcmp(name, "rtol")) o->rtol = value;
        else if (!strcmp(name, "seed")) o->seed = (unsigned long long)value;
        else if (!strcmp(name, "energy")) { o->energy = value; o->have_energy = 1; }
        else if (o->n_params < MAX_ORDER_PARAMS) o->params[o->n_params++] = optarg;
        else return nh_cli_usage_error("order", ORDER_USAGE, "too many --param options, last was '%s'", optarg);
    }
    if (optind < argc)
        return nh_cli_usage_error("order", ORDER_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!o->system || !o->method || !o->steps || isnan(o->T))
        return nh_cli_usage_error("order", ORDER_USAGE, "%s", "--system, --method, --T and --h are required");
    if (!o->have_energy == !o->preset)
        return nh_cli_usage_error("order", ORDER_USAGE, "%s", "give exactly one of --preset P or --energy E");
    if (!(o->T > 0) || !(o->rtol > 0 && o->rtol < 1e-3))
        return nh_cli_usage_error("order", ORDER_USAGE, "%s", "--T must be > 0 and --rtol in (0, 1e-3)");
    return NH_EXIT_OK;
}

/* "0.1,0.05" -> values; each h > 0 and T/h an integer. */
static int parse_step_sizes(const char *text, double T, double *h, int *count)
{
    char buf[512], *save = NULL;
    if (strlen(text) >= sizeof buf)
        return nh_cli_usage_error("order", ORDER_USAGE, "--h list too long: '%s'", text);
    strcpy(buf, text);
    *count = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (*count == MAX_STEP_SIZES || nh_parse_double(tok, &v) || !(v > 0))
            return nh_cli_usage_error("order", ORDER_USAGE, "step size '%s' must be a number > 0 (at most 16 of them)", tok);
        double steps = round(T / v);
        if (steps < 1 || fabs(steps * v - T) > 1e-9 * T)
            return nh_cli_usage_error("order", ORDER_USAGE, "step size '%s' does not divide T into a whole number of steps", tok);
        h[(*count)++] = v;
    }
    return *count >= 2 ? NH_EXIT_OK : nh_cli_usage_error("order", ORDER_USAGE, "%s", "--h needs at least two step sizes");
}

static int initial_order_state(const order_options *o, const nh_system *s, const nh_preset *p, double *q, double *v,
                               nh_error *err)
{
    if (p && nh_preset_is_shell(p))
        return nh_fail(err, NH_ERR_INPUT, "preset %s is an energy shell; use --energy %g with --seed", p->name,
                       p->shell_energy);
    if (p) {
        double change;
        return nh_preset_state(s, p, q, v, &change);
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

int nh_cli_order(int argc, char **argv)
{
    order_options o;
    double h[MAX_STEP_SIZES], q0[NH_MAX_DIM], v0[NH_MAX_DIM], qr[NH_MAX_DIM], vr[NH_MAX_DIM];
    int count, rc = parse_order_options(argc, argv, &o);
    if (rc || (rc = parse_step_sizes(o.steps, o.T, h, &count)))
        return rc;
    nh_system sys;
    nh_method_spec spec;
    nh_solver_kind kind;
    const nh_preset *preset;
    nh_error err;
    if (nh_cli_build_system(o.system, o.preset, o.params, o.n_params, &sys, &preset, &err) ||
        nh_method_spec_parse(&spec, o.method, &err) || nh_method_spec_check(&spec, &sys, &err) ||
        initial_order_state(&o, &sys, preset, q0, v0, &err) ||
        (nh_solver_kind_parse(o.solver, &kind) && nh_fail(&err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", o.solver))) {
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
