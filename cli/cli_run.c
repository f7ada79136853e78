/* `nhens run`: parse and validate options into an nh_run_config, run the ensemble (interruptible,
 * checkpointed, resumable), commit DIR/timeseries.csv, DIR/summary.json (and DIR/smoothed.csv) as one
 * set, print a short human summary. */
#include "cli.h"

#include "nhens/checkpoint.h"
#include "nhens/ensemble.h"
#include "nhens/output.h"
#include "nhens/partial.h"
#include "nhens/ranks.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NH_BLOCK_SIZE_TEXT "8"
_Static_assert(NH_BLOCK_SIZE == 8, "NH_BLOCK_SIZE_TEXT must spell NH_BLOCK_SIZE");

typedef struct run_options {
    const char *system, *method, *preset, *out, *solver, *observe, *checkpoint, *resume, *blocks, *initial;
    const char *params[NH_CLI_MAX_PARAMS];
    int n_params, quiet, dry_run, project;
    double h, T, energy, fit_start, section, smooth, checkpoint_every, perturb, burn_in;
    long ensemble, every, threads, paths;
    uint64_t seed;
    uint64_t seen;
} run_options;

#define RUN_OPT(name, kind, field, lo, hi, meta, help) {name, kind, offsetof(run_options, field), lo, hi, meta, help, 0, 0}
static const nh_option RUN_OPTIONS[] = {
    RUN_OPT("system", NH_OPTION_STRING, system, 0, 0, "S", "system (nhens list)"),
    {"param", NH_OPTION_LIST, offsetof(run_options, params), 0, 0, "k=v", "system parameter",
     offsetof(run_options, n_params), NH_CLI_MAX_PARAMS},
    RUN_OPT("method", NH_OPTION_STRING, method, 0, 0, "M[:k=v,...]", "method and its parameters"),
    RUN_OPT("h", NH_OPTION_DOUBLE, h, 1e-12, 1e6, "H", "step size"),
    RUN_OPT("T", NH_OPTION_DOUBLE, T, 1e-12, 1e12, "T", "horizon (a whole number of steps)"),
    RUN_OPT("energy", NH_OPTION_DOUBLE, energy, -1e12, 1e12, "E", "sample N states on the energy shell H = E"),
    RUN_OPT("preset", NH_OPTION_STRING, preset, 0, 0, "P", "a paper's initial state, or its energy shell"),
    RUN_OPT("initial", NH_OPTION_STRING, initial, 0, 0, "FILE",
            "start from the states in CSV FILE (q_1..q_n, v_1..v_n per row; the ensemble is its rows; a first "
            "row of names only is a header)"),
    RUN_OPT("project", NH_OPTION_FLAG, project, 0, 0, NULL,
            "project velocities of --initial rows or a --preset off D_q onto it (default: refuse them, naming the "
            "row or the preset)"),
    RUN_OPT("perturb", NH_OPTION_DOUBLE, perturb, 0, 1000, "EPS",
            "with a state --preset: an ensemble around it, q and v moved by EPS N(0, 1), v projected onto D_q and "
            "rescaled to the preset's energy"),
    RUN_OPT("burn-in", NH_OPTION_DOUBLE, burn_in, 0, 1e12, "T0",
            "integrate each trajectory for T0 (whole steps) before t = 0, where H(0) is taken"),
    RUN_OPT("ensemble", NH_OPTION_LONG, ensemble, 1, NH_MAX_ENSEMBLE, "N",
            "trajectories (default: the shell preset's, 1 for a state, else 100)"),
    RUN_OPT("seed", NH_OPTION_U64, seed, 0, 0, "S", "seed of every sampled state (default 1)"),
    RUN_OPT("threads", NH_OPTION_LONG, threads, 1, 1024, "K", "OpenMP threads (default: the cores); results do not depend on it"),
    RUN_OPT("every", NH_OPTION_LONG, every, 1, 2000000000, "J", "output every J steps and at T (default: about 1000 rows)"),
    RUN_OPT("solver", NH_OPTION_STRING, solver, 0, 0, "kinsol|newton", "nonlinear solver (default " NH_CLI_DEFAULT_SOLVER ")"),
    RUN_OPT("fit-start", NH_OPTION_DOUBLE, fit_start, 0, 0.99, "F", "variance law fitted over [F T, T] (default 0.1: after the bounded part has settled)"),
    RUN_OPT("section", NH_OPTION_DOUBLE, section, -1e6, 1e6, "XI", "driver section angle of the latitude (default xi(0))"),
    RUN_OPT("smooth", NH_OPTION_DOUBLE, smooth, 0, 1e12, "W", "also write smoothed.csv, running mean over W time units"),
    RUN_OPT("observe", NH_OPTION_STRING, observe, 0, 0, "O1,O2|all",
            "observers to record (nhens list; default all that apply; the fitted dH always); all,error adds the "
            "global error against a CVODE reference, which only its name selects"),
    RUN_OPT("paths", NH_OPTION_LONG, paths, 0, NH_MAX_PATHS, "K",
            "also write DIR/paths.csv: every observed value of the first K trajectories (single-trajectory figures)"),
    RUN_OPT("out", NH_OPTION_STRING, out, 0, 0, "DIR", "output folder (default nhens-out)"),
    RUN_OPT("quiet", NH_OPTION_FLAG, quiet, 0, 0, NULL,
            "no progress on stderr (else: a line in place on a terminal, every 5 s in a log)"),
    RUN_OPT("dry-run", NH_OPTION_FLAG, dry_run, 0, 0, NULL, "check everything, print the plan, compute and write nothing"),
    RUN_OPT("checkpoint", NH_OPTION_STRING, checkpoint, 0, 0, "NAME",
            "save the merged statistics to DIR/NAME every --checkpoint-every seconds and when interrupted "
            "(removed when the run completes)"),
    RUN_OPT("checkpoint-every", NH_OPTION_DOUBLE, checkpoint_every, 0, 1e6, "S",
            "seconds between checkpoints (default 60; 0: after every block of " NH_BLOCK_SIZE_TEXT " trajectories)"),
    RUN_OPT("blocks", NH_OPTION_STRING, blocks, 0, 0, "I/K",
            "compute only shard I of K (1 <= I <= K) into DIR/part-I-of-K.json; nhens merge joins the K parts into "
            "the bytes of the whole run"),
    RUN_OPT("resume", NH_OPTION_STRING, resume, 0, 0, "FILE",
            "finish the run saved in checkpoint FILE, bitwise as if never interrupted, in FILE's folder (with it "
            "only --threads, --quiet, --checkpoint and --checkpoint-every may be given)"),
};

