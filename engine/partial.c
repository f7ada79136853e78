/* Partial results of sharded runs (see include/nhens/partial.h), in the shared state encoding of
 * engine/state_json.h plus each chunk's accumulators, first failures and (runs whose fit groups are
 * trajectories) trajectory_fits. */
#include "nhens/partial.h"
#include "nhens/files.h"
#include "state_json.h"
#include "run_result.h"

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
    char *name;
    long shard, shards;
    int interrupted;        /* its chunks are the finished prefix of its shard's (an interrupted rank) */
    char *args[NH_PARTIAL_MAX_ARGS];
    int n_args;
    long first_chunk, n_chunks, total_chunks;
};

static int add_chunks(cJSON *root, const nh_run_config *cfg, const nh_run_result *res)
{
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    cJSON *shard = cJSON_AddObjectToObject(root, "shard");
    cJSON *list = cJSON_AddArrayToObject(root, "chunk_stats");
    if (!shard || !list)
        return 1;
    nh_json_put_long(shard, "index", cfg->shard + 1);
    nh_json_put_long(shard, "count", cfg->shards);
    nh_json_put_long(shard, "first_chunk", res->first_chunk);
    nh_json_put_long(shard, "chunks", res->n_chunks);
    nh_json_put_long(shard, "total_chunks", nh_run_chunk_count(cfg));
    long first, count;
    nh_run_shard_chunks(cfg, &first, &count);
    if (!cJSON_AddBoolToObject(shard, "interrupted", res->n_chunks < count))
        return 1;
    for (long c = 0; c < res->n_chunks; ++c) {
        cJSON *chunk = cJSON_CreateObject();
        cJSON_AddItemToArray(list, chunk);
        if (nh_json_add_doubles(chunk, "accumulators", (const double *)res->chunks[c].acc, 4 * cells) ||
            nh_json_add_failures(chunk, "first_failures", res->chunks[c].first_failures, res->chunks[c].n_reported) ||
            (res->chunks[c].trajectory_fits &&
             nh_json_add_doubles(chunk, "trajectory_fits", res->chunks[c].trajectory_fits, (size_t)NH_BLOCK_SIZE * (size_t)res->n_out)))
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
    char *text = root && !add_chunks(root, cfg, res) ? nh_state_print(root) : NULL;
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
    const cJSON *interrupted = cJSON_IsObject(shard) ? cJSON_GetObjectItemCaseSensitive(shard, "interrupted") : NULL;
    p->interrupted = cJSON_IsTrue(interrupted);
    return !cJSON_IsObject(shard) || !cJSON_IsBool(interrupted) || nh_json_get_long(shard, "total_chunks", 1, NH_MERGE_CHUNKS, &p->total_chunks) ||
           nh_json_get_long(shard, "first_chunk", 0, p->total_chunks - 1, &p->first_chunk) ||
           nh_json_get_long(shard, "chunks", 1, p->total_chunks - p->first_chunk, &p->n_chunks) ||
           nh_json_get_long(shard, "count", 1, p->total_chunks, &p->shards) ||
           nh_json_get_long(shard, "index", 1, p->shards, &p->shard) ||
           !cJSON_IsArray(list) || cJSON_GetArraySize(list) != p->n_chunks;
}

nh_partial *nh_partial_parse(const char *text, const char *name, nh_error *err)
{
    nh_partial *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name))) {
        nh_partial_free(p);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory reading '%s'", name), NULL;
    }
    if (!(p->root = nh_state_parse(text, name, "partial result", FORMAT_NAME, NH_PARTIAL_VERSION, p->args, &p->n_args,
                                   err))) {
        nh_partial_free(p);
        return NULL;
    }
    if (read_shard(p)) {
        nh_partial_free(p);
        return nh_fail(err, NH_ERR_INPUT, "partial result '%s': field 'shard' (its index, count and chunk range) is "
                       "missing or out of range", name), NULL;
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

/* A chunk's trajectory_fits (runs whose fit groups are trajectories): each lane finite on its first rows, then
 * NAN. */
static int read_lanes(const cJSON *chunk, double *trajectory_fits, long n_out, const char *field, const nh_state_scope *scope,
                      nh_error *err)
{
    if (nh_state_get_doubles(chunk, "trajectory_fits", field, trajectory_fits, (size_t)NH_BLOCK_SIZE * (size_t)n_out, scope, err))
        return NH_ERR_INPUT;
    for (long j = 0; j < NH_BLOCK_SIZE; ++j)
        for (long k = 0; k < n_out; ++k) {
            const double x = trajectory_fits[j * n_out + k];
            if (!isnan(x) && (!isfinite(x) || (k > 0 && isnan(trajectory_fits[j * n_out + k - 1])))) {
                char value[64];
                snprintf(value, sizeof value, "%.17g", x);
                return nh_state_refuse(err, scope, field, j * n_out + k, NULL, value,
                                       "finite on a trajectory's first output times, then nan");
            }
        }
    return NH_OK;
}

/* The chunks' accumulators (their non-event counts sum to the part's live counts) and failure records
 * (no more than the part's failed trajectories). */
static int check_chunk_sums(const nh_run_result *res, const double *counts, const long *live,
                            int n_failures, long failed, const nh_state_scope *scope, nh_error *err)
{
    const int nobs = res->n_observers;
    char detail[96], value[64], allowed[80];
    for (long k = 0; k < res->n_out; ++k)
        for (int o = 0; o < nobs; ++o)
            if (o != nh_observer_event() && counts[k * nobs + o] != (double)live[k]) {
                snprintf(detail, sizeof detail, "the counts of output %ld, observer %s, summed over the chunks", k,
                         nh_observer_at(res->observers, o)->name);
                snprintf(value, sizeof value, "%.17g", counts[k * nobs + o]);
                snprintf(allowed, sizeof allowed, "%ld, the live count of output %ld", live[k], k);
                return nh_state_refuse(err, scope, "chunk_stats", -1, detail, value, allowed);
            }
    if (n_failures > failed) {
        snprintf(value, sizeof value, "%d failure records", n_failures);
        snprintf(allowed, sizeof allowed, "at most %ld (the field 'failed')", failed);
        return nh_state_refuse(err, scope, "chunk_stats", -1, "first_failures of every chunk", value, allowed);
    }
    return NH_OK;
}

/* Chunk c's accumulators, failures and trajectory_fits, checked against its own trajectories. */
static int read_chunk(const nh_partial *p, const cJSON *chunk, long c, const nh_run_config *cfg, const nh_run_result *res,
                      nh_accum *acc, double *trajectory_fits, nh_failure *failures, int *n_failures, nh_error *err)
{
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    const long first = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, p->first_chunk + c));
    const long end = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, p->first_chunk + c + 1));
    nh_state_scope scope;
    char field[64];
    nh_state_scope_init(&scope, "partial result", p->name, cfg, res, first, end);
    snprintf(field, sizeof field, "chunk_stats[%ld].accumulators", c);
    if (!cJSON_IsObject(chunk))
        return nh_state_refuse(err, &scope, "chunk_stats", c, NULL, "not an object", "{accumulators, first_failures}");
    if (nh_state_get_doubles(chunk, "accumulators", field, (double *)acc, 4 * cells, &scope, err) ||
        nh_state_check_accums(acc, cells, res->observers, field, &scope, err))
        return NH_ERR_INPUT;
    snprintf(field, sizeof field, "chunk_stats[%ld].first_failures", c);
    if (nh_json_get_failures(chunk, "first_failures", field, failures, n_failures, first, end, &scope, err))
        return NH_ERR_INPUT;
    snprintf(field, sizeof field, "chunk_stats[%ld].trajectory_fits", c);
    return trajectory_fits ? read_lanes(chunk, trajectory_fits, res->n_out, field, &scope, err) : NH_OK;
}

