/* The OpenMP ensemble driver: owns the time loop, output times, failure policy and the fixed-order
 * merge of block statistics (see include/nhens/ensemble.h). */
#include "nhens/ensemble.h"
#include "nhens/linalg.h"
#include "nhens/poincare.h"
#include "nhens/reference.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A section crossing of one trajectory: its latitude error at output row bin. */
typedef struct crossing {
    long bin;
    double value;
} crossing;

/* One trajectory's contribution, recorded while it runs and taken into its block in trajectory order
 * (take_record): the observed values of its first `rows` output rows, its section crossings in order,
 * its failure, steps, solver work and seconds. */
typedef struct trajectory_record {
    long index;
    double *values;         /* n_out x observers */
    long rows;
    crossing *crossings;
    long n_crossings, crossing_capacity;
    int failed, abandoned, out_of_memory;
    nh_failure failure;
    long steps;
    nh_solver_stats solver;
    double method_seconds, reference_seconds;
} trajectory_record;

typedef struct block_stats {
    nh_accum *acc;          /* n_out x observers */
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
    double *lanes;          /* NH_BLOCK_SIZE x n_out: each trajectory's fitted value, NAN where it is not live, when
                               the fit groups are trajectories (nh_run_fit_groups_by_trajectory); else NULL */
    /* Claims, under critical(nh_claim): the block's worker takes its trajectories from the front and
     * computes them straight into the block; a worker with no block left takes them from the back
     * (the run's last blocks would otherwise finish on one thread) into records of its own, which the
     * block's worker takes in trajectory order once they are done. */
    long block;             /* the block the slot holds */
    int running, front, back, stolen, stolen_done;
    trajectory_record *stolen_records[NH_BLOCK_SIZE]; /* by offset in the block */
} block_stats;

typedef struct worker {
    nh_stepper *stepper;
    double *paths;              /* the run's sample paths (each trajectory writes only its own rows) */
    long n_paths, n_out;
    trajectory_record own;      /* the record of the worker's own block's trajectories */
    trajectory_record *rec;     /* the record of the trajectory being computed */
    double carried[NH_MAX_UNKNOWNS];
    unsigned observer_mask;     /* the run's: which observers are recorded */
    nh_reference_tracker *reference; /* when the global-error observer is recorded, else NULL */
} worker;

/* Finished blocks wait in slots (block b in slot b % n_slots) until every block before them is merged.
 * One thread at a time is the merger: it merges every ready block that continues the prefix, in order,
 * outside the lock; a thread that finishes a block while another merges leaves it to that merger and
 * goes back to work. Workers never wait for a merge, only (rarely) for a slot, when a block is slower
 * than 2 x threads others. */
typedef struct merge_queue {
    block_stats *slots;
    long *ready;                /* block whose results a slot holds, or -1 */
    int n_slots;
    int stopped;                /* an abandoned block ended the prefix: nothing after it is merged */
    int merging;                /* a thread is merging blocks (it looks for ready ones before it stops) */
    long next;                  /* the next block to merge (into chunk); set once its merge is done */
    long next_claim;            /* the next block a worker takes (critical nh_claim) */
    int starting;               /* blocks taken whose trajectories are not handed out yet (critical nh_claim) */
    long end;                   /* one past the last block to compute */
    int out_of_memory;          /* a record could not grow: the run stops with NH_ERR_NOMEM */
    nh_run_result chunk;        /* the blocks merged so far of the chunk holding block `next` */
    double *lanes;              /* the chunk's (one block's) lanes when the fit groups are trajectories, else NULL */
} merge_queue;

static int interrupted(const nh_run_config *cfg)
{
    return cfg->interrupted && cfg->interrupted(cfg->hook_ctx);
}

long nh_run_trajectories_before(const nh_run_config *cfg, long block)
{
    return block * NH_BLOCK_SIZE < cfg->ensemble ? block * NH_BLOCK_SIZE : cfg->ensemble;
}

static long step_count(const nh_run_config *cfg)
{
    return (long)floor(cfg->T / cfg->h + 1e-9);
}

long nh_run_output_rows(const nh_run_config *cfg)
{
    const long n_steps = step_count(cfg);
    return n_steps / cfg->every + 1 + (n_steps % cfg->every != 0);
}

long nh_run_output_step(const nh_run_config *cfg, long row)
{
    const long n_steps = step_count(cfg);
    return row * cfg->every < n_steps ? row * cfg->every : n_steps;
}

/* The output row step k is recorded in, or -1 for a step between rows. */
static long output_row(const nh_run_config *cfg, long k, long n_steps)
{
    if (k % cfg->every == 0)
        return k / cfg->every;
    return k == n_steps ? n_steps / cfg->every + 1 : -1;
}

void nh_run_config_use_preset(nh_run_config *cfg, const nh_preset *preset)
{
    if (!preset)
        return;
    if (nh_preset_is_shell(preset)) {
        cfg->preset = NULL;
        cfg->shell_preset = preset;
        cfg->energy = preset->shell_energy;
    } else {
        cfg->preset = preset;
    }
}

