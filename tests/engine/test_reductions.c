/* Per-trajectory reductions (--reduce, engine/reduce.c): known answers on the push system, whose solution
 * RK4 integrates exactly (x'' = 1: x(t) = x0 + v0 t + t^2 / 2 is a polynomial of degree 2), an observer of a
 * registry (plugin observers) in the rows, failures, and the rows' bytes for any threads and lanes. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "ensemble_fixtures.h"
#include "nhens/ensemble.h"
#include "nhens/output.h"
#include "nhens/registry.h"
#include "run_result.h"

static void position_x(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
                       const nh_initial_values *init, double *out)
{
    (void)self, (void)s, (void)v, (void)init;
    out[0] = q[0];
}

static const nh_observer_type X_OBSERVER = {.name = "x", .help = "the position x", .dim = 1, .value = position_x};

/* (x0, y0, vx0, vy0): at rest; moving left (the minimum x0 - v0^2 / 2 = -1.125 at t = 0.5, an output time);
 * reaching x = 3 (where the push's force is undefined) at t* = sqrt(5) - 1 = 1.236; moving right slowly. */
static const double STATES[4][4] = {{0, 0, 0, 0}, {-1, 0, -0.5, 0}, {1, 0, 1, 0}, {0.5, 0, 0.2, 0}};

static double x_at(int i, double t)
{
    return STATES[i][0] + STATES[i][2] * t + 0.5 * t * t;
}

/* The first output time (h = 0.05, every step) at which x > level, from the closed form; NAN if none up to T. */
static double first_above(int i, double level, double T)
{
    for (long k = 0; k * 0.05 <= T + 1e-12; ++k)
        if (x_at(i, k * 0.05) > level)
            return k * 0.05;
    return NAN;
}