const nh_option_table nh_cli_run_table = {
    "run", "--system S [--param k=v ...] --method M[:k=v,...] --h H --T T (--energy E | --preset P | --initial FILE)\n"
    "       [options]\n"
    "       nhens run --resume FILE [--threads K] [--checkpoint NAME] [--checkpoint-every S] [--quiet]",
    "one ensemble study: DIR/timeseries.csv, DIR/summary.json and a printed summary", RUN_OPTIONS,
    sizeof RUN_OPTIONS / sizeof RUN_OPTIONS[0], 0};

static int usage_error(const char *message)
{
    fprintf(stderr, "nhens run: %s (nhens help run lists the options)\n", message);
    return NH_EXIT_USAGE;
}

static int parse_run_options(int argc, char **argv, run_options *o, int *status)
{
    nh_run_config defaults;
    nh_run_config_init(&defaults);
    *o = (run_options){.out = "nhens-out", .solver = NH_CLI_DEFAULT_SOLVER, .fit_start = defaults.fit_window_start,
                       .seed = defaults.seed, .checkpoint_every = 60};
    if (nh_cli_parse(&nh_cli_run_table, argc, argv, o, &o->seen, NULL, NULL, status))
        return 1;
    const nh_option_table *t = &nh_cli_run_table;
    nh_error err;
    if (nh_cli_check_path("--out", o->out, &err) || (o->initial && nh_cli_check_path("--initial", o->initial, &err)) ||
        (o->resume && nh_cli_check_path("--resume", o->resume, &err))) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return *status = NH_EXIT_USAGE, 1;
    }
    if (o->resume)
        return 0;
    if (!o->system || !o->method || !nh_cli_given(t, o->seen, "h") || !nh_cli_given(t, o->seen, "T"))
        return *status = usage_error("--system, --method, --h and --T are required"), 1;
    if ((nh_cli_given(t, o->seen, "energy") + !!o->preset + !!o->initial) != 1)
        return *status = usage_error("give exactly one of --energy E (ensemble on an energy shell), --preset P or "
                                     "--initial FILE"), 1;
    return 0;
}

