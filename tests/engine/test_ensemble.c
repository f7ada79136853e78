/* The ensemble driver: bitwise reproducibility across thread counts, block sharing and concurrent runs,
 * failure accounting, input validation, and every method on every preset of every system. */
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
#include "ensemble_fixtures.h"
#include "scratch.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/output.h"
#include "nhens/registry.h"
#include "run_result.h"

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
    nh_run_result_clear(&res);
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
        for (int o = 0; o < nh_observer_count(nh_observer_table_builtin()); ++o) {
            const nh_accum *a = nh_run_accum(&res, k, o);
            cr_assert(isfinite(a->mean) && isfinite(a->m2) && isfinite(a->absmax), "no NaN reaches the statistics");
        }
    }
    for (int i = 0; i < res.n_reported; ++i)
        cr_assert(res.first_failures[i].time > 0 && res.first_failures[i].time <= 4.0);
    cr_assert(res.n_reported == (res.failed < NH_MAX_REPORTED_FAILURES ? res.failed : NH_MAX_REPORTED_FAILURES));
    nh_run_result_clear(&res);
}

Test(ensemble, failed_trajectories_are_counted_and_left_out)
{
    failing_run("rk4");
    failing_run("dd");
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
    nh_run_result_clear(&res);
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
    const size_t cells = (size_t)one.n_out * (size_t)nh_observer_count(nh_observer_table_builtin());
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
    nh_run_result_clear(&one);
    nh_run_result_clear(&three);
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
    nh_run_result_clear(&res);
    check_shared_block(cfg, "push dd (failures)");
}

/* Two runs at once in one process: each run's hook waits (up to 10 s) at its first trajectory until the
 * other run has started one too, so the two really overlap; a run that never saw the other counts as
 * alone, and the test fails, else it would prove nothing. */
typedef struct meeting {
    int started[2];
    int met[2];
} meeting;

typedef struct meeting_side {
    meeting *meeting;
    int me;
} meeting_side;

static int meet_the_other_run(void *ctx)
{
    meeting_side *side = ctx;
    meeting *m = side->meeting;
    __atomic_store_n(&m->started[side->me], 1, __ATOMIC_SEQ_CST);
    const struct timespec pause = {0, 1000000};
    for (int waited = 0; !__atomic_load_n(&m->met[side->me], __ATOMIC_SEQ_CST) && waited < 10000; ++waited) {
        if (__atomic_load_n(&m->started[1 - side->me], __ATOMIC_SEQ_CST))
            __atomic_store_n(&m->met[side->me], 1, __ATOMIC_SEQ_CST);
        else
            nanosleep(&pause, NULL);
    }
    return 0;
}

typedef struct concurrent_run {
    nh_run_config cfg;
    nh_run_result res;
    nh_error err;
    int rc;
} concurrent_run;

static void *run_in_thread(void *arg)
{
    concurrent_run *run = arg;
    run->rc = nh_run_ensemble(&run->cfg, &run->res, &run->err);
    return NULL;
}

