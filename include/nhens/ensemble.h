/* Ensemble runs: energy-shell sampling and the OpenMP driver. The engine is the only place that
 * knows about threads and ranks. Trajectory i draws from its own PCG stream (seed, i); trajectories
 * are grouped in fixed blocks of NH_BLOCK_SIZE, blocks in at most NH_MERGE_CHUNKS fixed chunks of
 * consecutive blocks. Each block's Welford accumulators are merged in block order into its chunk's,
 * and the chunks' in chunk order into the run's, so every output is bitwise identical for any number
 * of threads, and a run computed in shards (chunk ranges, each kept unmerged as a partial result)
 * merges to the same bits: the merge tree does not depend on who computed what. Idle workers take
 * trajectories from the back of running blocks; the block adds their records after its own in
 * trajectory order, which changes no bit.
 * A trajectory whose step fails is recorded (index, time, reason) and contributes no sample from
 * the failing output time on; n_live counts the trajectories in each output time's statistics. */
#ifndef NHENS_ENSEMBLE_H
#define NHENS_ENSEMBLE_H

#include <stdint.h>

#include "nhens/lanes.h"
#include "nhens/method.h"
#include "nhens/stats.h"
#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum { NH_BLOCK_SIZE = 8, NH_MAX_REPORTED_FAILURES = 16, NH_SAMPLE_MAX_TRIES = 100000, NH_INTERRUPT_POLL_STEPS = 1024,
       NH_MAX_OUTPUT_ROWS = 1000000, /* output times of a run: memory is ~0.5 kB per row and thread */
       NH_MAX_PATHS = 64,
       NH_MERGE_CHUNKS = 256 /* at most this many chunks, so at most this many shards or MPI ranks */ };


/* Energy-shell sampler: q from the system's configuration distribution (rejecting V(q) >= E),
 * v a Gaussian vector projected M-orthogonally onto ker A(q), scaled so that H(q, v) = E. */
int nh_energy_shell_check(const nh_system *s, double energy, nh_error *err);
int nh_energy_shell_sample(const nh_system *s, double energy, nh_pcg32 *rng, double *q, double *v);
/* Checks the user's initial states (rows of q, v; n = s->n): finite, V defined, and |A(q) v| at most
 * NH_INITIAL_TOLERANCE (1 + |v|); a row off D_q is refused by its number (1-based) unless `project`, which
 * replaces v by its M-orthogonal projection onto D_q (the states are then changed in place). */
#define NH_INITIAL_TOLERANCE 1e-10
int nh_initial_states_check(const nh_system *s, double *states, long rows, int project, nh_error *err);
/* A state preset against D_q at s's parameters, as nh_initial_states_check checks a row: V(q) and H(q, v)
 * finite, and |A(q) v| at most NH_INITIAL_TOLERANCE (1 + |v|), else refused with a message naming the preset
 * and the residual unless `project` (nh_preset_state then projects v onto D_q, as it does every preset's
 * round-off). An energy shell passes. */
int nh_preset_check(const nh_system *s, const nh_preset *p, int project, nh_error *err);
/* The preset's state perturbed as nh_run_config.perturb says, for stream rng. */
int nh_perturbed_state(const nh_system *s, const nh_preset *p, double eps, nh_pcg32 *rng, double *q, double *v);
/* Preset state with v projected onto D_q (printed values are rounded); *change = |v_new - v|. */
int nh_preset_state(const nh_system *s, const nh_preset *p, double *q, double *v, double *change);

/* A run's result: an opaque handle (nh_run_result_create), filled by nh_run_ensemble and read with the getters of
 * nhens/output.h (the tables' columns by name, the run's scalars by summary.json's names). */
typedef struct nh_run_result nh_run_result;

