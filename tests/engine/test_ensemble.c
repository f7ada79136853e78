/* The ensemble driver: bitwise reproducibility across thread counts, failure accounting, input
 * validation and the statistics it writes. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "reseal.h"
#include "scratch.h"
#include "nhens/checkpoint.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/output.h"
#include "nhens/partial.h"
#include "nhens/reference.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    cr_assert(fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* The shell state run of the thread test: the quartic on H = 3.06, or the CVT at eps = 0.5 on H = 6, where
 * most states rotate the driver (about 25 turns of xi recentred per trajectory by T = 50) */
static void run_to_dir(const char *system, const char *method, const char *solver_name, int threads, const char *dir)
{
    nh_system s;
    nh_run_config cfg = {0};
    nh_run_result res;
    nh_error err;
    const int quartic = strcmp(system, "quartic") == 0;
    make_system(&s, system, quartic ? "n=3" : "eps=0.5", NULL);
    cfg.system = &s;
    make_method(&cfg.method, method);
    nh_solver_kind_parse(solver_name, &cfg.solver);
    cfg.h = 0.1;
    cfg.T = 50;
    cfg.every = 5;
    cfg.ensemble = 37; /* not a multiple of the block size */
    cfg.seed = 2024;
    cfg.threads = threads;
    cfg.energy = quartic ? 3.06 : 6.0;
    cfg.fit_window_start = 0.5;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_make_directory(dir, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_timeseries(dir, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_summary(dir, &cfg, &res, "test", &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_quantiles(dir, &res, &err), NH_OK), "%s", err.msg);
    nh_run_result_free(&res);
}

/* summary.json minus what legitimately depends on the thread count: threads, wall time, speed */
static cJSON *summary_without_timing(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = slurp(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j != NULL);
    cJSON_DeleteItemFromObject(j, "threads");
    cJSON_DeleteItemFromObject(j, "performance");
    return j;
}

static void check_thread_independence(const char *system, const char *method, const char *solver)
{
    char dirs[3][256], path[300];
    char *series[3], *quantiles[3];
    cJSON *summaries[3];
    for (int t = 0; t < 3; ++t) {
        snprintf(dirs[t], sizeof dirs[t], "/tmp/nhens-test-repro-%d-%s-%s-%s-%d", (int)getpid(), system, method, solver,
                 t + 1);
        run_to_dir(system, method, solver, t + 1, dirs[t]);
        snprintf(path, sizeof path, "%s/timeseries.csv", dirs[t]);
        series[t] = slurp(path);
        snprintf(path, sizeof path, "%s/quantiles.csv", dirs[t]);
        quantiles[t] = slurp(path);
        summaries[t] = summary_without_timing(dirs[t]);
    }
    for (int t = 1; t < 3; ++t) {
        cr_assert(strcmp(series[0], series[t]) == 0, "%s: timeseries.csv differs between 1 and %d threads", method, t + 1);
        cr_assert(strcmp(quantiles[0], quantiles[t]) == 0, "%s: quantiles.csv differs between 1 and %d threads", method,
                  t + 1);
        cr_assert(cJSON_Compare(summaries[0], summaries[t], 1), "%s: summary.json differs between 1 and %d threads",
                  method, t + 1);
    }
    for (int t = 0; t < 3; ++t) {
        free(series[t]);
        free(quantiles[t]);
        cJSON_Delete(summaries[t]);
        remove_tree(dirs[t]);
    }
}

Test(ensemble, same_seed_gives_identical_files_with_1_2_3_threads)
{
    check_thread_independence("quartic", "dla01", "newton");
    check_thread_independence("quartic", "dd", "kinsol");
    check_thread_independence("quartic", "lf", "newton");
    check_thread_independence("cvt", "gonzalez", "kinsol");   /* recentred angles, rho continued across them */
}

/* A test-only system whose force is undefined beyond x = 3: trajectories that get there fail with a
 * non-finite state (explicit methods) or a failed solve (implicit ones). V = -x (constant push),
 * A = [0, 1] freezes y. */
static double push_potential(const nh_system *s, const double *q)
{
    (void)s;
    return q[0] > 3.0 ? NAN : -q[0];
}

static void push_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    g[0] = q[0] > 3.0 ? NAN : -1.0;
    g[1] = 0.0;
}

static void push_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 4 * sizeof *h);
}

static void push_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    (void)q;
    a[0] = 0.0;
    a[1] = 1.0;
}

static void push_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    (void)u;
    memset(out, 0, 2 * sizeof *out);
}

static void push_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    (void)lam;
    memset(out, 0, 4 * sizeof *out);
}

static void push_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = 2.0 * nh_pcg32_uniform(rng) - 1.0;
    q[1] = 0.0;
}

static double push_minimum(const nh_system *s)
{
    (void)s;
    return -1.0;
}

static void push_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 2;
    *m = 1;
}

static const nh_system_type PUSH = {
    .name = "push", .summary = "test", .reference = "test", .dimensions = push_dimensions,
    .potential = push_potential, .potential_gradient = push_gradient, .potential_hessian = push_hessian,
    .constraint = push_constraint, .constraint_jacobian_velocity = push_jacobian_velocity,
    .constraint_jacobian_multiplier = push_jacobian_multiplier,
    .sample_configuration = push_sample, .minimum_energy = push_minimum,
};

