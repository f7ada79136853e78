/* Runs of the implicit methods in lanes (include/nhens/lanes.h): dla, idla and dd solved by the built-in Newton give
 * the files of the run with one trajectory at a time, bit for bit, at the CPU's default lane count and at an odd
 * one, solver statistics included; KINSOL runs of them take one lane. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "scratch.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/output.h"
#include "run_result.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    cr_assert(fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

typedef struct lane_run_case {
    const char *system, *over, *method;
    double energy;
} lane_run_case;

/* 37 trajectories (not a multiple of any lane count: lanes are refilled and some stay empty at the end) over
 * 500 steps on 2 threads */
static void run_into(const lane_run_case *c, nh_solver_kind solver, int lanes, const char *dir, int *lanes_used)
{
    nh_system s;
    nh_run_config cfg = {0};
    nh_run_result res;
    nh_error err;
    make_system(&s, c->system, c->over, NULL);
    cfg.system = &s;
    make_method(&cfg.method, c->method);
    cfg.solver = solver;
    cfg.h = 0.1;
    cfg.T = 50;
    cfg.every = 7;
    cfg.ensemble = 37;
    cfg.seed = 11;
    cfg.threads = 2;
    cfg.lanes = lanes;
    cfg.energy = c->energy;
    cfg.fit_window_start = 0.5;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    *lanes_used = nh_run_lanes(&cfg, &res);
    cr_assert(eq(int, nh_make_directory(dir, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_timeseries(dir, &res, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_summary(dir, &cfg, &res, "test", &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_write_quantiles(dir, &res, &err), NH_OK), "%s", err.msg);
    nh_run_result_clear(&res);
}

/* summary.json without what depends on the lanes by definition (timings, the lane count and its isa); the
 * solves and iterations stay */
static cJSON *summary_without_timing(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = slurp(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j != NULL);
    cJSON *perf = cJSON_GetObjectItem(j, "performance");
    cr_assert(perf != NULL);
    static const char *const timed[] = {"wall_seconds", "steps_per_second", "method_seconds", "ns_per_step",
                                        "reference_seconds", "lanes", "lane_isa", "peak_rss_kib"};
    for (size_t i = 0; i < sizeof timed / sizeof timed[0]; ++i)
        cJSON_DeleteItemFromObject(perf, timed[i]);
    cr_assert(cJSON_GetObjectItem(perf, "nonlinear_solves") && cJSON_GetObjectItem(perf, "newton_iterations"));
    return j;
}

static void same_files(const char *a, const char *b, const char *what)
{
    static const char *const files[] = {"timeseries.csv", "quantiles.csv"};
    char pa[600], pb[600];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        snprintf(pa, sizeof pa, "%s/%s", a, files[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[i]);
        char *ta = slurp(pa), *tb = slurp(pb);
        cr_expect(strcmp(ta, tb) == 0, "%s: %s differs from the run with one lane", what, files[i]);
        free(ta);
        free(tb);
    }
    cJSON *ja = summary_without_timing(a), *jb = summary_without_timing(b);
    cr_expect(cJSON_Compare(ja, jb, 1), "%s: summary.json (solver statistics included) differs", what);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
}

Test(lane_runs, dla_idla_and_dd_with_newton_give_the_files_of_one_lane)
{
    static const lane_run_case cases[] = {
        {"quartic", "n=3", "dla", 3.06},
        {"quartic", "n=2", "idla", 1.535},
        {"cvt", "eps=0.4", "dla:alpha=0.3", 2.0},
        {"knife", "eps=0.3", "dla", 1.0},
        {"quartic", "n=3", "dd", 3.06},
        {"cvt", "eps=0.1", "dd", 6.0},
        {"knife", "eps=0.3", "dd", 1.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char one[300], many[300], what[200];
        int used_one, used_many;
        snprintf(one, sizeof one, "/tmp/nhens-test-lanes-%d-%zu-1", (int)getpid(), c);
        run_into(&cases[c], NH_SOLVER_NEWTON, 1, one, &used_one);
        cr_expect(eq(int, used_one, 1));
        /* the default (dla, idla and dd with the built-in Newton: 16, or the CPU's default where smaller), and a width
         * read at run time */
        static const int widths[] = {0, 5};
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
            snprintf(many, sizeof many, "/tmp/nhens-test-lanes-%d-%zu-w%d", (int)getpid(), c, widths[w]);
            run_into(&cases[c], NH_SOLVER_NEWTON, widths[w], many, &used_many);
            cr_expect(used_many == (widths[w] ? widths[w] : (nh_lanes_default() < 16 ? nh_lanes_default() : 16)),
                      "%s on %s: %d lanes",
                      cases[c].method, cases[c].system, used_many);
            snprintf(what, sizeof what, "%s on %s %s, %d lanes", cases[c].method, cases[c].system, cases[c].over,
                     used_many);
            same_files(one, many, what);
            remove_tree(many);
        }
        remove_tree(one);
    }
}

Test(lane_runs, kinsol_runs_of_implicit_methods_take_one_lane)
{
    static const lane_run_case cases[] = {{"quartic", "n=3", "dla", 3.06}, {"quartic", "n=3", "dd", 3.06}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char dir[300];
        int used;
        snprintf(dir, sizeof dir, "/tmp/nhens-test-lanes-%d-kinsol", (int)getpid());
        run_into(&cases[c], NH_SOLVER_KINSOL, 0, dir, &used);
        cr_expect(eq(int, used, 1), "%s: KINSOL's iterations have no lane form", cases[c].method);
        remove_tree(dir);
    }
}
