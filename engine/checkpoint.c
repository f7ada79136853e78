/* Checkpoint files of ensemble runs (see include/nhens/checkpoint.h): the merged prefix of a run in the
 * shared state encoding (engine/state_json.h) plus its merged accumulators and fit groups. */
#include "nhens/checkpoint.h"
#include "nhens/files.h"
#include "state_json.h"
#include "run_result.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "nhens-checkpoint"
#define NH_CHECKPOINT_MAX_BYTES ((size_t)1 << 31)

_Static_assert((int)NH_CHECKPOINT_MAX_ARGS == (int)NH_STATE_MAX_ARGS, "one bound on stored arguments");

struct nh_checkpoint {
    cJSON *root;
    char *path;
    char *args[NH_CHECKPOINT_MAX_ARGS];
    int n_args;
};

int nh_checkpoint_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                       char *const *args, nh_error *err)
{
    if (n_args < 0 || n_args > NH_CHECKPOINT_MAX_ARGS)
        return nh_fail(err, NH_ERR_INPUT, "a checkpoint holds at most %d arguments (got %d)", NH_CHECKPOINT_MAX_ARGS,
                       n_args);
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    cJSON *root = nh_state_create(FORMAT_NAME, NH_CHECKPOINT_VERSION, cfg, res, 0, n_args, args);
    char *text = NULL;
    if (root && !nh_json_add_doubles(root, "accumulators", (const double *)res->acc, 4 * cells) &&
        !nh_json_add_doubles(root, "groups", (const double *)res->groups, 4 * (size_t)res->n_out * NH_FIT_GROUPS) &&
        !nh_json_add_failures(root, "first_failures", res->first_failures, res->n_reported))
        text = nh_state_print(root);
    cJSON_Delete(root);
    if (!text)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory writing checkpoint '%s'", path);
    int rc = nh_state_write(path, text, err);
    free(text);
    return rc;
}

nh_checkpoint *nh_checkpoint_load(const char *path, nh_error *err)
{
    size_t size;
    char *text = nh_read_file(path, NH_CHECKPOINT_MAX_BYTES, &size, err);
    if (!text)
        return NULL;
    nh_checkpoint *ck = calloc(1, sizeof *ck);
    if (ck && (ck->path = strdup(path)) &&
        !(ck->root = nh_state_parse(text, path, "checkpoint", FORMAT_NAME, NH_CHECKPOINT_VERSION, ck->args,
                                    &ck->n_args, err))) {
        nh_checkpoint_free(ck);
        ck = NULL;
    } else if (!ck || !ck->path) {
        nh_checkpoint_free(ck);
        ck = NULL;
        nh_fail(err, NH_ERR_NOMEM, "out of memory reading checkpoint '%s'", path);
    }
    free(text);
    return ck;
}

int nh_checkpoint_args(const nh_checkpoint *ck, char ***args)
{
    *args = (char **)ck->args;
    return ck->n_args;
}

/* next_block: a chunk boundary of the run; trajectories_done: the trajectories of those blocks. */
static int read_progress(const cJSON *root, const nh_run_config *cfg, long *next_block, long *done,
                         const nh_state_scope *scope, nh_error *err)
{
    const long blocks = nh_run_block_count(cfg);
    char value[64], allowed[128];
    if (nh_json_get_long(root, "next_block", 0, blocks, next_block) || !nh_run_is_chunk_boundary(cfg, *next_block)) {
        snprintf(allowed, sizeof allowed, "the first block of a chunk, 0 to %ld (the run's blocks)", blocks);
        return nh_state_refuse(err, scope, "next_block", -1, NULL,
                               cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "next_block"))
                                   ? cJSON_GetObjectItemCaseSensitive(root, "next_block")->valuestring
                                   : "not a decimal string",
                               allowed);
    }
    const long expected = nh_run_trajectories_before(cfg, *next_block);
    if (nh_json_get_long(root, "trajectories_done", 0, cfg->ensemble, done) || *done != expected) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "trajectories_done");
        snprintf(value, sizeof value, "%.40s", cJSON_IsString(item) ? item->valuestring : "not a decimal string");
        snprintf(allowed, sizeof allowed, "%ld, the trajectories of the first %ld blocks (next_block)", expected,
                 *next_block);
        return nh_state_refuse(err, scope, "trajectories_done", -1, NULL, value, allowed);
    }
    return NH_OK;
}