static void failing_run(const char *method)
{
    nh_system s;
    nh_error err;
    cr_assert(eq(int, nh_system_init(&s, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    nh_run_config cfg = {.system = &s, .h = 0.05, .T = 4.0, .every = 2, .ensemble = 24, .seed = 1, .threads = 2,
                         .energy = 1.0, .fit_window_start = 0.5};
    make_method(&cfg.method, method);
    nh_run_result res;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    /* with E = 1, x' >= 0 for some states: starting at x0 >= -1 with speed up to 2 and unit push,
     * x reaches 3 within T = 4 for the fast right-movers; slow left-movers do not */
    cr_assert(res.failed > 0 && res.failed < 24, "%s: %ld of 24 failed", method, res.failed);
    cr_assert(eq(long, res.live[0], 24L));
    cr_assert(eq(long, res.live[res.n_out - 1], 24L - res.failed));
    for (long k = 1; k < res.n_out; ++k) {
        cr_assert(res.live[k] <= res.live[k - 1], "n_live never grows");
        for (int o = 0; o < nh_observer_count(); ++o) {
            const nh_accum *a = nh_run_accum(&res, k, o);
            cr_assert(isfinite(a->mean) && isfinite(a->m2) && isfinite(a->absmax), "no NaN reaches the statistics");
        }
    }
    for (int i = 0; i < res.n_reported; ++i)
        cr_assert(res.first_failures[i].time > 0 && res.first_failures[i].time <= 4.0);
    cr_assert(res.n_reported == (res.failed < NH_MAX_REPORTED_FAILURES ? res.failed : NH_MAX_REPORTED_FAILURES));
    nh_run_result_free(&res);
}

Test(ensemble, failed_trajectories_are_counted_and_left_out)
{
    failing_run("rk4");
    failing_run("dd");
}

/* Every trajectory of the push fails: x(t) >= -1 - 2t + t^2/2 reaches 3 by t = 5.5, so over T = 16 the
 * second half (the fit window) has no live trajectory. 24 trajectories: 3 chunks, fit groups by trajectory. */
static void all_fail_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    nh_error err;
    cr_assert(eq(int, nh_system_init(s, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    *cfg = (nh_run_config){.system = s, .h = 0.05, .T = 16.0, .every = 4, .ensemble = 24, .seed = 1, .threads = 2,
                           .energy = 1.0, .fit_window_start = 0.5, .shard = shard, .shards = shards};
    make_method(&cfg->method, "rk4");
}

/* The CSV row of `file` in dir whose n_live (second field) is `live`, the last such; NULL if none. */
static char *row_with_live(const char *dir, const char *file, long live)
{
    char path[512], *found = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = slurp(path), *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *comma = strchr(line, ',');
        if (comma && strtol(comma + 1, NULL, 10) == live && comma[1] != 'n') {
            free(found);
            found = strdup(line);
        }
    }
    free(text);
    return found;
}

/* Every field of a CSV row after the first `skip` is "nan" (the last `keep` excepted). */
static int fields_are_nan(const char *row, int skip, int keep)
{
    char *copy = strdup(row), *save = NULL;
    int i = 0, n = 0, bad = 0;
    for (const char *p = row; *p; ++p)
        n += *p == ',';
    for (char *f = strtok_r(copy, ",\n", &save); f; f = strtok_r(NULL, ",\n", &save), ++i)
        bad |= i >= skip && i <= n - keep && strcmp(f, "nan") != 0;
    free(copy);
    return !bad;
}

Test(failures, once_no_trajectory_is_live_every_output_is_nan_and_the_fit_null)
{
    /* Before, timeseries.csv wrote 0 for every statistic of a row without live trajectories, smoothed.csv averaged those zeros, summary.json had final_dH_var 0 and fitted the
     * window's zeros. */
    nh_system s;
    nh_run_config cfg;
    nh_run_result res;
    nh_error err;
    all_fail_config(&s, &cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, res.failed, 24L));
    cr_assert(eq(long, res.live[res.n_out - 1], 0L));
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/nhens-test-all-failed-%d", (int)getpid());
    remove_tree(dir);
    cr_assert(eq(int, nh_make_directory(dir, &err), NH_OK), "%s", err.msg);
    const int written = nh_write_run(dir, &cfg, &res, "test", 1.0, &err);
    cr_assert(eq(int, written, NH_OK), "%s", err.msg);
    char *dead = row_with_live(dir, "timeseries.csv", 0);
    cr_assert(dead != NULL, "a row without live trajectories (%s)", dir);
    cr_assert(fields_are_nan(dead, 2, 0), "no live trajectory: every statistic nan: %s", dead);
    char path[512];
    snprintf(path, sizeof path, "%s/smoothed.csv", dir);
    char *smoothed = slurp(path), *last = strrchr(smoothed, '\n');
    while (last > smoothed && last[-1] != '\n')
        --last;
    cr_assert(fields_are_nan(last, 2, 0), "smoothed: a window without live trajectories is nan: %s", last);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text), *fit = cJSON_GetObjectItem(root, "variance_fit");
    cJSON *ext = cJSON_GetObjectItem(root, "extremes");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(fit, "C")) && cJSON_IsNull(cJSON_GetObjectItem(fit, "a")) &&
              cJSON_IsNull(cJSON_GetObjectItem(fit, "p")), "a fit with no data is null");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(fit, "supported")));
    cr_assert(eq(int, cJSON_GetObjectItem(fit, "points")->valueint, 0));
    cr_assert(strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(fit, "caveats"), 0)->valuestring, "no fit") != NULL);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(ext, "final_dH_var")));
    cr_assert(eq(dbl, cJSON_GetObjectItem(ext, "final_n_live")->valuedouble, 0.0));
    cr_assert(cJSON_GetObjectItem(ext, "dH_absmax")->valuedouble > 0, "the extremes of the live part stay");
    cJSON_Delete(root);
    free(text);
    free(smoothed);
    free(dead);
    remove_tree(dir);
    nh_run_result_free(&res);
}

/* Which threads started trajectories: the interruption hook runs at the start of each trajectory (and
 * every NH_INTERRUPT_POLL_STEPS steps, which these runs do not reach). It pauses 2 ms, so that a block's
 * worker cannot finish all 8 before the other threads look for work (the push runs take microseconds). */
typedef struct trajectory_starts {
    int count;
    pthread_t thread[64];
} trajectory_starts;

static int note_start(void *ctx)
{
    trajectory_starts *starts = ctx;
    const int slot = __atomic_fetch_add(&starts->count, 1, __ATOMIC_SEQ_CST);
    if (slot < 64)
        starts->thread[slot] = pthread_self();
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    return 0;
}

static int distinct_threads(const trajectory_starts *starts)
{
    int distinct = 0;
    for (int i = 0; i < starts->count && i < 64; ++i) {
        int seen = 0;
        for (int j = 0; j < i; ++j)
            seen |= pthread_equal(starts->thread[i], starts->thread[j]);
        distinct += !seen;
    }
    return distinct;
}

/* One block of 8 trajectories on `threads` threads: the block's worker and the idle ones share it. */
static void run_one_block(nh_run_config cfg, int threads, nh_run_result *res, trajectory_starts *starts)
{
    nh_error err;
    *starts = (trajectory_starts){0};
    cfg.ensemble = NH_BLOCK_SIZE;
    cfg.threads = threads;
    cfg.interrupted = note_start;
    cfg.hook_ctx = starts;
    cr_assert(eq(int, nh_run_ensemble(&cfg, res, &err), NH_OK), "%s", err.msg);
}

/* The trajectories of a block that idle workers computed are taken in trajectory order, so sharing a block
 * changes no bit: statistics (crossings included), failures, counts. The 3-thread run must really share
 * its one block (at least 2 threads start trajectories; each of the 8 is started once), else the test
 * would prove nothing. */
static long check_shared_block(nh_run_config cfg, const char *what)
{
    nh_run_result one, three;
    trajectory_starts starts_one, starts_three;
    run_one_block(cfg, 1, &one, &starts_one);
    run_one_block(cfg, 3, &three, &starts_three);
    cr_assert(eq(int, starts_three.count, NH_BLOCK_SIZE), "%s: %d trajectory starts", what, starts_three.count);
    cr_assert(distinct_threads(&starts_three) >= 2, "%s: one thread ran the whole block", what);
    const size_t cells = (size_t)one.n_out * (size_t)nh_observer_count();
    cr_assert(memcmp(one.acc, three.acc, cells * sizeof *one.acc) == 0, "%s: statistics differ", what);
    cr_assert(memcmp(one.live, three.live, (size_t)one.n_out * sizeof *one.live) == 0, "%s: n_live differs", what);
    cr_assert(eq(long, one.failed, three.failed), "%s", what);
    cr_assert(memcmp(one.first_failures, three.first_failures, sizeof one.first_failures) == 0, "%s: failures", what);
    cr_assert(eq(long, one.completed_steps, three.completed_steps), "%s", what);
    cr_assert(eq(long, one.solver.iterations, three.solver.iterations), "%s", what);
    long crossings = 0;   /* latitude samples: section crossings, taken from the trajectories' records */
    const int event = nh_observer_event();
    for (long k = 0; event >= 0 && (one.observer_mask & (1u << event)) && k < one.n_out; ++k)
        crossings += (long)nh_run_accum(&one, k, event)->count;
    nh_run_result_free(&one);
    nh_run_result_free(&three);
    return crossings;
}