/* --initial FILE into cfg (checked against the system's constraints, projected with --project). */
static int read_initial(const run_options *o, nh_run_config *cfg, nh_error *err)
{
    double *states;
    long rows;
    int rc = nh_cli_read_initial(o->initial, cfg->system->n, &states, &rows, err);
    if (!rc && (rc = nh_initial_states_check(cfg->system, states, rows, o->project, err)))
        free(states);
    if (rc)
        return rc;
    cfg->initial_states = states;
    cfg->n_initial = rows;
    cfg->initial_name = o->initial;
    return NH_OK;
}

void nh_cli_run_config_free(nh_run_config *cfg)
{
    free((double *)cfg->initial_states);
    cfg->initial_states = NULL;
}

/* --blocks I/K: shard I (1-based) of K; the engine checks K against the run's chunks. */
static int parse_blocks(const char *text, nh_run_config *cfg, nh_error *err)
{
    char buf[64];
    const char *slash = strchr(text, '/');
    long i, k;
    if (!slash || (size_t)(slash - text) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "--blocks '%.60s' is not I/K (shard I of K, 1 <= I <= K)", text);
    memcpy(buf, text, (size_t)(slash - text));
    buf[slash - text] = '\0';
    if (nh_parse_long_in(buf, 1, NH_MERGE_CHUNKS, &i) || nh_parse_long_in(slash + 1, 1, NH_MERGE_CHUNKS, &k) || i > k)
        return nh_fail(err, NH_ERR_INPUT, "--blocks '%.60s' is not I/K with 1 <= I <= K <= %d", text, NH_MERGE_CHUNKS);
    cfg->shard = i - 1;
    cfg->shards = k;
    return NH_OK;
}

static int build_config(const nh_cli *cli, const run_options *o, nh_system *sys, nh_run_config *cfg, nh_error *err)
{
    const nh_preset *preset = NULL;
    const nh_option_table *t = &nh_cli_run_table;
    int rc = nh_cli_build_system(cli, o->system, o->preset, o->params, o->n_params, sys, &preset, err);
    if (rc)
        return rc;
    nh_run_config_init(cfg); /* the defaults of every option not given */
    cfg->system = sys, cfg->h = o->h, cfg->T = o->T, cfg->energy = o->energy, cfg->seed = o->seed;
    cfg->fit_window_start = o->fit_start, cfg->observe = o->observe, cfg->paths = o->paths;
    if ((cfg->have_section = nh_cli_given(t, o->seen, "section")))
        cfg->section = o->section;
    nh_run_config_use_preset(cfg, preset);
    cfg->project = o->project;
    cfg->perturb = o->perturb;
    cfg->burn_in = o->burn_in;
    if (o->initial && (rc = read_initial(o, cfg, err)))
        return rc;
    if ((rc = nh_cli_parse_method(cli, o->method, &cfg->method, err)) ||
        (rc = nh_cli_solver(o->solver, &cfg->solver, err)))
        return rc;
    cfg->ensemble = nh_cli_given(t, o->seen, "ensemble") ? o->ensemble
                    : cfg->initial_states                ? cfg->n_initial
                    : cfg->shell_preset                  ? cfg->shell_preset->shell_ensemble
                    : cfg->preset                        ? 1
                                                         : cfg->ensemble;
    if (nh_cli_given(t, o->seen, "threads"))
        cfg->threads = (int)o->threads;
    double steps = floor(o->T / o->h + 1e-9);
    if (!(steps >= 1 && steps <= 2e9))
        return nh_fail(err, NH_ERR_INPUT, "horizon T=%g with step h=%g gives %g steps; allowed: 1 to 2e9 steps", o->T,
                       o->h, o->T / o->h);
    cfg->every = nh_cli_given(t, o->seen, "every") ? o->every : nh_run_default_every(cfg);
    if (o->blocks && (rc = parse_blocks(o->blocks, cfg, err)))
        return rc;
    if (o->blocks && o->checkpoint)
        return nh_fail(err, NH_ERR_INPUT, "--blocks %s and --checkpoint: a shard is not checkpointed (rerun an "
                       "interrupted shard)", o->blocks);
    return nh_run_validate(cfg, err);
}

