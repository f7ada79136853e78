/* One trajectory: its start (sampled, given or a preset's, then burnt in), its steps, its observed values
 * at the output rows, its sample path, its section crossings and its failure, all into its record, alone or
 * in a lane of the worker's lane stepper beside others; and the worker (stepper, lanes and reference) that
 * integrates a thread's trajectories. */
#include "ensemble_internal.h"

#include "nhens/linalg.h"
#include "nhens/poincare.h"
#include "run_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int interrupted(const nh_run_config *cfg)
{
    return cfg->interrupted && cfg->interrupted(cfg->hook_ctx);
}

/* The output row step k is recorded in, or -1 for a step between rows. */
static long output_row(const nh_run_config *cfg, long k, long n_steps)
{
    if (k % cfg->every == 0)
        return k / cfg->every;
    return k == n_steps ? n_steps / cfg->every + 1 : -1;
}

/* A non-finite observed value (e.g. V undefined at a finite state) fails the trajectory instead of
 * poisoning the statistics. */
static int record_sample(worker *w, trajectory_record *rec, long index, long k, const double *values)
{
    const int nobs = nh_observer_count(w->observers);
    if (!nh_all_finite(nobs, values))
        return NH_STEP_NONFINITE;
    memcpy(rec->values + k * nobs, values, (size_t)nobs * sizeof *values);
    rec->rows = k + 1;   /* rows are recorded in order from 0 */
    if (index < w->n_paths) {
        double *row = &w->paths[(index * w->n_out + k) * nobs];
        for (int i = 0; i < nobs; ++i)
            row[i] = nh_observer_at(w->observers, i)->event || !(w->observer_mask & (1u << i)) ? NAN : values[i];
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
    const int n = cfg->system->n;
    nh_observe_applying(w->observers, w->observers_applying, cfg->system, q, v, init, values);
    memcpy(w->rec->final_state, q, (size_t)n * sizeof *q);
    memcpy(w->rec->final_state + n, v, (size_t)n * sizeof *v);
    return w->reference ? reference_error(cfg, w, k, q, v, values) : NH_OK;
}

/* The trajectory's start: its initial state, the stepper started on it, the burn-in, H(0) and the values at
 * t = 0 recorded; 1 when it goes on (else it failed at t = 0, recorded, or was abandoned). */
static int start_trajectory(const nh_run_config *cfg, worker *w, long index, double *q, double *v,
                            nh_initial_values *init)
{
    double values[NH_MAX_OBSERVERS];
    int rc = initial_state(cfg, index, q, v);
    if (rc == NH_OK)
        rc = nh_stepper_start(w->stepper, q, v, w->carried);
    if (rc == NH_OK && cfg->burn_in > 0)
        rc = burn_in(cfg, w, q, v);
    if (w->rec->abandoned)
        return 0;
    if (rc == NH_OK) {
        nh_initial_values_compute(cfg->system, q, v, init);
        rc = observe_at(cfg, w, 0, q, v, init, values);
    }
    if (rc == NH_OK)
        rc = record_sample(w, w->rec, index, 0, values);
    if (rc != NH_OK)
        record_failure(w->rec, index, 0.0, rc);
    return rc == NH_OK;
}

/* The latitude's section tracker from the start (q, v), active when the event observer is recorded; its
 * set-up (the driver's monodromy: a CVODE reference, not the method) is timed as the reference's. */
static void start_section(const nh_run_config *cfg, worker *w, const double *q, const double *v,
                          nh_section_tracker *section)
{
    const int event = nh_observer_event();
    section->active = 0;
    if (event < 0 || !(w->observer_mask & (1u << event)))
        return;   /* the latitude is not recorded: no monodromy to compute */
    const double section_start = omp_get_wtime();
    nh_section_start(section, cfg->system, q, v, cfg->have_section ? cfg->section : NAN);
    w->rec->reference_seconds += omp_get_wtime() - section_start;
}

/* The section crossing of step k (from (qa, va) to (q, v), in one frame) into the record, if any; 1 when the
 * record cannot grow (the trajectory is then abandoned). */
static int record_step_crossing(const nh_run_config *cfg, trajectory_record *rec, const nh_section_tracker *section,
                                const double *qa, const double *va, const double *q, const double *v, long k,
                                long n_steps)
{
    double t_cross, lat_error;
    if (!nh_section_crossing(section, cfg->system, qa, va, q, v, (k - 1) * cfg->h, cfg->h, &t_cross, &lat_error))
        return 0;
    const long bin = lround(t_cross / (cfg->h * cfg->every));
    if (bin >= 0 && bin * cfg->every <= n_steps && isfinite(lat_error) && record_crossing(rec, bin, lat_error)) {
        rec->out_of_memory = rec->abandoned = 1;
        return 1;
    }
    return 0;
}

/* Trajectory `index` from its start through n_steps steps, into the worker's record: the observed values
 * at the output rows, the section crossings, a failure where it happens. */
static void integrate_trajectory(const nh_run_config *cfg, worker *w, long index, long n_steps)
{
    const nh_system *s = cfg->system;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], values[NH_MAX_OBSERVERS];
    nh_initial_values init;
    if (!start_trajectory(cfg, w, index, q, v, &init))
        return;
    nh_section_tracker section;
    start_section(cfg, w, q, v, &section);
    double qa[NH_MAX_DIM], va[NH_MAX_DIM];
    for (long k = 1; k <= n_steps; ++k) {
        if (k % NH_INTERRUPT_POLL_STEPS == 0 && interrupted(cfg)) {
            w->rec->abandoned = 1;
            return;
        }
        if (section.active) {
            memcpy(qa, q, (size_t)s->n * sizeof *q);
            memcpy(va, v, (size_t)s->n * sizeof *v);
        }
        int rc = nh_stepper_step(w->stepper, cfg->h, q, v, w->carried);
        w->rec->steps++;
        if (rc == NH_OK && section.active && record_step_crossing(cfg, w->rec, &section, qa, va, q, v, k, n_steps))
            return;
        if (rc == NH_OK)   /* after the crossing test, which read qa and q in one frame */
            nh_stepper_recentre(w->stepper, q);
        const long row = output_row(cfg, k, n_steps);
        if (rc == NH_OK && row >= 0 && (rc = observe_at(cfg, w, k, q, v, &init, values)) == NH_OK)
            rc = record_sample(w, w->rec, index, row, values);
        if (rc != NH_OK) {
            record_failure(w->rec, index, k * cfg->h, rc);
            return;
        }
    }
}