/* The run's timeseries.csv, as written. */
static char *timeseries_text(const nh_run_result *res, const char *name)
{
    char dir[256], path[300];
    nh_error err;
    snprintf(dir, sizeof dir, "/tmp/nhens-test-concurrent-%d-%s", (int)getpid(), name);
    cr_assert(eq(int, nh_make_directory(dir, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_timeseries(dir, res, &err), NH_OK), "%s", err.msg);
    snprintf(path, sizeof path, "%s/timeseries.csv", dir);
    char *text = slurp(path);
    remove_tree(dir);
    return text;
}

static void assert_same_run(const nh_run_result *alone, const nh_run_result *together, const char *what)
{
    const size_t cells = (size_t)alone->n_out * (size_t)nh_observer_count(nh_observer_table_builtin());
    cr_assert(memcmp(alone->acc, together->acc, cells * sizeof *alone->acc) == 0, "%s: accumulators differ", what);
    cr_assert(memcmp(alone->groups, together->groups, (size_t)alone->n_out * NH_FIT_GROUPS * sizeof *alone->groups) == 0,
              "%s: fit groups differ", what);
    cr_assert(memcmp(alone->live, together->live, (size_t)alone->n_out * sizeof *alone->live) == 0, "%s: live", what);
    const size_t sketches = (size_t)(alone->sketch_layout.rows * alone->sketch_layout.n);
    cr_assert(memcmp(alone->sketch, together->sketch, sketches * sizeof *alone->sketch) == 0, "%s: sketches", what);
    cr_assert(memcmp(alone->paths, together->paths, (size_t)alone->n_paths * cells * sizeof *alone->paths) == 0,
              "%s: paths differ", what);
    cr_assert(memcmp(alone->first_failures, together->first_failures, sizeof alone->first_failures) == 0, "%s", what);
    cr_assert(eq(long, alone->failed, together->failed), "%s", what);
    cr_assert(eq(long, alone->completed_steps, together->completed_steps), "%s", what);
    cr_assert(eq(long, alone->solver.iterations, together->solver.iterations), "%s", what);
    char *series_alone = timeseries_text(alone, "alone"), *series_together = timeseries_text(together, "together");
    cr_assert(strcmp(series_alone, series_together) == 0, "%s: timeseries.csv differs", what);
    free(series_alone);
    free(series_together);
}

/* Two runs in one process at the same time, each on 2 threads (a caller's two threads, e.g. Python's),
 * give the bytes each gives alone: they share no state, lock or merge. One is the CVT on an implicit
 * method with section crossings, the CVODE global error and sample paths; the other the push, whose dd
 * trajectories partly fail. */
Test(ensemble, two_runs_at_once_in_one_process_give_the_bytes_of_each_alone)
{
    nh_system cvt, push;
    nh_error err;
    make_system(&cvt, "cvt", "eps=0.5", NULL);
    cr_assert(eq(int, nh_system_init(&push, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    concurrent_run runs[2] = {
        {.cfg = {.system = &cvt, .h = 0.1, .T = 20, .every = 2, .ensemble = 21, .seed = 5, .threads = 2,
                 .energy = 6.0, .fit_window_start = 0.5, .observe = "all,error", .paths = 2}},
        {.cfg = {.system = &push, .h = 0.05, .T = 4.0, .every = 2, .ensemble = 40, .seed = 1, .threads = 2,
                 .energy = 1.0, .fit_window_start = 0.5}},
    };
    make_method(&runs[0].cfg.method, "dla");
    make_method(&runs[1].cfg.method, "dd");
    nh_run_result alone[2];
    for (int i = 0; i < 2; ++i)
        cr_assert(eq(int, nh_run_ensemble(&runs[i].cfg, &alone[i], &err), NH_OK), "%s", err.msg);
    cr_assert(alone[1].failed > 0 && alone[1].failed < 40, "push dd: %ld of 40 failed (want some)", alone[1].failed);
    meeting m = {{0}, {0}};
    meeting_side sides[2] = {{&m, 0}, {&m, 1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) {
        runs[i].cfg.interrupted = meet_the_other_run;
        runs[i].cfg.hook_ctx = &sides[i];
        cr_assert(eq(int, pthread_create(&threads[i], NULL, run_in_thread, &runs[i]), 0));
    }
    for (int i = 0; i < 2; ++i)
        cr_assert(eq(int, pthread_join(threads[i], NULL), 0));
    for (int i = 0; i < 2; ++i) {
        cr_assert(eq(int, runs[i].rc, NH_OK), "run %d: %s", i, runs[i].err.msg);
        cr_assert(m.met[i], "run %d never ran while the other did", i);
        assert_same_run(&alone[i], &runs[i].res, i == 0 ? "cvt dla" : "push dd");
        nh_run_result_clear(&alone[i]);
        nh_run_result_clear(&runs[i].res);
    }
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

/* One short run for a (system, preset, method) triple (two states of a shell preset); checks the claims of the
 * method. */
static int short_run(const nh_system *s, const nh_preset *preset, const nh_method_type *type)
{
    nh_run_config cfg = {.system = s, .h = 0.05, .T = 0.5, .every = 1, .ensemble = 1, .seed = 3, .threads = 1,
                         .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON};
    nh_method_spec_defaults(&cfg.method, type, test_registry());
    if (nh_preset_is_shell(preset)) {
        cfg.energy = preset->shell_energy;
        cfg.ensemble = 2;
    } else {
        cfg.preset = preset;
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
    cr_assert(eq(long, res.failed, 0L), "%s/%s/%s: %ld failed", s->type->name, preset->name,
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
    nh_run_result_clear(&res);
    return 1;
}

Test(ensemble, every_method_runs_every_preset_of_every_system)
{
    int runs = 0, pairs = 0;
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        const nh_system_type *t = nh_registry_system_at(test_registry(), k);
        for (int p = 0; p < t->n_presets; ++p) {   /* every built-in system declares a shell among them */
            const nh_preset *preset = &t->presets[p];
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

/* nh_run_config_init holds `nhens run`'s defaults (cli/cli_run.c takes them from it): with a system, a method,
 * h, T and an energy it is a valid configuration, and the run's summary records the fit window 0.1. */
Test(ensemble, config_init_gives_the_command_line_defaults)
{
    nh_run_config cfg;
    nh_run_config_init(&cfg);
    cr_assert(eq(int, (int)cfg.solver, (int)NH_SOLVER_KINSOL));
    cr_assert(eq(dbl, cfg.fit_window_start, 0.1));
    cr_assert(eq(long, cfg.ensemble, 100));
    cr_assert(eq(u64, cfg.seed, 1));
    cr_assert(eq(long, cfg.every, 1));
    cr_assert(cfg.threads >= 1 && isnan(cfg.section) && !cfg.have_section && !cfg.observe && !cfg.preset);
    nh_error err;
    cr_assert(eq(int, nh_run_validate(&cfg, &err), NH_ERR_INPUT), "no system yet");
    cr_assert(strstr(err.msg, "no system in the run configuration") != NULL, "%s", err.msg);
    nh_registry *reg = nh_registry_create(&err);
    nh_system sys;
    cr_assert(eq(int, nh_system_init(&sys, nh_registry_find_system(reg, "cvt"), NULL, NULL, 0, &err), NH_OK));
    cfg.system = &sys;
    cr_assert(eq(int, nh_run_validate(&cfg, &err), NH_ERR_INPUT), "no method yet");
    cr_assert(strstr(err.msg, "no method in the run configuration") != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_method_spec_parse(reg, &cfg.method, "lf", &err), NH_OK));
    cfg.h = 0.1, cfg.T = 300, cfg.energy = 2.0;
    cr_assert(eq(int, nh_run_validate(&cfg, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, nh_run_default_every(&cfg), 3), "3000 steps: every 3 steps for ~1000 rows");
    cfg.T = 100;
    cr_assert(eq(long, nh_run_default_every(&cfg), 1), "1000 steps: every step");
    nh_registry_free(reg);
}

/* A NULL descriptor (a failed lookup passed on) is named as such, not as "system '(null)' is incomplete". */
Test(ensemble, null_descriptors_are_refused_as_null)
{
    nh_error err;
    nh_system sys;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(eq(int, nh_system_init(&sys, nh_registry_find_system(reg, "no-such-system"), NULL, NULL, 0, &err),
                 NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "no system descriptor (a NULL pointer: a failed lookup") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, "(null)") == NULL, "%s", err.msg);
    cr_assert(eq(int, nh_registry_add_system(reg, NULL, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "no system descriptor to add") != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_registry_add_method(reg, NULL, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "no method descriptor to add") != NULL, "%s", err.msg);
    cr_assert(nh_registry_find_system(reg, NULL) == NULL && nh_registry_find_method(reg, NULL) == NULL);
    nh_system_type unnamed = *nh_registry_find_system(reg, "cvt");
    unnamed.name = NULL;
    unnamed.potential = NULL;
    cr_assert(eq(int, nh_system_init(&sys, &unnamed, NULL, NULL, 0, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "a system descriptor without a name is incomplete: it has no potential") != NULL, "%s",
              err.msg);
    nh_registry_free(reg);
}

/* Every statistic, count and failure of two results, bit for bit. */
static void assert_same_statistics(const nh_run_result *a, const nh_run_result *b, const char *what)
{
    const size_t cells = (size_t)a->n_out * (size_t)a->n_observers;
    cr_assert(eq(long, a->n_out, b->n_out), "%s", what);
    cr_assert(memcmp(a->acc, b->acc, cells * sizeof *a->acc) == 0, "%s: statistics differ", what);
    cr_assert(memcmp(a->live, b->live, (size_t)a->n_out * sizeof *a->live) == 0, "%s: n_live differs", what);
    cr_assert(eq(long, a->failed, b->failed), "%s", what);
    cr_assert(memcmp(a->failures_by_status, b->failures_by_status, sizeof a->failures_by_status) == 0, "%s", what);
    cr_assert(memcmp(a->first_failures, b->first_failures, sizeof a->first_failures) == 0, "%s: failures", what);
    cr_assert(eq(long, a->completed_steps, b->completed_steps), "%s: steps", what);
    cr_assert(eq(long, a->solver.solves, b->solver.solves), "%s: solves", what);
    cr_assert(eq(long, a->solver.iterations, b->solver.iterations), "%s: iterations", what);
    const size_t path_cells = (size_t)a->n_paths * cells;
    cr_assert(path_cells == 0 || memcmp(a->paths, b->paths, path_cells * sizeof *a->paths) == 0, "%s: paths", what);
    if (a->sketch && b->sketch)
        for (long k = 0; k < a->sketch_layout.rows * a->sketch_layout.n; ++k)
            cr_assert(nh_sketch_quantile(&a->sketch[k], 0.5) == nh_sketch_quantile(&b->sketch[k], 0.5) ||
                          (isnan(nh_sketch_quantile(&a->sketch[k], 0.5)) && isnan(nh_sketch_quantile(&b->sketch[k], 0.5))),
                      "%s: quantiles", what);
}

/* cfg with `lanes` lanes and `threads` threads against cfg with one lane and one thread */
static int compare_lanes(nh_run_config cfg, const char *what)
{
    static const int lanes[] = {4, 8, 16, 0, 3};
    nh_run_result one, many;
    nh_error err;
    cfg.lanes = 1;
    cfg.threads = 1;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &one, &err), NH_OK), "%s: %s", what, err.msg);
    int batched = 0;
    /* without a kernel every lane count is one lane: one comparison (two threads) says so */
    const size_t counts = nh_lane_kernel_exists(&cfg.method, cfg.system, cfg.solver) ? sizeof lanes / sizeof lanes[0] : 2;
    for (size_t i = counts == 2 ? 1 : 0; i < counts; ++i) {
        char label[160];
        cfg.lanes = lanes[i];
        cfg.threads = 1 + (int)(i % 2);
        snprintf(label, sizeof label, "%s, %d lanes, %d threads", what, lanes[i], cfg.threads);
        cr_assert(eq(int, nh_run_ensemble(&cfg, &many, &err), NH_OK), "%s: %s", label, err.msg);
        assert_same_statistics(&one, &many, label);
        batched |= nh_run_lanes(&cfg, &many) > 1;
        nh_run_result_clear(&many);
    }
    nh_run_result_clear(&one);
    return batched;
}

/* Every system and method gives, with any lane count and thread count, the bits of one lane and one thread:
 * the pairs with lane kernels through their lanes (statistics, quantiles, paths, failures, steps), the others
 * one trajectory at a time; runs that record the latitude use one lane. rk4 on the quartic at h = 0.5 and
 * H = 100 fails 61 of 64 trajectories at scattered steps (a non-finite state or a singular Gram matrix), so
 * the lanes are retired and refilled throughout. */
Test(ensemble, every_system_and_method_gives_the_bits_of_one_lane)
{
    int batched = 0, runs = 0;
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        const nh_system_type *t = nh_registry_system_at(test_registry(), k);
        nh_system s;
        nh_error err;
        const double shell = make_shell_system(&s, t);   /* the system's test shell (test_shell) */
        for (int i = 0; i < nh_registry_method_count(test_registry()); ++i) {
            nh_run_config cfg = {.system = &s, .h = 0.05, .T = 1.0, .every = 3, .ensemble = 37, .seed = 5,
                                 .fit_window_start = 0.5, .solver = NH_SOLVER_NEWTON, .paths = 3, .energy = shell};
            nh_method_spec_defaults(&cfg.method, nh_registry_method_at(test_registry(), i), test_registry());
            if (nh_method_spec_check(&cfg.method, &s, &err))
                continue;
            char what[128];
            snprintf(what, sizeof what, "%s/%s", t->name, cfg.method.type->name);
            batched += compare_lanes(cfg, what);
            ++runs;
        }
    }
    nh_system quartic;
    make_system(&quartic, "quartic", "n=3", NULL);
    nh_run_config cfg = {.system = &quartic, .h = 0.5, .T = 200, .every = 4, .ensemble = 64, .seed = 1,
                         .threads = 2, .fit_window_start = 0.5, .energy = 100.0, .paths = 4};
    make_method(&cfg.method, "rk4");
    nh_run_result res;
    nh_error err;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(res.failed >= 32 && res.failed < 64, "quartic rk4 h = 0.5: %ld of 64 failed (want many, not all)",
              res.failed);
    nh_run_result_clear(&res);
    batched += compare_lanes(cfg, "quartic rk4 with failures");
    /* the quartic (3 pairs), CVT and knife edge with dla01, lf, spark2, rk4, newmark and, with the built-in Newton,
     * dla, idla and dd, and the failing run: every pair with a lane kernel, and no other */
    cr_assert(eq(int, batched, 3 * 8 + 1), "%d of %d runs went through lanes", batched, runs + 1);
}