Test(ensemble, idle_workers_share_the_last_block_without_changing_a_bit)
{
    nh_system quartic, cvt, push;
    nh_error err;
    make_system(&quartic, "quartic", "n=3", NULL);
    make_system(&cvt, "cvt", "eps=0.1", NULL);
    cr_assert(eq(int, nh_system_init(&push, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    nh_run_config cfg = {.system = &quartic, .h = 0.1, .T = 50, .every = 5, .seed = 11, .energy = 3.06,
                         .fit_window_start = 0.5};
    make_method(&cfg.method, "gonzalez");
    check_shared_block(cfg, "quartic gonzalez");
    cfg.system = &cvt;   /* section crossings: the latitude observer */
    cfg.energy = 6.0;
    cfg.T = 100;
    cfg.every = 1;
    const long crossings = check_shared_block(cfg, "cvt gonzalez");
    cr_assert(crossings >= NH_BLOCK_SIZE, "cvt gonzalez: %ld section crossings (want several per trajectory)", crossings);
    cfg = (nh_run_config){.system = &push, .h = 0.05, .T = 4.0, .every = 2, .seed = 1, .energy = 1.0,
                          .fit_window_start = 0.5};
    make_method(&cfg.method, "dd");
    nh_run_result res;
    trajectory_starts starts;
    run_one_block(cfg, 1, &res, &starts);
    cr_assert(res.failed > 0 && res.failed < NH_BLOCK_SIZE, "push dd: %ld of 8 failed (want some)", res.failed);
    nh_run_result_free(&res);
    check_shared_block(cfg, "push dd (failures)");
}

static int validate(nh_run_config cfg, const char *expect)
{
    nh_error err = {{0}};
    int rc = nh_run_validate(&cfg, &err);
    if (expect)
        cr_assert(strstr(err.msg, expect) != NULL, "expected '%s' in: %s", expect, err.msg);
    return rc;
}

Test(ensemble, bad_configurations_are_refused_with_the_value)
{
    nh_system s;
    make_system(&s, "cvt", NULL, NULL);
    nh_run_config good = {.system = &s, .h = 0.1, .T = 10, .every = 1, .ensemble = 4, .seed = 1, .threads = 1,
                          .energy = 2.0, .fit_window_start = 0.5};
    make_method(&good.method, "lf");
    cr_assert(eq(int, validate(good, NULL), NH_OK));
    nh_run_config c = good;
    c.h = 0;
    cr_assert(eq(int, validate(c, "h=0"), NH_ERR_INPUT));
    c = good;
    c.h = -0.1;
    cr_assert(eq(int, validate(c, "h=-0.1"), NH_ERR_INPUT));
    c = good;
    c.T = 0.05;
    cr_assert(eq(int, validate(c, "T=0.05"), NH_ERR_INPUT));
    c = good;
    c.ensemble = 0;
    cr_assert(eq(int, validate(c, "N=0"), NH_ERR_INPUT));
    c = good;
    c.energy = -3;
    cr_assert(eq(int, validate(c, "energy -3"), NH_ERR_INPUT));
    c = good;
    c.preset = nh_system_find_preset(s.type, "rotating");
    cr_assert(eq(int, validate(c, "ensemble size must be 1"), NH_ERR_INPUT));
}

Test(ensemble, statistics_at_t0_are_exact)
{
    nh_system s;
    nh_run_config cfg = {0};
    nh_run_result res;
    nh_error err;
    make_system(&s, "quartic", NULL, NULL);
    cfg = (nh_run_config){.system = &s, .h = 0.1, .T = 1, .every = 1, .ensemble = 50, .seed = 9, .threads = 2,
                          .energy = 3.06, .fit_window_start = 0.5};
    make_method(&cfg.method, "dla01");
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK));
    cr_assert(eq(long, res.n_out, 11L));
    cr_assert(eq(dbl, nh_run_accum(&res, 0, 0)->absmax, 0.0), "dH(0) = 0 by definition");
    cr_assert(nh_run_accum(&res, 0, 2)->absmax < 1e-14, "sampled states lie on D");
    cr_assert(eq(long, res.completed_steps, 500L));
    cr_assert(ieee_ulp_eq(dbl, res.time[10], 1.0, 1));
    nh_run_result_free(&res);
}

/* One short run for a (system, preset or shell, method) triple; checks the claims of the method. */
static int short_run(const nh_system *s, const nh_preset *preset, const nh_method_type *type)
{
    nh_run_config cfg = {.system = s, .h = 0.05, .T = 0.5, .every = 1, .ensemble = 1, .seed = 3, .threads = 1,
                         .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON};
    nh_method_spec_defaults(&cfg.method, type, test_registry());
    if (preset && nh_preset_is_shell(preset)) {
        cfg.energy = preset->shell_energy;
        cfg.ensemble = 2;
    } else if (preset) {
        cfg.preset = preset;
    } else {
        cfg.energy = s->type->minimum_energy(s) + 2.0;
        cfg.ensemble = 2;
    }
    nh_error err;
    if (nh_method_spec_check(&cfg.method, s, &err)) {
        /* the only refusals among the registered systems: constant-mass methods on the sleigh */
        int expected = (nh_has_variable_mass(s) && strstr(err.msg, "constant mass matrix") != NULL) ||
                       (nh_is_reduced(s) && strstr(err.msg, "reduced form only") != NULL);
        cr_assert(expected, "%s/%s refused: %s", s->type->name, type->name, err.msg);
        return 0;
    }
    nh_run_result res;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s/%s: %s", s->type->name, type->name, err.msg);
    cr_assert(eq(long, res.failed, 0L), "%s/%s/%s: %ld failed", s->type->name, preset ? preset->name : "shell",
              type->name, res.failed);
    unsigned flags = nh_method_spec_flags(&cfg.method);
    for (long k = 0; k < res.n_out; ++k) {
        /* 10 steps: claims hold to round-off of O(1) quantities */
        if (flags & NH_METHOD_PRESERVES_CONSTRAINT)
            cr_assert(nh_run_accum(&res, k, 2)->absmax < 1e-12, "%s/%s: |A v| %g", s->type->name, type->name,
                      nh_run_accum(&res, k, 2)->absmax);
        if (flags & NH_METHOD_PRESERVES_ENERGY)
            cr_assert(nh_run_accum(&res, k, 0)->absmax < 1e-12, "%s/%s: |dH| %g", s->type->name, type->name,
                      nh_run_accum(&res, k, 0)->absmax);
    }
    nh_run_result_free(&res);
    return 1;
}

Test(ensemble, every_method_runs_every_preset_of_every_system)
{
    int runs = 0, pairs = 0;
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        const nh_system_type *t = nh_registry_system_at(test_registry(), k);
        for (int p = -1; p < t->n_presets; ++p) {
            const nh_preset *preset = p >= 0 ? &t->presets[p] : NULL;
            nh_system s;
            nh_error err;
            cr_assert(eq(int, nh_system_init(&s, t, preset, NULL, 0, &err), NH_OK), "%s", err.msg);
            for (int i = 0; i < nh_registry_method_count(test_registry()); ++i, ++pairs)
                runs += short_run(&s, preset, nh_registry_method_at(test_registry(), i));
        }
    }
    /* every other pair runs; the sleigh is served by the M(q)-capable methods (rk4 and the D* family) */
    cr_assert(runs >= pairs - 4 * nh_registry_method_count(test_registry()) && runs > 0, "%d of %d pairs ran", runs, pairs);
}

static double max_observed(const nh_run_result *res, const char *observer)
{
    int o = nh_observer_index(observer);
    return o < 0 ? NAN : nh_run_observer_max(res, o);
}

