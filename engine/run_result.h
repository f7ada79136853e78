/* The layout of a run's result (nh_run_result, opaque in the public headers): what the engine fills and the
 * program reads directly. Library-private: not installed; users and Python read a result through its getters
 * (nhens/output.h: the tables' columns by name, the run's scalars by summary.json's names). The program, which
 * is built with the library, includes it too (CMakeLists.txt, nhens_cli_objects); the functions declared here
 * are internal to the engine (hidden in libnhens.so). */
#ifndef NHENS_RUN_RESULT_H
#define NHENS_RUN_RESULT_H

#include "nhens/ensemble.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a chunk contributes in merge order (everything else adds): its accumulators, n_out x observers,
 * its first failures and, when the fit groups are trajectories, its trajectory_fits. */
typedef struct nh_chunk_stats {
    nh_accum *acc;
    double *trajectory_fits;          /* NH_BLOCK_SIZE x n_out: the fitted value of each trajectory of the chunk (one block),
                               NAN where it is not live; NULL unless nh_run_fit_groups_by_trajectory */
    nh_failure first_failures[NH_MAX_REPORTED_FAILURES];
    int n_reported;
} nh_chunk_stats;

/* Which output times and observers carry a quantile sketch: output index k = row * stride (rows of
 * them, at most NH_SKETCH_MAX_ROWS), observer[j] for j < n (the table's sketched observers). */
enum { NH_SKETCH_MAX_ROWS = 1000 };
typedef struct nh_sketch_layout {
    long rows, stride;
    int n;
    int observer[NH_MAX_OBSERVERS];
} nh_sketch_layout;

struct nh_run_result {
    long n_steps, n_out;
    long ensemble;                  /* cfg->ensemble of the run (the whole run's, also in a shard) */
    nh_observer_table *observers;   /* the run's (the built-ins' and cfg->registry's plugin observers), owned */
    int n_observers;                /* nh_observer_count(observers): the stride of acc and paths */
    nh_reduction *reductions;       /* the columns of the trajectory rows (n_reductions; NULL when none) */
    int n_reductions;
    /* A row of NH_TRAJECTORY_FIXED_COLUMNS + n_reductions doubles per trajectory of the result's chunks, from
     * trajectory rows_first on (rows_count of them; those before trajectories_done are results); NULL when no
     * reduction is requested. */
    double *trajectory_rows;
    long rows_first, rows_count;
    double *time;           /* n_out */
    long *live;             /* n_out */
    nh_accum *acc;          /* n_out x n_observers */
    nh_accum *groups;       /* NH_FIT_GROUPS x n_out: the fitted observer per jackknife group (fit errors; see
                               nh_run_fit_groups_by_trajectory) */
    double *paths;          /* paths x n_out x n_observers: the values of trajectory i at output k
                               (NAN after it failed, for event observers, and for trajectories not done) */
    long n_paths;
    nh_sketch_layout sketch_layout;
    nh_sketch *sketch;      /* rows x n: the distribution of each sketched observer at its output times */
    long failed;
    long failures_by_status[8];
    nh_failure first_failures[NH_MAX_REPORTED_FAILURES];
    int n_reported;
    long completed_steps;
    double method_seconds;      /* thread-seconds integrating trajectories (sampling and observers included, the
                                   reference solutions excluded): the cost of the method, summed over threads */
    double reference_seconds;   /* thread-seconds in CVODE reference solutions: the global-error observer's and
                                   the latitude's driver monodromy at each trajectory's start */
    double wall_seconds;
    double steps_per_second;
    nh_variance_fit fit;
    int fit_ok;
    nh_solver_stats solver;
    double preset_projection;
    unsigned observer_mask;     /* nh_observer_mask of the system: the columns written */
    double variance_scale;      /* h^(2r) for order r: dH_var / this is Fig. 2's scaling in Celledoni et al. 2019 */
    long trajectories_done;     /* trajectories in the statistics: the first blocks, in order */
    long next_block;            /* blocks merged so far (a chunk boundary) */
    int complete;               /* every trajectory done (0 after an interruption) */
    long first_chunk, n_chunks; /* the chunks this result computes: all, or a shard's */
    nh_chunk_stats *chunks;     /* a shard's chunks, unmerged (n_chunks of them); NULL for a whole run */
    int ranks;                  /* MPI ranks of the run (nhens/ranks.h); 0 for one process */
    nh_rank_timing *rank_timing; /* ranks entries: each rank's wall seconds and steps; NULL for one process */
};

/* Chunk `chunk`'s ordered part into res (the next chunk in order: accumulators, fit groups, failures);
 * trajectory_fits: the chunk's trajectory_fits (nh_chunk_stats) when the fit groups are trajectories, else NULL. */
void nh_run_merge_ordered(nh_run_result *res, long chunk, const nh_accum *acc, const double *trajectory_fits,
                          const nh_failure *failures, int n_failures);
/* The order-free part of `from` into res: live counts, sketches, failure and step and solver counts. */
void nh_run_merge_counts(nh_run_result *res, const nh_run_result *from);

/* Doubles per trajectory row, and the row of trajectory i (rows_first <= i < rows_first + rows_count). */
static inline int nh_run_trajectory_width(const nh_run_result *res)
{
    return NH_TRAJECTORY_FIXED_COLUMNS + res->n_reductions;
}
static inline const double *nh_run_trajectory_row(const nh_run_result *res, long i)
{
    return res->trajectory_rows + (i - res->rows_first) * nh_run_trajectory_width(res);
}

/* Value of observer `obs` on sample path i at output index k (i < res->n_paths). */
static inline double nh_run_path(const nh_run_result *res, long i, long k, int obs)
{
    return res->paths[(i * res->n_out + k) * res->n_observers + obs];
}

/* Sketch of the layout's observer j at sketch row `row` (output index row * stride). */
static inline const nh_sketch *nh_run_sketch(const nh_run_result *res, long row, int j)
{
    return &res->sketch[row * res->sketch_layout.n + j];
}

/* Accumulator of observer `obs` at output index k. */
static inline const nh_accum *nh_run_accum(const nh_run_result *res, long k, int obs)
{
    return &res->acc[k * res->n_observers + obs];
}

#ifdef __cplusplus
}
#endif

#endif
