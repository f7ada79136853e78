/* The OpenMP driver of a run: blocks handed out in order to the threads, each block's trajectories claimed
 * from its front by its worker and from its back by idle ones, finished blocks in slots until the merger
 * (one thread at a time) takes them in order, interruption ending the merged prefix. Its locks are the
 * run's own (merge_queue), created and destroyed with it. */
#include "ensemble_internal.h"

#include <stdlib.h>
#include <time.h>

static void queue_free(merge_queue *q)
{
    nh_run_result_free(&q->chunk);
    for (int i = 0; q->slots && i < q->n_slots; ++i) {
        free(q->slots[i].acc);
        free(q->slots[i].live);
        free(q->slots[i].samples);
        free(q->slots[i].lanes);
    }
    free(q->lanes);
    free(q->slots);
    free(q->ready);
    omp_destroy_lock(&q->merge_lock);
    omp_destroy_lock(&q->claim_lock);
}

static int queue_init(merge_queue *q, int threads, int lanes, const nh_run_result *res, long first, long end,
                      nh_error *err)
{
    const size_t lane_cells = lanes ? (size_t)NH_BLOCK_SIZE * (size_t)res->n_out : 0;
    const long n_out = res->n_out;
    const nh_sketch_layout *sl = &res->sketch_layout;
    const long samples = nh_block_sample_count(sl);
    *q = (merge_queue){.n_slots = 2 * threads, .next = first, .next_claim = first, .end = end};
    omp_init_lock(&q->merge_lock);
    omp_init_lock(&q->claim_lock);
    q->chunk.n_out = n_out;
    q->chunk.sketch_layout = *sl;
    q->slots = calloc((size_t)q->n_slots, sizeof *q->slots);
    q->ready = malloc((size_t)q->n_slots * sizeof *q->ready);
    int ok = q->slots && q->ready && nh_run_result_alloc(&q->chunk, n_out) == NH_OK;
    for (int i = 0; ok && i < q->n_slots; ++i) {
        q->ready[i] = -1;
        q->slots[i].acc = calloc((size_t)n_out * nh_observer_count(), sizeof *q->slots[i].acc);
        q->slots[i].live = calloc((size_t)n_out, sizeof *q->slots[i].live);
        q->slots[i].samples = malloc((size_t)(samples ? samples : 1) * sizeof(double));
        q->slots[i].lanes = lanes ? malloc(lane_cells * sizeof(double)) : NULL;
        ok = q->slots[i].acc && q->slots[i].live && q->slots[i].samples && (!lanes || q->slots[i].lanes);
    }
    if (ok && lanes)
        ok = (q->lanes = malloc(lane_cells * sizeof(double))) != NULL;
    if (!ok)
        queue_free(q);
    return ok ? NH_OK : nh_fail(err, NH_ERR_NOMEM, "out of memory for %d blocks of %ld output times", 2 * threads, n_out);
}

/* The block to merge next when it is ready and the prefix goes on (else -1, and the caller stops being
 * the merger), under the merge lock. */
static long next_ready_block(merge_queue *q)
{
    long next = -1;
    omp_set_lock(&q->merge_lock);
    if (!q->stopped && q->ready[q->next % q->n_slots] == q->next)
        next = q->next;
    else
        q->merging = 0;
    omp_unset_lock(&q->merge_lock);
    return next;
}

/* Block b is finished. Unless another thread is merging (it will find b ready), merge b and every ready
 * block after it, in order, while they continue the prefix. A slot is handed back (q->next moves past
 * its block) only once its block is merged. */
static void publish(const nh_run_config *cfg, merge_queue *q, long b, nh_run_result *res)
{
    omp_set_lock(&q->merge_lock);
    q->ready[b % q->n_slots] = b;
    const int merger = !q->merging;
    q->merging = 1;
    omp_unset_lock(&q->merge_lock);
    long next;
    while (merger && (next = next_ready_block(q)) >= 0) {
        const block_stats *blk = &q->slots[next % q->n_slots];
        const int abandoned = blk->abandoned;
        if (!abandoned)
            nh_merge_next_block(cfg, q, next, blk, res);
        omp_set_lock(&q->merge_lock);
        q->ready[next % q->n_slots] = -1;
        q->stopped |= abandoned;
        q->next = abandoned ? next : next + 1;
        omp_unset_lock(&q->merge_lock);
    }
}