/* Trajectory `index` into the record rec, timed (its method seconds are its wall time minus its
 * reference's), with its solver work; abandoned at once when the run is interrupted. */
/* rec emptied for trajectory `index` (its arrays kept) and made the worker's record; 0 when the run is
 * interrupted (the record is then abandoned), else 1. */
static int record_begin(const nh_run_config *cfg, worker *w, trajectory_record *rec, long index)
{
    double *values = rec->values;
    crossing *crossings = rec->crossings;
    const long capacity = rec->crossing_capacity;
    *rec = (trajectory_record){.index = index, .values = values, .crossings = crossings, .crossing_capacity = capacity};
    w->rec = rec;
    rec->abandoned = interrupted(cfg) != 0;
    return !rec->abandoned;
}

void nh_trajectory_run(const nh_run_config *cfg, worker *w, trajectory_record *rec, long index, long n_steps)
{
    if (!record_begin(cfg, w, rec, index))
        return;
    const nh_solver_stats before = nh_stepper_solver_stats(w->stepper);
    const double start = omp_get_wtime();
    integrate_trajectory(cfg, w, index, n_steps);
    rec->method_seconds = omp_get_wtime() - start - rec->reference_seconds;
    rec->solver = nh_stepper_solver_stats(w->stepper);
    nh_solver_stats_add(&rec->solver, before, -1);
}

/* ---- trajectories in lanes (w->lanes): each starts as above on the worker's stepper, then runs in its lane
 * with the others until its end, its failure or an interruption; its values at the output rows and its section
 * crossings are observed as above, from the lane's state. No lane run records the global error (nh_run_lanes). */

static void lane_finish(worker *w, int lane, int *finished, trajectory_record **records, int *count)
{
    nh_solver_stats_add(&w->lane[lane].rec->solver, nh_lane_stepper_solver_stats(w->lanes, lane), 1);
    nh_lane_stepper_retire(w->lanes, lane);
    finished[*count] = lane;
    records[(*count)++] = w->lane[lane].rec;
    w->lane[lane].rec = NULL;
}