int nh_cli_run_config(const nh_cli *cli, int argc, char **argv, nh_system *sys, nh_run_config *cfg, double *smooth,
                      nh_error *err)
{
    run_options o;
    int status;
    *cfg = (nh_run_config){0};
    if (parse_run_options(argc, argv, &o, &status) || o.resume)
        return nh_fail(err, NH_ERR_INPUT, "the stored arguments are not the options of a run");
    *smooth = o.smooth;
    int rc = build_config(cli, &o, sys, cfg, err);
    if (rc)
        nh_cli_run_config_free(cfg);
    return rc;
}

/* max |value| of the recorded observers: the core ones (every system) on one line, the others one a line */
/* The global error at T (mean +- standard error of the mean, and max; nan where no trajectory reached T)
 * when it was recorded. */
static void print_global_error(const nh_run_result *res)
{
    const int ref = nh_observer_reference();
    if (ref < 0 || !(res->observer_mask & (1u << ref)))
        return;
    const nh_accum *last = nh_run_accum(res, res->n_out - 1, ref);
    printf("  global error at T against CVODE (rtol 1e-13): mean %.3e +- %.1e, max %.3e over %.0f trajectories "
           "(reference: %.2f thread-s)\n", last->count > 0 ? last->mean : NAN,
           nh_accum_mean_stderr(last), last->count > 0 ? last->absmax : NAN, last->count,
           res->reference_seconds);
}

/* "SEPARATOR NAME = VALUE +- ERROR", or without the error where the jackknife gave none. */
static void print_estimate(const char *separator, const char *name, int slope, double value, double error)
{
    printf(slope ? "%s %s = %.2f" : "%s %s = %.3e", separator, name, value);
    if (isfinite(error))
        printf(slope ? " +- %.2f" : " +- %.1e", error);
}

/* The fitted variance law, with the jackknife's standard errors, their degrees of freedom and the t factor
 * of a 95 % interval where it gives them, then a line for each caveat (nh_variance_fit_caveats): where the
 * data do not support the law, the summary says so. No fit: why. */
static void print_variance_law(const nh_variance_fit *fit)
{
    const unsigned caveats = nh_variance_fit_caveats(fit);
    printf("  variance law on t in [%g, %g]:", fit->t_start, fit->t_end);
    if (caveats & NH_FIT_NO_FIT) {
        printf(" %s\n", nh_variance_fit_caveat_text(NH_FIT_NO_FIT));
        return;
    }
    printf(" Var dH = a + C t with");
    print_estimate("", "a", 0, fit->a, fit->a_err);
    print_estimate(",", "C", 0, fit->C, fit->C_err);
    print_estimate(",", "C/h^4", 0, fit->C_over_h4, fit->C_over_h4_err);
    print_estimate(";", "log-log slope p", 1, fit->p, fit->p_err);
    if (isfinite(fit->C_err))
        printf(" (+- one standard error, jackknife over %d groups: %d degrees of freedom, 95 %% interval +- %.2f "
               "errors)\n", fit->groups, fit->dof, fit->t95);
    else
        putchar('\n');
    for (unsigned bit = 1; bit <= caveats; bit <<= 1)
        if (caveats & bit)
            printf("  caveat: %s\n", nh_variance_fit_caveat_text(bit));
}

