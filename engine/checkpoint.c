/* Checkpoint files of ensemble runs (see include/nhens/checkpoint.h): the merged prefix of a run in the
 * shared state encoding (engine/state_json.h) plus its merged accumulators and fit groups. */
#include "nhens/checkpoint.h"
#include "nhens/files.h"
#include "state_json.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "nhens-checkpoint"
#define NH_CHECKPOINT_MAX_BYTES ((size_t)1 << 31)

_Static_assert((int)NH_CHECKPOINT_MAX_ARGS == (int)NH_STATE_MAX_ARGS, "one bound on stored arguments");

struct nh_checkpoint {
    cJSON *root;
    char *args[NH_CHECKPOINT_MAX_ARGS];
    int n_args;
};

int nh_checkpoint_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                       char *const *args, nh_error *err)
{
    if (n_args < 0 || n_args > NH_CHECKPOINT_MAX_ARGS)
        return nh_fail(err, NH_ERR_INPUT, "a checkpoint holds at most %d arguments (got %d)", NH_CHECKPOINT_MAX_ARGS,
                       n_args);
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    cJSON *root = nh_state_create(FORMAT_NAME, NH_CHECKPOINT_VERSION, cfg, res, 0, n_args, args);
    char *text = NULL;
    if (root && !nh_json_add_doubles(root, "accumulators", (const double *)res->acc, 4 * cells) &&
        !nh_json_add_doubles(root, "groups", (const double *)res->groups, 4 * (size_t)res->n_out * NH_FIT_GROUPS) &&
        !nh_json_add_failures(root, "first_failures", res->first_failures, res->n_reported))
        text = cJSON_PrintUnformatted(root);
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
    if (ck && !(ck->root = nh_state_parse(text, path, FORMAT_NAME, NH_CHECKPOINT_VERSION, ck->args, &ck->n_args, err))) {
        free(ck);
        ck = NULL;
    } else if (!ck) {
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

int nh_checkpoint_restore(const nh_checkpoint *ck, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    int rc = nh_state_check_configuration(ck->root, cfg, res, "checkpoint", err);
    if (rc)
        return rc;
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    long next_block, done;
    const long blocks = nh_run_block_count(cfg);
    if (nh_json_get_long(ck->root, "next_block", 0, blocks, &next_block) ||
        nh_json_get_long(ck->root, "trajectories_done", 0, cfg->ensemble, &done) ||
        done != nh_run_trajectories_before(cfg, next_block) ||
        !nh_run_is_chunk_boundary(cfg, next_block) ||
        nh_state_add(ck->root, res, done, 0, done) ||
        nh_json_get_doubles(ck->root, "accumulators", (double *)res->acc, 4 * cells) ||
        nh_json_get_doubles(ck->root, "groups", (double *)res->groups, 4 * (size_t)res->n_out * NH_FIT_GROUPS) ||
        nh_json_get_failures(ck->root, "first_failures", res->first_failures, &res->n_reported))
        return nh_fail(err, NH_ERR_INPUT, "the checkpoint's statistics are damaged (a count, a failure record "
                                          "or an accumulator is missing or out of range)");
    res->next_block = next_block;
    res->trajectories_done = done;
    return NH_OK;
}

void nh_checkpoint_free(nh_checkpoint *ck)
{
    if (!ck)
        return;
    cJSON_Delete(ck->root);
    free(ck);
}
