/* Shared by the ensemble driver's modules (not installed): run_validate.c (the configuration checked),
 * run_layout.c (steps, rows, blocks, chunks), trajectory.c (one trajectory into its record), merge.c
 * (records into blocks, blocks into chunks, chunks into the run, in order), schedule.c (the OpenMP
 * driver) and ensemble.c (the run's result). */
#ifndef NHENS_ENSEMBLE_INTERNAL_H
#define NHENS_ENSEMBLE_INTERNAL_H

#include <omp.h>
#include <stdint.h>

#include "nhens/ensemble.h"
#include "nhens/lanes.h"
#include "nhens/poincare.h"
#include "nhens/reference.h"
#include "run_result.h"

/* A section crossing of one trajectory: its latitude error at output row bin. */
typedef struct crossing {
    long bin;
    double value;
} crossing;

/* One trajectory's contribution, recorded while it runs and taken into its block in trajectory order
 * (nh_block_take_record): the observed values of its first `rows` output rows, its section crossings in
 * order, its failure, steps, solver work and seconds. */
typedef struct trajectory_record {
    long index;
    double *values;         /* n_out x observers */
    long rows;
    double final_state[2 * NH_MAX_DIM]; /* q, v at the last output row observed (the final state when rows = n_out) */
    crossing *crossings;
    long n_crossings, crossing_capacity;
    int failed, abandoned, out_of_memory;
    nh_failure failure;
    long steps;
    nh_solver_stats solver;
    double method_seconds, reference_seconds;
} trajectory_record;

typedef struct block_stats {
    const nh_run_result *run; /* the run's layout: observers, reductions, output times */
    nh_accum *acc;          /* n_out x observers */
    double *rows;           /* NH_BLOCK_SIZE trajectory rows (nh_run_trajectory_width) by offset, when reductions are
                               requested (else NULL) */
    long *live;             /* n_out */
    double *samples;        /* NH_BLOCK_SIZE x sketch rows x sketched observers, NAN where not recorded:
                               counted into the run's sketches when the block is merged */
    nh_failure failures[NH_BLOCK_SIZE];
    int n_failures;
    long steps;
    nh_solver_stats solver; /* this block's solves only, so an abandoned block leaves no trace */
    double method_seconds;  /* thread-seconds integrating its trajectories, the reference's excluded */
    double reference_seconds; /* thread-seconds in reference solutions (global error, section monodromy) */
    int abandoned;          /* interrupted before its last trajectory finished: never merged */
    double *trajectory_fits; /* NH_BLOCK_SIZE x n_out: each trajectory's fitted value, NAN where it is not live, when
                               the fit groups are trajectories (nh_run_fit_groups_by_trajectory); else NULL */
    /* Claims, under the run's claim lock: the block's worker takes its trajectories from the front; a worker
     * with no block left takes them from the back (the run's last blocks would otherwise finish on one
     * thread) and hands their records back here (stolen_records), and the block's worker takes every record
     * into the block in trajectory order once it is done. */
    long block;             /* the block the slot holds */
    int running, front, back, stolen, stolen_done;
    trajectory_record *stolen_records[NH_BLOCK_SIZE]; /* by offset in the block */
} block_stats;

/* A trajectory in a lane of the worker's lane stepper: its record, the steps it has taken and its values at
 * t = 0 (the observers' reference). */
typedef struct lane_trajectory {
    trajectory_record *rec;
    long index;
    long k;
    nh_initial_values init;
    nh_section_tracker section; /* the latitude's, when it is recorded */
} lane_trajectory;

/* A thread's means of integrating trajectories: its stepper (which starts every trajectory), its lane stepper
 * when the run's trajectories go through lanes, its reference and the record it fills. */
typedef struct worker {
    nh_stepper *stepper;
    nh_lane_stepper *lanes;     /* NULL: one trajectory at a time (nh_run_lanes gives 1) */
    int n_lanes;                /* 1, or the lane stepper's lanes */
    lane_trajectory lane[NH_MAX_LANES]; /* the trajectory in each lane (rec NULL: the lane is free) */
    double *lane_before;        /* n_lanes x 2n: each lane's (q, v) before a step (the section crossing test) */
    double *lane_values;        /* n_lanes x observers: each lane's values there */
    double *paths;              /* the run's sample paths (each trajectory writes only its own rows) */
    long n_paths, n_out;
    trajectory_record *rec;     /* the record of the trajectory being computed */
    double carried[NH_MAX_UNKNOWNS];
    unsigned observer_mask;     /* the run's: which observers are recorded */
    const nh_observer_table *observers; /* the run's */
    unsigned observers_applying; /* those of them that apply to the run's system (nh_observer_mask) */
    nh_reference_tracker *reference; /* when the global-error observer is recorded, else NULL */
} worker;

