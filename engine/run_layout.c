/* The layout of a run: its steps and output rows, its blocks of NH_BLOCK_SIZE trajectories, the fixed
 * chunks the blocks merge into, a shard's chunks, the fit groups and the lanes its threads use (see
 * include/nhens/ensemble.h). */
#include "ensemble_internal.h"
#include "run_result.h"

#include <math.h>

long nh_run_step_count(const nh_run_config *cfg)
{
    return (long)floor(cfg->T / cfg->h + 1e-9);
}

long nh_run_trajectories_before(const nh_run_config *cfg, long block)
{
    return block * NH_BLOCK_SIZE < cfg->ensemble ? block * NH_BLOCK_SIZE : cfg->ensemble;
}

long nh_run_output_rows(const nh_run_config *cfg)
{
    const long n_steps = nh_run_step_count(cfg);
    return n_steps / cfg->every + 1 + (n_steps % cfg->every != 0);
}

long nh_run_output_step(const nh_run_config *cfg, long row)
{
    const long n_steps = nh_run_step_count(cfg);
    return row * cfg->every < n_steps ? row * cfg->every : n_steps;
}

long nh_run_block_count(const nh_run_config *cfg)
{
    return (cfg->ensemble + NH_BLOCK_SIZE - 1) / NH_BLOCK_SIZE;
}

long nh_run_chunk_count(const nh_run_config *cfg)
{
    const long blocks = nh_run_block_count(cfg);
    return blocks < NH_MERGE_CHUNKS ? blocks : NH_MERGE_CHUNKS;
}

long nh_run_chunk_first_block(const nh_run_config *cfg, long chunk)
{
    return chunk * nh_run_block_count(cfg) / nh_run_chunk_count(cfg);
}

long nh_run_chunk_of_block(const nh_run_config *cfg, long block)
{
    const long blocks = nh_run_block_count(cfg), chunks = nh_run_chunk_count(cfg);
    long c = block * chunks / blocks; /* at most one below the answer */
    while (c + 1 < chunks && nh_run_chunk_first_block(cfg, c + 1) <= block)
        ++c;
    return c;
}

int nh_run_is_chunk_boundary(const nh_run_config *cfg, long block)
{
    return block == nh_run_block_count(cfg) ||
           (block >= 0 && block < nh_run_block_count(cfg) &&
            nh_run_chunk_first_block(cfg, nh_run_chunk_of_block(cfg, block)) == block);
}

void nh_run_shard_chunks(const nh_run_config *cfg, long *first, long *count)
{
    const long chunks = nh_run_chunk_count(cfg);
    if (cfg->shards <= 0) {
        *first = 0;
        *count = chunks;
        return;
    }
    *first = cfg->shard * chunks / cfg->shards;
    *count = (cfg->shard + 1) * chunks / cfg->shards - *first;
}

int nh_run_fit_groups_by_trajectory(const nh_run_config *cfg)
{
    return nh_run_chunk_count(cfg) < NH_FIT_GROUPS;
}


/* Each lane holds a trajectory's record of every output row (and about as many wait in their blocks): the lanes
 * are halved until those records fit in this much memory per thread. */
static const double LANE_RECORDS_BYTES = 256.0 * 1024 * 1024;

int nh_run_lanes(const nh_run_config *cfg, const nh_run_result *res)
{
    const unsigned observer_mask = res->observer_mask;
    int lanes = cfg->lanes > 0 ? cfg->lanes : nh_lanes_default_for(&cfg->method, cfg->system, cfg->solver);
    const int reference = nh_observer_reference();
    if (lanes <= 1 || (reference >= 0 && (observer_mask & (1u << reference))) ||
        !nh_lane_kernel_exists(&cfg->method, cfg->system, cfg->solver))
        return 1;
    const double record_bytes = (double)nh_run_output_rows(cfg) * res->n_observers * sizeof(double);
    while (lanes > 1 && 2.0 * lanes * record_bytes > LANE_RECORDS_BYTES)
        lanes /= 2;
    return lanes;
}
