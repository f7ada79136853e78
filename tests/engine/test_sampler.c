/* The initial states (engine/sampler.c): the energy-shell sampler, the user's states with their
 * perturbation and burn-in. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nhens/ensemble.h"
#include "run_result.h"

Test(sampler, energy_shell_states_are_exact)
{
    for (int i = 0; i < nh_registry_system_count(test_registry()); ++i) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), i)->name, NULL, NULL);
        double energy = s.type->minimum_energy(&s) + 2.0;
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 5, 6);
        for (int k = 0; k < 50; ++k) {
            double q[NH_MAX_DIM], v[NH_MAX_DIM];
            cr_assert(eq(int, nh_energy_shell_sample(&s, energy, &rng, q, v), NH_OK));
            /* one scaling of a projected vector: energy to a few ulp, constraint to round-off */
            cr_assert(epsilon_eq(dbl, nh_energy(&s, q, v), energy, 8e-15 * fabs(energy) + 1e-15), "%s", s.type->name);
            cr_assert(nh_constraint_residual(&s, q, v) < 1e-14, "%s", s.type->name);
        }
    }
}

Test(sampler, unreachable_shell_names_the_minimum)
{
    nh_system s;
    nh_error err;
    make_system(&s, "cvt", "eps=0", NULL);
    cr_assert(eq(int, nh_energy_shell_check(&s, -1.5, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "energy -1.5") && strstr(err.msg, "configurations, -1"), "message: %s", err.msg);
    make_system(&s, "quartic", NULL, NULL);
    cr_assert(eq(int, nh_energy_shell_check(&s, 0.0, &err), NH_ERR_INPUT));
    cr_assert(eq(int, nh_energy_shell_check(&s, 3.06, &err), NH_OK));
}

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
    const int dh = nh_observer_index(nh_observer_table_builtin(), "dH");
    for (long k = 0; k < burnt.n_out; ++k) {
        const double expected = nh_run_accum(&plain, k + 2, dh)->mean - nh_run_accum(&plain, 2, dh)->mean;
        cr_assert(fabs(nh_run_accum(&burnt, k, dh)->mean - expected) < 4e-15, "k = %ld: %g vs %g", k,
                  nh_run_accum(&burnt, k, dh)->mean, expected);
    }
    cr_assert(eq(long, burnt.completed_steps, 100), "burn-in steps are counted: 40 + 60");
    nh_run_result_clear(&plain);
    nh_run_result_clear(&burnt);
}