/* The initial-state options: user states, perturbation and burn-in. */
static int validate_initial(const nh_run_config *cfg, nh_error *err)
{
    if (cfg->initial_states && (cfg->preset || cfg->n_initial != cfg->ensemble || cfg->n_initial < 1))
        return nh_fail(err, NH_ERR_INPUT, "%ld initial states for an ensemble of %ld%s: the ensemble is the states' "
                       "rows, without a preset", cfg->n_initial, cfg->ensemble, cfg->preset ? " and a preset" : "");
    if (!(cfg->perturb >= 0.0 && cfg->perturb <= 1e3))
        return nh_fail(err, NH_ERR_INPUT, "perturbation %g must be in [0, 1000]", cfg->perturb);
    if (cfg->perturb > 0 && !cfg->preset)
        return nh_fail(err, NH_ERR_INPUT, "perturbation %g needs a preset initial state to perturb (--preset P of a "
                       "state, not of an energy shell)", cfg->perturb);
    const double steps = cfg->burn_in / cfg->h;
    if (!(cfg->burn_in >= 0.0 && steps <= 2e9))
        return nh_fail(err, NH_ERR_INPUT, "burn-in %g must be >= 0 and at most 2e9 steps h=%g", cfg->burn_in, cfg->h);
    if (fabs(steps - nearbyint(steps)) > 1e-9 * steps)
        return nh_fail(err, NH_ERR_INPUT, "burn-in %g is not a whole number of steps h=%g (use %.10g or %.10g)",
                       cfg->burn_in, cfg->h, floor(steps) * cfg->h, ceil(steps) * cfg->h);
    return NH_OK;
}

int nh_run_validate(const nh_run_config *cfg, nh_error *err)
{
    int rc;
    if (!(cfg->h > 0.0) || !isfinite(cfg->h))
        return nh_fail(err, NH_ERR_INPUT, "step size h=%g must be a finite number > 0", cfg->h);
    if (!(cfg->T >= cfg->h) || !isfinite(cfg->T))
        return nh_fail(err, NH_ERR_INPUT, "horizon T=%g must be finite and at least the step size h=%g", cfg->T, cfg->h);
    const double steps = cfg->T / cfg->h;
    if (steps <= 2e9 && fabs(steps - nearbyint(steps)) > 1e-9 * steps)
        return nh_fail(err, NH_ERR_INPUT,
                       "horizon T=%g is not a whole number of steps h=%g (T/h = %.6g); use T=%.10g or T=%.10g", cfg->T,
                       cfg->h, steps, floor(steps) * cfg->h, ceil(steps) * cfg->h);
    if (!(steps <= 2e9)) /* before any conversion to an integer */
        return nh_fail(err, NH_ERR_INPUT, "T/h = %g steps is more than the allowed 2e9", steps);
    if (cfg->ensemble < 1)
        return nh_fail(err, NH_ERR_INPUT, "ensemble size N=%ld must be at least 1", cfg->ensemble);
    if (cfg->every < 1)
        return nh_fail(err, NH_ERR_INPUT, "output interval every=%ld must be at least 1 step", cfg->every);
    if (nh_run_output_rows(cfg) > NH_MAX_OUTPUT_ROWS)
        return nh_fail(err, NH_ERR_INPUT, "output every %ld steps of %ld gives %ld rows; at most %d are allowed (raise "
                       "every)", cfg->every, step_count(cfg), nh_run_output_rows(cfg), NH_MAX_OUTPUT_ROWS);
    if (cfg->paths < 0 || cfg->paths > NH_MAX_PATHS || cfg->paths > cfg->ensemble)
        return nh_fail(err, NH_ERR_INPUT, "sample paths=%ld must be in [0, %d] and at most the ensemble size %ld",
                       cfg->paths, NH_MAX_PATHS, cfg->ensemble);
    if (cfg->shards < 0 || cfg->shards > nh_run_chunk_count(cfg) || (cfg->shards > 0 && (cfg->shard < 0 || cfg->shard >= cfg->shards)))
        return nh_fail(err, NH_ERR_INPUT,
                       "shard %ld of %ld: the ensemble of %ld trajectories has %ld chunks of blocks, so at most %ld "
                       "shards, numbered 1 to the shard count", cfg->shard + 1, cfg->shards, cfg->ensemble,
                       nh_run_chunk_count(cfg), nh_run_chunk_count(cfg));
    if (cfg->threads < 1 || cfg->threads > 1024)
        return nh_fail(err, NH_ERR_INPUT, "threads=%d must be in [1, 1024]", cfg->threads);
    if (!(cfg->fit_window_start >= 0.0 && cfg->fit_window_start < 1.0))
        return nh_fail(err, NH_ERR_INPUT, "fit window start %g must be a fraction of T in [0, 1)", cfg->fit_window_start);
    if (cfg->preset && nh_preset_is_shell(cfg->preset))
        return nh_fail(err, NH_ERR_INPUT, "preset %s is an energy shell, not an initial state", cfg->preset->name);
    if (cfg->preset && cfg->ensemble != 1 && !(cfg->perturb > 0))
        return nh_fail(err, NH_ERR_INPUT,
                       "a preset is one initial condition, so the ensemble size must be 1 (got %ld); "
                       "use --energy for ensembles, or --perturb EPS for an ensemble around the preset",
                       cfg->ensemble);
    rc = validate_initial(cfg, err);
    if (rc)
        return rc;
    unsigned selected;
    rc = nh_observer_select(cfg->observe, &selected, err);
    if (!rc)
        rc = nh_method_spec_check(&cfg->method, cfg->system, err);
    if (rc)
        return rc;
    return cfg->preset || cfg->initial_states ? NH_OK : nh_energy_shell_check(cfg->system, cfg->energy, err);
}