typedef struct nh_run_config {
    const nh_system *system;
    nh_method_spec method;
    nh_solver_kind solver;
    double h;
    double T;
    long every;                 /* output every `every` steps (> 0) */
    long ensemble;
    uint64_t seed;
    int threads;
    /* Trajectories each thread steps in lockstep in SIMD lanes (nhens/lanes.h): 0 the CPU's default
     * (nh_lanes_default), 1 one at a time, up to NH_MAX_LANES; nh_run_lanes says which count a run uses.
     * Results do not depend on it. */
    int lanes;
    const nh_preset *preset;    /* one initial state; NULL: sample the energy shell `energy` */
    int project;                /* a preset's velocity off D_q is projected onto it; 0: refused (nh_preset_check) */
    const nh_preset *shell_preset; /* the energy-shell preset `energy` came from, for reports (or NULL) */
    double energy;
    /* The user's own initial states: n_initial rows of (q_1..q_n, v_1..v_n), trajectory i starts at row i
     * (ensemble = n_initial; v on D_q: see nh_initial_states_check). initial_name names them in summary.json. */
    const double *initial_states;
    long n_initial;
    const char *initial_name;
    /* > 0 with a state preset: trajectory i starts at the preset moved by perturb * N(0, I) in q and in v
     * (stream (seed, i)), v projected onto D_q and rescaled to the preset's energy; the ensemble may exceed 1. */
    double perturb;
    /* time integrated (whole steps of h) before t = 0: the initial values H(0), the driver energy and the
     * section start are taken after it, and nothing before it is recorded. */
    double burn_in;
    double fit_window_start;    /* fraction of T where the variance fit starts, in [0, 1): 0.1 from nh_run_config_init
                                   (after the bounded part has settled); 0 fits from t = 0, transient included */
    double section;             /* driver section angle for the latitude; NAN (or 0 with !have_section): xi(0) */
    int have_section;
    const char *observe;        /* comma-separated observer names to record; NULL: all that apply */
    const nh_registry *registry; /* the plugins' observers it holds are recorded too (NULL: the built-in ones) */
    const char *reduce;         /* per-trajectory reductions (nh_reductions_parse); NULL or "": none */
    long paths;                 /* record every observed value of the first `paths` trajectories (0..NH_MAX_PATHS) */
    void (*progress)(long done, long total, void *ctx);
    void *progress_ctx;
    /* Polled by the workers (every block and every NH_INTERRUPT_POLL_STEPS steps); non-zero: stop handing
     * out blocks, abandon the blocks in flight, keep the merged prefix (the scalar "complete" is 0). NULL: never. */
    int (*interrupted)(void *ctx);
    /* A shard of the run: shards > 0 computes chunk range shard of shards (0 <= shard < shards <= chunks) and
     * keeps each chunk's statistics apart in res, a partial result for nh_partial_merge; 0: the whole run. */
    long shard, shards;
    /* Called in chunk order after each chunk's merge with the merged prefix of next_block blocks (checkpoints;
     * not for shards). */
    void (*merged)(const nh_run_result *partial, long next_block, void *ctx);
    void *hook_ctx;             /* passed to interrupted and merged */
} nh_run_config;

/* Per-trajectory reductions: a row per trajectory (DIR/trajectories.csv) of its index, whether and when it
 * failed and with what status, then a column per reduction, each read at the output rows (the values the
 * statistics read): the final state q_1..q_n, v_1..v_n at T (NAN for a failed trajectory; angles and ignorable
 * coordinates as the run keeps them, within [-2 pi, 2 pi]), the maximum or minimum of an observer (or of its
 * absolute value) over the rows the trajectory reached, and the first output time at which a condition on an
 * observer holds (NAN when it never does). */
typedef enum nh_reduction_kind {
    NH_REDUCE_FINAL_Q, NH_REDUCE_FINAL_V, NH_REDUCE_MAX, NH_REDUCE_MIN, NH_REDUCE_FIRST
} nh_reduction_kind;
typedef enum nh_reduction_test { NH_TEST_BELOW, NH_TEST_AT_MOST, NH_TEST_ABOVE, NH_TEST_AT_LEAST } nh_reduction_test;
typedef struct nh_reduction {
    nh_reduction_kind kind;
    int index;                  /* the entry of the state (q_1..q_n, v_1..v_n: FINAL_Q i, FINAL_V n + i), or the
                                   observer's row (the others) */
    int absolute;               /* of |value| */
    nh_reduction_test test;     /* FIRST: value < threshold, <=, >, >= */
    double threshold;
    char name[80];              /* the column's name: q_1, max:dH, first:|dH|>1e-3 */
} nh_reduction;
/* Columns of a trajectory row before its reductions: trajectory, failed, failure_time, failure_status. */
enum { NH_TRAJECTORY_FIXED_COLUMNS = 4, NH_MAX_REDUCTIONS = 256 };
/* The comma-separated terms of `text` (final, max:OBS, min:OBS, first:OBS<X, first:OBS<=X, first:OBS>X,
 * first:OBS>=X; OBS an observer of the table recorded in `mask` (no event observer), |OBS| its absolute value,
 * a plugin observer's name all its components) into out (at most NH_MAX_REDUCTIONS columns); the message
 * names the bad term and the allowed forms. */
int nh_reductions_parse(const nh_observer_table *t, unsigned mask, int n, const char *text, nh_reduction *out,
                        int *n_out, nh_error *err);

/* The observers of reg's plugins after the built-in ones (reg NULL: the built-ins), as a run records them
 * (nh_observer_table_create); NULL with err when a name clashes or there are too many. */
nh_observer_table *nh_registry_observer_table(const nh_registry *reg, nh_error *err);

typedef struct nh_failure {
    long trajectory;
    double time;
    int status;
} nh_failure;

/* One MPI rank's share of a run: the wall seconds of its shard and the steps of its finished chunks. */
typedef struct nh_rank_timing {
    double wall_seconds;
    long steps;
} nh_rank_timing;

/* The defaults of `nhens run`, the one source of them for the library and the program: solver KINSOL, every 1
 * (nh_run_default_every gives the program's ~1000 rows), ensemble 100, seed 1, threads the online cores,
 * fit_window_start 0.1, no section (NAN), every observer that applies (observe NULL), no paths, preset, initial
 * states, perturbation, burn-in, shards or hooks. The caller sets system, method, h, T and where the states
 * come from (energy, nh_run_config_use_preset or initial_states). */
