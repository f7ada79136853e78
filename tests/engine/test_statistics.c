/* The statistics an ensemble run writes: exact at t = 0, the energy errors of docs/METHODS.md, the
 * latitude on a Poincare section (Modin & Verdier 2020) and the global error against a reference. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>

#include "helpers.h"
#include "nhens/ensemble.h"
#include "nhens/poincare.h"
#include "nhens/reference.h"
#include "run_result.h"

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
    nh_run_result_clear(&res);
}

static double max_observed(const nh_run_result *res, const char *observer)
{
    int o = nh_observer_index(nh_observer_table_builtin(), observer);
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
        nh_run_result_clear(&res);
    }
}

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
    const int lat = nh_observer_index(nh_observer_table_builtin(), "latitude");
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
    nh_run_result_clear(&res);
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
        crossings += nh_run_accum(&res, k, nh_observer_index(nh_observer_table_builtin(), "latitude"))->count;
    /* T = 50 and P = 2.0: 24 or 25 crossings */
    cr_assert(crossings >= 24 && crossings <= 25, "crossings %g", crossings);
    nh_run_result_clear(&res);
}

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
    nh_run_result_clear(&coarse);
    nh_run_result_clear(&fine);
    nh_run_result_clear(&three);
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
    nh_run_result_clear(&res);
}
