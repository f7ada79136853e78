/* `nhens run`: parse and validate options into an nh_run_config, run the ensemble, write
 * DIR/timeseries.csv and DIR/summary.json, print a short human summary. */
#include "cli.h"

#include "nhens/ensemble.h"
#include "nhens/output.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_SYSTEM_PARAMS = 16, OUTPUT_ROWS_TARGET = 1000 };

typedef struct run_options {
    const char *system, *method, *preset, *out, *solver;
    const char *params[MAX_SYSTEM_PARAMS];
    int n_params;
    double h, T, energy, fit_start, section, smooth;
    int have_h, have_T, have_energy, have_section, quiet;
    long ensemble, every, threads;
    unsigned long long seed;
} run_options;

static const char RUN_USAGE[] =
    "usage: nhens run --system S [--param k=v ...] --method M[:k=v,...] --h H --T T\n"
    "                 (--energy E | --preset P) [--ensemble N] [--seed S] [--threads K]\n"
    "                 [--every J] [--solver kinsol|newton] [--fit-start F] [--section XI] [--smooth W] [--out DIR] [--quiet]\n";

void nh_cli_run_usage(FILE *out)
{
    fputs(RUN_USAGE, out);
}

static int parse_number(const char *opt, const char *text, double *out)
{
    if (nh_parse_double(text, out)) {
        fprintf(stderr, "nhens run: --%s '%s' is not a finite number\n", opt, text);
        return 1;
    }
    return 0;
}

static int parse_count(const char *opt, const char *text, long *out)
{
    if (nh_parse_long(text, out)) {
        fprintf(stderr, "nhens run: --%s '%s' is not an integer\n", opt, text);
        return 1;
    }
    return 0;
}

static int parse_seed(const char *text, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    if (!*text || *text == '-' || (*out = strtoull(text, &end, 0), errno != 0 || *end != '\0')) {
        fprintf(stderr, "nhens run: --seed '%s' is not an unsigned 64-bit integer\n", text);
        return 1;
    }
    return 0;
}

static int parse_option(run_options *o, const char *name, const char *arg)
{
    if (!strcmp(name, "system")) o->system = arg;
    else if (!strcmp(name, "method")) o->method = arg;
    else if (!strcmp(name, "preset")) o->preset = arg;
    else if (!strcmp(name, "out")) o->out = arg;
    else if (!strcmp(name, "solver")) o->solver = arg;
    else if (!strcmp(name, "quiet")) o->quiet = 1;
    else if (!strcmp(name, "param")) {
        if (o->n_params == MAX_SYSTEM_PARAMS)
            return nh_cli_usage_error("run", RUN_USAGE, "too many --param options (at most 16), last was '%s'", arg) != 0;
        o->params[o->n_params++] = arg;
    } else if (!strcmp(name, "h")) { o->have_h = 1; return parse_number(name, arg, &o->h); }
    else if (!strcmp(name, "T")) { o->have_T = 1; return parse_number(name, arg, &o->T); }
    else if (!strcmp(name, "energy")) { o->have_energy = 1; return parse_number(name, arg, &o->energy); }
    else if (!strcmp(name, "fit-start")) return parse_number(name, arg, &o->fit_start);
    else if (!strcmp(name, "section")) { o->have_section = 1; return parse_number(name, arg, &o->section); }
    else if (!strcmp(name, "smooth")) return parse_number(name, arg, &o->smooth);
    else if (!strcmp(name, "ensemble")) return parse_count(name, arg, &o->ensemble);
    else if (!strcmp(name, "every")) return parse_count(name, arg, &o->every);
    else if (!strcmp(name, "threads")) return parse_count(name, arg, &o->threads);
    else if (!strcmp(name, "seed")) return parse_seed(arg, &o->seed);
    return 0;
}

static int parse_run_options(int argc, char **argv, run_options *o)
{
    static const struct option longopts[] = {
        {"system", required_argument, 0, 0}, {"param", required_argument, 0, 0},
        {"method", required_argument, 0, 0}, {"h", required_argument, 0, 0},
        {"T", required_argument, 0, 0},      {"energy", required_argument, 0, 0},
        {"preset", required_argument, 0, 0}, {"ensemble", required_argument, 0, 0},
        {"seed", required_argument, 0, 0},   {"threads", required_argument, 0, 0},
        {"every", required_argument, 0, 0},  {"out", required_argument, 0, 0},
        {"solver", required_argument, 0, 0}, {"fit-start", required_argument, 0, 0},
        {"section", required_argument, 0, 0}, {"smooth", required_argument, 0, 0},
        {"quiet", no_argument, 0, 0},        {0, 0, 0, 0}};
    *o = (run_options){.out = "nhens-out", .solver = "kinsol", .fit_start = 0.5, .ensemble = -1,
                       .every = 0, .threads = -1, .seed = 1};
    optind = 0;
    opterr = 0;
    int idx = 0, c;
    while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        if (c != 0)
            return nh_cli_usage_error("run", RUN_USAGE, "unknown or incomplete option '%s'", argv[optind - 1]);
        if (parse_option(o, longopts[idx].name, optarg))
            return NH_EXIT_USAGE;
    }
    if (optind < argc)
        return nh_cli_usage_error("run", RUN_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!o->system || !o->method || !o->have_h || !o->have_T)
        return nh_cli_usage_error("run", RUN_USAGE, "%s", "--system, --method, --h and --T are required");
    if (!o->have_energy == !o->preset)
        return nh_cli_usage_error("run", RUN_USAGE, "%s", "give exactly one of --energy E (ensemble on an energy shell) or --preset P");
    if (o->smooth < 0)
        return nh_cli_usage_error("run", RUN_USAGE, "%s", "--smooth W needs a window W >= 0 in time units");
    return NH_EXIT_OK;
}

