/* The run's result and the ensemble's entry points: the result allocated and laid out for a configuration
 * (output times, sketches, a shard's kept chunks), its blocks computed (schedule.c) and finished with the
 * variance fit (see include/nhens/ensemble.h). The driver's modules share engine/ensemble_internal.h. */
#include "ensemble_internal.h"
#include "run_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int nh_run_result_alloc(nh_run_result *res, long n_out)
{
    res->time = calloc((size_t)n_out, sizeof *res->time);
    res->live = calloc((size_t)n_out, sizeof *res->live);
    res->acc = calloc((size_t)n_out * res->n_observers, sizeof *res->acc);
    res->groups = calloc((size_t)n_out * NH_FIT_GROUPS, sizeof *res->groups);
    const size_t path_values = (size_t)res->n_paths * (size_t)n_out * (size_t)res->n_observers;
    res->paths = malloc((path_values ? path_values : 1) * sizeof *res->paths);
    for (size_t i = 0; res->paths && i < path_values; ++i)
        res->paths[i] = NAN;
    const nh_sketch_layout *sl = &res->sketch_layout;
    const long sketch_cells = sl->rows * sl->n;
    res->sketch = calloc((size_t)(sketch_cells > 0 ? sketch_cells : 1), sizeof *res->sketch);
    return res->time && res->live && res->acc && res->groups && res->paths && res->sketch ? NH_OK : NH_ERR_NOMEM;
}

/* A shard's kept chunks: one allocation of accumulators (and of trajectory_fits), cut per chunk. */
static int chunks_alloc(nh_run_result *res, int with_lanes)
{
    const size_t cells = (size_t)res->n_out * (size_t)res->n_observers;
    const size_t fit_cells = (size_t)NH_BLOCK_SIZE * (size_t)res->n_out;
    res->chunks = calloc((size_t)res->n_chunks, sizeof *res->chunks);
    nh_accum *acc = calloc((size_t)res->n_chunks * cells, sizeof *acc);
    double *trajectory_fits = with_lanes ? malloc((size_t)res->n_chunks * fit_cells * sizeof *trajectory_fits) : NULL;
    if (!res->chunks || !acc || (with_lanes && !trajectory_fits)) {
        free(acc);
        free(trajectory_fits);
        return NH_ERR_NOMEM;
    }
    for (long c = 0; c < res->n_chunks; ++c) {
        res->chunks[c].acc = acc + (size_t)c * cells;
        res->chunks[c].trajectory_fits = trajectory_fits ? trajectory_fits + (size_t)c * fit_cells : NULL;
    }
    return NH_OK;
}

/* A row per trajectory of the result's chunks, NAN until its block merges. */
static int trajectory_rows_alloc(const nh_run_config *cfg, nh_run_result *res)
{
    res->rows_first = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res->first_chunk));
    res->rows_count = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res->first_chunk + res->n_chunks)) -
                      res->rows_first;
    const size_t cells = (size_t)res->rows_count * (size_t)nh_run_trajectory_width(res);
    if (!(res->trajectory_rows = malloc((cells ? cells : 1) * sizeof *res->trajectory_rows)))
        return NH_ERR_NOMEM;
    for (size_t i = 0; i < cells; ++i)
        res->trajectory_rows[i] = NAN;
    return NH_OK;
}

double nh_run_ns_per_step(const nh_run_result *res)
{
    return res->completed_steps > 0 ? 1e9 * res->method_seconds / (double)res->completed_steps : NAN;
}

double nh_run_observer_max(const nh_run_result *res, int obs)
{
    double worst = NAN;
    for (long k = 0; k < res->n_out; ++k)
        if (nh_run_accum(res, k, obs)->count > 0)
            worst = fmax(worst, nh_run_accum(res, k, obs)->absmax);
    return worst;
}

nh_run_result *nh_run_result_create(void)
{
    return calloc(1, sizeof(nh_run_result));
}

void nh_run_result_free(nh_run_result *res)
{
    if (!res)
        return;
    nh_run_result_clear(res);
    free(res);
}

void nh_run_result_clear(nh_run_result *res)
{
    free(res->time);
    free(res->live);
    free(res->acc);
    free(res->groups);
    free(res->paths);
    free(res->sketch);
    if (res->chunks) {
        free(res->chunks[0].acc);
        free(res->chunks[0].trajectory_fits);
    }
    free(res->chunks);
    free(res->rank_timing);
    nh_observer_table_free(res->observers);
    free(res->reductions);
    free(res->trajectory_rows);
    memset(res, 0, sizeof *res);
}