/* Finished blocks wait in slots (block b in slot b % n_slots) until every block before them is merged.
 * One thread at a time is the merger: it merges every ready block that continues the prefix, in order,
 * outside the lock; a thread that finishes a block while another merges leaves it to that merger and
 * goes back to work. Workers never wait for a merge; a worker that holds nothing waits (rarely) for a slot,
 * when a block is slower than all the others in the slots; one that holds a block or a running lane takes
 * other work instead. The locks are the run's own, so runs in one process never wait for each other. */
typedef struct merge_queue {
    omp_lock_t merge_lock;      /* ready, stopped, merging, next */
    omp_lock_t claim_lock;      /* next_claim, starting and the slots' claims */
    block_stats *slots;
    long *ready;                /* block whose results a slot holds, or -1 */
    int n_slots;
    int stopped;                /* an abandoned block ended the prefix: nothing after it is merged */
    int merging;                /* a thread is merging blocks (it looks for ready ones before it stops) */
    long next;                  /* the next block to merge (into chunk); set once its merge is done */
    long next_claim;            /* the next block a worker takes */
    int starting;               /* blocks taken whose trajectories are not handed out yet */
    long end;                   /* one past the last block to compute */
    int out_of_memory;          /* a record could not grow: the run stops with NH_ERR_NOMEM */
    nh_run_result chunk;        /* the blocks merged so far of the chunk holding block `next` (not its sketches:) */
    uint16_t *chunk_bins;       /* its sketch samples' bins, block after block (merge.c), for the largest chunk */
    double *trajectory_fits;    /* the chunk's (one block's) trajectory_fits when the fit groups are trajectories, else NULL */
} merge_queue;

/* run_layout.c: the whole steps from 0 to T; the lanes the run's workers use (nh_run_lanes, ensemble.h). */
long nh_run_step_count(const nh_run_config *cfg);

/* ensemble.c: the arrays of a result of n_out output rows (time, live, acc, groups, paths, sketch) for
 * res->n_paths paths and res->sketch_layout; NH_ERR_NOMEM when one is missing (nh_run_result_clear
 * releases those that are not). */
int nh_run_result_alloc(nh_run_result *res, long n_out);

/* trajectory.c: a worker for cfg's run (its stepper, its reference when the global error is recorded),
 * and its release; trajectory `index` into rec, timed, with its solver work (abandoned at once when the
 * run is interrupted); a record for n_out rows on the heap (NULL when out of memory), and its release. */
int nh_worker_init(worker *w, const nh_run_config *cfg, nh_run_result *res, nh_error *err);
void nh_worker_free(worker *w);
void nh_trajectory_run(const nh_run_config *cfg, worker *w, trajectory_record *rec, long index, long n_steps);
/* Lanes (w->lanes set): trajectory `index` started into free lane `lane` with record rec (1), or finished at its
 * start (0: failed at t = 0 or abandoned, rec complete); every running lane advanced to its next output row,
 * end or failure, its values recorded: the lanes whose trajectories finished (lanes free) into finished and
 * their complete records into records, their count returned. An interruption finishes every running lane, abandoned. */
int nh_lane_start(const nh_run_config *cfg, worker *w, int lane, trajectory_record *rec, long index, long n_steps);
int nh_lanes_advance(const nh_run_config *cfg, worker *w, long n_steps, int *finished, trajectory_record **records);
trajectory_record *nh_record_new(long n_out, int n_observers);
void nh_record_delete(trajectory_record *rec);

/* reduce.c: a finished trajectory's row (nh_run_trajectory_width doubles) from its record. */
void nh_trajectory_row(const nh_run_result *run, const trajectory_record *rec, double *row);
/* The run's observers (the built-ins and cfg->registry's plugin observers), *mask those it records (selected by
 * cfg->observe and applying to the system); NULL with err when refused. cfg->reduce parsed against them into
 * *out (malloc'ed, n columns; NULL when none). */
nh_observer_table *nh_run_observer_table(const nh_run_config *cfg, unsigned *mask, nh_error *err);
int nh_run_reductions(const nh_run_config *cfg, const nh_observer_table *t, unsigned mask, nh_reduction **out,
                      int *n, nh_error *err);

/* merge.c: an empty block; a record into its block, after those of the block's earlier trajectories;
 * block b, the next in order, into the queue's chunk and a finished chunk into res (by the merger only). */
long nh_block_sample_count(const nh_sketch_layout *sl);
void nh_block_reset(block_stats *b, long n_out, const nh_sketch_layout *sl);
void nh_block_take_record(block_stats *b, const trajectory_record *rec, const nh_sketch_layout *sl, long n_out);
void nh_merge_next_block(const nh_run_config *cfg, merge_queue *q, long b, const block_stats *blk, nh_run_result *res);

/* schedule.c: blocks [first, end) over cfg->threads threads, merged in order into res; 0, or the error. */
int nh_schedule_blocks(const nh_run_config *cfg, nh_run_result *res, long first, long end, nh_error *err);

#endif
