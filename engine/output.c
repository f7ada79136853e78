/* Writing run results whole-or-nothing (see include/nhens/output.h). JSON through cJSON. Missing data is
 * nan in the CSV files and null in summary.json, never 0: a statistic of an output time where no trajectory
 * is live (or, for a variance, fewer than two), an extreme of no value, a fit without data. */
#include "nhens/output.h"
#include "nhens/registry.h"
#include "summary_internal.h"
#include "tables_internal.h"
#include "run_result.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_config.h>

/* DIR/NAME through nh_write_file. */
static int write_atomically(const char *dir, const char *name, nh_write_body body, const void *data, nh_error *err)
{
    char path[NH_PATH_MAX];
    if (nh_path_format(path, sizeof path, err, "%s/%s", dir, name))
        return NH_ERR_INPUT;
    return nh_write_file(path, body, data, err);
}

/* The peak resident memory of this process since its program started (VmHWM of /proc/self/status, KiB;
 * -1 where there is none). Not getrusage's ru_maxrss, which also counts the parent's memory that a
 * child spawned by vfork or posix_spawn held until its exec. */
static long peak_resident_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%ld", &kib) != 1)
            kib = -1;
    if (f)
        fclose(f);
    return kib;
}

static int timeseries_body(FILE *f, const void *data)
{
    return nh_run_table_print(f, data, NH_RUN_TABLE_TIMESERIES);
}

static int paths_body(FILE *f, const void *data)
{
    return nh_run_table_print(f, data, NH_RUN_TABLE_PATHS);
}

static int quantiles_body(FILE *f, const void *data)
{
    return nh_run_table_print(f, data, NH_RUN_TABLE_QUANTILES);
}

static int trajectories_body(FILE *f, const void *data)
{
    return nh_run_table_print(f, data, NH_RUN_TABLE_TRAJECTORIES);
}

int nh_write_trajectories(const char *dir, const nh_run_result *res, nh_error *err)
{
    return write_atomically(dir, "trajectories.csv", trajectories_body, res, err);
}

int nh_write_quantiles(const char *dir, const nh_run_result *res, nh_error *err)
{
    return write_atomically(dir, "quantiles.csv", quantiles_body, res, err);
}

int nh_write_paths(const char *dir, const nh_run_result *res, nh_error *err)
{
    return write_atomically(dir, "paths.csv", paths_body, res, err);
}

int nh_write_timeseries(const char *dir, const nh_run_result *res, nh_error *err)
{
    return write_atomically(dir, "timeseries.csv", timeseries_body, res, err);
}

/* cJSON writes NaN as null, which is what a reader should see for "not available". */
static void add_params(cJSON *obj, const nh_param_set *set)
{
    cJSON *p = cJSON_AddObjectToObject(obj, "params");
    for (int i = 0; i < set->count; ++i)
        cJSON_AddNumberToObject(p, set->defs[i].name, set->value[i]);
}

/* FNV-1a over the bits of the user's initial states: runs from different states never merge. */
static const char *states_fingerprint(const nh_run_config *cfg, char *buf)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *bytes = (const unsigned char *)cfg->initial_states;
    const size_t len = (size_t)cfg->n_initial * 2 * (size_t)cfg->system->n * sizeof(double);
    for (size_t i = 0; i < len; ++i)
        h = (h ^ bytes[i]) * 1099511628211ULL;
    snprintf(buf, 17, "%016llx", (unsigned long long)h);
    return buf;
}