/* The chunks' ordered parts, each checked, then merged into res in turn. */
static int merge_chunks(const nh_partial *p, const nh_run_config *cfg, nh_run_result *res, const long *live,
                        long failed, const nh_state_scope *scope, nh_error *err)
{
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    const int with_lanes = nh_run_fit_groups_by_trajectory(cfg);
    nh_accum *acc = malloc(cells * sizeof *acc);
    double *trajectory_fits = with_lanes ? malloc((size_t)NH_BLOCK_SIZE * (size_t)res->n_out * sizeof *trajectory_fits) : NULL;
    double *counts = calloc(cells, sizeof *counts);
    nh_failure failures[NH_MAX_REPORTED_FAILURES];
    int n_failures, all_failures = 0;
    int rc = !acc || !counts || (with_lanes && !trajectory_fits) ? nh_fail(err, NH_ERR_NOMEM, "out of memory merging %s",
                                                                 scope->what)
                                                       : NH_OK;
    const cJSON *chunk = cJSON_GetObjectItemCaseSensitive(p->root, "chunk_stats")->child;
    for (long c = 0; !rc && c < p->n_chunks; ++c, chunk = chunk->next) {
        rc = read_chunk(p, chunk, c, cfg, res, acc, trajectory_fits, failures, &n_failures, err);
        for (size_t i = 0; !rc && i < cells; ++i)
            counts[i] += acc[i].count;
        all_failures += n_failures;
        if (!rc && c + 1 == p->n_chunks)
            rc = check_chunk_sums(res, counts, live, all_failures, failed, scope, err);
        if (!rc)
            nh_run_merge_ordered(res, p->first_chunk + c, acc, trajectory_fits, failures, n_failures);
    }
    free(acc);
    free(trajectory_fits);
    free(counts);
    return rc;
}

