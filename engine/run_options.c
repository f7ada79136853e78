/* The options of `nhens run` and the run configuration they describe (engine/run_options.h, library-private): the
 * one option table of a run, shared by the nhens program and the in-memory runs of nhens/job.h. */
#include "run_options.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#define NH_BLOCK_SIZE_TEXT "8"
_Static_assert(NH_BLOCK_SIZE == 8, "NH_BLOCK_SIZE_TEXT must spell NH_BLOCK_SIZE");

#define RUN_OPT(name, kind, field, lo, hi, meta, help) {name, kind, offsetof(nh_run_options, field), lo, hi, meta, help, 0, 0}
static const nh_option RUN_OPTIONS[] = {
    RUN_OPT("system", NH_OPTION_STRING, system, 0, 0, "S", "system (nhens list)"),
    {"param", NH_OPTION_LIST, offsetof(nh_run_options, params), 0, 0, "k=v", "system parameter",
     offsetof(nh_run_options, n_params), NH_RUN_MAX_PARAMS},
    RUN_OPT("method", NH_OPTION_STRING, method, 0, 0, "M[:k=v,...]", "method and its parameters"),
    RUN_OPT("h", NH_OPTION_DOUBLE, h, 1e-12, 1e6, "H", "step size"),
    RUN_OPT("T", NH_OPTION_DOUBLE, T, 1e-12, 1e12, "T", "horizon (a whole number of steps)"),
    RUN_OPT("energy", NH_OPTION_DOUBLE, energy, -1e12, 1e12, "E", "sample N states on the energy shell H = E"),
    RUN_OPT("preset", NH_OPTION_STRING, preset, 0, 0, "P", "an initial state from a paper, or an energy shell (nhens list shows them)"),
    RUN_OPT("initial", NH_OPTION_STRING, initial, 0, 0, "FILE",
            "start from the states in CSV FILE (q_1..q_n, v_1..v_n per row; the ensemble is its rows; a first "
            "row of names only is a header)"),
    RUN_OPT("project", NH_OPTION_FLAG, project, 0, 0, NULL,
            "project velocities of --initial rows or a --preset off D_q onto it (default: refuse them, naming the "
            "row or the preset)"),
    RUN_OPT("perturb", NH_OPTION_DOUBLE, perturb, 0, 1000, "EPS",
            "with a state --preset: an ensemble around it, q and v moved by EPS N(0, 1), v projected onto D_q and "
            "rescaled to the preset's energy"),
    RUN_OPT("burn-in", NH_OPTION_DOUBLE, burn_in, 0, 1e12, "T0",
            "integrate each trajectory for T0 (whole steps) before t = 0, where H(0) is taken"),
    RUN_OPT("ensemble", NH_OPTION_LONG, ensemble, 1, NH_MAX_ENSEMBLE, "N",
            "trajectories (default: the shell preset's, 1 for a state, else 100)"),
    RUN_OPT("seed", NH_OPTION_U64, seed, 0, 0, "S", "seed of every sampled state (default 1)"),
    RUN_OPT("threads", NH_OPTION_LONG, threads, 1, 1024, "K", "OpenMP threads (default: the cores); results do not depend on it"),
    RUN_OPT("lanes", NH_OPTION_LONG, lanes, 1, NH_MAX_LANES, "L",
            "trajectories each thread steps at once in SIMD lanes (default: the CPU's best, 32 with AVX-512, else 16, "
            "and 16 for dla, idla and dd with --solver newton; 1: one at a time); results do not depend on it"),
    RUN_OPT("every", NH_OPTION_LONG, every, 1, 2000000000, "J", "output every J steps and at T (default: about 1000 rows)"),
    RUN_OPT("solver", NH_OPTION_STRING, solver, 0, 0, "kinsol|newton", "nonlinear solver (default " NH_RUN_DEFAULT_SOLVER ")"),
    RUN_OPT("fit-start", NH_OPTION_DOUBLE, fit_start, 0, 0.99, "F", "variance law fitted over [F T, T] (default 0.1: after the bounded part has settled)"),
    RUN_OPT("section", NH_OPTION_DOUBLE, section, -1e6, 1e6, "XI", "driver section angle of the latitude (default xi(0))"),
    RUN_OPT("smooth", NH_OPTION_DOUBLE, smooth, 0, 1e12, "W", "also write smoothed.csv, running mean over W time units"),
    RUN_OPT("observe", NH_OPTION_STRING, observe, 0, 0, "O1,O2|all",
            "observers to record (nhens list; default all that apply; the fitted dH always); all,error adds the "
            "global error against a CVODE reference, which only its name selects"),
    RUN_OPT("reduce", NH_OPTION_STRING, reduce, 0, 0, "R1,R2",
            "also write DIR/trajectories.csv, a row per trajectory (index, failure) with a column per reduction, read at "
            "the output rows: final (q_1..q_n, v_1..v_n at T), max:OBS, min:OBS (OBS an observer, |OBS| its absolute "
            "value), first:OBS>X (also <, <=, >=: the first output time it holds; nan if never)"),
    RUN_OPT("paths", NH_OPTION_LONG, paths, 0, NH_MAX_PATHS, "K",
            "also write DIR/paths.csv: every observed value of the first K trajectories (single-trajectory figures)"),
    RUN_OPT("out", NH_OPTION_STRING, out, 0, 0, "DIR", "output folder (default nhens-out)"),
    RUN_OPT("quiet", NH_OPTION_FLAG, quiet, 0, 0, NULL,
            "no progress on stderr (else: a line in place on a terminal, every 5 s in a log)"),
    RUN_OPT("dry-run", NH_OPTION_FLAG, dry_run, 0, 0, NULL, "check everything, print the plan, compute and write nothing"),
    RUN_OPT("checkpoint", NH_OPTION_STRING, checkpoint, 0, 0, "NAME",
            "save the merged statistics to DIR/NAME every --checkpoint-every seconds and when interrupted "
            "(removed when the run completes)"),
    RUN_OPT("checkpoint-every", NH_OPTION_DOUBLE, checkpoint_every, 0, 1e6, "S",
            "seconds between checkpoints (default 60; 0: after every block of " NH_BLOCK_SIZE_TEXT " trajectories)"),
    RUN_OPT("blocks", NH_OPTION_STRING, blocks, 0, 0, "I/K",
            "compute only shard I of K (1 <= I <= K) into DIR/part-I-of-K.json; nhens merge joins the K parts into "
            "the bytes of the whole run"),
    RUN_OPT("resume", NH_OPTION_STRING, resume, 0, 0, "FILE",
            "finish the run saved in checkpoint FILE, bitwise as if never interrupted, in FILE's folder (with it "
            "only --threads, --lanes, --quiet, --checkpoint and --checkpoint-every may be given)"),
};