/* The waits of the claims and the merge window: 20 microseconds, then look again. */
static void pause_briefly(void)
{
    struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
}

/* The slot of block b once block b - n_slots is merged, or NULL when the run has stopped short of b. */
static block_stats *slot_for(merge_queue *q, long b)
{
    for (;;) {
        omp_set_lock(&q->merge_lock);
        const int state = q->stopped ? -1 : q->next > b - q->n_slots;
        omp_unset_lock(&q->merge_lock);
        if (state)
            return state > 0 ? &q->slots[b % q->n_slots] : NULL;
        pause_briefly();
    }
}

/* The next trajectory of the slot's running block (its index), from the front for the block's
 * worker, from the back for a helper; -1 when none is left. An abandoned block hands out no more. */
static long claim_trajectory(merge_queue *q, block_stats *slot, int from_back)
{
    long index = -1;
    omp_set_lock(&q->claim_lock);
    if (slot->running && slot->front <= slot->back && !slot->abandoned) {
        index = slot->block * NH_BLOCK_SIZE + (from_back ? slot->back-- : slot->front++);
        slot->stolen += from_back;
    }
    omp_unset_lock(&q->claim_lock);
    return index;
}

/* Wait until every trajectory that helpers took from the slot's block is recorded; then it hands out
 * no more. */
static void wait_for_helpers(merge_queue *q, block_stats *slot)
{
    for (;;) {
        omp_set_lock(&q->claim_lock);
        const int pending = slot->stolen_done < slot->stolen;
        if (!pending)
            slot->running = 0;
        omp_unset_lock(&q->claim_lock);
        if (!pending)
            return;
        pause_briefly();
    }
}

/* The slot, emptied, holds block b of count trajectories: its claims open. */
static void open_block(merge_queue *q, block_stats *slot, long b, long count, const nh_run_result *res)
{
    nh_block_reset(slot, res->n_out, &res->sketch_layout);
    omp_set_lock(&q->claim_lock);
    slot->block = b;
    slot->front = slot->stolen = slot->stolen_done = 0;
    slot->back = (int)count - 1;
    slot->running = 1;
    q->starting--;
    omp_unset_lock(&q->claim_lock);
}

/* The records helpers made of the slot's block, in trajectory order, into the block (once no helper
 * touches it); 1 when one of them could not grow. */
static int take_stolen_records(block_stats *slot, long count, const nh_run_result *res)
{
    int out_of_memory = 0;
    for (long t = 0; t < count; ++t) {
        trajectory_record *rec = slot->stolen_records[t];
        if (!rec)
            continue;
        nh_block_take_record(slot, rec, &res->sketch_layout, res->n_out);
        slot->abandoned |= rec->abandoned;
        out_of_memory |= rec->out_of_memory;
        nh_record_delete(rec);
        slot->stolen_records[t] = NULL;
    }
    return out_of_memory;
}

/* Block b into its slot: its trajectories from the front straight into the block, then those helpers
 * took from the back, in trajectory order; 1 when a record could not grow (the block is abandoned). */
static int run_block(const nh_run_config *cfg, merge_queue *q, worker *w, long b, block_stats *slot,
                     const nh_run_result *res)
{
    const long first = b * NH_BLOCK_SIZE, count = nh_run_trajectories_before(cfg, b + 1) - first;
    open_block(q, slot, b, count, res);
    int out_of_memory = 0;
    long index;
    while ((index = claim_trajectory(q, slot, 0)) >= 0) {
        nh_trajectory_run(cfg, w, &w->own, index, res->n_steps);
        nh_block_take_record(slot, &w->own, &res->sketch_layout, res->n_out);
        out_of_memory |= w->own.out_of_memory;
        if (w->own.abandoned) {
            omp_set_lock(&q->claim_lock);
            slot->abandoned = 1;
            omp_unset_lock(&q->claim_lock);
        }
    }
    wait_for_helpers(q, slot);   /* from here on no other thread reads the slot */
    out_of_memory |= take_stolen_records(slot, count, res);
    slot->abandoned |= out_of_memory;
    return out_of_memory;
}

/* The running block with the lowest number that has a trajectory left; NULL when there is none and none
 * is about to start (a block taken whose worker is still preparing it, or waiting for its slot). */