static void print_observer_extremes(const nh_run_result *res)
{
    const char *sep = "  ";
    for (int o = 0; o < nh_observer_count(); ++o)
        if ((res->observer_mask & (1u << o)) && nh_observer_at(o)->applies == NULL) {
            printf("%smax %s = %.3e", sep, nh_observer_at(o)->label, nh_run_observer_max(res, o));
            sep = ", ";
        }
    putchar('\n');
    for (int o = 0; o < nh_observer_count(); ++o)
        if ((res->observer_mask & (1u << o)) && nh_observer_at(o)->applies != NULL)
            printf("  max %s = %.3e\n", nh_observer_at(o)->label, nh_run_observer_max(res, o));
}

/* The files of the committed output set (smoothed.csv is in it exactly when it was asked for). */
static void print_written(const nh_run_result *res, const char *out)
{
    char smoothed[NH_PATH_MAX];
    const int smooth = nh_path_format(smoothed, sizeof smoothed, NULL, "%s/smoothed.csv", out) == NH_OK &&
                       access(smoothed, F_OK) == 0;
    printf("  wrote %s/timeseries.csv, %s/quantiles.csv (median, 5-95 %% band)", out, out);
    if (smooth)
        printf(", %s/smoothed.csv", out);
    if (res->n_paths)
        printf(", %s/paths.csv", out);
    printf(" and %s/summary.json\n", out);
}

void nh_cli_run_print_summary(const nh_run_config *cfg, const nh_run_result *res, const char *out)
{
    char method[256], sysp[256];
    nh_method_spec_format(&cfg->method, method, sizeof method);
    nh_params_format(&cfg->system->params, sysp, sizeof sysp);
    printf("nhens run: %s(%s), method %s, solver %s, h=%g, T=%g, %ld trajector%s, seed %llu, %d thread%s\n",
           cfg->system->type->name, sysp, method, nh_solver_kind_name(cfg->solver), cfg->h, cfg->T, cfg->ensemble,
           cfg->ensemble == 1 ? "y" : "ies", (unsigned long long)cfg->seed, cfg->threads, cfg->threads == 1 ? "" : "s");
    if (cfg->initial_states)
        printf("  initial states: the %ld rows of %s\n", cfg->n_initial, cfg->initial_name);
    else if (cfg->preset && cfg->perturb > 0)
        printf("  initial states: preset %s perturbed by %g N(0, 1) on its energy shell\n", cfg->preset->name,
               cfg->perturb);
    else if (cfg->preset)
        printf("  initial state: preset %s (%s)\n", cfg->preset->name, cfg->preset->description);
    else
        printf("  initial states: energy shell H = %g%s%s\n", cfg->energy, cfg->shell_preset ? ", preset " : "",
               cfg->shell_preset ? cfg->shell_preset->name : "");
    if (cfg->burn_in > 0)
        printf("  burn-in: %g time units before t = 0 (counted in the steps)\n", cfg->burn_in);
    printf("  %ld steps in %.3f s (%.3g steps/s, %.0f ns/step per thread%s); failed trajectories: %ld\n",
           res->completed_steps, res->wall_seconds, res->steps_per_second, nh_run_ns_per_step(res),
           res->reference_seconds > 0 ? " in the method, the CVODE reference's time left out" : "", res->failed);
    print_observer_extremes(res);
    print_global_error(res);
    if (cfg->ensemble > 1)
        print_variance_law(&res->fit);
    for (int i = 0; i < res->n_reported && i < 5; ++i)
        printf("  failure: trajectory %ld at t = %g: %s\n", res->first_failures[i].trajectory,
               res->first_failures[i].time, nh_status_name(res->first_failures[i].status));
    print_written(res, out);
}