const nh_option_table nh_run_option_table = {
    "run", "--system S [--param k=v ...] --method M[:k=v,...] --h H --T T (--energy E | --preset P | --initial FILE)\n"
    "       [options]\n"
    "       nhens run --resume FILE [--threads K] [--lanes L] [--checkpoint NAME] [--checkpoint-every S] [--quiet]",
    "one ensemble study: DIR/timeseries.csv, DIR/summary.json and a printed summary", RUN_OPTIONS,
    sizeof RUN_OPTIONS / sizeof RUN_OPTIONS[0], 0};


/* --blocks I/K: shard I (1-based) of K; the engine checks K against the run's chunks. */
static int parse_blocks(const char *text, nh_run_config *cfg, nh_error *err)
{
    char buf[64];
    const char *slash = strchr(text, '/');
    long i, k;
    if (!slash || (size_t)(slash - text) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "--blocks '%.60s' is not I/K (shard I of K, 1 <= I <= K)", text);
    memcpy(buf, text, (size_t)(slash - text));
    buf[slash - text] = '\0';
    if (nh_parse_long_in(buf, 1, NH_MERGE_CHUNKS, &i) || nh_parse_long_in(slash + 1, 1, NH_MERGE_CHUNKS, &k) || i > k)
        return nh_fail(err, NH_ERR_INPUT, "--blocks '%.60s' is not I/K with 1 <= I <= K <= %d", text, NH_MERGE_CHUNKS);
    cfg->shard = i - 1;
    cfg->shards = k;
    return NH_OK;
}

int nh_run_options_parse(int argc, char **argv, nh_run_options *o, int *help, nh_error *err)
{
    const char *positional[1];
    int n_positional;
    nh_run_config defaults;
    nh_run_config_init(&defaults);
    *o = (nh_run_options){.out = "nhens-out", .solver = NH_RUN_DEFAULT_SOLVER, .fit_start = defaults.fit_window_start,
                          .seed = defaults.seed,
                          .checkpoint_every = 60};
    return nh_options_parse(&nh_run_option_table, argc, argv, o, &o->seen, positional, &n_positional, help, err);
}

int nh_run_options_given(const nh_run_options *o, const char *name)
{
    const int idx = nh_options_index(&nh_run_option_table, name);
    return idx >= 0 && (o->seen >> idx & 1u);
}

int nh_registry_build_system(const nh_registry *reg, const char *name, const char *preset_name,
                             const char *const *params, int n_params, nh_system *sys, const nh_preset **preset,
                             nh_error *err)
{
    const nh_system_type *type = nh_registry_find_system_checked(reg, name, err);
    if (!type)
        return NH_ERR_INPUT;
    *preset = NULL;
    if (preset_name && !(*preset = nh_system_find_preset(type, preset_name))) {
        char names[256], near[128];
        const char *list[32];
        const int n = type->n_presets < 32 ? type->n_presets : 32;
        for (int i = 0; i < n; ++i)
            list[i] = type->presets[i].name;
        nh_join_names(list, n, names, sizeof names);
        return nh_fail(err, NH_ERR_INPUT, "system %s has no preset '%s'%s; its presets are: %s", type->name,
                       preset_name, nh_did_you_mean(preset_name, list, n, near, sizeof near),
                       names[0] ? names : "(none)");
    }
    return nh_system_init(sys, type, *preset, params, n_params, err);
}