static void push_run(nh_registry *reg, const char *reduce, nh_system *s, nh_run_result *res)
{
    nh_error err;
    cr_assert(eq(int, nh_system_init(s, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    nh_run_config cfg;
    nh_run_config_init(&cfg);
    cfg.system = s, cfg.h = 0.05, cfg.T = 2.0, cfg.every = 1, cfg.threads = 2;
    cfg.initial_states = &STATES[0][0], cfg.n_initial = cfg.ensemble = 4;
    cfg.registry = reg, cfg.reduce = reduce;
    make_method(&cfg.method, "rk4");
    cr_assert(eq(int, nh_run_ensemble(&cfg, res, &err), NH_OK), "%s", err.msg);
}

static int column(const nh_run_result *res, const char *name)
{
    for (int j = 0; j < res->n_reductions; ++j)
        if (!strcmp(res->reductions[j].name, name))
            return NH_TRAJECTORY_FIXED_COLUMNS + j;
    cr_assert(0, "no column %s", name);
    return -1;
}

Test(reductions, known_answers_of_the_push_under_rk4)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(reg && nh_registry_add_observer(reg, &X_OBSERVER, &err) == NH_OK, "%s", err.msg);
    nh_system s;
    nh_run_result res;
    push_run(reg, "final,max:x,min:x,first:x>1.01,first:|x|<=0.5,max:|dH|", &s, &res);
    cr_assert(eq(int, res.n_reductions, 4 + 5), "q_1 q_2 v_1 v_2 and five more");
    cr_assert(eq(long, nh_run_table_rows(&res, NH_RUN_TABLE_TRAJECTORIES), 4L));
    /* RK4 is exact for a quadratic x(t) up to round-off: 1e-13 covers 40 steps of sums of O(1) terms */
    const double tol = 1e-13;
    for (int i = 0; i < 4; ++i) {
        const double *row = nh_run_trajectory_row(&res, i);
        cr_assert(eq(dbl, row[0], (double)i));
        const int fails = i == 2;
        cr_assert(eq(dbl, row[1], (double)fails), "trajectory %d", i);
        if (fails) {
            /* the step whose last stage (t_n + h) passes x = 3 fails: t* = 1.236 < 1.25 = t_n + h */
            cr_assert(row[2] >= sqrt(5.0) - 1 && row[2] <= sqrt(5.0) - 1 + 0.05, "failure time %g", row[2]);
            cr_assert(eq(dbl, row[3], (double)NH_STEP_NONFINITE));
            cr_assert(isnan(row[column(&res, "q_1")]) && isnan(row[column(&res, "v_2")]), "no final state");
            /* the rows it reached end at t = 1.2 */
            cr_assert(fabs(row[column(&res, "max:x")] - x_at(2, 1.2)) < tol, "%.17g", row[column(&res, "max:x")]);
        } else {
            cr_assert(isnan(row[2]) && row[3] == 0.0);
            cr_assert(fabs(row[column(&res, "q_1")] - x_at(i, 2.0)) < tol, "x(T) of %d: %.17g", i, row[column(&res, "q_1")]);
            cr_assert(fabs(row[column(&res, "v_1")] - (STATES[i][2] + 2.0)) < tol);
            cr_assert(eq(dbl, row[column(&res, "q_2")], 0.0));
            cr_assert(eq(dbl, row[column(&res, "v_2")], 0.0));
            cr_assert(fabs(row[column(&res, "max:x")] - x_at(i, 2.0)) < tol, "x grows by t = 2");
        }
        const double lowest = i == 1 ? -1.125 : STATES[i][0];
        cr_assert(fabs(row[column(&res, "min:x")] - lowest) < tol, "min x of %d: %.17g", i, row[column(&res, "min:x")]);
        /* no output time lies within 1e-4 of x = 1.01 or |x| = 0.5, so round-off cannot move a first time */
        const double first = first_above(i, 1.01, fails ? 1.2 : 2.0), got = row[column(&res, "first:x>1.01")];
        cr_assert(isnan(first) ? isnan(got) : fabs(got - first) < 1e-12, "first x > 1.01 of %d: %g, not %g", i, got, first);
        const double small = row[column(&res, "first:|x|<=0.5")];
        /* x = -1 - t/2 + t^2/2 reaches -0.5 at t = 1.618 (output 1.65); x0 = 1 only grows; 0 and 0.5 hold at once */
        cr_assert(i == 1 ? fabs(small - 1.65) < 1e-12 : i == 2 ? isnan(small) : small == 0.0,
                  "first |x| <= 0.5 of %d: %g", i, small);
        /* H = v^2 / 2 - x is kept to round-off */
        cr_assert(row[column(&res, "max:|dH|")] < 1e-13, "%g", row[column(&res, "max:|dH|")]);
    }
    nh_run_result_clear(&res);
    nh_registry_free(reg);
}

Test(reductions, a_plugin_observer_has_the_built_ins_statistics_and_columns)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(reg && nh_registry_add_observer(reg, &X_OBSERVER, &err) == NH_OK, "%s", err.msg);
    nh_system s;
    nh_run_result res;
    push_run(reg, NULL, &s, &res);
    const int x = nh_observer_index(res.observers, "x");
    cr_assert(x >= nh_observer_count(nh_observer_table_builtin()), "after the built-in rows");
    cr_assert(ne(u32, res.observer_mask & (1u << x), 0u), "recorded");
    /* at t = 0 the mean of x over the four states is (0 - 1 + 1 + 0.5) / 4 = 0.125 */
    cr_assert(fabs(nh_run_accum(&res, 0, x)->mean - 0.125) < 1e-15);
    char name[64];
    int found = 0;
    for (int j = 0; j < nh_run_table_columns(&res, NH_RUN_TABLE_TIMESERIES); ++j)
        found += nh_run_table_column_name(&res, NH_RUN_TABLE_TIMESERIES, j, name, sizeof name) == NH_OK &&
                 (!strcmp(name, "x_mean") || !strcmp(name, "x_var") || !strcmp(name, "x_absmax"));
    cr_assert(eq(int, found, 3));
    found = 0;
    for (int j = 0; j < nh_run_table_columns(&res, NH_RUN_TABLE_QUANTILES); ++j)
        found += nh_run_table_column_name(&res, NH_RUN_TABLE_QUANTILES, j, name, sizeof name) == NH_OK &&
                 !strcmp(name, "x_q50");
    cr_assert(eq(int, found, 1), "x has quantiles");
    cr_assert(eq(long, nh_run_table_rows(&res, NH_RUN_TABLE_TRAJECTORIES), 0L), "no reductions, no rows");
    nh_run_result_clear(&res);
    nh_registry_free(reg);
}

/* The quartic's rows with `threads` threads and `lanes` lanes. */
static double *quartic_rows(int threads, int lanes, long *cells)
{
    nh_system s;
    nh_run_config cfg;
    nh_run_result res;
    nh_error err;
    make_system(&s, "quartic", "n=3", NULL);
    nh_run_config_init(&cfg);
    cfg.system = &s, cfg.h = 0.1, cfg.T = 20, cfg.every = 7, cfg.ensemble = 101, cfg.energy = 3.06;
    cfg.threads = threads, cfg.lanes = lanes, cfg.reduce = "final,max:dH,min:dH,first:|dH|>1e-2";
    make_method(&cfg.method, "dla01");
    cr_assert(eq(int, nh_run_ensemble(&cfg, &res, &err), NH_OK), "%s", err.msg);
    *cells = res.rows_count * nh_run_trajectory_width(&res);
    double *rows = malloc((size_t)*cells * sizeof *rows);
    memcpy(rows, res.trajectory_rows, (size_t)*cells * sizeof *rows);
    nh_run_result_clear(&res);
    return rows;
}

Test(reductions, rows_are_the_same_bytes_for_any_threads_and_lanes)
{
    long n1, n2, n3;
    double *one = quartic_rows(1, 1, &n1), *lanes = quartic_rows(3, 0, &n2), *odd = quartic_rows(2, 5, &n3);
    cr_assert(eq(long, n1, 101L * (4 + 14 + 3)));
    cr_assert(n1 == n2 && n1 == n3);
    cr_assert(eq(int, memcmp(one, lanes, (size_t)n1 * sizeof *one), 0), "1 thread 1 lane vs 3 threads default lanes");
    cr_assert(eq(int, memcmp(one, odd, (size_t)n1 * sizeof *one), 0), "vs 2 threads of 5 lanes");
    int some_first = 0;
    for (long i = 0; i < 101; ++i)
        some_first += !isnan(one[i * 21 + 20]);
    cr_assert(some_first > 0 && some_first < 101, "the condition holds for some trajectories (%d)", some_first);
    free(one), free(lanes), free(odd);
}

Test(reductions, bad_terms_name_the_term_and_the_forms)
{
    nh_reduction out[NH_MAX_REDUCTIONS];
    int n;
    nh_error err;
    const nh_observer_table *t = nh_observer_table_builtin();
    const unsigned all = (1u << nh_observer_count(t)) - 1u;
    cr_assert(eq(int, nh_reductions_parse(t, all, 3, "max:dH,first:dH>=1e-3", out, &n, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, n, 2));
    cr_assert(eq(str, out[1].name, "first:dH>=1e-3"));
    cr_assert(out[1].test == NH_TEST_AT_LEAST && out[1].threshold == 1e-3);
    cr_assert(eq(int, nh_reductions_parse(t, all, 3, "final", out, &n, &err), NH_OK));
    cr_assert(eq(int, n, 6));
    cr_assert(eq(str, out[5].name, "v_3"));
    const char *bad[] = {"mean:dH", "max:", "first:dH=1", "first:dH<", "max:|dH", "final,final", "first:dH<1e400"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cr_assert(eq(int, nh_reductions_parse(t, all, 3, bad[i], out, &n, &err), NH_ERR_INPUT), "%s", bad[i]);
        cr_assert(strstr(err.msg, "a term is final, max:OBS") != NULL, "%s", err.msg);
    }
}
