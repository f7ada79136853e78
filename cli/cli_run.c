/* `nhens run`: parse and validate options into an nh_run_config, run the ensemble (interruptible,
 * checkpointed, resumable), commit DIR/timeseries.csv, DIR/summary.json (and DIR/smoothed.csv) as one
 * set, print a short human summary. */
#include "cli.h"

#include "nhens/checkpoint.h"
#include "nhens/ensemble.h"
#include "nhens/output.h"
#include "nhens/partial.h"
#include "nhens/ranks.h"
#include "run_options.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef nh_run_options run_options;

static int usage_error(const char *message)
{
    fprintf(stderr, "nhens run: %s (nhens help run lists the options)\n", message);
    return NH_EXIT_USAGE;
}

static int parse_run_options(int argc, char **argv, run_options *o, int *status)
{
    int help;
    nh_error err;
    if (nh_run_options_parse(argc, argv, o, &help, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return *status = NH_EXIT_USAGE, 1;
    }
    if (help) {
        nh_cli_print_help(&nh_run_option_table, stdout);
        return *status = NH_EXIT_OK, 1;
    }
    if (nh_cli_check_path("--out", o->out, &err) || (o->initial && nh_cli_check_path("--initial", o->initial, &err)) ||
        (o->resume && nh_cli_check_path("--resume", o->resume, &err))) {
        fprintf(stderr, "nhens run: %s\n", err.msg);
        return *status = NH_EXIT_USAGE, 1;
    }
    return 0;
}

void nh_cli_run_config_free(nh_run_config *cfg)
{
    free((double *)cfg->initial_states);
    cfg->initial_states = NULL;
}

static int build_config(const nh_cli *cli, const run_options *o, nh_system *sys, nh_run_config *cfg, nh_error *err)
{
    return nh_cli_plugin_hint(cli, nh_run_options_config(cli->registry, o, nh_cli_read_initial, sys, cfg, err), err);
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
    for (int o = 0; o < res->n_observers; ++o)
        if ((res->observer_mask & (1u << o)) && nh_observer_core(nh_observer_at(res->observers, o))) {
            printf("%smax %s = %.3e", sep, nh_observer_at(res->observers, o)->label, nh_run_observer_max(res, o));
            sep = ", ";
        }
    putchar('\n');
    for (int o = 0; o < res->n_observers; ++o)
        if ((res->observer_mask & (1u << o)) && !nh_observer_core(nh_observer_at(res->observers, o)))
            printf("  max %s = %.3e\n", nh_observer_at(res->observers, o)->label, nh_run_observer_max(res, o));
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
    if (res->n_reductions)
        printf(", %s/trajectories.csv", out);
    printf(" and %s/summary.json\n", out);
}

void nh_cli_run_print_summary(const nh_run_config *cfg, const nh_run_result *res, const char *out)
{
    char method[256], sysp[256];
    nh_method_spec_format(&cfg->method, method, sizeof method);
    nh_params_format(&cfg->system->params, sysp, sizeof sysp);
    const int lanes = nh_run_lanes(cfg, res);
    char lanes_text[64] = "";
    if (lanes > 1)
        snprintf(lanes_text, sizeof lanes_text, " x %d lanes (%s)", lanes, nh_lane_isa_name(nh_lane_isa_best()));
    printf("nhens run: %s(%s), method %s, solver %s, h=%g, T=%g, %ld trajector%s, seed %llu, %d thread%s%s\n",
           cfg->system->type->name, sysp, method, nh_solver_kind_name(cfg->solver), cfg->h, cfg->T, cfg->ensemble,
           cfg->ensemble == 1 ? "y" : "ies", (unsigned long long)cfg->seed, cfg->threads, cfg->threads == 1 ? "" : "s",
           lanes_text);
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
 * threads, lanes, progress and further checkpoints. The run writes into the checkpoint's own folder (*dir,
 * malloc'ed), never into a folder the file names: a checkpoint is input, and its stored --out is ignored.
 * On success *ck owns the strings o now points into. */
static int resume_options(run_options *o, nh_checkpoint **ck, int *n_args, char ***args, char **dir)
{
    const nh_option_table *t = &nh_run_option_table;
    const char *allowed[] = {"resume", "threads", "lanes", "quiet", "checkpoint", "checkpoint-every", "dry-run"};
    uint64_t allowed_bits = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; ++i)
        allowed_bits |= 1ULL << nh_options_index(t, allowed[i]);
    if (o->seen & ~allowed_bits)
        return usage_error("with --resume FILE the run's options come from FILE; only --threads, --lanes, --quiet, "
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
    if (nh_cli_given(t, given.seen, "lanes"))
        o->lanes = given.lanes, o->seen |= 1ULL << nh_options_index(t, "lanes");
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
        nh_run_result_clear(res);
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
    int observers = nh_observer_count(nh_observer_table_builtin());
    for (int i = 0; i < nh_registry_observer_count(cfg->registry); ++i)
        observers += nh_registry_observer_at(cfg->registry, i)->dim;
    const double bytes = (double)rows * (observers * (double)sizeof(nh_accum) + 16) * (cfg->threads + 1);
    printf("nhens run (dry run): %s, method %s, %ld trajectories x %ld steps, %ld output rows, about %.3g MB of "
           "statistics, %d threads; output folder %s%s%s\n",
           cfg->system->type->name, nh_method_spec_name(&cfg->method), cfg->ensemble, n_steps, rows, bytes / 1e6, cfg->threads,
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
        nh_run_result_clear(&res);
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
    nh_run_result_clear(&res);
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