/* What every run needs: a system, a method, a step size, a horizon and exactly one source of initial states. */
static int check_required(const nh_run_options *o, nh_error *err)
{
    if (!o->system || !o->method || !nh_run_options_given(o, "h") || !nh_run_options_given(o, "T"))
        return nh_fail(err, NH_ERR_INPUT, "--system, --method, --h and --T are required (nhens help run lists the "
                       "options)");
    if ((nh_run_options_given(o, "energy") + !!o->preset + !!o->initial) != 1)
        return nh_fail(err, NH_ERR_INPUT, "give exactly one of --energy E (ensemble on an energy shell), --preset P or "
                       "--initial FILE (nhens help run lists the options)");
    return NH_OK;
}

/* --initial FILE into cfg (checked against the system's constraints, projected with --project). */
static int read_initial(const nh_run_options *o, nh_states_reader read_states, nh_run_config *cfg, nh_error *err)
{
    double *states;
    long rows;
    if (!read_states)
        return nh_fail(err, NH_ERR_INPUT, "--initial %s: this caller reads no state files (give the states as an "
                       "array)", o->initial);
    int rc = read_states(o->initial, cfg->system->n, &states, &rows, err);
    if (rc)
        return rc;
    cfg->initial_states = states;
    cfg->n_initial = rows;
    cfg->initial_name = o->initial;
    return nh_initial_states_check(cfg->system, states, rows, o->project, err);
}

/* The defaults that depend on other options: the ensemble, the threads and the output interval. */
static int apply_defaults(const nh_run_options *o, nh_run_config *cfg, nh_error *err)
{
    cfg->ensemble = nh_run_options_given(o, "ensemble") ? o->ensemble
                    : cfg->initial_states                ? cfg->n_initial
                    : cfg->shell_preset                  ? cfg->shell_preset->shell_ensemble
                    : cfg->preset                        ? 1
                                                         : cfg->ensemble;
    if (nh_run_options_given(o, "threads"))
        cfg->threads = (int)o->threads;
    cfg->lanes = nh_run_options_given(o, "lanes") ? (int)o->lanes : 0;
    const double steps = floor(o->T / o->h + 1e-9);
    if (!(steps >= 1 && steps <= 2e9))
        return nh_fail(err, NH_ERR_INPUT, "horizon T=%g with step h=%g gives %g steps; allowed: 1 to 2e9 steps", o->T,
                       o->h, o->T / o->h);
    cfg->every = nh_run_options_given(o, "every") ? o->every : nh_run_default_every(cfg);
    return NH_OK;
}

int nh_run_options_config(const nh_registry *reg, const nh_run_options *o, nh_states_reader read_states,
                          nh_system *sys, nh_run_config *cfg, nh_error *err)
{
    const nh_preset *preset = NULL;
    *cfg = (nh_run_config){0};
    int rc = check_required(o, err);
    if (!rc)
        rc = nh_registry_build_system(reg, o->system, o->preset, o->params, o->n_params, sys, &preset, err);
    if (rc)
        return rc;
    nh_run_config_init(cfg); /* the defaults of every option not given */
    cfg->system = sys, cfg->h = o->h, cfg->T = o->T, cfg->energy = o->energy, cfg->seed = o->seed;
    cfg->fit_window_start = o->fit_start, cfg->observe = o->observe, cfg->paths = o->paths;
    cfg->registry = reg, cfg->reduce = o->reduce;
    if ((cfg->have_section = nh_run_options_given(o, "section")))
        cfg->section = o->section;
    cfg->perturb = o->perturb, cfg->burn_in = o->burn_in, cfg->project = o->project;
    nh_run_config_use_preset(cfg, preset);
    if (o->initial && (rc = read_initial(o, read_states, cfg, err)))
        return rc;
    if ((rc = nh_method_spec_parse(reg, &cfg->method, o->method, err)))
        return rc;
    if (nh_solver_kind_parse(o->solver, &cfg->solver))
        return nh_fail(err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", o->solver);
    if ((rc = apply_defaults(o, cfg, err)) || (o->blocks && (rc = parse_blocks(o->blocks, cfg, err))))
        return rc;
    if (o->blocks && o->checkpoint)
        return nh_fail(err, NH_ERR_INPUT, "--blocks %s and --checkpoint: a shard is not checkpointed (rerun an "
                       "interrupted shard)", o->blocks);
    return nh_run_validate(cfg, err);
}