void nh_add_configuration(cJSON *root, const nh_run_config *cfg)
{
    char flags[128], fingerprint[17];
    cJSON *sys = cJSON_AddObjectToObject(root, "system");
    cJSON_AddStringToObject(sys, "name", cfg->system->type->name);
    add_params(sys, &cfg->system->params);
    cJSON_AddNumberToObject(sys, "n", cfg->system->n);
    cJSON_AddNumberToObject(sys, "m", cfg->system->m);
    cJSON *met = cJSON_AddObjectToObject(root, "method");
    cJSON_AddStringToObject(met, "name", nh_method_spec_name(&cfg->method));
    add_params(met, &cfg->method.params);
    cJSON_AddNumberToObject(met, "order", nh_method_spec_order(&cfg->method));
    nh_method_flags_format(nh_method_spec_flags(&cfg->method), flags, sizeof flags);
    cJSON_AddStringToObject(met, "flags", flags);
    cJSON_AddStringToObject(root, "solver", nh_solver_kind_name(cfg->solver));
    cJSON_AddNumberToObject(root, "h", cfg->h);
    cJSON_AddNumberToObject(root, "T", cfg->T);
    cJSON_AddNumberToObject(root, "every", (double)cfg->every);
    cJSON_AddNumberToObject(root, "ensemble", (double)cfg->ensemble);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)cfg->seed);
    cJSON_AddStringToObject(root, "seed", seed);
    cJSON_AddNumberToObject(root, "threads", cfg->threads);
    cJSON_AddNumberToObject(root, "paths", (double)cfg->paths);
    cJSON_AddStringToObject(root, "observe", cfg->observe ? cfg->observe : "all");
    if (cfg->reduce && *cfg->reduce)
        cJSON_AddStringToObject(root, "reduce", cfg->reduce);
    cJSON_AddNumberToObject(root, "fit_start", cfg->fit_window_start);
    if (cfg->have_section)
        cJSON_AddNumberToObject(root, "section", cfg->section);
    cJSON *init = cJSON_AddObjectToObject(root, "initial");
    if (cfg->burn_in > 0)
        cJSON_AddNumberToObject(init, "burn_in", cfg->burn_in);
    if (cfg->initial_states) {
        cJSON_AddStringToObject(init, "states", cfg->initial_name ? cfg->initial_name : "(given)");
        cJSON_AddNumberToObject(init, "rows", (double)cfg->n_initial);
        cJSON_AddStringToObject(init, "fingerprint", states_fingerprint(cfg, fingerprint));
    } else if (cfg->preset) {
        if (cfg->perturb > 0)
            cJSON_AddNumberToObject(init, "perturb", cfg->perturb);
        cJSON_AddStringToObject(init, "preset", cfg->preset->name);
        cJSON_AddStringToObject(init, "description", cfg->preset->description);
    } else {
        cJSON_AddNumberToObject(init, "energy", cfg->energy);
        if (cfg->shell_preset)
            cJSON_AddStringToObject(init, "preset", cfg->shell_preset->name);
    }
}

static void add_failures(cJSON *root, const nh_run_result *res)
{
    cJSON *f = cJSON_AddObjectToObject(root, "failures");
    cJSON_AddNumberToObject(f, "count", (double)res->failed);
    cJSON *by = cJSON_AddObjectToObject(f, "by_reason");
    for (int s = 1; s < 8; ++s)
        if (res->failures_by_status[s])
            cJSON_AddNumberToObject(by, nh_status_name(s), (double)res->failures_by_status[s]);
    cJSON *first = cJSON_AddArrayToObject(f, "first");
    for (int i = 0; i < res->n_reported; ++i) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "trajectory", (double)res->first_failures[i].trajectory);
        cJSON_AddNumberToObject(e, "t", res->first_failures[i].time);
        cJSON_AddStringToObject(e, "reason", nh_status_name(res->first_failures[i].status));
        cJSON_AddItemToArray(first, e);
    }
}

/* mean max |error| of the event observer over the first and the last tenth of the output bins holding
 * crossings: the drift of the latitude integral */