static int result_alloc(nh_run_result *res, long n_out)
{
    res->time = calloc((size_t)n_out, sizeof *res->time);
    res->live = calloc((size_t)n_out, sizeof *res->live);
    res->acc = calloc((size_t)n_out * nh_observer_count(), sizeof *res->acc);
    res->groups = calloc((size_t)n_out * NH_FIT_GROUPS, sizeof *res->groups);
    const size_t path_values = (size_t)res->n_paths * (size_t)n_out * (size_t)nh_observer_count();
    res->paths = malloc((path_values ? path_values : 1) * sizeof *res->paths);
    for (size_t i = 0; res->paths && i < path_values; ++i)
        res->paths[i] = NAN;
    const nh_sketch_layout *sl = &res->sketch_layout;
    const long sketch_cells = sl->rows * sl->n;
    res->sketch = calloc((size_t)(sketch_cells > 0 ? sketch_cells : 1), sizeof *res->sketch);
    return res->time && res->live && res->acc && res->groups && res->paths && res->sketch ? NH_OK : NH_ERR_NOMEM;
}

/* A shard's kept chunks: one allocation of accumulators (and of lanes), cut per chunk. */
static int chunks_alloc(nh_run_result *res, int with_lanes)
{
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    const size_t lane_cells = (size_t)NH_BLOCK_SIZE * (size_t)res->n_out;
    res->chunks = calloc((size_t)res->n_chunks, sizeof *res->chunks);
    nh_accum *acc = calloc((size_t)res->n_chunks * cells, sizeof *acc);
    double *lanes = with_lanes ? malloc((size_t)res->n_chunks * lane_cells * sizeof *lanes) : NULL;
    if (!res->chunks || !acc || (with_lanes && !lanes)) {
        free(acc);
        free(lanes);
        return NH_ERR_NOMEM;
    }
    for (long c = 0; c < res->n_chunks; ++c) {
        res->chunks[c].acc = acc + (size_t)c * cells;
        res->chunks[c].lanes = lanes ? lanes + (size_t)c * lane_cells : NULL;
    }
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

void nh_run_result_free(nh_run_result *res)
{
    free(res->time);
    free(res->live);
    free(res->acc);
    free(res->groups);
    free(res->paths);
    free(res->sketch);
    if (res->chunks) {
        free(res->chunks[0].acc);
        free(res->chunks[0].lanes);
    }
    free(res->chunks);
    free(res->rank_timing);
    memset(res, 0, sizeof *res);
}

/* A non-finite observed value (e.g. V undefined at a finite state) fails the trajectory instead of
 * poisoning the statistics. */
static int record_sample(worker *w, long index, long k, const double *values)
{
    const int nobs = nh_observer_count();
    if (!nh_all_finite(nobs, values))
        return NH_STEP_NONFINITE;
    memcpy(w->rec->values + k * nobs, values, (size_t)nobs * sizeof *values);
    w->rec->rows = k + 1;   /* rows are recorded in order from 0 */
    if (index < w->n_paths) {
        double *row = &w->paths[(index * w->n_out + k) * nobs];
        for (int i = 0; i < nobs; ++i)
            row[i] = nh_observer_at(i)->event || !(w->observer_mask & (1u << i)) ? NAN : values[i];
    }
    return NH_OK;
}

/* A failure with its status, one of the failures a run counts (NH_STEP_NO_CONVERGENCE .. NH_STEP_ERROR): an
 * error of the step or a status unknown here (a plugin's) is NH_STEP_ERROR. */
static void record_failure(trajectory_record *rec, long trajectory, double time, int status)
{
    rec->failed = 1;
    const int counted = status > NH_OK && status < NH_STEP_ERROR ? status : NH_STEP_ERROR;
    rec->failure = (nh_failure){trajectory, time, counted};
}

/* A section crossing into the record (0, or 1 when the list cannot grow). */
static int record_crossing(trajectory_record *rec, long bin, double value)
{
    if (rec->n_crossings == rec->crossing_capacity) {
        const long capacity = rec->crossing_capacity ? 2 * rec->crossing_capacity : 64;
        crossing *grown = realloc(rec->crossings, (size_t)capacity * sizeof *grown);
        if (!grown)
            return 1;
        rec->crossings = grown;
        rec->crossing_capacity = capacity;
    }
    rec->crossings[rec->n_crossings++] = (crossing){bin, value};
    return 0;
}

static int initial_state(const nh_run_config *cfg, long index, double *q, double *v)
{
    const int n = cfg->system->n;
    if (cfg->initial_states) {
        memcpy(q, cfg->initial_states + 2 * n * index, (size_t)n * sizeof *q);
        memcpy(v, cfg->initial_states + 2 * n * index + n, (size_t)n * sizeof *v);
        return NH_OK;
    }
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, cfg->seed, (uint64_t)index);
    if (cfg->preset && cfg->perturb > 0)
        return nh_perturbed_state(cfg->system, cfg->preset, cfg->perturb, &rng, q, v);
    if (cfg->preset) {
        double change;
        return nh_preset_state(cfg->system, cfg->preset, q, v, &change);
    }
    return nh_energy_shell_sample(cfg->system, cfg->energy, &rng, q, v);
}

/* The burn-in steps before t = 0 (nothing recorded); a failure there fails the trajectory at t = 0. */
static int burn_in(const nh_run_config *cfg, worker *w, double *q, double *v)
{
    const long steps = lround(cfg->burn_in / cfg->h);
    for (long k = 1; k <= steps; ++k) {
        if (k % NH_INTERRUPT_POLL_STEPS == 0 && interrupted(cfg)) {
            w->rec->abandoned = 1;
            return NH_OK;
        }
        int rc = nh_stepper_step(w->stepper, cfg->h, q, v, w->carried);
        w->rec->steps++;
        if (rc != NH_OK)
            return rc;
        nh_stepper_recentre(w->stepper, q);
    }
    return NH_OK;
}