int nh_lane_start(const nh_run_config *cfg, worker *w, int lane, trajectory_record *rec, long index, long n_steps)
{
    if (!record_begin(cfg, w, rec, index))
        return 0;
    lane_trajectory *t = &w->lane[lane];
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    const nh_solver_stats before = nh_stepper_solver_stats(w->stepper);
    const double start = omp_get_wtime();
    const int runs = start_trajectory(cfg, w, index, q, v, &t->init) && n_steps > 0;
    rec->method_seconds = omp_get_wtime() - start;
    rec->solver = nh_stepper_solver_stats(w->stepper);   /* the start's (burn-in's) work; the lane's joins it */
    nh_solver_stats_add(&rec->solver, before, -1);
    if (!runs)
        return 0;
    start_section(cfg, w, q, v, &t->section);
    nh_lane_stepper_load(w->lanes, lane, w->stepper, q, v, w->carried);
    t->rec = rec;
    t->index = index;
    t->k = 0;
    return 1;
}

/* Steps until the next event of a running lane: its next output row, or the poll for an interruption */
static long steps_to_next_event(const nh_run_config *cfg, const worker *w, long n_steps)
{
    long steps = NH_INTERRUPT_POLL_STEPS;
    for (int l = 0; l < w->n_lanes; ++l) {
        const lane_trajectory *t = &w->lane[l];
        if (!t->rec)
            continue;
        const long next_row = (t->k / cfg->every + 1) * cfg->every;
        const long event = t->section.active ? 1 : (next_row < n_steps ? next_row : n_steps) - t->k;
        steps = event < steps ? event : steps;
    }
    return steps;
}

/* Lane l after `taken` more steps with status rc: its steps counted; the output row it is at (-1: none, or it
 * failed or was abandoned) */
static long lane_after_steps(const nh_run_config *cfg, worker *w, int l, long taken, int rc, long n_steps)
{
    lane_trajectory *t = &w->lane[l];
    t->k += taken;
    t->rec->steps += taken;
    return rc == NH_OK && !t->rec->abandoned ? output_row(cfg, t->k, n_steps) : -1;
}

/* The values of the `count` lanes lanes[] at their output rows rows[], observed together, into their records (a
 * non-finite value fails its trajectory: status[l] then says so). */
static void lanes_observe(const nh_run_config *cfg, worker *w, const int *lanes, const long *rows, int count,
                          int *status)
{
    const int n = cfg->system->n, nobs = nh_observer_count(w->observers);
    const double *q[NH_MAX_LANES], *v[NH_MAX_LANES];
    const nh_initial_values *init[NH_MAX_LANES];
    double *values[NH_MAX_LANES];
    for (int j = 0; j < count; ++j) {
        double *state = w->lane[lanes[j]].rec->final_state;   /* the state of the last row observed */
        nh_lane_stepper_state(w->lanes, lanes[j], state, state + n, NULL);
        q[j] = state;
        v[j] = state + n;
        init[j] = &w->lane[lanes[j]].init;
        values[j] = w->lane_values + nobs * lanes[j];
    }
    nh_observe_states(w->observers, w->observers_applying, cfg->system, count, q, v, init, values);
    for (int j = 0; j < count; ++j) {
        lane_trajectory *t = &w->lane[lanes[j]];
        status[lanes[j]] = record_sample(w, t->rec, t->index, rows[j], values[j]);
    }
}

/* One step of every lane with the section crossing test of the scalar path between the step and the
 * recentring (a lane whose record cannot grow is abandoned at once); 1, the steps taken. */
static long lanes_step_with_sections(const nh_run_config *cfg, worker *w, long n_steps, int *status)
{
    const int n = cfg->system->n;
    for (int l = 0; l < w->n_lanes; ++l)
        if (w->lane[l].rec && w->lane[l].section.active)
            nh_lane_stepper_state(w->lanes, l, w->lane_before + 2 * n * l, w->lane_before + 2 * n * l + n, NULL);
    nh_lane_stepper_step_unrecentred(w->lanes, cfg->h, status);
    for (int l = 0; l < w->n_lanes; ++l) {
        lane_trajectory *t = &w->lane[l];
        if (!t->rec || !t->section.active || status[l] != NH_OK)
            continue;
        double q[NH_MAX_DIM], v[NH_MAX_DIM];
        nh_lane_stepper_state(w->lanes, l, q, v, NULL);
        const double *before = w->lane_before + 2 * n * l;
        record_step_crossing(cfg, t->rec, &t->section, before, before + n, q, v, t->k + 1, n_steps);
    }
    nh_lane_stepper_recentre(w->lanes);
    return 1;
}