static void add_event_drift(cJSON *ext, const nh_run_result *res)
{
    const int ev = nh_observer_event();
    if (ev < 0 || !(res->observer_mask & (1u << ev)))
        return;
    long bins = 0;
    for (long k = 0; k < res->n_out; ++k)
        bins += nh_run_accum(res, k, ev)->count > 0;
    long tenth = bins / 10, seen = 0, n_first = 0, n_last = 0;
    double first = 0, last = 0;
    for (long k = 0; k < res->n_out && tenth > 0; ++k) {
        const nh_accum *a = nh_run_accum(res, k, ev);
        if (a->count == 0)
            continue;
        if (seen < tenth)
            first += a->absmax, ++n_first;
        if (seen >= bins - tenth)
            last += a->absmax, ++n_last;
        ++seen;
    }
    char key[96];
    snprintf(key, sizeof key, "%s_first_tenth", nh_observer_at(res->observers, ev)->name);
    cJSON_AddNumberToObject(ext, key, n_first ? first / n_first : NAN);
    snprintf(key, sizeof key, "%s_last_tenth", nh_observer_at(res->observers, ev)->name);
    cJSON_AddNumberToObject(ext, key, n_last ? last / n_last : NAN);
}

/* The global error at T: its ensemble mean with the standard error of that mean, and its maximum. */
/* Under MPI ranks: each rank's wall seconds and steps, in rank order (timing). */
static void add_rank_timing(cJSON *perf, const nh_run_result *res)
{
    if (res->ranks < 2 || !res->rank_timing)
        return;
    cJSON *wall = cJSON_AddArrayToObject(perf, "rank_wall_seconds");
    cJSON *steps = cJSON_AddArrayToObject(perf, "rank_steps");
    for (int r = 0; wall && steps && r < res->ranks; ++r) {
        cJSON_AddItemToArray(wall, cJSON_CreateNumber(res->rank_timing[r].wall_seconds));
        cJSON_AddItemToArray(steps, cJSON_CreateNumber((double)res->rank_timing[r].steps));
    }
}

static void add_global_error(cJSON *root, const nh_run_result *res)
{
    const int ref = nh_observer_reference();
    if (ref < 0 || !(res->observer_mask & (1u << ref)))
        return;
    const nh_accum *last = nh_run_accum(res, res->n_out - 1, ref);
    cJSON *g = cJSON_AddObjectToObject(root, "global_error");
    cJSON_AddStringToObject(g, "measure", "|z(T) - z_ref(T)| / |z_ref(T)|, z = (q, v), reference CVODE at rtol = atol = 1e-13");
    cJSON_AddNumberToObject(g, "error_final", last->count ? last->mean : NAN);
    cJSON_AddNumberToObject(g, "error_final_stderr", nh_accum_mean_stderr(last));
    cJSON_AddNumberToObject(g, "error_final_max", last->count ? last->absmax : NAN);
    cJSON_AddNumberToObject(g, "trajectories", (double)last->count);
}

/* max |value| of every recorded observer, core (every system) or system-specific */
static void add_observer_extremes(cJSON *ext, const nh_run_result *res, int core)
{
    for (int o = 0; o < res->n_observers; ++o)
        if ((res->observer_mask & (1u << o)) && nh_observer_core(nh_observer_at(res->observers, o)) == core)
            cJSON_AddNumberToObject(ext, nh_observer_at(res->observers, o)->extreme_key, nh_run_observer_max(res, o));
}

/* Whether the data support the variance law (null where there is no fit or no error to judge it by) and
 * why not: one sentence per caveat. */
static void add_fit_support(cJSON *fit, const nh_variance_fit *vf)
{
    const unsigned caveats = nh_variance_fit_caveats(vf);
    if (caveats & (NH_FIT_NO_FIT | NH_FIT_NO_ERRORS))
        cJSON_AddNullToObject(fit, "supported");
    else
        cJSON_AddBoolToObject(fit, "supported", caveats == 0);
    cJSON *list = cJSON_AddArrayToObject(fit, "caveats");
    for (unsigned bit = 1; bit <= caveats; bit <<= 1)
        if (caveats & bit)
            cJSON_AddItemToArray(list, cJSON_CreateString(nh_variance_fit_caveat_text(bit)));
}