static block_stats *earliest_running_block(merge_queue *q)
{
    for (;;) {
        block_stats *earliest = NULL;
        omp_set_lock(&q->claim_lock);
        const int starting = q->starting;
        for (int i = 0; i < q->n_slots; ++i) {
            const block_stats *slot = &q->slots[i];
            if (slot->running && slot->front <= slot->back && !slot->abandoned &&
                (!earliest || slot->block < earliest->block))
                earliest = &q->slots[i];
        }
        omp_unset_lock(&q->claim_lock);
        if (earliest || !starting)
            return earliest;
        pause_briefly();
    }
}

/* With no block left to start: trajectories from the back of the running blocks (the earliest first),
 * each into a record of its own that the block's worker takes, until none is left (or no record can be
 * allocated: then the blocks' workers finish them). */
static void help_running_blocks(const nh_run_config *cfg, merge_queue *q, worker *w, const nh_run_result *res)
{
    trajectory_record *rec = NULL;
    block_stats *slot;
    while ((slot = earliest_running_block(q))) {
        if (!rec && !(rec = nh_record_new(res->n_out)))
            return;
        const long index = claim_trajectory(q, slot, 1);
        if (index < 0)
            continue;
        nh_trajectory_run(cfg, w, rec, index, res->n_steps);
        omp_set_lock(&q->claim_lock);
        slot->stolen_records[index % NH_BLOCK_SIZE] = rec;
        slot->stolen_done++;
        omp_unset_lock(&q->claim_lock);
        rec = NULL;
    }
    nh_record_delete(rec);
}

/* The next block to start (counted as starting until its claims open), or -1 when none is left. */
static long claim_block(merge_queue *q)
{
    long b = -1;
    omp_set_lock(&q->claim_lock);
    if (q->next_claim < q->end) {
        b = q->next_claim++;
        q->starting++;
    }
    omp_unset_lock(&q->claim_lock);
    return b;
}

/* Blocks in order over the workers; each merges what it finished (publish) and, when no block is left
 * to start, helps with the running ones. */
static void work_on_blocks(const nh_run_config *cfg, merge_queue *q, worker *w, nh_run_result *res)
{
    long b;
    while ((b = claim_block(q)) >= 0) {
        block_stats *slot = slot_for(q, b);
        if (!slot) {
            omp_set_lock(&q->claim_lock);
            q->starting--;
            omp_unset_lock(&q->claim_lock);
            continue;
        }
        if (run_block(cfg, q, w, b, slot, res)) {
#pragma omp atomic write
            q->out_of_memory = 1;
        }
        publish(cfg, q, b, res);
    }
    help_running_blocks(cfg, q, w, res);
}

/* The queue's blocks over the threads, merged in order into res; 0, or the setup error of a worker. */
static int compute_blocks(const nh_run_config *cfg, merge_queue *q, nh_run_result *res, nh_error *err)
{
    int setup_failed = 0;
    nh_error setup_err = {{0}};
#pragma omp parallel num_threads(cfg->threads)
    {
        worker w;
        nh_error local_err;
        int ok = nh_worker_init(&w, cfg, res, &local_err) == NH_OK;
        if (!ok) {
#pragma omp atomic write
            setup_failed = 1;
            omp_set_lock(&q->merge_lock);   /* no block is merged before the barrier */
            setup_err = local_err;
            omp_unset_lock(&q->merge_lock);
        }
#pragma omp barrier
        /* every thread reads the shared flag only after the barrier */
        int any_failed;
#pragma omp atomic read
        any_failed = setup_failed;
        if (!any_failed)
            work_on_blocks(cfg, q, &w, res);
        nh_worker_free(&w);
    }
    if (setup_failed) {
        *err = setup_err;
        return NH_ERR_SOLVER;
    }
    if (q->out_of_memory)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory recording the section crossings of a trajectory");
    return NH_OK;
}

int nh_schedule_blocks(const nh_run_config *cfg, nh_run_result *res, long first, long end, nh_error *err)
{
    merge_queue q;
    if (queue_init(&q, cfg->threads, nh_run_fit_groups_by_trajectory(cfg), res, first, end, err))
        return NH_ERR_NOMEM;
    const int rc = compute_blocks(cfg, &q, res, err);
    queue_free(&q);
    return rc;
}