int nh_lanes_advance(const nh_run_config *cfg, worker *w, long n_steps, int *finished, trajectory_record **records)
{
    int count = 0, running = 0, status[NH_MAX_LANES];
    const long steps = steps_to_next_event(cfg, w, n_steps);
    const double start = omp_get_wtime();
    const long taken = steps > 1 ? nh_lane_stepper_advance(w->lanes, cfg->h, steps, status)
                                 : lanes_step_with_sections(cfg, w, n_steps, status);
    trajectory_record *advanced[NH_MAX_LANES];
    int observed[NH_MAX_LANES], n_observed = 0;
    long rows[NH_MAX_LANES];
    for (int l = 0; l < w->n_lanes; ++l) {
        if (!w->lane[l].rec)
            continue;
        advanced[running++] = w->lane[l].rec;
        if ((rows[n_observed] = lane_after_steps(cfg, w, l, taken, status[l], n_steps)) >= 0)
            observed[n_observed++] = l;
    }
    lanes_observe(cfg, w, observed, rows, n_observed, status);
    for (int l = 0; l < w->n_lanes; ++l) {
        lane_trajectory *t = &w->lane[l];
        if (!t->rec)
            continue;
        if (status[l] != NH_OK && !t->rec->abandoned)   /* an abandoned one: its crossings could not be recorded */
            record_failure(t->rec, t->index, t->k * cfg->h, status[l]);
        if (status[l] != NH_OK || t->rec->abandoned || t->k >= n_steps)
            lane_finish(w, l, finished, records, &count);
    }
    const double share = (omp_get_wtime() - start) / (running > 0 ? running : 1);   /* the steps and observations */
    for (int k = 0; k < running; ++k)
        advanced[k]->method_seconds += share;
    if (interrupted(cfg))
        for (int l = 0; l < w->n_lanes; ++l)
            if (w->lane[l].rec) {
                w->lane[l].rec->abandoned = 1;
                lane_finish(w, l, finished, records, &count);
            }
    return count;
}

static int record_alloc(trajectory_record *rec, long n_out, int n_observers)
{
    memset(rec, 0, sizeof *rec);
    rec->values = malloc((size_t)n_out * (size_t)n_observers * sizeof *rec->values);
    return rec->values ? NH_OK : NH_ERR_NOMEM;
}

static void record_free(trajectory_record *rec)
{
    if (!rec)
        return;
    free(rec->values);
    free(rec->crossings);
}

trajectory_record *nh_record_new(long n_out, int n_observers)
{
    trajectory_record *rec = malloc(sizeof *rec);
    if (rec && record_alloc(rec, n_out, n_observers)) {
        free(rec);
        return NULL;
    }
    return rec;
}

void nh_record_delete(trajectory_record *rec)
{
    record_free(rec);
    free(rec);
}

int nh_worker_init(worker *w, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    memset(w, 0, sizeof *w);
    w->observer_mask = res->observer_mask;
    w->observers = res->observers;
    w->observers_applying = nh_observer_mask(res->observers, cfg->system);
    w->paths = res->paths;
    w->n_paths = res->n_paths;
    w->n_out = res->n_out;
    w->stepper = nh_stepper_create(&cfg->method, cfg->system, cfg->solver, err);
    if (!w->stepper)
        return NH_ERR_SOLVER;
    w->n_lanes = 1;
    const int lanes = nh_run_lanes(cfg, res);
    if (lanes > 1) {
        if (!(w->lanes = nh_lane_stepper_create(w->stepper, lanes, NH_LANE_ISA_AUTO, err)))
            return err->msg[0] ? NH_ERR_NOMEM : nh_fail(err, NH_ERR_NOMEM, "no lane kernel for %d lanes", lanes);
        w->lane_before = malloc((size_t)lanes * 2 * (size_t)cfg->system->n * sizeof *w->lane_before);
        w->lane_values = malloc((size_t)lanes * (size_t)res->n_observers * sizeof *w->lane_values);
        if (!w->lane_before || !w->lane_values)
            return nh_fail(err, NH_ERR_NOMEM, "out of memory for %d lanes", lanes);
        w->n_lanes = lanes;
    }
    const int ref = nh_observer_reference();
    if (ref >= 0 && (res->observer_mask & (1u << ref)) &&
        !(w->reference = nh_reference_tracker_create(cfg->system, NH_REFERENCE_TOLERANCE, NH_REFERENCE_TOLERANCE)))
        return nh_fail(err, NH_ERR_SOLVER, "CVODE: cannot create the reference of the global error");
    return NH_OK;
}

void nh_worker_free(worker *w)
{
    nh_reference_tracker_free(w->reference);
    nh_lane_stepper_free(w->lanes);
    free(w->lane_before);
    free(w->lane_values);
    nh_stepper_free(w->stepper);
}

