/* The CLI under `mpirun -n K`: rank 0 runs the command as usual and, for each ensemble it computes,
 * shares the run's arguments (rebuilt from its configuration) with the other ranks; they serve those
 * runs (nh_cli_serve_runs) until rank 0 says stop. Each rank computes its shard and rank 0 merges and
 * writes: only rank 0 prints or writes files. With one rank this is nh_run_ensemble. */
#include "cli.h"

#include "nhens/ranks.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { RUN_ARGS_MAX = 64 + NH_CLI_MAX_PARAMS * 2, RUN_ARGS_TEXT = 8192 };

typedef struct run_args {
    int n;
    char *argv[RUN_ARGS_MAX];
    char text[RUN_ARGS_TEXT];
    size_t used;
} run_args;

static void push(run_args *a, const char *value)
{
    const size_t len = strlen(value) + 1;
    if (a->n >= RUN_ARGS_MAX || a->used + len > sizeof a->text)
        return; /* the rebuilt configuration then differs, and rank 0's merge refuses it by name */
    a->argv[a->n++] = memcpy(a->text + a->used, value, len);
    a->used += len;
}

static void push_option(run_args *a, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void push_option(run_args *a, const char *name, const char *fmt, ...)
{
    char value[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    push(a, name);
    push(a, value);
}

/* The `run` arguments that rebuild cfg exactly (doubles in %.17g). */
static void run_args_of(const nh_run_config *cfg, run_args *a)
{
    char text[1024];
    a->n = 0;
    a->used = 0;
    push(a, "run");
    push_option(a, "--system", "%s", cfg->system->type->name);
    nh_params_format(&cfg->system->params, text, sizeof text);
    for (char *p = text[0] ? strtok(text, ",") : NULL; p; p = strtok(NULL, ","))
        push_option(a, "--param", "%s", p);
    nh_method_spec_format(&cfg->method, text, sizeof text);
    push_option(a, "--method", "%s", text);
    push_option(a, "--solver", "%s", nh_solver_kind_name(cfg->solver));
    push_option(a, "--h", "%.17g", cfg->h);
    push_option(a, "--T", "%.17g", cfg->T);
    push_option(a, "--every", "%ld", cfg->every);
    push_option(a, "--ensemble", "%ld", cfg->ensemble);
    push_option(a, "--seed", "%llu", (unsigned long long)cfg->seed);
    push_option(a, "--threads", "%d", cfg->threads);
    if (cfg->lanes > 0)
        push_option(a, "--lanes", "%d", cfg->lanes);
    push_option(a, "--paths", "%ld", cfg->paths);
    push_option(a, "--fit-start", "%.17g", cfg->fit_window_start);
    if (cfg->have_section)
        push_option(a, "--section", "%.17g", cfg->section);
    if (cfg->observe)
        push_option(a, "--observe", "%s", cfg->observe);
    if (cfg->reduce && *cfg->reduce)
        push_option(a, "--reduce", "%s", cfg->reduce);
    if (cfg->initial_states) {
        push_option(a, "--initial", "%s", cfg->initial_name); /* the same file on every node */
        push(a, "--project"); /* as on rank 0: only rows off D_q are changed, and rank 0 allowed that */
    } else if (cfg->preset || cfg->shell_preset) {
        push_option(a, "--preset", "%s", cfg->preset ? cfg->preset->name : cfg->shell_preset->name);
    } else {
        push_option(a, "--energy", "%.17g", cfg->energy);
    }
    if (cfg->perturb > 0)
        push_option(a, "--perturb", "%.17g", cfg->perturb);
    if (cfg->burn_in > 0)
        push_option(a, "--burn-in", "%.17g", cfg->burn_in);
    push(a, "--quiet");
}

int nh_cli_compute_run(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    if (nh_rank_count() == 1)
        return nh_run_ensemble(cfg, res, err);
    run_args a;
    run_args_of(cfg, &a);
    char **argv = a.argv;
    int rc = nh_ranks_share_args(&a.n, &argv, err);
    if (!rc && !(rc = nh_run_ensemble_ranks(cfg, res, err)) && !res->complete)
        nh_cli_interrupted_by_peer(); /* a run over ranks ends short only when a rank was stopped */
    return rc;
}

void nh_cli_stop_serving(void)
{
    int none = 0;
    char **args = NULL;
    nh_error err;
    if (nh_rank_count() > 1 && nh_rank() == 0)
        nh_ranks_share_args(&none, &args, &err);
}

int nh_cli_serve_runs(const nh_cli *cli)
{
    nh_cli_catch_interrupts();
    for (;;) {
        int n_args = 0, status = NH_EXIT_OK;
        char **args = NULL;
        nh_error err;
        if (nh_ranks_share_args(&n_args, &args, &err)) {
            fprintf(stderr, "nhens (rank %d): %s\n", nh_rank(), err.msg);
            return NH_EXIT_ERROR;
        }
        if (n_args == 0) {
            free(args);
            return status;
        }
        nh_system sys;
        nh_run_config cfg;
        nh_run_result res;
        double smooth;
        if (nh_cli_run_config(cli, n_args, args, &sys, &cfg, &smooth, &err)) {
            fprintf(stderr, "nhens (rank %d): the run of rank 0 does not build here: %s\n", nh_rank(), err.msg);
            nh_ranks_abort();
        } else {
            cfg.interrupted = nh_cli_interrupted;
            if (nh_run_ensemble_ranks(&cfg, &res, &err))
                fprintf(stderr, "nhens (rank %d): %s\n", nh_rank(), err.msg);
            nh_run_result_clear(&res);
            nh_cli_run_config_free(&cfg);
        }
        free(args);
    }
}