static void add_variance_fit(cJSON *root, const nh_run_result *res)
{
    cJSON *fit = cJSON_AddObjectToObject(root, "variance_fit");
    cJSON_AddStringToObject(fit, "model", "Var dH(t) = a + C t, least squares over [t_start, t_end]");
    cJSON_AddNumberToObject(fit, "t_start", res->fit.t_start);
    cJSON_AddNumberToObject(fit, "t_end", res->fit.t_end);
    cJSON_AddNumberToObject(fit, "points", res->fit.points);
    cJSON_AddNumberToObject(fit, "a", res->fit.a);
    cJSON_AddNumberToObject(fit, "C", res->fit.C);
    cJSON_AddNumberToObject(fit, "C_over_h4", res->fit.C_over_h4);
    cJSON_AddNumberToObject(fit, "scaling_power", res->fit.scaling_power);
    cJSON_AddNumberToObject(fit, "C_scaled", res->fit.C_scaled);
    cJSON_AddNumberToObject(fit, "p", res->fit.p);
    cJSON_AddNumberToObject(fit, "a_stderr", res->fit.a_err);
    cJSON_AddNumberToObject(fit, "C_stderr", res->fit.C_err);
    cJSON_AddNumberToObject(fit, "C_over_h4_stderr", res->fit.C_over_h4_err);
    cJSON_AddNumberToObject(fit, "C_scaled_stderr", res->fit.C_scaled_err);
    cJSON_AddNumberToObject(fit, "p_stderr", res->fit.p_err);
    cJSON_AddNumberToObject(fit, "p_of_fit", res->fit.p_of_fit);
    cJSON_AddStringToObject(fit, "stderr_method",
                            "delete-one-group jackknife; up to 152 trajectories (fewer than 20 chunks) trajectory i in "
                            "group i mod 20, else merge chunk c in group c mod 20 (a chunk is one block of 8 "
                            "trajectories up to 2048 trajectories, at most 256 chunks)");
    cJSON_AddNumberToObject(fit, "groups", res->fit.groups);
    cJSON_AddNumberToObject(fit, "dof", res->fit.dof);
    cJSON_AddNumberToObject(fit, "t95", res->fit.t95);
    add_fit_support(fit, &res->fit);
}

static void add_results(cJSON *root, const nh_run_config *cfg, const nh_run_result *res)
{
    add_variance_fit(root, res);
    cJSON *ext = cJSON_AddObjectToObject(root, "extremes");
    const int fitted = nh_observer_fitted();
    char key[96];
    add_observer_extremes(ext, res, 1);
    snprintf(key, sizeof key, "final_%s_var", nh_observer_at(res->observers, fitted)->name);
    cJSON_AddNumberToObject(ext, key, nh_accum_variance(nh_run_accum(res, res->n_out - 1, fitted)));
    cJSON_AddNumberToObject(ext, "final_n_live", (double)res->live[res->n_out - 1]);
    add_observer_extremes(ext, res, 0);
    add_event_drift(ext, res);
    add_global_error(root, res);
    cJSON_AddNumberToObject(root, "preset_velocity_projection", res->preset_projection);
    cJSON *perf = cJSON_AddObjectToObject(root, "performance");
    cJSON_AddNumberToObject(perf, "wall_seconds", res->wall_seconds);
    cJSON_AddNumberToObject(perf, "steps", (double)res->completed_steps);
    cJSON_AddNumberToObject(perf, "steps_per_second", res->steps_per_second);
    cJSON_AddNumberToObject(perf, "method_seconds", res->method_seconds);
    cJSON_AddNumberToObject(perf, "ns_per_step", nh_run_ns_per_step(res));
    cJSON_AddNumberToObject(perf, "reference_seconds", res->reference_seconds);
    const int lanes = nh_run_lanes(cfg, res);
    cJSON_AddNumberToObject(perf, "lanes", lanes);
    cJSON_AddStringToObject(perf, "lane_isa", lanes > 1 ? nh_lane_isa_name(nh_lane_isa_best()) : "none");
    add_rank_timing(perf, res);
    cJSON_AddNumberToObject(perf, "nonlinear_solves", (double)res->solver.solves);
    cJSON_AddNumberToObject(perf, "newton_iterations", (double)res->solver.iterations);
    const long peak = peak_resident_kib();
    if (peak > 0)
        cJSON_AddNumberToObject(perf, "peak_rss_kib", (double)peak);
}