Test(ensemble, driver_energy_errors_match_methods_sheet)
{
    /* docs/METHODS.md Sect. 8, long runs (h = 0.1, T = 300, rotating driver, eps = 0): max driver-energy error
     * 8.4e-3 (DLA^{0,1}), 6.1e-4 (DD-Gonzalez), 1.7e-2 (LF). Two printed digits: agree within 6%. The
     * passenger energy is H - h, so its error is bounded by |dH| + |dh|. */
    const char *methods[] = {"dla01", "dd", "lf"};
    const double expected[] = {8.4e-3, 6.1e-4, 1.7e-2};
    nh_system s;
    make_system(&s, "cvt", NULL, "rotating");
    for (int i = 0; i < 3; ++i) {
        nh_run_config cfg = {.system = &s, .h = 0.1, .T = 300, .every = 1, .ensemble = 1, .seed = 1, .threads = 1,
                             .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON,
                             .preset = nh_system_find_preset(s.type, "rotating")};
        make_method(&cfg.method, methods[i]);
        nh_run_result res;
        nh_error err;
        cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
        double driver = max_observed(&res, "driver_energy"), passenger = max_observed(&res, "passenger_energy");
        cr_assert(fabs(driver / expected[i] - 1) < 0.06, "%s: driver error %g, docs/METHODS.md %g", methods[i], driver,
                  expected[i]);
        cr_assert(passenger <= max_observed(&res, "dH") + driver + 1e-15, "%s: passenger %g", methods[i], passenger);
        nh_run_result_free(&res);
    }
}

#include "nhens/poincare.h"
#include "nhens/reference.h"

static void cvt_rotating(nh_system *s, const char *eps, double *q, double *v)
{
    double proj;
    make_system(s, "cvt", eps, "rotating");
    nh_preset_state(s, nh_system_find_preset(s->type, "rotating"), q, v, &proj);
}

Test(latitude, the_exact_flow_keeps_the_latitude)
{
    /* CVODE at 1e-12 to the first five returns of the driver (k P): the latitude against the monodromy
     * axis is a first integral at the section, so it changes only by the tolerances (bound 1e-8) */
    nh_system s;
    nh_error err;
    double q0[3], v0[3], q[3], v[3], u[3];
    cvt_rotating(&s, "eps=0.1", q0, v0);
    nh_section_tracker tr;
    cr_assert(eq(int, nh_section_start(&tr, &s, q0, v0, NAN), 1));
    for (int k = 1; k <= 5; ++k) {
        cr_assert(eq(int, nh_reference_solve(&s, q0, v0, k * tr.period, 1e-12, 1e-12, q, v, &err), NH_OK));
        cr_assert(fabs(fmod(q[2] - q0[2], 2 * M_PI)) < 1e-8 || fabs(fmod(q[2] - q0[2], 2 * M_PI)) > 2 * M_PI - 1e-8,
                  "back on the section after %d periods", k);
        nh_reduced_vector(&s, q, v, u);
        cr_assert(fabs(nh_latitude(tr.axis, u) - tr.latitude0) < 1e-8, "period %d: latitude %g vs %g", k,
                  nh_latitude(tr.axis, u), tr.latitude0);
    }
}

Test(latitude, the_axis_is_the_fixed_direction_of_the_monodromy)
{
    /* geometry: start with u0 = c a (a the computed axis); after one driver period the exact flow returns
     * u(P) = R u0 = u0 (CVODE 1e-12: bound 1e-8), and the latitude of the axis itself is pi/2 */
    nh_system s;
    nh_error err;
    double q0[3], v0[3], q[3], v[3], u[3], k[2], kappa[4], f[2];
    int rows;
    cvt_rotating(&s, "eps=0.3", q0, v0);
    nh_section_tracker tr;
    cr_assert(eq(int, nh_section_start(&tr, &s, q0, v0, NAN), 1));
    s.type->coupled_structure(&s, q0[2], k, kappa, &rows, f);
    const double c = 1.3;
    q0[0] = c * tr.axis[0];
    q0[1] = c * tr.axis[1];
    v0[0] = c * tr.axis[2] * k[0];
    v0[1] = c * tr.axis[2] * k[1];
    cr_assert(eq(int, nh_reference_solve(&s, q0, v0, tr.period, 1e-12, 1e-12, q, v, &err), NH_OK));
    nh_reduced_vector(&s, q, v, u);
    for (int i = 0; i < 3; ++i)
        cr_assert(fabs(u[i] - c * tr.axis[i]) < 1e-8, "u(P)[%d] = %g, c a = %g", i, u[i], c * tr.axis[i]);
    cr_assert(ieee_ulp_eq(dbl, nh_latitude(tr.axis, tr.axis), M_PI / 2, 4));
}

/* mean |latitude error| over the first and the last tenth of the crossings of one run (h = 0.1, T = 3000) */
static void latitude_drift(const char *method, const char *eps, double *first, double *last)
{
    nh_system s;
    make_system(&s, "cvt", eps, "rotating");
    nh_run_config cfg = {.system = &s, .h = 0.1, .T = 3000, .every = 100, .ensemble = 1, .seed = 1, .threads = 1,
                         .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON,
                         .preset = nh_system_find_preset(s.type, "rotating")};
    make_method(&cfg.method, method);
    nh_run_result res;
    nh_error err;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    const int lat = nh_observer_index("latitude");
    double values[400];
    int count = 0;
    for (long k = 0; k < res.n_out && count < 400; ++k)
        if (nh_run_accum(&res, k, lat)->count > 0)
            values[count++] = nh_run_accum(&res, k, lat)->absmax;
    cr_assert(count > 100, "crossings recorded: %d", count);
    *first = *last = 0;
    for (int i = 0; i < count / 10; ++i) {
        *first += values[i] / (count / 10);
        *last += values[count - 1 - i] / (count / 10);
    }
    nh_run_result_free(&res);
}

Test(latitude, modin2020_fig_8_reversible_methods_and_the_leapfrog_exception)
{
    /* Modin & Verdier 2020, Fig. 8 (rotating driver): with eps = 0 reversible methods keep the latitude error bounded;
     * with eps = 0.1 they drift, except leap-frog. Measured (mean of first -> last tenth): dla01
     * 1.9e-3 -> 2.0e-3 (eps 0), 3.8e-3 -> 3.9e-2 (eps 0.1); lf 3.5e-3 -> 3.6e-3 (eps 0.1). Bounds: no drift
     * means a ratio below 1.5, drift a ratio above 3. */
    double a, b;
    latitude_drift("dla01", "eps=0", &a, &b);
    cr_assert(b < 1.5 * a, "dla01, eps 0: %g -> %g", a, b);
    latitude_drift("dla01", "eps=0.1", &a, &b);
    cr_assert(b > 3 * a, "dla01, eps 0.1: %g -> %g", a, b);
    latitude_drift("lf", "eps=0.1", &a, &b);
    cr_assert(b < 1.5 * a, "lf, eps 0.1: %g -> %g", a, b);
}