static void progress_line(long done, long total, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "\r  trajectories %ld/%ld", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static int build_config(const run_options *o, nh_system *sys, nh_run_config *cfg, nh_error *err)
{
    const nh_preset *preset = NULL;
    int rc = nh_cli_build_system(o->system, o->preset, o->params, o->n_params, sys, &preset, err);
    if (rc)
        return rc;
    *cfg = (nh_run_config){.system = sys, .h = o->h, .T = o->T, .energy = o->energy,
                           .seed = o->seed, .fit_window_start = o->fit_start, .section = o->section,
                           .have_section = o->have_section};
    nh_run_config_use_preset(cfg, preset);
    if ((rc = nh_method_spec_parse(&cfg->method, o->method, err)))
        return rc;
    if (nh_solver_kind_parse(o->solver, &cfg->solver))
        return nh_fail(err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", o->solver);
    cfg->ensemble = o->ensemble >= 0 ? o->ensemble : cfg->shell_preset ? cfg->shell_preset->shell_ensemble : cfg->preset ? 1 : 100;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (o->threads != -1 && (o->threads < 1 || o->threads > 1024))
        return nh_fail(err, NH_ERR_INPUT, "threads=%ld must be in [1, 1024]", o->threads);
    cfg->threads = (int)(o->threads != -1 ? o->threads : (cores > 0 ? cores : 1));
    long steps = (o->h > 0 && o->T > 0) ? (long)floor(o->T / o->h + 1e-9) : 1;
    cfg->every = o->every != 0 ? o->every : (steps / OUTPUT_ROWS_TARGET > 1 ? steps / OUTPUT_ROWS_TARGET : 1);
    if (isatty(STDERR_FILENO) && !o->quiet)
        cfg->progress = progress_line;
    return nh_run_validate(cfg, err);
}

static void join_command(int argc, char **argv, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "nhens");
    for (int i = 0; i < argc && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
}

/* max |value| of the observers beyond the three core ones, when they apply to the system */
static void print_observer_extremes(const nh_run_result *res)
{
    for (int o = 3; o < nh_observer_count(); ++o) {
        if (!(res->observer_mask & (1u << o)))
            continue;
        printf("  max |%s error| = %.3e\n", nh_observer_at(o)->name, nh_run_observer_max(res, o));
    }
}

static void print_summary(const nh_run_config *cfg, const nh_run_result *res, const char *out)
{
    char method[256], sysp[256];
    nh_method_spec_format(&cfg->method, method, sizeof method);
    nh_params_format(&cfg->system->params, sysp, sizeof sysp);
    printf("nhens run: %s(%s), method %s, solver %s, h=%g, T=%g, %ld trajector%s, seed %llu, %d thread%s\n",
           cfg->system->type->name, sysp, method, nh_solver_kind_name(cfg->solver), cfg->h, cfg->T, cfg->ensemble,
           cfg->ensemble == 1 ? "y" : "ies", (unsigned long long)cfg->seed, cfg->threads, cfg->threads == 1 ? "" : "s");
    if (cfg->preset)
        printf("  initial state: preset %s (%s)\n", cfg->preset->name, cfg->preset->description);
    else
        printf("  initial states: energy shell H = %g%s%s\n", cfg->energy, cfg->shell_preset ? ", preset " : "",
               cfg->shell_preset ? cfg->shell_preset->name : "");
    printf("  %ld steps in %.3f s (%.3g steps/s); failed trajectories: %ld\n", res->completed_steps,
           res->wall_seconds, res->steps_per_second, res->failed);
    printf("  max |dH| = %.3e, max |dH|/|H0| = %.3e, max |A(q)v| = %.3e\n", nh_run_observer_max(res, 0),
           nh_run_observer_max(res, 1), nh_run_observer_max(res, 2));
    print_observer_extremes(res);
    if (res->fit_ok && cfg->ensemble > 1)
        printf("  variance law on t in [%g, %g]: Var dH = a + C t with a = %.3e, C = %.3e, C/h^4 = %.3e; "
               "log-log slope p = %.2f\n",
               res->fit.t_start, res->fit.t_end, res->fit.a, res->fit.C, res->fit.C_over_h4, res->fit.p);
    for (int i = 0; i < res->n_reported && i < 5; ++i)
        printf("  failure: trajectory %ld at t = %g: %s\n", res->first_failures[i].trajectory,
               res->first_failures[i].time, nh_status_name(res->first_failures[i].status));
    printf("  wrote %s/timeseries.csv and %s/summary.json\n", out, out);
}

int nh_cli_run(int argc, char **argv)
{
    run_options o;
    int rc = parse_run_options(argc, argv, &o);
    if (rc)
        return rc;
    nh_system sys;
    nh_run_config cfg;
    nh_run_result res;
    nh_error err;
    if (build_config(&o, &sys, &cfg, &err)) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    if (nh_make_directory(o.out, &err) || nh_run_ensemble(&cfg, &res, &err)) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    char command[4096];
    join_command(argc, argv, command, sizeof command);
    rc = nh_write_timeseries(o.out, &res, &err);
    if (!rc)
        rc = nh_write_summary(o.out, &cfg, &res, command, &err);
    if (!rc && o.smooth > 0)
        rc = nh_write_smoothed(o.out, o.smooth, &err);
    if (rc) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        nh_run_result_free(&res);
        return NH_EXIT_ERROR;
    }
    print_summary(&cfg, &res, o.out);
    int status = res.failed ? NH_EXIT_FAILED_TRAJECTORIES : NH_EXIT_OK;
    nh_run_result_free(&res);
    return status;
}
