/* `nhens merge PART... --out DIR`: the partial results of a run's shards (nhens run --blocks I/K, any
 * order) into DIR's timeseries.csv, summary.json, quantiles.csv (and paths.csv, smoothed.csv): the same
 * bytes as the unsharded run, timing fields aside. Every part is checked against the run the first
 * one describes; a missing, repeated or overlapping shard is refused by name. */
#include "cli.h"

#include "nhens/output.h"
#include "nhens/partial.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = NH_MERGE_CHUNKS };

typedef struct merge_options {
    const char *out;
    int quiet;
    uint64_t seen;
} merge_options;

static const nh_option MERGE_OPTIONS[] = {
    {"out", NH_OPTION_STRING, offsetof(merge_options, out), 0, 0, "DIR", "output folder (default nhens-out)", 0, 0},
    {"quiet", NH_OPTION_FLAG, offsetof(merge_options, quiet), 0, 0, NULL, "print nothing but errors", 0, 0},
};

const nh_option_table nh_cli_merge_table = {
    "merge", "PART.json... [--out DIR]",
    "join the partial results of nhens run --blocks I/K into the outputs of the whole run", MERGE_OPTIONS,
    sizeof MERGE_OPTIONS / sizeof MERGE_OPTIONS[0], MAX_PARTS};

typedef struct part_ref {
    const char *path;
    long first, count;
} part_ref;

static int by_first_chunk(const void *a, const void *b)
{
    const part_ref *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Each part's chunk range (reading the parts once), sorted; the ranges must tile [0, chunks). */
static int plan_parts(part_ref *parts, int n, nh_error *err)
{
    for (int i = 0; i < n; ++i) {
        nh_partial *p = nh_partial_load(parts[i].path, err);
        if (!p)
            return NH_ERR_INPUT;
        nh_partial_chunks(p, &parts[i].first, &parts[i].count);
        nh_partial_free(p);
    }
    qsort(parts, (size_t)n, sizeof *parts, by_first_chunk);
    long next = 0;
    for (int i = 0; i < n; ++i) {
        if (parts[i].first != next)
            return nh_fail(err, NH_ERR_INPUT, "%s chunks %ld to %ld: '%s' starts at chunk %ld (a shard is %s)",
                           parts[i].first > next ? "missing" : "repeated", next < parts[i].first ? next : parts[i].first,
                           (next < parts[i].first ? parts[i].first : next) - 1, parts[i].path, parts[i].first,
                           parts[i].first > next ? "missing" : "given twice or overlaps another");
        next = parts[i].first + parts[i].count;
    }
    return NH_OK;
}

/* The run of the first part p (its strings stay in p), then every part merged into it in chunk order. */
static int merge_parts(const nh_cli *cli, nh_partial *p, const part_ref *parts, int n, nh_system *sys,
                       nh_run_config *cfg, nh_run_result *res, double *smooth, nh_error *err)
{
    char **args;
    const int n_args = nh_partial_args(p, &args);
    int rc = n_args >= 1 ? nh_cli_run_config(cli, n_args, args, sys, cfg, smooth, err)
                         : nh_fail(err, NH_ERR_INPUT, "'%s' does not hold the options of a run", parts[0].path);
    cfg->shard = cfg->shards = 0;
    if (!rc)
        rc = nh_run_result_init(cfg, res, err);
    for (int i = 0; !rc && i < n; ++i) {
        nh_partial *q = i == 0 ? p : nh_partial_load(parts[i].path, err);
        rc = q ? nh_partial_merge(q, cfg, res, err) : NH_ERR_INPUT;
        if (rc && q)
            snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " ('%s')", parts[i].path);
        if (q != p)
            nh_partial_free(q);
    }
    if (!rc && !res->complete)
        rc = nh_fail(err, NH_ERR_INPUT, "the parts end at chunk %ld of %ld: a shard is missing",
                     parts[n - 1].first + parts[n - 1].count, nh_run_chunk_count(cfg));
    if (!rc)
        nh_run_result_finish(cfg, res);
    return rc;
}

int nh_cli_merge(const nh_cli *cli, int argc, char **argv)
{
    merge_options o = {.out = "nhens-out"};
    const char *positional[MAX_PARTS];
    part_ref parts[MAX_PARTS];
    int n = 0, status;
    if (nh_cli_parse(&nh_cli_merge_table, argc, argv, &o, &o.seen, positional, &n, &status))
        return status;
    if (n < 1) {
        fprintf(stderr, "nhens merge: give the partial results to merge (nhens help merge)\n");
        return NH_EXIT_USAGE;
    }
    nh_error err;
    for (int i = 0; i < n; ++i)
        parts[i] = (part_ref){positional[i], 0, 0};
    for (int i = 0; i <= n; ++i)
        if (nh_cli_check_path(i < n ? "a part's path" : "--out", i < n ? positional[i] : o.out, &err)) {
            fprintf(stderr, "nhens merge: %s\n", err.msg);
            return NH_EXIT_USAGE;
        }
    nh_system sys;
    nh_run_config cfg = {0};
    nh_run_result res = {0};
    double smooth = 0;
    nh_partial *first = NULL;
    nh_folder_lock lock; /* a folder it cannot write, or one in use, is found before any part is read */
    nh_cli_catch_interrupts(); /* as run does: a SIGINT stops it even where the shell ignored SIGINT for it */
    if (nh_output_folder_open(o.out, &lock, &err)) {
        fprintf(stderr, "nhens merge: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    int rc = plan_parts(parts, n, &err);
    if (!rc && !(first = nh_partial_load(parts[0].path, &err)))
        rc = NH_ERR_INPUT;
    if (!rc)
        rc = merge_parts(cli, first, parts, n, &sys, &cfg, &res, &smooth, &err);
    if (rc) {
        fprintf(stderr, "nhens merge: %s\n", err.msg);
        nh_run_result_clear(&res);
        nh_cli_run_config_free(&cfg);
        nh_partial_free(first);
        nh_folder_lock_release(&lock);
        return NH_EXIT_USAGE;
    }
    char prefix[64], **args;
    const int n_args = nh_partial_args(first, &args);
    snprintf(prefix, sizeof prefix, "nhens merge of %d parts of: ", n);
    char *command = nh_cli_command_line(cli, prefix, n_args, args);
    if (nh_cli_interrupt_status()) { /* stopped while reading the parts: the folder stays as it was */
        fprintf(stderr, "nhens merge: interrupted; nothing written\n");
        status = nh_cli_interrupt_status();
        free(command);
        nh_run_result_clear(&res);
        nh_cli_run_config_free(&cfg);
        nh_partial_free(first);
        nh_folder_lock_release(&lock);
        return status;
    }
    rc = command ? nh_write_run(o.out, &cfg, &res, command, smooth, &err)
                 : nh_fail(&err, NH_ERR_NOMEM, "out of memory formatting the command line");
    free(command);
    nh_folder_lock_release(&lock);
    if (rc)
        fprintf(stderr, "nhens merge: %s\n", err.msg);
    else if (!o.quiet)
        nh_cli_run_print_summary(&cfg, &res, o.out);
    status = rc ? NH_EXIT_ERROR : res.failed ? NH_EXIT_FAILED_TRAJECTORIES : NH_EXIT_OK;
    nh_run_result_clear(&res);
    nh_cli_run_config_free(&cfg);
    nh_partial_free(first);
    return status;
}