/* The shard the part says it is covers its chunks, and its progress counts end where they end. */
static int check_shard(const nh_partial *p, const nh_run_config *cfg, long end_block, long traj_end,
                       const nh_state_scope *scope, nh_error *err)
{
    nh_run_config shard = *cfg;
    shard.shard = p->shard - 1;
    shard.shards = p->shards;
    long first, count, next_block, done;
    nh_run_shard_chunks(&shard, &first, &count);
    char value[96], allowed[96];
    if (first != p->first_chunk || (p->interrupted ? p->n_chunks >= count : p->n_chunks != count)) {
        snprintf(value, sizeof value, "%sshard %ld of %ld with chunks %ld to %ld", p->interrupted ? "interrupted " : "",
                 p->shard, p->shards, p->first_chunk, p->first_chunk + p->n_chunks - 1);
        if (p->interrupted)
            snprintf(allowed, sizeof allowed, "fewer chunks than %ld to %ld, from the first, for shard %ld of %ld",
                     first, first + count - 1, p->shard, p->shards);
        else
            snprintf(allowed, sizeof allowed, "chunks %ld to %ld for shard %ld of %ld", first, first + count - 1,
                     p->shard, p->shards);
        return nh_state_refuse(err, scope, "shard", -1, NULL, value, allowed);
    }
    const char *keys[2] = {"next_block", "trajectories_done"};
    const long expected[2] = {end_block, traj_end};
    long *stored[2] = {&next_block, &done};
    for (int i = 0; i < 2; ++i)
        if (nh_json_get_long(p->root, keys[i], 0, LONG_MAX, stored[i]) || *stored[i] != expected[i]) {
            const cJSON *item = cJSON_GetObjectItemCaseSensitive(p->root, keys[i]);
            snprintf(value, sizeof value, "'%.40s'", cJSON_IsString(item) ? item->valuestring : "(not a decimal string)");
            snprintf(allowed, sizeof allowed, "'%ld', the %s after the shard's last", expected[i],
                     i ? "trajectory" : "block");
            return nh_state_refuse(err, scope, keys[i], -1, NULL, value, allowed);
        }
    return NH_OK;
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
    nh_state_scope scope;
    nh_state_scope_init(&scope, "partial result", p->name, cfg, res, traj_first, traj_end);
    long *live = malloc((size_t)res->n_out * sizeof *live);
    const long failed_before = res->failed;
    if (!live)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", scope.what);
    rc = check_shard(p, cfg, end_block, traj_end, &scope, err);
    if (!rc)
        rc = nh_state_add(p->root, res, &scope, live, err);
    if (!rc)
        rc = merge_chunks(p, cfg, res, live, res->failed - failed_before, &scope, err);
    free(live);
    if (rc)
        return rc;
    res->wall_seconds += cJSON_GetObjectItemCaseSensitive(p->root, "wall_seconds")->valuedouble; /* checked */
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
    free(p->name);
    free(p);
}