void nh_run_result_finish(const nh_run_config *cfg, nh_run_result *res)
{
    double *var = malloc((size_t)res->n_out * sizeof *var);
    res->steps_per_second = res->wall_seconds > 0 ? res->completed_steps / res->wall_seconds : 0.0;
    res->variance_scale = pow(cfg->h, 2 * nh_method_spec_order(&cfg->method));
    if (!var)
        return;
    const int fitted = nh_observer_fitted();
    for (long k = 0; k < res->n_out; ++k)
        var[k] = nh_accum_variance(nh_run_accum(res, k, fitted));
    const int order = nh_method_spec_order(&cfg->method);
    const double window = cfg->fit_window_start * cfg->T;
    res->fit_ok = nh_variance_fit_compute(res->time, var, res->n_out, window, cfg->h, order, &res->fit) == 0;
    if (res->fit_ok)
        nh_variance_fit_jackknife(res->time, res->groups, NH_FIT_GROUPS, res->n_out, window, cfg->h, order, &res->fit);
    free(var);
    if (cfg->preset) {
        double q[NH_MAX_DIM], v[NH_MAX_DIM];
        nh_preset_state(cfg->system, cfg->preset, q, v, &res->preset_projection);
    }
}

/* Every stride-th output time up to NH_SKETCH_MAX_ROWS rows, for the recorded observers with a sketch. */
static void sketch_layout_init(nh_sketch_layout *sl, const nh_observer_table *t, long n_out, unsigned mask)
{
    sl->stride = (n_out + NH_SKETCH_MAX_ROWS - 1) / NH_SKETCH_MAX_ROWS;
    sl->rows = (n_out + sl->stride - 1) / sl->stride;
    sl->n = 0;
    for (int i = 0; i < nh_observer_count(t); ++i)
        if (nh_observer_at(t, i)->quantile_prefix && (mask & (1u << i)))
            sl->observer[sl->n++] = i;
}

int nh_run_result_init(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    memset(res, 0, sizeof *res);
    int rc = nh_run_validate(cfg, err);
    if (rc)
        return rc;
    const long n_steps = nh_run_step_count(cfg), n_out = nh_run_output_rows(cfg);
    res->n_steps = n_steps;
    res->n_out = n_out;
    res->ensemble = cfg->ensemble;
    res->n_paths = cfg->paths;
    if (!(res->observers = nh_run_observer_table(cfg, &res->observer_mask, err)) ||
        nh_run_reductions(cfg, res->observers, res->observer_mask, &res->reductions, &res->n_reductions, err)) {
        nh_run_result_clear(res);
        return NH_ERR_INPUT; /* validated above: out of memory */
    }
    res->n_observers = nh_observer_count(res->observers);
    sketch_layout_init(&res->sketch_layout, res->observers, n_out, res->observer_mask);
    if (nh_run_result_alloc(res, n_out)) {
        nh_run_result_clear(res);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %ld output times", n_out);
    }
    for (long k = 0; k < n_out; ++k)
        res->time[k] = (double)nh_run_output_step(cfg, k) * cfg->h;
    nh_run_shard_chunks(cfg, &res->first_chunk, &res->n_chunks);
    res->next_block = nh_run_chunk_first_block(cfg, res->first_chunk);
    res->trajectories_done = nh_run_trajectories_before(cfg, res->next_block);
    if (res->n_reductions > 0 && trajectory_rows_alloc(cfg, res)) {
        nh_run_result_clear(res);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %ld trajectory rows of %d reductions", res->rows_count,
                       res->n_reductions);
    }
    if (cfg->shards > 0 && chunks_alloc(res, nh_run_fit_groups_by_trajectory(cfg))) {
        nh_run_result_clear(res);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %ld chunks of %ld output times", res->n_chunks, n_out);
    }
    return NH_OK;
}

int nh_run_ensemble_continue(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    const long first = res->next_block, end = nh_run_chunk_first_block(cfg, res->first_chunk + res->n_chunks);
    if (first < nh_run_chunk_first_block(cfg, res->first_chunk) || first > end || !nh_run_is_chunk_boundary(cfg, first))
        return nh_fail(err, NH_ERR_INPUT, "cannot continue at block %ld: not the start of a chunk of blocks %ld to %ld",
                       first, nh_run_chunk_first_block(cfg, res->first_chunk), end);
    double start = omp_get_wtime();
    int rc = nh_schedule_blocks(cfg, res, first, end, err);
    if (rc)
        return rc;
    res->complete = res->next_block == end;
    /* paths of trajectories outside the merged prefix (abandoned blocks) are not results */
    const size_t row = (size_t)res->n_out * (size_t)res->n_observers;
    for (long i = res->trajectories_done; i < res->n_paths; ++i)
        for (size_t j = 0; j < row; ++j)
            res->paths[(size_t)i * row + j] = NAN;
    res->wall_seconds = omp_get_wtime() - start;
    nh_run_result_finish(cfg, res);
    return NH_OK;
}

int nh_run_ensemble(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    int rc = nh_run_result_init(cfg, res, err);
    if (!rc && (rc = nh_run_ensemble_continue(cfg, res, err)))
        nh_run_result_clear(res);
    return rc;
}