Test(latitude, another_section_is_a_parameter)
{
    /* section xi = 1 (the rotating driver starts at 0): the exact flow at t_s + k P (t_s the first
     * crossing) keeps the latitude against the axis taken there (CVODE 1e-12: bound 1e-8), and a method
     * run with the section records crossings */
    nh_system s;
    nh_error err;
    double q0[3], v0[3], q[3], v[3], u[3], ts;
    cvt_rotating(&s, "eps=0.1", q0, v0);
    nh_section_tracker tr;
    cr_assert(eq(int, nh_section_start(&tr, &s, q0, v0, 1.0), 1));
    cr_assert(eq(int, nh_driver_time_to_section(&s, q0, v0, 1.0, &ts, &err), NH_OK));
    cr_assert(ts > 0 && ts < tr.period, "t_s = %g, P = %g", ts, tr.period);
    for (int k = 0; k <= 3; ++k) {
        cr_assert(eq(int, nh_reference_solve(&s, q0, v0, ts + k * tr.period, 1e-12, 1e-12, q, v, &err), NH_OK));
        nh_reduced_vector(&s, q, v, u);
        cr_assert(fabs(nh_latitude(tr.axis, u) - tr.latitude0) < 1e-8, "k = %d", k);
    }
    nh_run_config cfg = {.system = &s, .h = 0.1, .T = 50, .every = 10, .ensemble = 1, .seed = 1, .threads = 1,
                         .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON, .section = 1.0, .have_section = 1,
                         .preset = nh_system_find_preset(s.type, "rotating")};
    make_method(&cfg.method, "dla01");
    nh_run_result res;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK));
    double crossings = 0;
    for (long k = 0; k < res.n_out; ++k)
        crossings += nh_run_accum(&res, k, nh_observer_index("latitude"))->count;
    /* T = 50 and P = 2.0: 24 or 25 crossings */
    cr_assert(crossings >= 24 && crossings <= 25, "crossings %g", crossings);
    nh_run_result_free(&res);
}

/* ---- shards and partial results ---- */

typedef void (*shard_config_fn)(nh_system *s, nh_run_config *cfg, long shard, long shards);

static void sized_shard_config(nh_system *s, nh_run_config *cfg, long ensemble, long shard, long shards)
{
    make_system(s, "quartic", "n=2", NULL);
    *cfg = (nh_run_config){.system = s, .h = 0.1, .T = 6, .every = 3, .ensemble = ensemble, .seed = 77, .threads = 2,
                           .energy = 3.2575, .fit_window_start = 0.5, .paths = 3, .shard = shard, .shards = shards};
    make_method(&cfg->method, "dla01");
}

static void shard_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    sized_shard_config(s, cfg, 2101, shard, shards);
}

/* 45 trajectories: 6 blocks in 6 chunks, so the fit groups are trajectories */
static void small_shard_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    sized_shard_config(s, cfg, 45, shard, shards);
}

/* Shard i of k computed, written as text and merged into whole (in order). */
static void merge_shard_of(shard_config_fn config, nh_run_result *whole, long i, long k)
{
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part;
    nh_error err;
    config(&s, &cfg, i, k);
    config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    cr_assert(text != NULL, "%s", err.msg);
    nh_partial *p = nh_partial_parse(text, "test", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, whole, &err), NH_OK), "shard %ld of %ld: %s", i, k, err.msg);
    nh_partial_free(p);
    free(text);
    nh_run_result_free(&part);
}

static void assert_same_statistics(const nh_run_result *a, const nh_run_result *b)
{
    const size_t cells = (size_t)a->n_out * (size_t)nh_observer_count();
    cr_assert(eq(int, memcmp(a->acc, b->acc, cells * sizeof *a->acc), 0), "accumulators differ bitwise");
    cr_assert(eq(int, memcmp(a->groups, b->groups, (size_t)a->n_out * NH_FIT_GROUPS * sizeof *a->groups), 0));
    cr_assert(eq(int, memcmp(a->live, b->live, (size_t)a->n_out * sizeof *a->live), 0));
    const size_t sketches = (size_t)(a->sketch_layout.rows * a->sketch_layout.n);
    cr_assert(eq(int, memcmp(a->sketch, b->sketch, sketches * sizeof *a->sketch), 0));
    cr_assert(eq(int, memcmp(a->paths, b->paths, (size_t)a->n_paths * cells * sizeof *a->paths), 0));
    cr_assert(eq(long, a->completed_steps, b->completed_steps));
    cr_assert(eq(long, a->failed, b->failed));
    cr_assert(eq(long, a->trajectories_done, b->trajectories_done));
    cr_assert(eq(int, a->complete, b->complete));
    cr_assert(a->fit.C == b->fit.C || (isnan(a->fit.C) && isnan(b->fit.C)), "C %g vs %g", a->fit.C, b->fit.C);
    cr_assert(a->fit.C_err == b->fit.C_err || (isnan(a->fit.C_err) && isnan(b->fit.C_err)));
    cr_assert(eq(int, a->fit.groups, b->fit.groups));
}

/* The whole run of config against its shards merged, for each shard count. */
static void check_shards_merge_bitwise(shard_config_fn config, const long *shard_counts, int n_counts)
{
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole;
    nh_error err;
    config(&s, &cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    for (int t = 0; t < n_counts; ++t) {
        nh_run_result merged;
        cr_assert(eq(int, nh_run_result_init(&cfg, &merged, &err), NH_OK), "%s", err.msg);
        for (long i = 0; i < shard_counts[t]; ++i)
            merge_shard_of(config, &merged, i, shard_counts[t]);
        nh_run_result_finish(&cfg, &merged);
        assert_same_statistics(&whole, &merged);
        nh_run_result_free(&merged);
    }
    nh_run_result_free(&whole);
}

typedef struct checkpoint_target {
    const char *path;
    const nh_run_config *cfg;
} checkpoint_target;

/* The merged-prefix hook: a checkpoint after the third chunk. */
static void checkpoint_at_third_chunk(const nh_run_result *partial, long next_block, void *ctx)
{
    const checkpoint_target *target = ctx;
    nh_error err;
    if (next_block == 3)
        cr_assert(eq(int, nh_checkpoint_save(target->path, target->cfg, partial, 0, NULL, &err), NH_OK), "%s",
                  err.msg);
}

Test(shards, a_small_run_resumed_from_a_checkpoint_is_bitwise_the_whole_run)
{
    /* 45 trajectories (fit groups by trajectory): checkpointed after 3 of 6 chunks, restored and continued,
     * the groups, fit and errors are those of the uninterrupted run */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-small-ck-%d.json", (int)getpid());
    small_shard_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cfg.merged = NULL;
    nh_checkpoint *ck = nh_checkpoint_load(path, &err);
    cr_assert(ck != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, resumed.next_block, 3L));
    cr_assert(eq(int, nh_run_ensemble_continue(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    assert_same_statistics(&whole, &resumed);
    nh_checkpoint_free(ck);
    remove(path);
    nh_run_result_free(&whole);
    nh_run_result_free(&resumed);
}

Test(shards, a_checkpoint_of_failed_trajectories_restores_its_failure_records)
{
    /* every trajectory fails: the failure counts, records and live counts pass the checks they must */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-failed-ck-%d.json", (int)getpid());
    all_fail_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, whole.failed, 24L));
    cfg.merged = NULL;
    nh_checkpoint *ck = nh_checkpoint_load(path, &err);
    cr_assert(ck != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, resumed.n_reported, NH_MAX_REPORTED_FAILURES));
    cr_assert(eq(int, memcmp(resumed.first_failures, whole.first_failures, sizeof whole.first_failures), 0));
    nh_checkpoint_free(ck);
    remove(path);
    nh_run_result_free(&whole);
    nh_run_result_free(&resumed);
}

Test(shards, parts_without_a_live_trajectory_merge_bitwise)
{
    /* every trajectory of the push fails: 3 chunks, 1 to 3 shards, each part ending with none live */
    const long counts[] = {1, 2, 3};
    check_shards_merge_bitwise(all_fail_config, counts, 3);
}

