/* Partial results of sharded runs (see include/nhens/partial.h), in the shared state encoding of
 * engine/state_json.h plus each chunk's accumulators, first failures and (runs whose fit groups are
 * trajectories) lanes. */
#include "nhens/partial.h"
#include "nhens/files.h"
#include "state_json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "nhens-partial-result"
#define NH_PARTIAL_MAX_BYTES ((size_t)1 << 31)

_Static_assert((int)NH_PARTIAL_MAX_ARGS == (int)NH_STATE_MAX_ARGS, "one bound on stored arguments");

struct nh_partial {
    cJSON *root;
    char *args[NH_PARTIAL_MAX_ARGS];
    int n_args;
    long first_chunk, n_chunks, total_chunks;
};

static int add_chunks(cJSON *root, const nh_run_config *cfg, const nh_run_result *res)
{
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    cJSON *shard = cJSON_AddObjectToObject(root, "shard");
    cJSON *list = cJSON_AddArrayToObject(root, "chunk_stats");
    if (!shard || !list)
        return 1;
    nh_json_put_long(shard, "index", cfg->shard + 1);
    nh_json_put_long(shard, "count", cfg->shards);
    nh_json_put_long(shard, "first_chunk", res->first_chunk);
    nh_json_put_long(shard, "chunks", res->n_chunks);
    nh_json_put_long(shard, "total_chunks", nh_run_chunk_count(cfg));
    for (long c = 0; c < res->n_chunks; ++c) {
        cJSON *chunk = cJSON_CreateObject();
        cJSON_AddItemToArray(list, chunk);
        if (nh_json_add_doubles(chunk, "accumulators", (const double *)res->chunks[c].acc, 4 * cells) ||
            nh_json_add_failures(chunk, "first_failures", res->chunks[c].first_failures, res->chunks[c].n_reported) ||
            (res->chunks[c].lanes &&
             nh_json_add_doubles(chunk, "lanes", res->chunks[c].lanes, (size_t)NH_BLOCK_SIZE * (size_t)res->n_out)))
            return 1;
    }
    return 0;
}

char *nh_partial_text(const nh_run_config *cfg, const nh_run_result *res, int n_args, char *const *args,
                      nh_error *err)
{
    if (!res->chunks || !res->complete)
        return nh_fail(err, NH_ERR_INPUT, "only a completed shard run (--blocks I/K) has a partial result"), NULL;
    if (n_args < 0 || n_args > NH_PARTIAL_MAX_ARGS)
        return nh_fail(err, NH_ERR_INPUT, "a partial result holds at most %d arguments (got %d)", NH_PARTIAL_MAX_ARGS,
                       n_args), NULL;
    const long path_first = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res->first_chunk));
    cJSON *root = nh_state_create(FORMAT_NAME, NH_PARTIAL_VERSION, cfg, res, path_first, n_args, args);
    char *text = root && !add_chunks(root, cfg, res) ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        nh_fail(err, NH_ERR_NOMEM, "out of memory for the partial result of %ld chunks", res->n_chunks);
    return text;
}

int nh_partial_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                    char *const *args, nh_error *err)
{
    if (!res->chunks || !res->complete)
        return nh_fail(err, NH_ERR_INPUT, "only a completed shard run (--blocks I/K) has a partial result");
    char *text = nh_partial_text(cfg, res, n_args, args, err);
    if (!text)
        return NH_ERR_NOMEM;
    int rc = nh_state_write(path, text, err);
    free(text);
    return rc;
}

static int read_shard(nh_partial *p)
{
    const cJSON *shard = cJSON_GetObjectItemCaseSensitive(p->root, "shard");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(p->root, "chunk_stats");
    return !cJSON_IsObject(shard) || nh_json_get_long(shard, "total_chunks", 1, NH_MERGE_CHUNKS, &p->total_chunks) ||
           nh_json_get_long(shard, "first_chunk", 0, p->total_chunks - 1, &p->first_chunk) ||
           nh_json_get_long(shard, "chunks", 1, p->total_chunks - p->first_chunk, &p->n_chunks) ||
           !cJSON_IsArray(list) || cJSON_GetArraySize(list) != p->n_chunks;
}

nh_partial *nh_partial_parse(const char *text, const char *name, nh_error *err)
{
    nh_partial *p = calloc(1, sizeof *p);
    if (!p)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory reading '%s'", name), NULL;
    if (!(p->root = nh_state_parse(text, name, FORMAT_NAME, NH_PARTIAL_VERSION, p->args, &p->n_args, err))) {
        free(p);
        return NULL;
    }
    if (read_shard(p)) {
        nh_partial_free(p);
        return nh_fail(err, NH_ERR_INPUT, "partial result '%s': its shard's chunk range is missing or out of range",
                       name), NULL;
    }
    return p;
}