/* The global error at step k into values (the reference followed to t = k h); its time is the reference's. */
static int reference_error(const nh_run_config *cfg, worker *w, long k, const double *q, const double *v,
                           double *values)
{
    const double start = omp_get_wtime();
    double qr[NH_MAX_DIM], vr[NH_MAX_DIM], unwrapped[NH_MAX_DIM];
    nh_stepper_in_start_frame(w->stepper, q, unwrapped);   /* the reference runs in the frame of the start */
    int rc = k == 0 ? nh_reference_tracker_start(w->reference, unwrapped, v)
                    : nh_reference_tracker_advance(w->reference, (double)k * cfg->h, qr, vr);
    if (rc == NH_OK)
        values[nh_observer_reference()] = k == 0 ? 0.0 : nh_global_error(cfg->system->n, unwrapped, v, qr, vr);
    w->rec->reference_seconds += omp_get_wtime() - start;
    return rc == NH_OK ? NH_OK : NH_REFERENCE_FAILED;
}

/* The observed values at step k (0: the start, where the reference starts too). */
static int observe_at(const nh_run_config *cfg, worker *w, long k, const double *q, const double *v,
                      const nh_initial_values *init, double *values)
{
    nh_observe(cfg->system, q, v, init, values);
    return w->reference ? reference_error(cfg, w, k, q, v, values) : NH_OK;
}

static void integrate_trajectory(const nh_run_config *cfg, worker *w, long index, long n_steps)
{
    const nh_system *s = cfg->system;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], values[NH_MAX_OBSERVERS];
    nh_initial_values init;
    int rc = initial_state(cfg, index, q, v);
    if (rc == NH_OK)
        rc = nh_stepper_start(w->stepper, q, v, w->carried);
    if (rc == NH_OK && cfg->burn_in > 0)
        rc = burn_in(cfg, w, q, v);
    if (w->rec->abandoned)
        return;
    if (rc != NH_OK) {
        record_failure(w->rec, index, 0.0, rc);
        return;
    }
    nh_initial_values_compute(s, q, v, &init);
    rc = observe_at(cfg, w, 0, q, v, &init, values);
    if (rc == NH_OK)
        rc = record_sample(w, index, 0, values);
    if (rc != NH_OK) {
        record_failure(w->rec, index, 0.0, rc);
        return;
    }
    nh_section_tracker section;
    const int event = nh_observer_event();
    double qa[NH_MAX_DIM], va[NH_MAX_DIM];
    const double section_start = omp_get_wtime(); /* the driver's monodromy: a CVODE reference, not the method */
    nh_section_start(&section, s, q, v, cfg->have_section ? cfg->section : NAN);
    section.active = section.active && event >= 0 && (w->observer_mask & (1u << event));
    if (section.active)
        w->rec->reference_seconds += omp_get_wtime() - section_start;
    for (long k = 1; k <= n_steps; ++k) {
        if (k % NH_INTERRUPT_POLL_STEPS == 0 && interrupted(cfg)) {
            w->rec->abandoned = 1;
            return;
        }
        if (section.active) {
            memcpy(qa, q, (size_t)s->n * sizeof *q);
            memcpy(va, v, (size_t)s->n * sizeof *v);
        }
        rc = nh_stepper_step(w->stepper, cfg->h, q, v, w->carried);
        w->rec->steps++;
        double t_cross, lat_error;
        if (rc == NH_OK && section.active &&
            nh_section_crossing(&section, s, qa, va, q, v, (k - 1) * cfg->h, cfg->h, &t_cross, &lat_error)) {
            long bin = lround(t_cross / (cfg->h * cfg->every));
            if (bin >= 0 && bin * cfg->every <= n_steps && isfinite(lat_error) &&
                record_crossing(w->rec, bin, lat_error)) {
                w->rec->out_of_memory = w->rec->abandoned = 1;
                return;
            }
        }
        if (rc == NH_OK)   /* after the crossing test, which read qa and q in one frame */
            nh_stepper_recentre(w->stepper, q);
        const long row = output_row(cfg, k, n_steps);
        if (rc == NH_OK && row >= 0 && (rc = observe_at(cfg, w, k, q, v, &init, values)) == NH_OK)
            rc = record_sample(w, index, row, values);
        if (rc != NH_OK) {
            record_failure(w->rec, index, k * cfg->h, rc);
            return;
        }
    }
}

/* Trajectory `index` into the record rec, timed (its method seconds are its wall time minus its
 * reference's), with its solver work; abandoned at once when the run is interrupted. */
static void run_trajectory(const nh_run_config *cfg, worker *w, trajectory_record *rec, long index, long n_steps)
{
    double *values = rec->values;
    crossing *crossings = rec->crossings;
    const long capacity = rec->crossing_capacity;
    *rec = (trajectory_record){.index = index, .values = values, .crossings = crossings, .crossing_capacity = capacity};
    w->rec = rec;
    if (interrupted(cfg)) {
        rec->abandoned = 1;
        return;
    }
    const nh_solver_stats before = nh_stepper_solver_stats(w->stepper);
    const double start = omp_get_wtime();
    integrate_trajectory(cfg, w, index, n_steps);
    rec->method_seconds = omp_get_wtime() - start - rec->reference_seconds;
    rec->solver = nh_stepper_solver_stats(w->stepper);
    nh_solver_stats_add(&rec->solver, before, -1);
}