Test(shards, a_small_run_grouped_by_trajectory_merges_bitwise)
{
    /* 45 trajectories: the fit groups are trajectories (i mod 20: 20 groups, 19 degrees of freedom) and each
     * partial result carries its chunks' lanes; 1, 2, 5 and 6 shards (5 and 6 leave shards of one chunk) */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole;
    nh_error err;
    small_shard_config(&s, &cfg, 0, 0);
    cr_assert(nh_run_fit_groups_by_trajectory(&cfg));
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, whole.fit.groups, NH_FIT_GROUPS));
    cr_assert(eq(int, whole.fit.dof, NH_FIT_GROUPS - 1));
    cr_assert(isfinite(whole.fit.C_err) && whole.fit.C_err > 0);
    nh_run_result_free(&whole);
    const long counts[] = {1, 2, 5, 6};
    check_shards_merge_bitwise(small_shard_config, counts, 4);
    /* a part without its lanes is refused as damaged */
    small_shard_config(&s, &cfg, 0, 2);
    nh_run_config whole_cfg;
    small_shard_config(&s, &whole_cfg, 0, 0);
    nh_run_result part;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    char *lanes = strstr(text, "\"lanes\"");
    cr_assert(lanes != NULL, "a small run's part holds lanes");
    lanes[5] = 'z';
    cr_assert(nh_partial_parse(text, "no lanes", &err) == NULL, "an edit without its checksum is refused");
    cr_assert(strstr(err.msg, "checksum mismatch") != NULL, "%s", err.msg);
    char *sealed = reseal_text(text);
    nh_partial *p = nh_partial_parse(sealed, "no lanes", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "partial result 'no lanes': field 'chunk_stats[0].lanes' is missing") != NULL, "%s",
              err.msg);
    nh_partial_free(p);
    free(sealed);
    free(text);
    nh_run_result_free(&whole);
    nh_run_result_free(&part);
}

Test(shards, merged_partial_results_are_the_whole_run_bitwise)
{
    /* 2101 trajectories = 263 blocks in 256 chunks: some chunks hold two blocks, so the two-level merge
     * order is exercised; 1, 2 and 5 shards (5 does not divide 256) */
    nh_system s;
    nh_run_config cfg;
    shard_config(&s, &cfg, 0, 0);
    cr_assert(eq(long, nh_run_chunk_count(&cfg), NH_MERGE_CHUNKS));
    cr_assert(eq(int, nh_run_fit_groups_by_trajectory(&cfg), 0));
    const long shard_counts[] = {1, 2, 5};
    check_shards_merge_bitwise(shard_config, shard_counts, 3);
}

Test(shards, out_of_order_damaged_and_foreign_parts_are_refused)
{
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part, whole;
    nh_error err;
    shard_config(&s, &cfg, 1, 2);
    shard_config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    nh_partial *p = nh_partial_parse(text, "second", &err);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT), "shard 2 before shard 1");
    cr_assert(strstr(err.msg, "does not continue") != NULL, "%s", err.msg);
    nh_partial_free(p);
    /* a foreign seed */
    whole_cfg.seed = 78;
    nh_run_result_free(&whole);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    whole.next_block = nh_run_chunk_first_block(&whole_cfg, 128);
    p = nh_partial_parse(text, "second", &err);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "another configuration") != NULL, "%s", err.msg);
    nh_partial_free(p);
    /* a damaged accumulator string (one hex digit replaced) */
    whole_cfg.seed = 77;
    nh_run_result_free(&whole);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    whole.next_block = nh_run_chunk_first_block(&whole_cfg, 128);
    char *acc = strstr(text, "\"accumulators\":\"");
    cr_assert(acc != NULL);
    acc[20] = 'z';
    cr_assert(nh_partial_parse(text, "damaged", &err) == NULL);
    cr_assert(strstr(err.msg, "partial result 'damaged': checksum mismatch") != NULL, "%s", err.msg);
    char *sealed = reseal_text(text);
    p = nh_partial_parse(sealed, "damaged", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "field 'chunk_stats[0].accumulators' is") != NULL, "%s", err.msg);
    nh_partial_free(p);
    free(sealed);
    cr_assert(nh_partial_parse("{\"format\":\"nhens-checkpoint\"}", "other", &err) == NULL);
    cr_assert(strstr(err.msg, "not an nhens partial-result") != NULL, "%s", err.msg);
    free(text);
    nh_run_result_free(&whole);
    nh_run_result_free(&part);
}

/* A state's text with one member changed: KEY (top level, or "chunk0.KEY" in the first chunk) becomes the
 * JSON value VALUE, or, with VALUE "@INDEX=HEX", the INDEX-th double of the hex string KEY becomes HEX;
 * "VALUE|KEY2=VALUE2" changes a second top-level member too; then resealed (tests/reseal.h). */
static char *edited_state(const char *text, const char *key, const char *value)
{
    char first[256], *second = NULL;
    snprintf(first, sizeof first, "%s", value);
    if ((second = strchr(first, '|'))) {
        *second++ = '\0';
        char *eq = strchr(second, '=');
        *eq = '\0';
        char *once = edited_state(text, second, eq + 1);
        char *both = edited_state(once, key, first);
        free(once);
        return both;
    }
    cJSON *root = cJSON_Parse(text);
    cJSON *obj = root;
    if (!strncmp(key, "chunk0.", 7)) {
        obj = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "chunk_stats"), 0);
        key += 7;
    }
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert(item != NULL, "no %s", key);
    if (value[0] == '@') {
        const long index = strtol(value + 1, NULL, 10);
        cr_assert(cJSON_IsString(item) && (long)strlen(item->valuestring) >= 16 * (index + 1));
        memcpy(item->valuestring + 16 * index, strchr(value, '=') + 1, 16);
    } else {
        cr_assert(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_Parse(value)));
    }
    char *plain = cJSON_PrintUnformatted(root);
    char *sealed = reseal_text(plain);
    cJSON_free(plain);
    cJSON_Delete(root);
    return sealed;
}

typedef struct tampering {
    const char *key, *value, *message;
} tampering;