/* The folder holding path ("." for a bare name), malloc'ed into *dir. */
static int folder_of(const char *path, char **dir)
{
    const char *slash = strrchr(path, '/');
    const size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (!(*dir = malloc(len + 1)))
        return 1;
    memcpy(*dir, slash ? path : ".", len);
    (*dir)[len] = '\0';
    return 0;
}

/* --resume FILE: the run's own options come from the checkpoint; the resume command line may only choose
 * threads, progress and further checkpoints. The run writes into the checkpoint's own folder (*dir,
 * malloc'ed), never into a folder the file names: a checkpoint is input, and its stored --out is ignored.
 * On success *ck owns the strings o now points into. */
static int resume_options(run_options *o, nh_checkpoint **ck, int *n_args, char ***args, char **dir)
{
    const nh_option_table *t = &nh_cli_run_table;
    const char *allowed[] = {"resume", "threads", "quiet", "checkpoint", "checkpoint-every", "dry-run"};
    uint64_t allowed_bits = 0;
    for (int i = 0; i < 6; ++i)
        allowed_bits |= 1ULL << nh_options_index(t, allowed[i]);
    if (o->seen & ~allowed_bits)
        return usage_error("with --resume FILE the run's options come from FILE; only --threads, --quiet, "
                           "--checkpoint and --checkpoint-every may be given");
    nh_error err;
    if (!(*ck = nh_checkpoint_load(o->resume, &err))) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    const run_options given = *o;
    int status;
    *n_args = nh_checkpoint_args(*ck, args);
    if (*n_args < 1 || parse_run_options(*n_args, *args, o, &status) || o->resume) {
        fprintf(stderr, "nhens run: checkpoint '%s' does not hold the options of a run\n", given.resume);
        return NH_EXIT_USAGE;
    }
    if (nh_cli_given(t, given.seen, "threads"))
        o->threads = given.threads, o->seen |= 1ULL << nh_options_index(t, "threads");
    if (nh_cli_given(t, given.seen, "checkpoint-every"))
        o->checkpoint_every = given.checkpoint_every;
    const char *slash = strrchr(given.resume, '/');
    o->checkpoint = given.checkpoint ? given.checkpoint : slash ? slash + 1 : given.resume; /* into the run's DIR */
    if (folder_of(given.resume, dir)) {
        fprintf(stderr, "nhens run: out of memory\n");
        return NH_EXIT_ERROR;
    }
    o->out = *dir;
    o->quiet = given.quiet;
    o->dry_run = given.dry_run;
    o->resume = given.resume;
    return NH_EXIT_OK;
}

/* What the engine's hooks need: where and how often to checkpoint, and how to rebuild the run. */
typedef struct run_control {
    const nh_cli *cli;          /* its global options start the recorded command */
    const nh_run_config *cfg;
    char path[NH_PATH_MAX];     /* DIR/NAME of --checkpoint NAME, or "" */
    double every, last;
    int n_args;
    char **args;
    int warned;
} run_control;

static void save_checkpoint(run_control *ctl, const nh_run_result *res)
{
    nh_error err;
    if (nh_checkpoint_save(ctl->path, ctl->cfg, res, ctl->n_args, ctl->args, &err) && !ctl->warned++)
        fprintf(stderr, "nhens run: warning: checkpoint not saved: %s\n", err.msg);
    ctl->last = nh_cli_seconds();
}

static void on_merged(const nh_run_result *partial, long next_block, void *ctx)
{
    (void)next_block;
    run_control *ctl = ctx;
    if (ctl->path[0] && nh_cli_seconds() - ctl->last >= ctl->every)
        save_checkpoint(ctl, partial);
}

/* The ensemble from the start or from the checkpoint; an interrupted run brings its checkpoint up to date. */
static int compute(run_control *ctl, const nh_checkpoint *ck, nh_run_result *res, nh_error *err)
{
    if (nh_rank_count() > 1)
        return nh_cli_compute_run(ctl->cfg, res, err);
    int rc = nh_run_result_init(ctl->cfg, res, err);
    if (!rc && ck)
        rc = nh_checkpoint_restore(ck, ctl->cfg, res, err);
    if (!rc)
        rc = nh_run_ensemble_continue(ctl->cfg, res, err);
    if (rc) {
        nh_run_result_free(res);
        return rc;
    }
    if (ctl->path[0] && !res->complete)
        save_checkpoint(ctl, res);
    return NH_OK;
}

