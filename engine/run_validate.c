/* Validation of an nh_run_config: every option checked, with a message that names the value and its
 * range, before anything is allocated or integrated (see include/nhens/ensemble.h). */
#include "ensemble_internal.h"

#include "nhens/lanes.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

void nh_run_config_init(nh_run_config *cfg)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *cfg = (nh_run_config){.solver = NH_SOLVER_KINSOL, .every = 1, .ensemble = 100, .seed = 1,
                           .threads = cores > 1 ? (int)(cores < 1024 ? cores : 1024) : 1, .fit_window_start = 0.1,
                           .section = NAN};
}

long nh_run_default_every(const nh_run_config *cfg)
{
    const double steps = floor(cfg->T / cfg->h + 1e-9);
    return steps / NH_DEFAULT_OUTPUT_ROWS >= 2 && steps < 2e9 ? (long)(steps / NH_DEFAULT_OUTPUT_ROWS) : 1;
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

/* The step size and the horizon: a whole number of steps, at most 2e9. */
static int validate_horizon(const nh_run_config *cfg, nh_error *err)
{
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
    return NH_OK;
}

/* The sizes of the run: ensemble, output rows, sample paths, shards, threads and the fit window. */
static int validate_sizes(const nh_run_config *cfg, nh_error *err)
{
    if (cfg->ensemble < 1 || cfg->ensemble > NH_MAX_ENSEMBLE)
        return nh_fail(err, NH_ERR_INPUT, "ensemble size N=%ld must be in [1, %d]", cfg->ensemble, NH_MAX_ENSEMBLE);
    if (cfg->every < 1)
        return nh_fail(err, NH_ERR_INPUT, "output interval every=%ld must be at least 1 step", cfg->every);
    if (nh_run_output_rows(cfg) > NH_MAX_OUTPUT_ROWS)
        return nh_fail(err, NH_ERR_INPUT, "output every %ld steps of %ld gives %ld rows; at most %d are allowed (raise "
                       "every)", cfg->every, nh_run_step_count(cfg), nh_run_output_rows(cfg), NH_MAX_OUTPUT_ROWS);
    if (cfg->paths < 0 || cfg->paths > NH_MAX_PATHS || cfg->paths > cfg->ensemble)
        return nh_fail(err, NH_ERR_INPUT, "sample paths=%ld must be in [0, %d] and at most the ensemble size %ld",
                       cfg->paths, NH_MAX_PATHS, cfg->ensemble);
    if (cfg->shards < 0 || cfg->shards > nh_run_chunk_count(cfg) ||
        (cfg->shards > 0 && (cfg->shard < 0 || cfg->shard >= cfg->shards)))
        return nh_fail(err, NH_ERR_INPUT,
                       "shard %ld of %ld: the ensemble of %ld trajectories has %ld chunks of blocks, so at most %ld "
                       "shards, numbered 1 to the shard count", cfg->shard + 1, cfg->shards, cfg->ensemble,
                       nh_run_chunk_count(cfg), nh_run_chunk_count(cfg));
    if (cfg->threads < 1 || cfg->threads > 1024)
        return nh_fail(err, NH_ERR_INPUT, "threads=%d must be in [1, 1024]", cfg->threads);
    if (cfg->lanes < 0 || cfg->lanes > NH_MAX_LANES)
        return nh_fail(err, NH_ERR_INPUT, "lanes=%d must be in [1, %d] (or 0: the CPU's default)", cfg->lanes,
                       NH_MAX_LANES);
    if (!(cfg->fit_window_start >= 0.0 && cfg->fit_window_start < 1.0))
        return nh_fail(err, NH_ERR_INPUT, "fit window start %g must be a fraction of T in [0, 1)", cfg->fit_window_start);
    return NH_OK;
}

/* The initial-state options: preset, user states, perturbation and burn-in. */
static int validate_initial(const nh_run_config *cfg, nh_error *err)
{
    if (cfg->preset && nh_preset_is_shell(cfg->preset))
        return nh_fail(err, NH_ERR_INPUT, "preset %s is an energy shell, not an initial state", cfg->preset->name);
    if (cfg->preset && nh_preset_check(cfg->system, cfg->preset, cfg->project, err))
        return NH_ERR_INPUT;
    if (cfg->preset && cfg->ensemble != 1 && !(cfg->perturb > 0))
        return nh_fail(err, NH_ERR_INPUT,
                       "a preset is one initial condition, so the ensemble size must be 1 (got %ld); "
                       "use --energy for ensembles, or --perturb EPS for an ensemble around the preset",
                       cfg->ensemble);
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
    if (!cfg || !cfg->system || !cfg->system->type)
        return nh_fail(err, NH_ERR_INPUT, "no system in the run configuration (cfg->system: an nh_system from "
                                          "nh_system_init)");
    if (!cfg->method.type)
        return nh_fail(err, NH_ERR_INPUT, "no method in the run configuration (cfg->method: parse one with "
                                          "nh_method_spec_parse)");
    int rc = validate_horizon(cfg, err);
    if (!rc)
        rc = validate_sizes(cfg, err);
    if (!rc)
        rc = validate_initial(cfg, err);
    if (rc)
        return rc;
    unsigned recorded = 0;
    nh_observer_table *observers = nh_run_observer_table(cfg, &recorded, err);
    if (!observers)
        return NH_ERR_INPUT;
    nh_reduction *reductions;
    int n_reductions;
    rc = nh_run_reductions(cfg, observers, recorded, &reductions, &n_reductions, err);
    free(reductions);
    nh_observer_table_free(observers);
    if (!rc)
        rc = nh_method_spec_check(&cfg->method, cfg->system, err);
    if (rc)
        return rc;
    return cfg->preset || cfg->initial_states ? NH_OK : nh_energy_shell_check(cfg->system, cfg->energy, err);
}