Test(shards, a_resealed_part_out_of_its_domain_is_refused_naming_the_field)
{
    /* the checksum caught aside: each edit is resealed, so the domain and consistency checks must catch it */
    static const tampering cases[] = {
        {"chunk0.accumulators", "@1=7ff8000000000000", "field 'chunk_stats[0].accumulators' entry 1 (the mean of output 0"},
        {"chunk0.accumulators", "@1=7ff0000000000000", "entry 1 (the mean of output 0, observer dH) is inf; allowed: finite"},
        {"chunk0.accumulators", "@2=bff0000000000000", "entry 2 (the m2 of output 0, observer dH) is -1; allowed: finite and >= 0"},
        {"chunk0.accumulators", "@0=4004000000000000", "entry 0 (the count of output 0, observer dH) is 2.5; allowed: a whole count"},
        {"chunk0.accumulators", "@0=c020000000000000", "(the count of output 0, observer dH) is -8"},
        {"chunk0.accumulators", "@28=3ff0000000000000", "(the counts of output 1, observer dH, summed over the chunks) is 17; allowed: 24"},
        {"chunk0.first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "first_failures of every chunk) is 1 failure records; allowed: at most 0"},
        {"chunk0.first_failures", "[{\"trajectory\":\"99\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "field 'chunk_stats[0].first_failures' entry 0 is trajectory 99; allowed: trajectories 0 to 7"},
        {"failed", "\"-1\"", "field 'failed' is '-1'; allowed: a whole number from 0 to 24"},
        {"failed", "\"2\"", "field 'failures_by_status' is 0 failures in all; allowed: 2"},
        {"failures_by_status", "[0,0.5,0,0,0,0,0,0]", "field 'failures_by_status' entry 1 is 0.5"},
        {"solver_failures", "\"1\"", "field 'solver_failures' is '1'; allowed: a whole number from 0 to 0"},
        {"completed_steps", "\"7\"", "field 'completed_steps' is 7; allowed:"},
        {"wall_seconds", "-1", "field 'wall_seconds' is -1; allowed: finite seconds >= 0"},
        {"method_seconds", "\"1\"", "field 'method_seconds' is '1'; allowed: finite seconds >= 0"},
        {"live", "[25]", "field 'live' is a list of 1; allowed: a list of"},
        {"sketches", "\"1:1,\"", "the sketch of observer"},
        {"sketches", "\"2:1,1:1,\"", "field 'sketches' entry 1 (its cell and bin) is out of order or range"},
        {"shard", "{\"index\":\"2\",\"count\":\"2\",\"first_chunk\":\"0\",\"chunks\":\"3\",\"total_chunks\":\"6\",\"interrupted\":false}",
         "field 'shard' is shard 2 of 2 with chunks 0 to 2; allowed: chunks 3 to 5"},
        {"shard", "{\"index\":\"1\",\"count\":\"2\",\"first_chunk\":\"0\",\"chunks\":\"3\",\"total_chunks\":\"6\",\"interrupted\":true}",
         "field 'shard' is interrupted shard 1 of 2 with chunks 0 to 2; allowed: fewer chunks than 0 to 2"},
        {"next_block", "\"6\"", "field 'next_block' is '6'; allowed: '3'"},
        {"trajectories_done", "\"45\"", "field 'trajectories_done' is '45'; allowed: '24'"},
        {"chunk0.lanes", "@0=7ff0000000000000", "field 'chunk_stats[0].lanes' entry 0 is inf"},
    };
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part, whole;
    nh_error err;
    small_shard_config(&s, &cfg, 0, 2);
    small_shard_config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *sealed = edited_state(text, cases[i].key, cases[i].value);
        nh_partial *p = nh_partial_parse(sealed, "edited", &err);
        cr_assert(p != NULL, "%s: %s", cases[i].key, err.msg);
        cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
        cr_expect(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT), "%s %s accepted", cases[i].key,
                  cases[i].value);
        cr_expect(strstr(err.msg, cases[i].message) != NULL && strstr(err.msg, "partial result 'edited': ") == err.msg,
                  "%s %s: %s", cases[i].key, cases[i].value, err.msg);
        nh_partial_free(p);
        nh_run_result_free(&whole);
        free(sealed);
    }
    /* resealed but unchanged, the part merges */
    char *sealed = reseal_text(text);
    cr_assert(strcmp(sealed, text) == 0, "the writer's checksum is the documented one");
    free(sealed);
    free(text);
    nh_run_result_free(&part);
}

Test(shards, a_resealed_checkpoint_out_of_its_domain_is_refused_naming_the_field)
{
    static const tampering cases[] = {
        {"accumulators", "@5=7ff8000000000000", "checkpoint 'edited': field 'accumulators' entry 5 (the mean of output 0, observer"},
        {"accumulators", "@6=bff0000000000000", "field 'accumulators' entry 6 (the m2 of output 0"},
        {"accumulators", "@4=4010000000000000", "field 'accumulators' entry 4 (the count of output 0, observer"},
        {"groups", "@2=bff0000000000000", "field 'groups' entry 2 (the m2 of output 0 of fit group 0) is -1"},
        {"groups", "@0=3ff0000000000000", "field 'groups' (the counts of output 0 summed over the fit groups) is"},
        {"next_block", "\"6\"|trajectories_done=\"45\"", "field 'completed_steps' is 1440; allowed: 2700 to 2700"},
        {"next_block", "\"4\"", "field 'trajectories_done' is 24; allowed: 32, the trajectories of the first 4 blocks"},
        {"next_block", "\"9\"", "field 'next_block' is 9; allowed: the first block of a chunk, 0 to 6"},
        {"trajectories_done", "\"23\"", "field 'trajectories_done' is 23; allowed: 24"},
        {"live", "[1]", "field 'live' is a list of 1; allowed: a list of"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "field 'first_failures' entry 0 is status 1; allowed: a status counted in failures_by_status"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"7ff8000000000000\",\"status\":1}]",
         "field 'first_failures' entry 0 is a failure at t = nan; allowed: a time from 0 to T"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1.5}]",
         "field 'first_failures' entry 0 (status) is 1.5; allowed: a whole number from 0 to 7"},
        {"reference_seconds", "1e999", "field 'reference_seconds' is null; allowed: finite seconds >= 0"},
        {"paths_first", "\"1\"", "field 'paths_first' is '1'"},
    };
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-edited-ck-%d.json", (int)getpid());
    small_shard_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cfg.merged = NULL;
    size_t size;
    char *text = nh_read_file(path, 1 << 26, &size, &err);
    cr_assert(text != NULL, "%s", err.msg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *sealed = edited_state(text, cases[i].key, cases[i].value), edited[160];
        snprintf(edited, sizeof edited, "/tmp/nhens-test-edited-%d", (int)getpid());
        FILE *f = fopen(edited, "w");
        fputs(sealed, f);
        fclose(f);
        nh_checkpoint *ck = nh_checkpoint_load(edited, &err);
        cr_assert(ck != NULL, "%s", err.msg);
        cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK));
        cr_expect(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_ERR_INPUT), "%s %s accepted",
                  cases[i].key, cases[i].value);
        const char *message = strstr(cases[i].message, "checkpoint 'edited': ") == cases[i].message
                                  ? cases[i].message + strlen("checkpoint 'edited': ") : cases[i].message;
        cr_expect(strstr(err.msg, message) != NULL, "%s %s: %s", cases[i].key, cases[i].value, err.msg);
        nh_checkpoint_free(ck);
        nh_run_result_free(&resumed);
        remove(edited);
        free(sealed);
    }
    free(text);
    remove(path);
    nh_run_result_free(&whole);
}

/* ---- the user's initial states, perturbation and burn-in ---- */

Test(initial_states, perturbed_states_lie_on_the_presets_energy_shell_and_on_D_q)
{
    nh_system s;
    make_system(&s, "quartic", "n=2", NULL);
    const nh_preset *p = nh_system_find_preset(s.type, "anahory2022-fig1");
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM], q[NH_MAX_DIM], v[NH_MAX_DIM], change;
    cr_assert(eq(int, nh_preset_state(&s, p, q0, v0, &change), NH_OK));
    const double e0 = nh_energy(&s, q0, v0);
    double mean_distance = 0;
    for (int i = 0; i < 200; ++i) {
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, 5, (uint64_t)i);
        cr_assert(eq(int, nh_perturbed_state(&s, p, 1e-3, &rng, q, v), NH_OK));
        /* energy: a rescaling by sqrt(kinetic ratio), so a few ulps of E0 = 3.26 */
        cr_assert(fabs(nh_energy(&s, q, v) - e0) < 1e-14 * e0, "H = %.17g, preset %.17g", nh_energy(&s, q, v), e0);
        /* constraint: the M-orthogonal projection, to round-off of |v| ~ 0.7 */
        cr_assert(nh_constraint_residual(&s, q, v) < 1e-14);
        double d = 0;
        for (int j = 0; j < s.n; ++j)
            d += (q[j] - q0[j]) * (q[j] - q0[j]);
        mean_distance += sqrt(d) / 200;
    }
    /* |eps N(0, I_5)| has mean eps * 2.13 (chi distribution with 5 degrees of freedom): 20 % for 200 samples */
    cr_assert(fabs(mean_distance / 1e-3 - 2.13) < 0.4, "mean |q - q0| = %g eps", mean_distance / 1e-3);
}