static int run_status(const nh_run_result *res)
{
    if (nh_cli_interrupt_status())
        return nh_cli_interrupt_status();
    return res->failed ? NH_EXIT_FAILED_TRAJECTORIES : NH_EXIT_OK;
}

static int print_plan(const nh_run_config *cfg, const run_options *o)
{
    const long n_steps = (long)floor(cfg->T / cfg->h + 0.5), rows = nh_run_output_rows(cfg);
    const double bytes = (double)rows * (nh_observer_count() * (double)sizeof(nh_accum) + 16) * (cfg->threads + 1);
    printf("nhens run (dry run): %s, method %s, %ld trajectories x %ld steps, %ld output rows, about %.3g MB of "
           "statistics, %d threads; output folder %s%s%s\n",
           cfg->system->type->name, cfg->method.type->name, cfg->ensemble, n_steps, rows, bytes / 1e6, cfg->threads,
           o->out, o->resume ? ", resuming " : "", o->resume ? o->resume : "");
    return NH_EXIT_OK;
}

static void print_interruption(const nh_run_config *cfg, const nh_run_result *res, const char *checkpoint)
{
    if (res->complete)
        return;
    printf("  INTERRUPTED: %ld of %ld trajectories done; the statistics are over those (\"complete\": false)\n",
           res->trajectories_done, cfg->ensemble);
    if (checkpoint)
        printf("  resume with: nhens run --resume %s\n", checkpoint);
}

/* A checkpoint lives in the output folder like every file nhens writes: --checkpoint takes a name. */
static int checkpoint_path(const run_options *o, char *path, size_t len, nh_error *err)
{
    path[0] = '\0';
    if (!o->checkpoint)
        return NH_OK;
    if (nh_cli_check_output_name("--checkpoint (a file name inside --out)", o->checkpoint, 101, err))
        return NH_ERR_INPUT;
    return nh_path_format(path, len, err, "%s/%s", o->out, o->checkpoint);
}

/* The arguments without --blocks: what the merged run records as its command. */
static int unsharded_args(int argc, char **argv, char **out)
{
    int n = 0;
    for (int i = 0; i < argc; ++i) {
        if (!strcmp(argv[i], "--blocks")) {
            ++i;
            continue;
        }
        if (strncmp(argv[i], "--blocks=", 9))
            out[n++] = argv[i];
    }
    return n;
}

/* A shard: compute its chunks and write DIR/part-I-of-K.json (whole or absent), DIR locked; the exit status. */
static int execute_shard(const run_options *o, run_control *ctl, nh_folder_lock *lock)
{
    nh_run_result res;
    nh_error err;
    char path[NH_PATH_MAX], *args[NH_PARTIAL_MAX_ARGS];
    const nh_run_config *cfg = ctl->cfg;
    int n_args = ctl->n_args <= NH_PARTIAL_MAX_ARGS ? unsharded_args(ctl->n_args, ctl->args, args) : -1;
    int rc = nh_path_format(path, sizeof path, &err, "%s/part-%ld-of-%ld.json", o->out, cfg->shard + 1, cfg->shards);
    if (!rc)
        rc = nh_output_folder_open(o->out, lock, &err);
    if (!rc && !(rc = nh_run_ensemble(cfg, &res, &err))) {
        if (res.complete)
            rc = nh_partial_save(path, cfg, &res, n_args, args, &err);
        else
            printf("nhens run: INTERRUPTED: shard %ld of %ld not finished, %s not written\n", cfg->shard + 1,
                   cfg->shards, path);
        if (!rc && res.complete)
            printf("nhens run: shard %ld of %ld (chunks %ld to %ld of %ld, trajectories %ld to %ld): %ld steps in "
                   "%.3f s, %ld failed; wrote %s\n", cfg->shard + 1, cfg->shards, res.first_chunk,
                   res.first_chunk + res.n_chunks - 1, nh_run_chunk_count(cfg),
                   nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res.first_chunk)), res.trajectories_done - 1,
                   res.completed_steps, res.wall_seconds, res.failed, path);
        nh_run_result_free(&res);
    }
    if (rc) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return rc == NH_ERR_INPUT ? NH_EXIT_USAGE : NH_EXIT_ERROR;
    }
    return nh_cli_interrupt_status() ? nh_cli_interrupt_status() : NH_EXIT_OK;
}