/* The plugins of the registry the method was configured from (where the system and the method came from):
 * name, absolute path and SHA-256 of each, in load order; empty for built-ins only. */
static void add_plugins(cJSON *root, const nh_run_config *cfg)
{
    cJSON *list = cJSON_AddArrayToObject(root, "plugins");
    const nh_registry *reg = cfg->method.registry;
    for (int i = 0; reg && i < nh_registry_plugin_count(reg); ++i) {
        const nh_plugin_info *p = nh_registry_plugin_at(reg, i);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddStringToObject(item, "name", p->name);
        cJSON_AddStringToObject(item, "path", p->path);
        cJSON_AddStringToObject(item, "sha256", p->sha256);
        cJSON_AddItemToArray(list, item);
    }
}

char *nh_summary_json(const nh_run_config *cfg, const nh_run_result *res, const char *command)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "nhens_version", NH_VERSION);
    cJSON *ver = cJSON_AddObjectToObject(root, "versions");
    cJSON_AddStringToObject(ver, "sundials", SUNDIALS_VERSION);
    cJSON_AddStringToObject(ver, "cjson", cJSON_Version());
    cJSON_AddStringToObject(root, "command", command ? command : "");
    add_plugins(root, cfg);
    nh_add_configuration(root, cfg);
    cJSON_AddNumberToObject(root, "ranks", res->ranks > 1 ? res->ranks : 1);
    cJSON_AddBoolToObject(root, "complete", res->complete);
    cJSON_AddNumberToObject(root, "trajectories_done", (double)res->trajectories_done);
    add_failures(root, res);
    add_results(root, cfg, res);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

char *nh_configuration_json(const nh_run_config *cfg)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    nh_add_configuration(root, cfg);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static int summary_body(FILE *f, const void *data)
{
    return fputs(data, f) < 0 || fputc('\n', f) == EOF;
}

int nh_write_summary(const char *dir, const nh_run_config *cfg, const nh_run_result *res, const char *command,
                     nh_error *err)
{
    char *text = nh_summary_json(cfg, res, command);
    if (!text)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory formatting summary.json");
    int rc = write_atomically(dir, "summary.json", summary_body, text, err);
    free(text);
    return rc;
}

enum { SMOOTH_MAX_COLUMNS = 64 };

/* A timeseries read back for smoothing: rows x cols values, and per column prefix sums of its finite
 * values and their counts (long double: a window's sum is a difference of prefix sums, and the extra
 * precision keeps that difference at double round-off however long the series). */
typedef struct smoothing {
    char header[2048];  /* our own timeseries: at most ~25 columns of ~25 characters */
    int rows, cols;
    double window;
    double *data;
    long double *sum;   /* (rows + 1) x cols */
    long *count;        /* (rows + 1) x cols */
} smoothing;

static int read_series(FILE *in, smoothing *sm)
{
    char line[4096];
    int cap = 0;
    if (!fgets(sm->header, sizeof sm->header, in))
        return 1;
    while (fgets(line, sizeof line, in)) {
        if (sm->rows == cap) {
            cap = cap ? 2 * cap : 1024;
            double *grown = realloc(sm->data, sizeof(double) * (size_t)cap * SMOOTH_MAX_COLUMNS);
            if (!grown)
                return 1;
            sm->data = grown;
        }
        int c = 0;
        for (char *save = NULL, *tok = strtok_r(line, ",", &save); tok && c < SMOOTH_MAX_COLUMNS;
             tok = strtok_r(NULL, ",", &save))
            sm->data[(size_t)sm->rows * SMOOTH_MAX_COLUMNS + c++] = strtod(tok, NULL);
        sm->cols = c;
        ++sm->rows;
    }
    return sm->rows == 0;
}