Test(initial_states, off_distribution_rows_are_refused_by_number_or_projected)
{
    nh_system s;
    nh_error err;
    make_system(&s, "quartic", "n=2", NULL);
    double rows[2][10] = {{1, 0, 1, -1, -1, 0.05, 0.5, -0.5, -0.1, -0.05}, {0.5, 0.1, 0.2, 0.3, -0.2, 0.1, 0.2, 0.3, 0.1, 0.1}};
    /* row 1 is the state of Anahory Simoes et al. 2022, exactly on D_q (0.05 + 0 (-0.1) + 1 (-0.05) = 0); row 2 is
     * off by 0.13 */
    cr_assert(eq(int, nh_initial_states_check(&s, &rows[0][0], 2, 0, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "row 2") != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_initial_states_check(&s, &rows[0][0], 2, 1, &err), NH_OK), "%s", err.msg);
    for (int r = 0; r < 2; ++r)
        cr_assert(nh_constraint_residual(&s, rows[r], rows[r] + 5) < 1e-15);
    cr_assert(eq(int, nh_initial_states_check(&s, &rows[0][0], 2, 0, &err), NH_OK), "projected rows pass");
}

Test(initial_states, burn_in_continues_the_trajectory_that_t0_would_have_started)
{
    /* one preset trajectory: a run with burn-in 2 over T = 3 observes the states of a run over T = 5 at
     * t = 2..5; its energy errors are those differences, dH_b(t) = dH(t + 2) - dH(2), up to the rounding of
     * the two subtractions (a few ulps of H = 3.26) */
    nh_system s;
    nh_run_config cfg = {0};
    nh_run_result plain, burnt;
    nh_error err;
    make_system(&s, "quartic", "n=2", NULL);
    cfg.system = &s;
    make_method(&cfg.method, "lf");
    cfg.preset = nh_system_find_preset(s.type, "anahory2022-fig1");
    cfg.h = 0.05, cfg.T = 5, cfg.every = 20, cfg.ensemble = 1, cfg.threads = 1, cfg.fit_window_start = 0.5;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &plain, &err), NH_OK), "%s", err.msg);
    cfg.T = 3, cfg.burn_in = 2;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &burnt, &err), NH_OK), "%s", err.msg);
    const int dh = nh_observer_index("dH");
    for (long k = 0; k < burnt.n_out; ++k) {
        const double expected = nh_run_accum(&plain, k + 2, dh)->mean - nh_run_accum(&plain, 2, dh)->mean;
        cr_assert(fabs(nh_run_accum(&burnt, k, dh)->mean - expected) < 4e-15, "k = %ld: %g vs %g", k,
                  nh_run_accum(&burnt, k, dh)->mean, expected);
    }
    cr_assert(eq(long, burnt.completed_steps, 100), "burn-in steps are counted: 40 + 60");
    nh_run_result_free(&plain);
    nh_run_result_free(&burnt);
}

/* ---- the global error against a CVODE reference (the work-precision measure) ---- */

static int res_has(const nh_run_result *res, int observer)
{
    return (res->observer_mask >> observer) & 1u;
}

static void global_error_run(const char *method, double h, int threads, nh_run_result *res)
{
    nh_system s;
    nh_run_config cfg = {0};
    nh_error err;
    make_system(&s, "quartic", "n=3", NULL);
    cfg = (nh_run_config){.system = &s, .h = h, .T = 2, .every = (long)lround(0.5 / h), .ensemble = 11, .seed = 3,
                          .threads = threads, .energy = 3.06, .fit_window_start = 0.1, .observe = "all,error"};
    make_method(&cfg.method, method);
    cr_assert(eq(int, nh_run_ensemble(&cfg, res, &err), NH_OK), "%s", err.msg);
}

Test(global_error, matches_an_independent_step_loop_and_converges_at_the_methods_order)
{
    const int e = nh_observer_reference();
    nh_run_result coarse, fine, three;
    global_error_run("dla01", 0.1, 2, &coarse);
    global_error_run("dla01", 0.05, 2, &fine);
    global_error_run("dla01", 0.1, 3, &three);
    cr_assert(res_has(&coarse, e), "the error observer is recorded when named");
    cr_assert(eq(dbl, nh_run_accum(&coarse, 0, e)->absmax, 0.0), "z(0) = z_ref(0)");
    /* trajectory 0 stepped here with the same stepper, compared with a one-shot CVODE solve to T = 2 */
    nh_system s;
    nh_error err;
    make_system(&s, "quartic", "n=3", NULL);
    double q[NH_MAX_DIM], v[NH_MAX_DIM], qr[NH_MAX_DIM], vr[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS];
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, 3, 0);
    cr_assert(eq(int, nh_energy_shell_sample(&s, 3.06, &rng, q, v), NH_OK));
    cr_assert(eq(int, nh_reference_solve(&s, q, v, 2.0, NH_REFERENCE_TOLERANCE, NH_REFERENCE_TOLERANCE, qr, vr, &err),
                 NH_OK));
    nh_method_spec spec;
    make_method(&spec, "dla01");
    nh_stepper *st = nh_stepper_create(&spec, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL && nh_stepper_start(st, q, v, carried) == NH_OK);
    for (int k = 0; k < 20; ++k)
        cr_assert(eq(int, nh_stepper_step(st, 0.1, q, v, carried), NH_OK));
    nh_stepper_free(st);
    const double mine = nh_global_error(s.n, q, v, qr, vr), last = nh_run_accum(&coarse, coarse.n_out - 1, e)->absmax;
    /* the ensemble's max at T is over 11 trajectories: at least trajectory 0's, and of its size */
    cr_assert(last >= mine * (1 - 1e-9) && last < 10 * mine, "max %g, trajectory 0 %g", last, mine);
    /* order 2: halving h divides the mean global error at T by 4 (15 % for 11 trajectories of a chaotic flow) */
    const double ratio = nh_run_accum(&coarse, coarse.n_out - 1, e)->mean / nh_run_accum(&fine, fine.n_out - 1, e)->mean;
    cr_assert(fabs(ratio / 4 - 1) < 0.15, "error ratio %g for h -> h/2", ratio);
    /* each worker restarts its reference per trajectory: the same bits with 2 and 3 threads */
    for (long k = 0; k < coarse.n_out; ++k)
        cr_assert(eq(dbl, nh_run_accum(&coarse, k, e)->mean, nh_run_accum(&three, k, e)->mean));
    cr_assert(coarse.reference_seconds > 0 && coarse.method_seconds > 0, "both costs are measured");
    nh_run_result_free(&coarse);
    nh_run_result_free(&fine);
    nh_run_result_free(&three);
}

Test(global_error, is_not_recorded_by_all_and_costs_nothing_then)
{
    nh_system s;
    nh_run_config cfg = {0};
    nh_run_result res;
    nh_error err;
    make_system(&s, "quartic", "n=3", NULL);
    cfg = (nh_run_config){.system = &s, .h = 0.1, .T = 1, .every = 1, .ensemble = 4, .seed = 3, .threads = 1,
                          .energy = 3.06, .fit_window_start = 0.1};
    make_method(&cfg.method, "lf");
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(res_has(&res, nh_observer_reference()) == 0);
    cr_assert(eq(dbl, res.reference_seconds, 0.0), "quartic has no section: no reference at all");
    cr_assert(isfinite(nh_run_ns_per_step(&res)) && nh_run_ns_per_step(&res) > 0);
    nh_run_result_free(&res);
}