/* Compute (or continue) the configured run, commit its files, print the summary; the exit status. The
 * output folder stays locked (lock) until the caller releases it. */
static int execute(const run_options *o, run_control *ctl, const nh_checkpoint *ck, nh_folder_lock *lock)
{
    nh_run_result res;
    nh_error err;
    int rc = nh_output_folder_open(o->out, lock, &err);
    if (!rc)
        rc = compute(ctl, ck, &res, &err);
    if (rc) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return rc == NH_ERR_INPUT ? NH_EXIT_USAGE : NH_EXIT_ERROR;
    }
    char *command = nh_cli_command_line(ctl->cli, NULL, ctl->n_args, ctl->args);
    int status = command ? nh_write_run(o->out, ctl->cfg, &res, command, o->smooth, &err)
                         : nh_fail(&err, NH_ERR_NOMEM, "out of memory formatting the command line");
    free(command);
    if (status) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        status = NH_EXIT_ERROR;
    } else {
        if (ctl->path[0] && res.complete)
            remove(ctl->path); /* the outputs hold everything it had */
        nh_cli_run_print_summary(ctl->cfg, &res, o->out);
        print_interruption(ctl->cfg, &res, ctl->path[0] ? ctl->path : NULL);
        status = run_status(&res);
    }
    nh_run_result_free(&res);
    return status;
}

int nh_cli_run(const nh_cli *cli, int argc, char **argv)
{
    run_options o;
    int rc, n_args = argc;
    char **args = argv;
    nh_checkpoint *ck = NULL; /* when resuming, o's strings point into it: freed last */
    char *resume_dir = NULL;  /* when resuming, --out: the checkpoint's folder */
    if (parse_run_options(argc, argv, &o, &rc))
        return rc;
    if (nh_rank_count() > 1 && (o.checkpoint || o.resume || o.blocks))
        return usage_error("under mpirun the ranks share the run: --checkpoint, --resume and --blocks are for "
                           "single processes");
    if (o.resume && (rc = resume_options(&o, &ck, &n_args, &args, &resume_dir))) {
        nh_checkpoint_free(ck);
        free(resume_dir);
        return rc;
    }
    nh_system sys;
    nh_run_config cfg = {0};
    nh_error err;
    run_control ctl = {.cli = cli, .cfg = &cfg, .every = o.checkpoint_every, .last = nh_cli_seconds(), .n_args = n_args,
                       .args = args};
    if (build_config(cli, &o, &sys, &cfg, &err) || checkpoint_path(&o, ctl.path, sizeof ctl.path, &err)) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        rc = NH_EXIT_USAGE;
    } else if (o.dry_run) {
        rc = print_plan(&cfg, &o);
    } else {
        cfg.interrupted = nh_cli_interrupted;
        cfg.merged = on_merged;
        cfg.hook_ctx = &ctl;
        nh_cli_progress progress;
        nh_cli_progress_start(&progress, " ");
        if (!o.quiet) {
            cfg.progress = nh_cli_progress_report;
            cfg.progress_ctx = &progress;
        }
        nh_cli_catch_interrupts();
        nh_folder_lock lock = {-1};
        rc = cfg.shards ? execute_shard(&o, &ctl, &lock) : execute(&o, &ctl, ck, &lock);
        nh_folder_lock_release(&lock);
    }
    nh_cli_run_config_free(&cfg);
    nh_checkpoint_free(ck);
    free(resume_dir);
    return rc;
}
