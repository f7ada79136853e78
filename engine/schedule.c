/* The OpenMP driver of a run: blocks handed out in order to the threads, each block's trajectories claimed
 * from its front by the worker that owns it and from its back by idle ones, each claim into a free lane of
 * the claiming worker; a block's records taken into it in trajectory order, finished blocks in slots until the
 * merger (one thread at a time) takes them in order, interruption ending the merged prefix. A worker that
 * holds a block or a running lane never waits for a slot. Its locks are the run's own (merge_queue), created
 * and destroyed with it. */
#include "ensemble_internal.h"
#include "run_result.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void queue_free(merge_queue *q)
{
    nh_run_result_clear(&q->chunk);
    free(q->chunk_bins);
    for (int i = 0; q->slots && i < q->n_slots; ++i) {
        free(q->slots[i].acc);
        free(q->slots[i].live);
        free(q->slots[i].samples);
        free(q->slots[i].trajectory_fits);
        free(q->slots[i].rows);
    }
    free(q->trajectory_fits);
    free(q->slots);
    free(q->ready);
    omp_destroy_lock(&q->merge_lock);
    omp_destroy_lock(&q->claim_lock);
}

static int queue_init(merge_queue *q, int n_slots, int trajectory_fits, long chunk_blocks, const nh_run_result *res,
                      long first, long end, nh_error *err)
{
    const size_t fit_cells = trajectory_fits ? (size_t)NH_BLOCK_SIZE * (size_t)res->n_out : 0;
    const long n_out = res->n_out;
    const nh_sketch_layout *sl = &res->sketch_layout;
    const long samples = nh_block_sample_count(sl);
    *q = (merge_queue){.n_slots = n_slots, .next = first, .next_claim = first, .end = end};
    omp_init_lock(&q->merge_lock);
    omp_init_lock(&q->claim_lock);
    q->chunk.n_out = n_out;
    q->chunk.n_observers = res->n_observers;
    q->chunk.sketch_layout = *sl;
    q->slots = calloc((size_t)q->n_slots, sizeof *q->slots);
    q->ready = malloc((size_t)q->n_slots * sizeof *q->ready);
    q->chunk_bins = malloc((size_t)(chunk_blocks * samples > 0 ? chunk_blocks * samples : 1) * sizeof *q->chunk_bins);
    int ok = q->slots && q->ready && q->chunk_bins && nh_run_result_alloc(&q->chunk, n_out) == NH_OK;
    for (int i = 0; ok && i < q->n_slots; ++i) {
        q->ready[i] = -1;
        q->slots[i].run = res;
        q->slots[i].acc = calloc((size_t)n_out * res->n_observers, sizeof *q->slots[i].acc);
        q->slots[i].rows = res->trajectory_rows ? malloc(NH_BLOCK_SIZE * sizeof(double) * nh_run_trajectory_width(res)) : NULL;
        q->slots[i].live = calloc((size_t)n_out, sizeof *q->slots[i].live);
        q->slots[i].samples = malloc((size_t)(samples ? samples : 1) * sizeof(double));
        q->slots[i].trajectory_fits = trajectory_fits ? malloc(fit_cells * sizeof(double)) : NULL;
        ok = q->slots[i].acc && q->slots[i].live && q->slots[i].samples && (!trajectory_fits || q->slots[i].trajectory_fits) &&
             (!res->trajectory_rows || q->slots[i].rows);
    }
    if (ok && trajectory_fits)
        ok = (q->trajectory_fits = malloc(fit_cells * sizeof(double))) != NULL;
    if (!ok)
        queue_free(q);
    return ok ? NH_OK : nh_fail(err, NH_ERR_NOMEM, "out of memory for %d blocks of %ld output times", n_slots, n_out);
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

/* The slot of block b once block b - n_slots is merged (waiting for it when `wait`, else NULL at once when it
 * is not), or NULL when the run has stopped short of b. */
static block_stats *slot_for(merge_queue *q, long b, int wait)
{
    for (;;) {
        omp_set_lock(&q->merge_lock);
        const int state = q->stopped ? -1 : q->next > b - q->n_slots;
        omp_unset_lock(&q->merge_lock);
        if (state || !wait)
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

/* The slot, emptied, holds block b of count trajectories: its claims open. */
static void open_block(merge_queue *q, block_stats *slot, long b, long count, const nh_run_result *res)
{
    nh_block_reset(slot, res->n_out, &res->sketch_layout);
    omp_set_lock(&q->claim_lock);
    slot->block = b;
    slot->front = slot->stolen = slot->stolen_done = 0;
    slot->back = (int)count - 1;
    for (int t = 0; t < NH_BLOCK_SIZE; ++t)
        slot->stolen_records[t] = NULL;
    slot->running = 1;
    q->starting--;
    omp_unset_lock(&q->claim_lock);
}

/* The running block with the lowest number that has a trajectory left and that this worker does not own
 * (`own` is its first owned block's slot, NULL when it owns none); NULL when there is none, and, when `wait`,
 * none is about to start (a block taken whose worker is still preparing it, or waiting for its slot). */
static block_stats *earliest_running_block(merge_queue *q, int wait)
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
        if (earliest || !starting || !wait)
            return earliest;
        pause_briefly();
    }
}

/* The next block to start (counted as starting until its claims open), or -1 when none is left; with
 * `free_slot_only`, -1 also when its slot still holds an unmerged block (the claim would wait for it). */
static long claim_block(merge_queue *q, int free_slot_only)
{
    long b = -1;
    omp_set_lock(&q->claim_lock);
    omp_set_lock(&q->merge_lock);   /* the only nesting of the two locks: claim, then merge */
    const int slot_free = !q->stopped && q->next > q->next_claim - q->n_slots;
    omp_unset_lock(&q->merge_lock);
    if (q->next_claim < q->end && (slot_free || !free_slot_only)) {
        b = q->next_claim++;
        q->starting++;
    }
    omp_unset_lock(&q->claim_lock);
    return b;
}

/* ---- a worker's trajectories: in its lanes (one lane when it steps them one at a time) ------------------ */

/* A block the worker opened: it claims the block's trajectories from the front, and takes every record of
 * the block, its own and the helpers' (from the back), into it in trajectory order. */
typedef struct owned_block {
    block_stats *slot;
    long b, count;
    int next_take;                          /* offset of the block's next record to take */
    int pending;                            /* front claims still running */
    trajectory_record *done[NH_BLOCK_SIZE]; /* finished front claims not taken yet, by offset */
} owned_block;

/* Blocks a worker owns at once: enough to keep its lanes filled, and one more whose last trajectories run
 * while the next opens. */
enum { MAX_OWNED = NH_MAX_LANES / NH_BLOCK_SIZE + 1 };

typedef struct lane_home {
    owned_block *owner;     /* the owned block of a front claim, or NULL: ... */
    block_stats *slot;      /* ... the slot of another worker's block it came from (a claim from the back) */
} lane_home;

typedef struct worker_blocks {
    owned_block owned[MAX_OWNED];   /* in block order: owned[0] is the oldest */
    int n_owned, max_owned;
    lane_home home[NH_MAX_LANES];
    trajectory_record *free_records[NH_MAX_LANES + MAX_OWNED * NH_BLOCK_SIZE];
    int n_free;
    int running;                    /* lanes with a trajectory */
    int none_left;                  /* no block to open and no trajectory to take from another's */
} worker_blocks;

/* Blocks owned per worker for n lanes, and the slots a run of `threads` workers needs for them */
static int owned_blocks_for(int lanes)
{
    return (lanes + NH_BLOCK_SIZE - 1) / NH_BLOCK_SIZE + 1;
}

static trajectory_record *record_for_lane(worker_blocks *wb, const nh_run_result *res)
{
    return wb->n_free > 0 ? wb->free_records[--wb->n_free] : nh_record_new(res->n_out, res->n_observers);
}

static void release_record(worker_blocks *wb, trajectory_record *rec)
{
    if ((size_t)wb->n_free < sizeof wb->free_records / sizeof wb->free_records[0])
        wb->free_records[wb->n_free++] = rec;
    else
        nh_record_delete(rec);
}

/* The worker opens the next block when it may: without waiting for its slot while it holds anything (the
 * slot may wait for a block the worker itself holds). 1 when it opened one. */
static int open_next_block(const nh_run_config *cfg, merge_queue *q, worker_blocks *wb, const nh_run_result *res)
{
    if (wb->n_owned == wb->max_owned)
        return 0;
    const int holds = wb->n_owned > 0 || wb->running > 0;
    const long b = claim_block(q, holds);
    if (b < 0)
        return 0;
    block_stats *slot = slot_for(q, b, 1);   /* free, or the wait of a worker that holds nothing */
    if (!slot) {
        omp_set_lock(&q->claim_lock);
        q->starting--;
        omp_unset_lock(&q->claim_lock);
        return 0;
    }
    const long count = nh_run_trajectories_before(cfg, b + 1) - b * NH_BLOCK_SIZE;
    owned_block *o = &wb->owned[wb->n_owned++];
    *o = (owned_block){.slot = slot, .b = b, .count = count};
    open_block(q, slot, b, count, res);
    return 1;
}

/* The next trajectory for a free lane: the front of the owned blocks, a block opened for it, or the back of
 * another worker's running block; -1 when there is none now. */
static long claim_for_lane(const nh_run_config *cfg, merge_queue *q, worker_blocks *wb, const nh_run_result *res,
                           lane_home *home)
{
    wb->none_left = 0;
    for (;;) {
        for (int i = 0; i < wb->n_owned; ++i) {
            const long index = claim_trajectory(q, wb->owned[i].slot, 0);
            if (index >= 0) {
                wb->owned[i].pending++;
                *home = (lane_home){&wb->owned[i], NULL};
                return index;
            }
        }
        if (!open_next_block(cfg, q, wb, res))
            break;
    }
    const int holds = wb->n_owned > 0 || wb->running > 0;
    block_stats *slot;
    while ((slot = earliest_running_block(q, !holds))) {
        const long index = claim_trajectory(q, slot, 1);
        if (index >= 0) {
            *home = (lane_home){NULL, slot};
            return index;
        }
    }
    wb->none_left = !holds;
    return -1;
}

/* A finished trajectory's record to its block: parked in its owned block, or handed to the other worker's */
static void deliver(merge_queue *q, lane_home home, trajectory_record *rec)
{
    const int offset = (int)(rec->index % NH_BLOCK_SIZE);
    if (home.owner) {
        home.owner->done[offset] = rec;
        home.owner->pending--;
        return;
    }
    omp_set_lock(&q->claim_lock);
    home.slot->stolen_records[offset] = rec;
    home.slot->stolen_done++;
    omp_unset_lock(&q->claim_lock);
}

/* A claimed trajectory that cannot run (no memory for its record): its block stops, and the run with it */
static void abandon_claim(merge_queue *q, lane_home home)
{
    omp_set_lock(&q->claim_lock);
    block_stats *slot = home.owner ? home.owner->slot : home.slot;
    slot->abandoned = 1;
    if (home.owner)
        home.owner->pending--;
    else
        slot->stolen_done++;
    q->out_of_memory = 1;
    omp_unset_lock(&q->claim_lock);
}

/* The record at the owned block's `offset` when it is finished (its own, or a helper's), taken out of the block,
 * else NULL; the block's claims end at the next offset when its record was abandoned or could not grow. */
static trajectory_record *take_record_at(merge_queue *q, owned_block *o, int offset)
{
    trajectory_record *rec = o->done[offset];
    if (!rec) {
        omp_set_lock(&q->claim_lock);
        rec = o->slot->stolen_records[offset];
        o->slot->stolen_records[offset] = NULL;
        omp_unset_lock(&q->claim_lock);
    }
    o->done[offset] = NULL;
    return rec;
}

/* Whether the owned block is finished: every record taken, or (abandoned) none of its claims still running */
static int block_finished(merge_queue *q, const owned_block *o)
{
    omp_set_lock(&q->claim_lock);
    block_stats *slot = o->slot;
    const int finished = o->next_take == o->count ||
                         (slot->abandoned && o->pending == 0 && slot->stolen_done == slot->stolen);
    if (finished)
        slot->running = 0;
    omp_unset_lock(&q->claim_lock);
    return finished;
}

/* The owned blocks' finished records into them in trajectory order, and each finished block published (the
 * merger merges it in turn); 1 when a record could not grow. */
static int take_records(const nh_run_config *cfg, merge_queue *q, worker_blocks *wb, nh_run_result *res)
{
    int out_of_memory = 0;
    for (int i = 0; i < wb->n_owned;) {
        owned_block *o = &wb->owned[i];
        trajectory_record *rec;
        while (o->next_take < o->count && (rec = take_record_at(q, o, o->next_take))) {
            nh_block_take_record(o->slot, rec, &res->sketch_layout, res->n_out);
            out_of_memory |= rec->out_of_memory;
            if (rec->abandoned || rec->out_of_memory) {
                omp_set_lock(&q->claim_lock);
                o->slot->abandoned = 1;
                omp_unset_lock(&q->claim_lock);
            }
            release_record(wb, rec);
            o->next_take++;
        }
        if (!block_finished(q, o)) {
            ++i;
            continue;
        }
        for (int offset = o->next_take; offset < o->count; ++offset)   /* an abandoned block's records after its prefix */
            if ((rec = take_record_at(q, o, offset)))
                release_record(wb, rec);
        const long b = o->b;
        memmove(o, o + 1, (size_t)(wb->n_owned - i - 1) * sizeof *o);
        wb->n_owned--;
        for (int l = 0; l < NH_MAX_LANES; ++l)   /* the lanes' owners moved with the list */
            if (wb->home[l].owner > o)
                wb->home[l].owner--;
        publish(cfg, q, b, res);
    }
    return out_of_memory;
}

/* Free lanes filled with claimed trajectories (a trajectory that finishes at its start is delivered at
 * once; one lane without a lane stepper runs each trajectory to its end); the trajectories claimed. */
static int fill_lanes(const nh_run_config *cfg, merge_queue *q, worker *w, worker_blocks *wb, nh_run_result *res)
{
    int claimed = 0;
    for (int l = 0; l < w->n_lanes; ++l) {
        if (w->lane[l].rec)
            continue;
        lane_home home;
        const long index = claim_for_lane(cfg, q, wb, res, &home);
        if (index < 0)
            break;
        ++claimed;
        trajectory_record *rec = record_for_lane(wb, res);
        if (!rec) {
            abandon_claim(q, home);
            break;
        }
        if (!w->lanes) {
            nh_trajectory_run(cfg, w, rec, index, res->n_steps);
            deliver(q, home, rec);
        } else if (nh_lane_start(cfg, w, l, rec, index, res->n_steps)) {
            wb->home[l] = home;
            wb->running++;
        } else {
            deliver(q, home, rec);
        }
    }
    return claimed;
}

/* The worker's trajectories until no block is left: lanes filled, advanced to their next events, finished
 * trajectories delivered, records taken into the owned blocks, finished blocks published. */
static void work_on_blocks(const nh_run_config *cfg, merge_queue *q, worker *w, nh_run_result *res)
{
    worker_blocks wb = {.max_owned = owned_blocks_for(w->n_lanes)};
    int out_of_memory = 0;
    for (;;) {
        const int claimed = fill_lanes(cfg, q, w, &wb, res);
        if (wb.running > 0) {
            int finished[NH_MAX_LANES];
            trajectory_record *records[NH_MAX_LANES];
            const int count = nh_lanes_advance(cfg, w, res->n_steps, finished, records);
            for (int i = 0; i < count; ++i)
                deliver(q, wb.home[finished[i]], records[i]);
            wb.running -= count;
        }
        out_of_memory |= take_records(cfg, q, &wb, res);
        if (wb.running == 0 && wb.n_owned == 0 && wb.none_left)
            break;
        if (wb.running == 0 && !claimed)
            pause_briefly();   /* the owned blocks wait for the records of helpers, or a slot for its merge */
    }
    for (int i = 0; i < wb.n_free; ++i)
        nh_record_delete(wb.free_records[i]);
    if (out_of_memory) {
#pragma omp atomic write
        q->out_of_memory = 1;
    }
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
    /* each worker's owned blocks and one finished block waiting for its merge */
    const int n_slots = cfg->threads * (owned_blocks_for(nh_run_lanes(cfg, res)) + 1);
    const long blocks = nh_run_block_count(cfg), chunks = nh_run_chunk_count(cfg);
    if (queue_init(&q, n_slots, nh_run_fit_groups_by_trajectory(cfg), (blocks + chunks - 1) / chunks, res, first, end,
                   err))
        return NH_ERR_NOMEM;
    const int rc = compute_blocks(cfg, &q, res, err);
    queue_free(&q);
    return rc;
}