static int prefix_sums(smoothing *sm)
{
    const size_t cells = (size_t)(sm->rows + 1) * SMOOTH_MAX_COLUMNS;
    sm->sum = calloc(cells, sizeof *sm->sum);
    sm->count = calloc(cells, sizeof *sm->count);
    if (!sm->sum || !sm->count)
        return 1;
    for (int r = 0; r < sm->rows; ++r)
        for (int c = 0; c < sm->cols; ++c) {
            const double x = sm->data[(size_t)r * SMOOTH_MAX_COLUMNS + c];
            const size_t at = (size_t)r * SMOOTH_MAX_COLUMNS + c, next = at + SMOOTH_MAX_COLUMNS;
            sm->sum[next] = sm->sum[at] + (isfinite(x) ? x : 0.0L);
            sm->count[next] = sm->count[at] + (isfinite(x) != 0);
        }
    return 0;
}

/* Each row: t, then per column the mean of the finite values with t' in [t - W/2, t + W/2] (event
 * columns have gaps), or nan if there is none. O(rows x cols): the window's ends only move forward. */
static int smoothed_body(FILE *out, const void *data)
{
    const smoothing *sm = data;
    const double *t = sm->data;
    fputs(sm->header, out);
    for (int r = 0, lo = 0, hi = 0; r < sm->rows; ++r) {
        const double now = t[(size_t)r * SMOOTH_MAX_COLUMNS];
        while (t[(size_t)lo * SMOOTH_MAX_COLUMNS] < now - 0.5 * sm->window)
            ++lo;
        while (hi + 1 < sm->rows && t[(size_t)(hi + 1) * SMOOTH_MAX_COLUMNS] <= now + 0.5 * sm->window)
            ++hi;
        fprintf(out, "%.17g", now);
        for (int c = 1; c < sm->cols; ++c) {
            const size_t top = (size_t)(hi + 1) * SMOOTH_MAX_COLUMNS + c, bottom = (size_t)lo * SMOOTH_MAX_COLUMNS + c;
            const long n = sm->count[top] - sm->count[bottom];
            if (n)
                fprintf(out, ",%.17g", (double)((sm->sum[top] - sm->sum[bottom]) / n));
            else
                fprintf(out, ",nan");
        }
        fputc('\n', out);
    }
    return 0;
}

/* Running mean over a centred window of `window` time units: DIR/smoothed.csv (same columns), written
 * whole or not at all. */
int nh_write_smoothed(const char *dir, double window, nh_error *err)
{
    char path[NH_PATH_MAX];
    if (nh_path_format(path, sizeof path, err, "%s/timeseries.csv", dir))
        return NH_ERR_INPUT;
    FILE *in = nh_open_regular(path, err);
    if (!in)
        return NH_ERR_IO;
    smoothing sm = {.window = window};
    int bad = read_series(in, &sm);
    fclose(in);
    int rc = bad ? nh_fail(err, NH_ERR_IO, "%s is empty or unreadable", path)
             : prefix_sums(&sm) ? nh_fail(err, NH_ERR_NOMEM, "out of memory smoothing %s", path)
                                : write_atomically(dir, "smoothed.csv", smoothed_body, &sm, err);
    free(sm.data);
    free(sm.sum);
    free(sm.count);
    return rc;
}


int nh_write_run(const char *dir, const nh_run_config *cfg, const nh_run_result *res, const char *command,
                 double smooth, nh_error *err)
{
    nh_output_set set;
    int rc = nh_output_set_begin(&set, dir, err);
    if (rc)
        return rc;
    rc = nh_write_timeseries(set.stage, res, err);
    if (!rc)
        rc = nh_write_summary(set.stage, cfg, res, command, err);
    if (!rc && res->sketch_layout.n > 0)
        rc = nh_write_quantiles(set.stage, res, err);
    if (!rc && smooth > 0)
        rc = nh_write_smoothed(set.stage, smooth, err);
    if (!rc && res->n_paths > 0)
        rc = nh_write_paths(set.stage, res, err);
    if (!rc && res->n_reductions > 0)
        rc = nh_write_trajectories(set.stage, res, err);
    if (rc) {
        nh_output_set_abort(&set);
        return rc;
    }
    return nh_output_set_commit(&set, err);
}