/* A non-event accumulator counts every live trajectory, and so do the fit groups together. */
static int check_live_counts(const nh_run_result *res, const long *live, const nh_state_scope *scope, nh_error *err)
{
    const int nobs = res->n_observers;
    char detail[96], value[64], allowed[64];
    for (long k = 0; k < res->n_out; ++k) {
        double groups = 0;
        for (int g = 0; g < NH_FIT_GROUPS; ++g)
            groups += res->groups[g * res->n_out + k].count;
        for (int o = 0; o <= nobs; ++o) {
            if (o < nobs && (o == nh_observer_event() || res->acc[k * nobs + o].count == (double)live[k]))
                continue;
            if (o == nobs && groups == (double)live[k])
                continue;
            snprintf(allowed, sizeof allowed, "%ld, the live count of output %ld", live[k], k);
            snprintf(value, sizeof value, "%.17g", o < nobs ? res->acc[k * nobs + o].count : groups);
            if (o < nobs)
                snprintf(detail, sizeof detail, "the count of output %ld, observer %s", k, nh_observer_at(res->observers, o)->name);
            else
                snprintf(detail, sizeof detail, "the counts of output %ld summed over the fit groups", k);
            return nh_state_refuse(err, scope, o < nobs ? "accumulators" : "groups", o < nobs ? 4 * (k * nobs + o) : -1,
                                   detail, value, allowed);
        }
    }
    return NH_OK;
}

/* The first failures: min(failed, NH_MAX_REPORTED_FAILURES) of them, no status more often than counted. */
static int read_first_failures(const cJSON *root, nh_run_result *res, long done, const nh_state_scope *scope,
                               nh_error *err)
{
    if (nh_json_get_failures(root, "first_failures", "first_failures", res->first_failures, &res->n_reported, 0, done,
                             scope, err))
        return NH_ERR_INPUT;
    const long expected = res->failed < NH_MAX_REPORTED_FAILURES ? res->failed : NH_MAX_REPORTED_FAILURES;
    char value[64], allowed[96];
    long by_status[8] = {0};
    for (int i = 0; i < res->n_reported; ++i)
        if (++by_status[res->first_failures[i].status] > res->failures_by_status[res->first_failures[i].status]) {
            snprintf(value, sizeof value, "status %d", res->first_failures[i].status);
            snprintf(allowed, sizeof allowed, "a status counted in failures_by_status");
            return nh_state_refuse(err, scope, "first_failures", i, NULL, value, allowed);
        }
    if (res->n_reported != expected) {
        snprintf(value, sizeof value, "%d records long", res->n_reported);
        snprintf(allowed, sizeof allowed, "%ld records (the first of the %ld failed trajectories)", expected, res->failed);
        return nh_state_refuse(err, scope, "first_failures", -1, NULL, value, allowed);
    }
    return NH_OK;
}

int nh_checkpoint_restore(const nh_checkpoint *ck, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    int rc = nh_state_check_configuration(ck->root, cfg, res, "checkpoint", err);
    if (rc)
        return rc;
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    const size_t groups = (size_t)res->n_out * NH_FIT_GROUPS;
    long next_block, done;
    nh_state_scope scope;
    nh_state_scope_init(&scope, "checkpoint", ck->path, cfg, res, 0, 0);
    if ((rc = read_progress(ck->root, cfg, &next_block, &done, &scope, err)))
        return rc;
    nh_state_scope_init(&scope, "checkpoint", ck->path, cfg, res, 0, done);
    long *live = malloc((size_t)res->n_out * sizeof *live);
    if (!live)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", scope.what);
    rc = nh_state_add(ck->root, res, &scope, live, err);
    if (!rc && (nh_state_get_doubles(ck->root, "accumulators", "accumulators", (double *)res->acc, 4 * cells, &scope, err) ||
                nh_state_check_accums(res->acc, cells, res->observers, "accumulators", &scope, err) ||
                nh_state_get_doubles(ck->root, "groups", "groups", (double *)res->groups, 4 * groups, &scope, err) ||
                nh_state_check_accums(res->groups, groups, NULL, "groups", &scope, err) ||
                check_live_counts(res, live, &scope, err) || read_first_failures(ck->root, res, done, &scope, err)))
        rc = NH_ERR_INPUT;
    free(live);
    if (rc)
        return rc;
    res->next_block = next_block;
    res->trajectories_done = done;
    return NH_OK;
}

void nh_checkpoint_free(nh_checkpoint *ck)
{
    if (!ck)
        return;
    cJSON_Delete(ck->root);
    free(ck->path);
    free(ck);
}