void nh_run_config_init(nh_run_config *cfg);
/* The output interval of about NH_DEFAULT_OUTPUT_ROWS rows for cfg->h and cfg->T: steps / 1000, at least 1. */
enum { NH_DEFAULT_OUTPUT_ROWS = 1000 };
long nh_run_default_every(const nh_run_config *cfg);

/* Start from a preset: one initial state (cfg->preset) or, for a shell preset, its energy shell
 * (cfg->energy, with cfg->shell_preset kept for reports). NULL leaves the configuration unchanged. */
void nh_run_config_use_preset(nh_run_config *cfg, const nh_preset *preset);

/* The lanes a run's threads use: cfg->lanes (0: nh_lanes_default()) when a lane kernel serves its method,
 * system and solver (nh_lane_kernel_exists: an implicit method's with the built-in Newton only) and it does not record the global error, whose CVODE reference
 * follows one trajectory at a time, halved while the lanes' trajectory records (every output row's values)
 * would exceed 256 MiB per thread; else 1. A run that records the latitude steps its lanes one step at a time,
 * each followed by the section crossing test. */
int nh_run_lanes(const nh_run_config *cfg, const nh_run_result *res);

/* Checks every field and the method/system pairing; the message names the bad value. */
int nh_run_validate(const nh_run_config *cfg, nh_error *err);
/* An empty result for nh_run_ensemble (or nh_run_result_init); NULL without memory. nh_run_result_free frees
 * the handle and everything it holds (NULL: nothing); nh_run_result_clear frees what it holds and leaves it
 * empty, ready for another run (a run into a result that is not empty leaks what it held). */
nh_run_result *nh_run_result_create(void);
void nh_run_result_free(nh_run_result *res);
void nh_run_result_clear(nh_run_result *res);
/* Runs the ensemble on cfg->threads OpenMP threads into the empty result res. Its locks are
 * its own: runs into distinct results may execute at once from threads of one process, each giving the bits
 * it gives alone. */
int nh_run_ensemble(const nh_run_config *cfg, nh_run_result *res, nh_error *err);
/* Allocates an empty result for cfg (n_steps, n_out, output times, observer mask): what a resumed run
 * restores its merged statistics into. */
int nh_run_result_init(const nh_run_config *cfg, nh_run_result *res, nh_error *err);
/* Continues a run whose first blocks are merged into res (from nh_run_result_init and a checkpoint); the
 * result is bitwise the one of an uninterrupted nh_run_ensemble. */
int nh_run_ensemble_continue(const nh_run_config *cfg, nh_run_result *res, nh_error *err);
/* Output rows: every cfg->every steps from step 0, and the last step when every does not divide the
 * step count (the final time is always written); nh_run_output_step gives the step of row k. */
long nh_run_output_rows(const nh_run_config *cfg);
long nh_run_output_step(const nh_run_config *cfg, long row);
/* Number of blocks of NH_BLOCK_SIZE trajectories in the run. */
long nh_run_block_count(const nh_run_config *cfg);
/* Trajectories in the blocks before `block` (the index of its first trajectory, at most the ensemble). */
long nh_run_trajectories_before(const nh_run_config *cfg, long block);
/* Chunks: min(blocks, NH_MERGE_CHUNKS); chunk c holds blocks [c B / C, (c + 1) B / C). */
long nh_run_chunk_count(const nh_run_config *cfg);
long nh_run_chunk_first_block(const nh_run_config *cfg, long chunk);
long nh_run_chunk_of_block(const nh_run_config *cfg, long block);
/* Whether a merged prefix may end before `block` (the first block of a chunk, or the end of the run). */
int nh_run_is_chunk_boundary(const nh_run_config *cfg, long block);
/* The chunks of cfg's shard (all of them for a whole run). */
void nh_run_shard_chunks(const nh_run_config *cfg, long *first, long *count);
/* Whether the jackknife groups of the variance fit are trajectories (trajectory i in group i mod
 * NH_FIT_GROUPS: runs of fewer than NH_FIT_GROUPS chunks, each chunk one block) rather than chunks (chunk c
 * in group c mod NH_FIT_GROUPS). A function of the ensemble size only, so threads, ranks and shards agree. */
int nh_run_fit_groups_by_trajectory(const nh_run_config *cfg);
/* The derived results of merged statistics: the variance fit and its jackknife errors, steps/s. */
void nh_run_result_finish(const nh_run_config *cfg, nh_run_result *res);

/* Thread-nanoseconds per step of the method (method_seconds / completed_steps; NAN before any step). */
double nh_run_ns_per_step(const nh_run_result *res);

/* max |value| of observer `obs` over all output times; NAN when it has no value at any. */
double nh_run_observer_max(const nh_run_result *res, int obs);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