/* The record's contribution into block b, after those of the block's earlier trajectories: the same
 * additions, in the same order, as if the trajectory had been computed into the block. (An abandoned
 * record abandons the block: run_block marks it, under the claims' lock while helpers may read it.) */
static void take_record(block_stats *b, const trajectory_record *rec, const nh_sketch_layout *sl, long n_out)
{
    const int nobs = nh_observer_count(), event = nh_observer_event(), fitted = nh_observer_fitted();
    double *lane = b->lanes ? b->lanes + (rec->index % NH_BLOCK_SIZE) * n_out : NULL;
    for (long k = 0; k < rec->rows; ++k) {
        const double *values = rec->values + k * nobs;
        if (lane)
            lane[k] = values[fitted];
        for (int i = 0; i < nobs; ++i)
            if (!nh_observer_at(i)->event)
                nh_accum_add(&b->acc[k * nobs + i], values[i]);
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
    b->steps += rec->steps;
    b->method_seconds += rec->method_seconds;
    b->reference_seconds += rec->reference_seconds;
    nh_solver_stats_add(&b->solver, rec->solver, 1);
}

static int record_alloc(trajectory_record *rec, long n_out)
{
    memset(rec, 0, sizeof *rec);
    rec->values = malloc((size_t)n_out * (size_t)nh_observer_count() * sizeof *rec->values);
    return rec->values ? NH_OK : NH_ERR_NOMEM;
}

static void record_free(trajectory_record *rec)
{
    if (!rec)
        return;
    free(rec->values);
    free(rec->crossings);
}

/* A helper's record on the heap (NULL when out of memory), and its release. */
static trajectory_record *record_new(long n_out)
{
    trajectory_record *rec = malloc(sizeof *rec);
    if (rec && record_alloc(rec, n_out)) {
        free(rec);
        return NULL;
    }
    return rec;
}

static void record_delete(trajectory_record *rec)
{
    record_free(rec);
    free(rec);
}

static long sample_count(const nh_sketch_layout *sl)
{
    return NH_BLOCK_SIZE * sl->rows * sl->n;
}

static void block_reset(block_stats *b, long n_out, const nh_sketch_layout *sl)
{
    const long cells = n_out * nh_observer_count();
    for (long i = 0; i < cells; ++i)
        nh_accum_reset(&b->acc[i]);
    for (long i = 0; i < sample_count(sl); ++i)
        b->samples[i] = NAN;
    for (long i = 0; b->lanes && i < NH_BLOCK_SIZE * n_out; ++i)
        b->lanes[i] = NAN;
    memset(b->live, 0, (size_t)n_out * sizeof *b->live);
    b->n_failures = 0;
    b->steps = 0;
    b->solver = (nh_solver_stats){0};
    b->method_seconds = b->reference_seconds = 0.0;
    b->abandoned = 0;
}

/* Block b's statistics into its chunk's (chunk->acc in block order; counts add). */
static void merge_block(nh_run_result *chunk, const block_stats *b)
{
    const long cells = chunk->n_out * nh_observer_count();
    for (long i = 0; i < cells; ++i)
        nh_accum_merge(&chunk->acc[i], &b->acc[i]);
    for (long k = 0; k < chunk->n_out; ++k)
        chunk->live[k] += b->live[k];
    const nh_sketch_layout *sl = &chunk->sketch_layout;
    for (long t = 0; t < NH_BLOCK_SIZE; ++t)
        for (long row = 0; row < sl->rows; ++row)
            for (int j = 0; j < sl->n; ++j)
                nh_sketch_add(&chunk->sketch[row * sl->n + j], b->samples[(t * sl->rows + row) * sl->n + j]);
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

int nh_run_fit_groups_by_trajectory(const nh_run_config *cfg)
{
    return nh_run_chunk_count(cfg) < NH_FIT_GROUPS;
}

/* The fit groups of a chunk that is one block: trajectory i = chunk x NH_BLOCK_SIZE + j (lane j) into
 * group i mod NH_FIT_GROUPS, value by value (NAN: not live). */
static void merge_lanes(nh_run_result *res, long chunk, const double *lanes)
{
    for (long j = 0; j < NH_BLOCK_SIZE; ++j) {
        nh_accum *group = &res->groups[((chunk * NH_BLOCK_SIZE + j) % NH_FIT_GROUPS) * res->n_out];
        const double *lane = lanes + j * res->n_out;
        for (long k = 0; k < res->n_out && !isnan(lane[k]); ++k)
            nh_accum_add(&group[k], lane[k]);
    }
}

void nh_run_merge_ordered(nh_run_result *res, long chunk, const nh_accum *acc, const double *lanes,
                          const nh_failure *failures, int n_failures)
{
    const int nobs = nh_observer_count(), fitted = nh_observer_fitted();
    const long cells = res->n_out * nobs;
    for (long i = 0; i < cells; ++i)
        nh_accum_merge(&res->acc[i], &acc[i]);
    nh_accum *group = &res->groups[(chunk % NH_FIT_GROUPS) * res->n_out];
    for (long k = 0; !lanes && k < res->n_out; ++k)
        nh_accum_merge(&group[k], &acc[k * nobs + fitted]);
    if (lanes)
        merge_lanes(res, chunk, lanes);
    for (int f = 0; f < n_failures && res->n_reported < NH_MAX_REPORTED_FAILURES; ++f)
        res->first_failures[res->n_reported++] = failures[f];
}

void nh_run_merge_counts(nh_run_result *res, const nh_run_result *from)
{
    for (long k = 0; k < res->n_out; ++k)
        res->live[k] += from->live[k];
    const long sketch_cells = res->sketch_layout.rows * res->sketch_layout.n;
    for (long c = 0; c < sketch_cells; ++c)
        nh_sketch_merge(&res->sketch[c], &from->sketch[c]);
    res->failed += from->failed;
    for (int s = 0; s < 8; ++s)
        res->failures_by_status[s] += from->failures_by_status[s];
    res->completed_steps += from->completed_steps;
    res->method_seconds += from->method_seconds;
    res->reference_seconds += from->reference_seconds;
    nh_solver_stats_add(&res->solver, from->solver, 1);
}

/* A finished chunk into the run: merged (a whole run) or kept as it is (a shard's partial result). */
static void chunk_done(nh_run_result *res, long c, const nh_run_result *chunk, const double *lanes)
{
    if (res->chunks) {
        nh_chunk_stats *kept = &res->chunks[c - res->first_chunk];
        memcpy(kept->acc, chunk->acc, (size_t)res->n_out * (size_t)nh_observer_count() * sizeof *kept->acc);
        if (lanes)
            memcpy(kept->lanes, lanes, (size_t)NH_BLOCK_SIZE * (size_t)res->n_out * sizeof *lanes);
        memcpy(kept->first_failures, chunk->first_failures, sizeof kept->first_failures);
        kept->n_reported = chunk->n_reported;
    } else {
        nh_run_merge_ordered(res, c, chunk->acc, lanes, chunk->first_failures, chunk->n_reported);
    }
    nh_run_merge_counts(res, chunk);
}

static int worker_init(worker *w, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    memset(w, 0, sizeof *w);
    w->observer_mask = res->observer_mask;
    w->paths = res->paths;
    w->n_paths = res->n_paths;
    w->n_out = res->n_out;
    if (record_alloc(&w->own, res->n_out))
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for a trajectory's %ld output times", res->n_out);
    w->stepper = nh_stepper_create(&cfg->method, cfg->system, cfg->solver, err);
    if (!w->stepper)
        return NH_ERR_SOLVER;
    const int ref = nh_observer_reference();
    if (ref >= 0 && (res->observer_mask & (1u << ref)) &&
        !(w->reference = nh_reference_tracker_create(cfg->system, NH_REFERENCE_TOLERANCE, NH_REFERENCE_TOLERANCE)))
        return nh_fail(err, NH_ERR_SOLVER, "CVODE: cannot create the reference of the global error");
    return NH_OK;
}

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
}

static int queue_init(merge_queue *q, int threads, int lanes, const nh_run_result *res, long first, long end,
                      nh_error *err)
{
    const size_t lane_cells = lanes ? (size_t)NH_BLOCK_SIZE * (size_t)res->n_out : 0;
    const long n_out = res->n_out;
    const nh_sketch_layout *sl = &res->sketch_layout;
    *q = (merge_queue){.n_slots = 2 * threads, .next = first, .next_claim = first, .end = end};
    q->chunk.n_out = n_out;
    q->chunk.sketch_layout = *sl;
    q->slots = calloc((size_t)q->n_slots, sizeof *q->slots);
    q->ready = malloc((size_t)q->n_slots * sizeof *q->ready);
    int ok = q->slots && q->ready && result_alloc(&q->chunk, n_out) == NH_OK;
    for (int i = 0; ok && i < q->n_slots; ++i) {
        q->ready[i] = -1;
        q->slots[i].acc = calloc((size_t)n_out * nh_observer_count(), sizeof *q->slots[i].acc);
        q->slots[i].live = calloc((size_t)n_out, sizeof *q->slots[i].live);
        q->slots[i].samples = malloc((size_t)(sample_count(sl) ? sample_count(sl) : 1) * sizeof(double));
        q->slots[i].lanes = lanes ? malloc(lane_cells * sizeof(double)) : NULL;
        ok = q->slots[i].acc && q->slots[i].live && q->slots[i].samples && (!lanes || q->slots[i].lanes);
    }
    if (ok && lanes)
        ok = (q->lanes = malloc(lane_cells * sizeof(double))) != NULL;
    if (!ok)
        queue_free(q);
    return ok ? NH_OK : nh_fail(err, NH_ERR_NOMEM, "out of memory for %d blocks of %ld output times", 2 * threads, n_out);
}

static void worker_free(worker *w)
{
    nh_reference_tracker_free(w->reference);
    nh_stepper_free(w->stepper);
    record_free(&w->own);
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
static void sketch_layout_init(nh_sketch_layout *sl, long n_out, unsigned mask)
{
    sl->stride = (n_out + NH_SKETCH_MAX_ROWS - 1) / NH_SKETCH_MAX_ROWS;
    sl->rows = (n_out + sl->stride - 1) / sl->stride;
    sl->n = 0;
    for (int i = 0; i < nh_observer_count(); ++i)
        if (nh_observer_at(i)->quantile_prefix && (mask & (1u << i)))
            sl->observer[sl->n++] = i;
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

int nh_run_result_init(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    memset(res, 0, sizeof *res);
    int rc = nh_run_validate(cfg, err);
    if (rc)
        return rc;
    const long n_steps = step_count(cfg), n_out = nh_run_output_rows(cfg);
    res->n_steps = n_steps;
    res->n_out = n_out;
    res->n_paths = cfg->paths;
    unsigned selected;
    nh_observer_select(cfg->observe, &selected, err); /* validated above */
    res->observer_mask = nh_observer_mask(cfg->system) & selected;
    sketch_layout_init(&res->sketch_layout, n_out, res->observer_mask);
    if (result_alloc(res, n_out)) {
        nh_run_result_free(res);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %ld output times", n_out);
    }
    for (long k = 0; k < n_out; ++k)
        res->time[k] = (double)nh_run_output_step(cfg, k) * cfg->h;
    nh_run_shard_chunks(cfg, &res->first_chunk, &res->n_chunks);
    res->next_block = nh_run_chunk_first_block(cfg, res->first_chunk);
    res->trajectories_done = nh_run_trajectories_before(cfg, res->next_block);
    if (cfg->shards > 0 && chunks_alloc(res, nh_run_fit_groups_by_trajectory(cfg))) {
        nh_run_result_free(res);
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %ld chunks of %ld output times", res->n_chunks, n_out);
    }
    return NH_OK;
}

static void chunk_reset(nh_run_result *chunk)
{
    const long cells = chunk->n_out * nh_observer_count();
    for (long i = 0; i < cells; ++i)
        nh_accum_reset(&chunk->acc[i]);
    memset(chunk->live, 0, (size_t)chunk->n_out * sizeof *chunk->live);
    memset(chunk->sketch, 0, (size_t)(chunk->sketch_layout.rows * chunk->sketch_layout.n) * sizeof *chunk->sketch);
    chunk->failed = 0;
    memset(chunk->failures_by_status, 0, sizeof chunk->failures_by_status);
    chunk->n_reported = 0;
    chunk->completed_steps = 0;
    chunk->method_seconds = chunk->reference_seconds = 0.0;
    chunk->solver = (nh_solver_stats){0};
}

/* Block b, the next in order, into its chunk; a chunk's last block makes the chunk part of the run.
 * Only the merger calls it, outside the lock: no other thread reads the chunk or what it changes in res. */
static void merge_next(const nh_run_config *cfg, merge_queue *q, long b, const block_stats *blk, nh_run_result *res)
{
    const long c = nh_run_chunk_of_block(cfg, b);
    if (b == nh_run_chunk_first_block(cfg, c))
        chunk_reset(&q->chunk);
    merge_block(&q->chunk, blk);
    if (q->lanes) /* the chunk is this one block */
        memcpy(q->lanes, blk->lanes, (size_t)NH_BLOCK_SIZE * (size_t)q->chunk.n_out * sizeof *q->lanes);
    if (cfg->progress) {
        const long origin = nh_run_trajectories_before(cfg, nh_run_chunk_first_block(cfg, res->first_chunk));
        cfg->progress(nh_run_trajectories_before(cfg, b + 1) - origin,
                      nh_run_trajectories_before(cfg, q->end) - origin, cfg->progress_ctx);
    }
    if (b + 1 != nh_run_chunk_first_block(cfg, c + 1))
        return;
    chunk_done(res, c, &q->chunk, q->lanes);
    res->next_block = b + 1;
    res->trajectories_done = nh_run_trajectories_before(cfg, b + 1);
    if (cfg->merged && !res->chunks)
        cfg->merged(res, res->next_block, cfg->hook_ctx);
}

/* The block to merge next when it is ready and the prefix goes on (else -1, and the caller stops being
 * the merger), under the lock. */
static long next_ready_block(merge_queue *q)
{
    long next = -1;
#pragma omp critical(nh_merge)
    {
        if (!q->stopped && q->ready[q->next % q->n_slots] == q->next)
            next = q->next;
        else
            q->merging = 0;
    }
    return next;
}

/* Block b is finished. Unless another thread is merging (it will find b ready), merge b and every ready
 * block after it, in order, while they continue the prefix. A slot is handed back (q->next moves past
 * its block) only once its block is merged. */
static void publish(const nh_run_config *cfg, merge_queue *q, long b, nh_run_result *res)
{
    int merger;
#pragma omp critical(nh_merge)
    {
        q->ready[b % q->n_slots] = b;
        merger = !q->merging;
        q->merging = 1;
    }
    long next;
    while (merger && (next = next_ready_block(q)) >= 0) {
        const block_stats *blk = &q->slots[next % q->n_slots];
        const int abandoned = blk->abandoned;
        if (!abandoned)
            merge_next(cfg, q, next, blk, res);
#pragma omp critical(nh_merge)
        {
            q->ready[next % q->n_slots] = -1;
            q->stopped |= abandoned;
            q->next = abandoned ? next : next + 1;
        }
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
        int state;
#pragma omp critical(nh_merge)
        state = q->stopped ? -1 : q->next > b - q->n_slots;
        if (state)
            return state > 0 ? &q->slots[b % q->n_slots] : NULL;
        pause_briefly();
    }
}

/* The next trajectory of the slot's running block (its index), from the front for the block's
 * worker, from the back for a helper; -1 when none is left. An abandoned block hands out no more. */
static long claim_trajectory(block_stats *slot, int from_back)
{
    long index = -1;
#pragma omp critical(nh_claim)
    if (slot->running && slot->front <= slot->back && !slot->abandoned) {
        index = slot->block * NH_BLOCK_SIZE + (from_back ? slot->back-- : slot->front++);
        slot->stolen += from_back;
    }
    return index;
}

/* Wait until every trajectory that helpers took from the slot's block is recorded; then it hands out
 * no more. */
static void wait_for_helpers(block_stats *slot)
{
    for (;;) {
        int pending;
#pragma omp critical(nh_claim)
        {
            pending = slot->stolen_done < slot->stolen;
            if (!pending)
                slot->running = 0;
        }
        if (!pending)
            return;
        pause_briefly();
    }
}

/* Block b into its slot: its trajectories from the front straight into the block, then those helpers
 * took from the back, in trajectory order; 1 when a record could not grow (the block is abandoned). */
static int run_block(const nh_run_config *cfg, merge_queue *q, worker *w, long b, block_stats *slot,
                     const nh_run_result *res)
{
    const long first = b * NH_BLOCK_SIZE, count = nh_run_trajectories_before(cfg, b + 1) - first;
    block_reset(slot, res->n_out, &res->sketch_layout);
#pragma omp critical(nh_claim)
    {
        slot->block = b;
        slot->front = slot->stolen = slot->stolen_done = 0;
        slot->back = (int)count - 1;
        slot->running = 1;
        q->starting--;
    }
    int out_of_memory = 0;
    long index;
    while ((index = claim_trajectory(slot, 0)) >= 0) {
        run_trajectory(cfg, w, &w->own, index, res->n_steps);
        take_record(slot, &w->own, &res->sketch_layout, res->n_out);
        out_of_memory |= w->own.out_of_memory;
        if (w->own.abandoned) {
#pragma omp critical(nh_claim)
            slot->abandoned = 1;
        }
    }
    wait_for_helpers(slot);   /* from here on no other thread reads the slot */
    for (long t = 0; t < count; ++t) {
        trajectory_record *rec = slot->stolen_records[t];
        if (!rec)
            continue;
        take_record(slot, rec, &res->sketch_layout, res->n_out);
        slot->abandoned |= rec->abandoned;
        out_of_memory |= rec->out_of_memory;
        record_delete(rec);
        slot->stolen_records[t] = NULL;
    }
    slot->abandoned |= out_of_memory;
    return out_of_memory;
}

/* The running block with the lowest number that has a trajectory left; NULL when there is none and none
 * is about to start (a block taken whose worker is still preparing it, or waiting for its slot). */
static block_stats *earliest_running_block(merge_queue *q)
{
    for (;;) {
        block_stats *earliest = NULL;
        int starting;
#pragma omp critical(nh_claim)
        {
            starting = q->starting;
            for (int i = 0; i < q->n_slots; ++i) {
                const block_stats *slot = &q->slots[i];
                if (slot->running && slot->front <= slot->back && !slot->abandoned &&
                    (!earliest || slot->block < earliest->block))
                    earliest = &q->slots[i];
            }
        }
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
        if (!rec && !(rec = record_new(res->n_out)))
            return;
        const long index = claim_trajectory(slot, 1);
        if (index < 0)
            continue;
        run_trajectory(cfg, w, rec, index, res->n_steps);
#pragma omp critical(nh_claim)
        {
            slot->stolen_records[index % NH_BLOCK_SIZE] = rec;
            slot->stolen_done++;
        }
        rec = NULL;
    }
    record_delete(rec);
}

/* Blocks in order over the workers; each merges what it finished (publish) and, when no block is left
 * to start, helps with the running ones. */
static void work_on_blocks(const nh_run_config *cfg, merge_queue *q, worker *w, nh_run_result *res)
{
    for (;;) {
        long b = -1;
#pragma omp critical(nh_claim)
        if (q->next_claim < q->end) {
            b = q->next_claim++;
            q->starting++;
        }
        if (b < 0)
            break;
        block_stats *slot = slot_for(q, b);
        if (!slot) {
#pragma omp critical(nh_claim)
            q->starting--;
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

/* Blocks [first, end) over the threads, merged in order into res; 0, or the setup error of a worker. */
static int compute_blocks(const nh_run_config *cfg, merge_queue *q, nh_run_result *res, nh_error *err)
{
    int setup_failed = 0;
    nh_error setup_err = {{0}};
#pragma omp parallel num_threads(cfg->threads)
    {
        worker w;
        nh_error local_err;
        int ok = worker_init(&w, cfg, res, &local_err) == NH_OK;
        if (!ok) {
#pragma omp atomic write
            setup_failed = 1;
#pragma omp critical(nh_setup_error)
            setup_err = local_err;
        }
#pragma omp barrier
        /* every thread reads the shared flag only after the barrier */
        int any_failed;
#pragma omp atomic read
        any_failed = setup_failed;
        if (!any_failed)
            work_on_blocks(cfg, q, &w, res);
        worker_free(&w);
    }
    if (setup_failed) {
        *err = setup_err;
        return NH_ERR_SOLVER;
    }
    if (q->out_of_memory)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory recording the section crossings of a trajectory");
    return NH_OK;
}

int nh_run_ensemble_continue(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    const long first = res->next_block, end = nh_run_chunk_first_block(cfg, res->first_chunk + res->n_chunks);
    if (first < nh_run_chunk_first_block(cfg, res->first_chunk) || first > end || !nh_run_is_chunk_boundary(cfg, first))
        return nh_fail(err, NH_ERR_INPUT, "cannot continue at block %ld: not the start of a chunk of blocks %ld to %ld",
                       first, nh_run_chunk_first_block(cfg, res->first_chunk), end);
    double start = omp_get_wtime();
    merge_queue q;
    if (queue_init(&q, cfg->threads, nh_run_fit_groups_by_trajectory(cfg), res, first, end, err))
        return NH_ERR_NOMEM;
    int rc = compute_blocks(cfg, &q, res, err);
    queue_free(&q);
    if (rc)
        return rc;
    res->complete = res->next_block == end;
    /* paths of trajectories outside the merged prefix (abandoned blocks) are not results */
    const size_t row = (size_t)res->n_out * (size_t)nh_observer_count();
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
        nh_run_result_free(res);
    return rc;
}