nh_partial *nh_partial_load(const char *path, nh_error *err)
{
    size_t size;
    char *text = nh_read_file(path, NH_PARTIAL_MAX_BYTES, &size, err);
    if (!text)
        return NULL;
    nh_partial *p = nh_partial_parse(text, path, err);
    free(text);
    return p;
}

int nh_partial_args(const nh_partial *p, char ***args)
{
    *args = (char **)p->args;
    return p->n_args;
}

void nh_partial_chunks(const nh_partial *p, long *first, long *count)
{
    *first = p->first_chunk;
    *count = p->n_chunks;
}

/* A chunk's lanes (runs whose fit groups are trajectories): each lane finite on its first rows, then
 * NAN; 1 when they are missing or damaged. */
static int read_lanes(const cJSON *chunk, double *lanes, long n_out)
{
    if (nh_json_get_doubles(chunk, "lanes", lanes, (size_t)NH_BLOCK_SIZE * (size_t)n_out))
        return 1;
    for (long j = 0; j < NH_BLOCK_SIZE; ++j)
        for (long k = 0; k < n_out; ++k) {
            const double x = lanes[j * n_out + k];
            if (!isnan(x) && (!isfinite(x) || (k > 0 && isnan(lanes[j * n_out + k - 1]))))
                return 1;
        }
    return 0;
}

/* The chunks' ordered parts, each merged into res in turn. */
static int merge_chunks(const nh_partial *p, const nh_run_config *cfg, nh_run_result *res, long traj_first,
                        long traj_end)
{
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    const int with_lanes = nh_run_fit_groups_by_trajectory(cfg);
    nh_accum *acc = malloc(cells * sizeof *acc);
    double *lanes = with_lanes ? malloc((size_t)NH_BLOCK_SIZE * (size_t)res->n_out * sizeof *lanes) : NULL;
    nh_failure failures[NH_MAX_REPORTED_FAILURES];
    int n_failures, bad = !acc || (with_lanes && !lanes);
    const cJSON *chunk = cJSON_GetObjectItemCaseSensitive(p->root, "chunk_stats")->child;
    for (long c = 0; !bad && c < p->n_chunks; ++c, chunk = chunk->next) {
        bad = nh_json_get_doubles(chunk, "accumulators", (double *)acc, 4 * cells) ||
              nh_json_get_failures(chunk, "first_failures", failures, &n_failures) ||
              (with_lanes && read_lanes(chunk, lanes, res->n_out));
        for (int f = 0; !bad && f < n_failures; ++f)
            bad = failures[f].trajectory < traj_first || failures[f].trajectory >= traj_end;
        for (size_t i = 0; !bad && i < cells; ++i)
            bad = !(acc[i].count >= 0 && acc[i].count <= (double)(traj_end - traj_first) * (double)res->n_steps + 1);
        if (!bad)
            nh_run_merge_ordered(res, p->first_chunk + c, acc, lanes, failures, n_failures);
    }
    free(acc);
    free(lanes);
    return bad;
}

int nh_partial_merge(const nh_partial *p, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    int rc = nh_state_check_configuration(p->root, cfg, res, "partial result", err);
    if (rc)
        return rc;
    if (p->total_chunks != nh_run_chunk_count(cfg))
        return nh_fail(err, NH_ERR_INPUT, "the partial result has %ld chunks in all, the run %ld", p->total_chunks,
                       nh_run_chunk_count(cfg));
    const long first_block = nh_run_chunk_first_block(cfg, p->first_chunk);
    const long end_block = nh_run_chunk_first_block(cfg, p->first_chunk + p->n_chunks);
    if (first_block != res->next_block)
        return nh_fail(err, NH_ERR_INPUT, "the partial result of chunks %ld to %ld does not continue the merged chunks "
                       "(next: the one starting at block %ld)", p->first_chunk, p->first_chunk + p->n_chunks - 1,
                       res->next_block);
    const long traj_first = nh_run_trajectories_before(cfg, first_block);
    const long traj_end = nh_run_trajectories_before(cfg, end_block);
    if (nh_state_add(p->root, res, traj_end - traj_first, traj_first, traj_end) ||
        merge_chunks(p, cfg, res, traj_first, traj_end))
        return nh_fail(err, NH_ERR_INPUT, "the partial result's statistics are damaged (a count, a failure record "
                                          "or an accumulator is missing or out of range)");
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(p->root, "wall_seconds");
    res->wall_seconds += cJSON_IsNumber(wall) && wall->valuedouble >= 0 ? wall->valuedouble : 0.0;
    res->next_block = end_block;
    res->trajectories_done = traj_end;
    res->complete = end_block == nh_run_block_count(cfg);
    return NH_OK;
}

void nh_partial_free(nh_partial *p)
{
    if (!p)
        return;
    cJSON_Delete(p->root);
    free(p);
}
