/* The fixed-order merge, the core of bitwise reproducibility: a trajectory's record into its block in
 * trajectory order, blocks into their chunk in block order, chunks into the run (or kept, for a shard) in
 * chunk order; the same additions in the same order whatever thread computed what
 * (docs/decisions/0013-ordered-merges-of-blocks-and-chunks.md). */
#include "ensemble_internal.h"
#include "run_result.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The record's contribution into block b, after those of the block's earlier trajectories: the same
 * additions, in the same order, as if the trajectory had been computed into the block. (An abandoned
 * record abandons the block: the schedule marks it, under the claims' lock while helpers may read it.) */
void nh_block_take_record(block_stats *b, const trajectory_record *rec, const nh_sketch_layout *sl, long n_out)
{
    const int nobs = b->run->n_observers, event = nh_observer_event(), fitted = nh_observer_fitted();
    double *lane = b->trajectory_fits ? b->trajectory_fits + (rec->index % NH_BLOCK_SIZE) * n_out : NULL;
    for (long k = 0; k < rec->rows; ++k) {
        const double *values = rec->values + k * nobs;
        nh_accum *acc = &b->acc[k * nobs];
        if (lane)
            lane[k] = values[fitted];
        nh_accum_add_each(acc, values, nobs, event);   /* the event observer's samples are its crossings (below) */
        b->live[k]++;
        if (k % sl->stride == 0) {
            double *cell = &b->samples[((rec->index % NH_BLOCK_SIZE) * sl->rows + k / sl->stride) * sl->n];
            for (int j = 0; j < sl->n; ++j)
                cell[j] = values[sl->observer[j]];
        }
    }
    for (long c = 0; c < rec->n_crossings; ++c)
        nh_accum_add(&b->acc[rec->crossings[c].bin * nobs + event], rec->crossings[c].value);
    if (rec->failed)
        b->failures[b->n_failures++] = rec->failure;
    if (b->rows)
        nh_trajectory_row(b->run, rec, b->rows + (rec->index % NH_BLOCK_SIZE) * nh_run_trajectory_width(b->run));
    b->steps += rec->steps;
    b->method_seconds += rec->method_seconds;
    b->reference_seconds += rec->reference_seconds;
    nh_solver_stats_add(&b->solver, rec->solver, 1);
}

long nh_block_sample_count(const nh_sketch_layout *sl)
{
    return NH_BLOCK_SIZE * sl->rows * sl->n;
}

void nh_block_reset(block_stats *b, long n_out, const nh_sketch_layout *sl)
{
    const long cells = n_out * b->run->n_observers;
    for (long i = 0; i < cells; ++i)
        nh_accum_reset(&b->acc[i]);
    for (long i = 0; i < nh_block_sample_count(sl); ++i)
        b->samples[i] = NAN;
    for (long i = 0; b->trajectory_fits && i < NH_BLOCK_SIZE * n_out; ++i)
        b->trajectory_fits[i] = NAN;
    memset(b->live, 0, (size_t)n_out * sizeof *b->live);
    b->n_failures = 0;
    b->steps = 0;
    b->solver = (nh_solver_stats){0};
    b->method_seconds = b->reference_seconds = 0.0;
    b->abandoned = 0;
}

/* A chunk's sketch samples are kept as their bins, a block's after the block before it (NH_BLOCK_SIZE x cells
 * each, NO_BIN for a value not recorded), and counted into the run's sketches when the chunk is done: a chunk
 * holds few trajectories, and its bins take far less memory than a histogram per cell. */
#define NO_BIN UINT16_MAX
_Static_assert((long)NH_SKETCH_BINS < (long)NO_BIN, "a sketch bin fits 16 bits");

/* Block b's statistics into its chunk's (chunk->acc in block order; counts add; its sketch samples' bins after
 * those of the chunk's earlier blocks in bins). */
static void merge_block(nh_run_result *chunk, const block_stats *b, uint16_t *bins)
{
    nh_accum_merge_each(chunk->acc, b->acc, chunk->n_out * b->run->n_observers);
    for (long k = 0; k < chunk->n_out; ++k)
        chunk->live[k] += b->live[k];
    for (long i = 0; i < nh_block_sample_count(&chunk->sketch_layout); ++i) {   /* trajectory i / cells, cell i % cells */
        const int bin = nh_sketch_bin(b->samples[i]);
        bins[i] = bin >= 0 ? (uint16_t)bin : NO_BIN;
    }
    for (int f = 0; f < b->n_failures; ++f) {
        const nh_failure *fl = &b->failures[f];
        chunk->failed++;
        chunk->failures_by_status[fl->status]++; /* a counted status (record_failure) */
        if (chunk->n_reported < NH_MAX_REPORTED_FAILURES)
            chunk->first_failures[chunk->n_reported++] = *fl;
    }
    chunk->completed_steps += b->steps;
    chunk->method_seconds += b->method_seconds;
    chunk->reference_seconds += b->reference_seconds;
    nh_solver_stats_add(&chunk->solver, b->solver, 1);
}

/* The fit groups of a chunk that is one block: trajectory i = chunk x NH_BLOCK_SIZE + j (lane j) into
 * group i mod NH_FIT_GROUPS, value by value (NAN: not live). */
static void merge_lanes(nh_run_result *res, long chunk, const double *trajectory_fits)
{
    for (long j = 0; j < NH_BLOCK_SIZE; ++j) {
        nh_accum *group = &res->groups[((chunk * NH_BLOCK_SIZE + j) % NH_FIT_GROUPS) * res->n_out];
        const double *lane = trajectory_fits + j * res->n_out;
        for (long k = 0; k < res->n_out && !isnan(lane[k]); ++k)
            nh_accum_add(&group[k], lane[k]);
    }
}

void nh_run_merge_ordered(nh_run_result *res, long chunk, const nh_accum *acc, const double *trajectory_fits,
                          const nh_failure *failures, int n_failures)
{
    const int nobs = res->n_observers, fitted = nh_observer_fitted();
    const long cells = res->n_out * nobs;
    nh_accum_merge_each(res->acc, acc, cells);
    nh_accum *group = &res->groups[(chunk % NH_FIT_GROUPS) * res->n_out];
    for (long k = 0; !trajectory_fits && k < res->n_out; ++k)
        nh_accum_merge(&group[k], &acc[k * nobs + fitted]);
    if (trajectory_fits)
        merge_lanes(res, chunk, trajectory_fits);
    for (int f = 0; f < n_failures && res->n_reported < NH_MAX_REPORTED_FAILURES; ++f)
        res->first_failures[res->n_reported++] = failures[f];
}

/* nh_run_merge_counts but the sketches. */
static void merge_counts_but_sketches(nh_run_result *res, const nh_run_result *from)
{
    for (long k = 0; k < res->n_out; ++k)
        res->live[k] += from->live[k];
    res->failed += from->failed;
    for (int s = 0; s < 8; ++s)
        res->failures_by_status[s] += from->failures_by_status[s];
    res->completed_steps += from->completed_steps;
    res->method_seconds += from->method_seconds;
    res->reference_seconds += from->reference_seconds;
    nh_solver_stats_add(&res->solver, from->solver, 1);
}

void nh_run_merge_counts(nh_run_result *res, const nh_run_result *from)
{
    merge_counts_but_sketches(res, from);
    const long sketch_cells = res->sketch_layout.rows * res->sketch_layout.n;
    for (long c = 0; c < sketch_cells; ++c)
        nh_sketch_merge(&res->sketch[c], &from->sketch[c]);
}

/* A finished chunk into the run: merged (a whole run) or kept as it is (a shard's partial result). */
static void chunk_done(nh_run_result *res, long c, const nh_run_result *chunk, const double *trajectory_fits,
                       const uint16_t *bins, long n_bins)
{
    if (res->chunks) {
        nh_chunk_stats *kept = &res->chunks[c - res->first_chunk];
        memcpy(kept->acc, chunk->acc, (size_t)res->n_out * (size_t)res->n_observers * sizeof *kept->acc);
        if (trajectory_fits)
            memcpy(kept->trajectory_fits, trajectory_fits, (size_t)NH_BLOCK_SIZE * (size_t)res->n_out * sizeof *trajectory_fits);
        memcpy(kept->first_failures, chunk->first_failures, sizeof kept->first_failures);
        kept->n_reported = chunk->n_reported;
    } else {
        nh_run_merge_ordered(res, c, chunk->acc, trajectory_fits, chunk->first_failures, chunk->n_reported);
    }
    merge_counts_but_sketches(res, chunk);
    const long cells = res->sketch_layout.rows * res->sketch_layout.n;
    for (long first = 0; cells > 0 && first < n_bins; first += cells)   /* a trajectory's samples, cell by cell */
        for (long cell = 0; cell < cells; ++cell)
            if (bins[first + cell] != NO_BIN)
                res->sketch[cell].count[bins[first + cell]]++;
}

static void chunk_reset(nh_run_result *chunk)
{
    const long cells = chunk->n_out * chunk->n_observers;
    for (long i = 0; i < cells; ++i)
        nh_accum_reset(&chunk->acc[i]);
    memset(chunk->live, 0, (size_t)chunk->n_out * sizeof *chunk->live);
    chunk->failed = 0;
    memset(chunk->failures_by_status, 0, sizeof chunk->failures_by_status);
    chunk->n_reported = 0;
    chunk->completed_steps = 0;
    chunk->method_seconds = chunk->reference_seconds = 0.0;
    chunk->solver = (nh_solver_stats){0};
}

/* Block b, the next in order, into its chunk; a chunk's last block makes the chunk part of the run.
 * Only the merger calls it, outside the lock: no other thread reads the chunk or what it changes in res. */
void nh_merge_next_block(const nh_run_config *cfg, merge_queue *q, long b, const block_stats *blk, nh_run_result *res)
{
    const long c = nh_run_chunk_of_block(cfg, b);
    if (b == nh_run_chunk_first_block(cfg, c))
        chunk_reset(&q->chunk);
    const long block_bins = nh_block_sample_count(&q->chunk.sketch_layout);
    const long first_bin = (b - nh_run_chunk_first_block(cfg, c)) * block_bins;
    merge_block(&q->chunk, blk, q->chunk_bins + first_bin);
    if (blk->rows) { /* the block's trajectory rows, in trajectory order, into the run's */
        const long first = nh_run_trajectories_before(cfg, b), count = nh_run_trajectories_before(cfg, b + 1) - first;
        const int width = nh_run_trajectory_width(res);
        memcpy(res->trajectory_rows + (first - res->rows_first) * width, blk->rows,
               (size_t)(count * width) * sizeof *blk->rows);
    }
    if (q->trajectory_fits) /* the chunk is this one block */
        memcpy(q->trajectory_fits, blk->trajectory_fits, (size_t)NH_BLOCK_SIZE * (size_t)q->chunk.n_out * sizeof *q->trajectory_fits);
    if (cfg->progress) {
        const long origin = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res->first_chunk));
        cfg->progress(nh_run_trajectories_before(cfg, b + 1) - origin,
                      nh_run_trajectories_before(cfg, q->end) - origin, cfg->progress_ctx);
    }
    if (b + 1 != nh_run_chunk_first_block(cfg, c + 1))
        return;
    chunk_done(res, c, &q->chunk, q->trajectory_fits, q->chunk_bins, first_bin + block_bins);
    res->next_block = b + 1;
    res->trajectories_done = nh_run_trajectories_before(cfg, b + 1);
    if (cfg->merged && !res->chunks)
        cfg->merged(res, res->next_block, cfg->hook_ctx);
}

