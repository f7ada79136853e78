/* Every registered system: analytic derivatives against central finite differences, what a descriptor
 * must have, presets against the energies printed in the papers and the regimes they are named after,
 * the D* form, and the systems with closed-form solutions or the papers' reduced equations. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "nhens/ensemble.h"
#include "nhens/linalg.h"
#include "nhens/reference.h"
#include "nhens/check.h"
#include "builtin_systems.h"
#include "dstar_field.h"
#include "mechanics_inline.h"
#include "quartic_formulas.h"

/* Parameter settings besides each system's defaults and its test shell's (derivatives_match_finite_differences), so
 * that parameter-dependent terms are checked too; the quartic at n = 2 (its formulas with the pair count a
 * constant) and n = 5 (read at run time). Every built-in system is checked without a line here. */
static const char *const VARIANTS[][2] = {
    {"quartic", "n=2"}, {"quartic", "n=5"}, {"cvt", "eps=0"}, {"cvt", "eps=0.3"}, {"knife", "eps=0"},
    {"knife", "eps=0.2"}, {"disk", "r=0.7"}, {"sleigh", "a=0.3,m=2"},
};
enum { N_VARIANTS = sizeof VARIANTS / sizeof VARIANTS[0] };

/* FD_STEP/FD_TOL as in engine/check.c: central differences of step 1e-6 (truncation ~1e-12, rounding
 * ~1e-10 |f|) against a tolerance of 1e-7 (1 + |value|). */
static const double FD_STEP = 1e-6, FD_TOL = 1e-7;

/* The rows of nh_system_check on s (20 random states, stream `seed`) must all pass their stated tolerance. */
static void check_derivatives(const nh_system *s, const char *setting, uint64_t seed)
{
    nh_check_report rep;
    nh_error err;
    cr_assert(eq(int, nh_system_check(s, 20, seed, &rep, &err), NH_OK), "%s", err.msg);
    for (int r = 0; r < rep.n_rows; ++r)
        cr_assert(rep.rows[r].passed, "%s(%s): %s: worst %g > %g", s->type->name, setting, rep.rows[r].name,
                  rep.rows[r].worst, rep.rows[r].tolerance);
}

Test(systems, derivatives_match_finite_differences)
{
    /* nh_system_check (the checks of `nhens check`) on every registered system at its defaults and at its test
     * shell's parameters, and on the VARIANTS, 20 random states each: every row that applies must pass */
    const int n = nh_registry_system_count(test_registry());
    for (int k = 0; k < n; ++k) {
        nh_system s;
        const nh_system_type *t = nh_registry_system_at(test_registry(), k);
        make_system(&s, t->name, NULL, NULL);
        check_derivatives(&s, "defaults", 99 + k);
        make_shell_system(&s, t);
        check_derivatives(&s, test_shell(t)->param_overrides, 199 + k);
    }
    for (int k = 0; k < N_VARIANTS; ++k) {
        nh_system s;
        make_system(&s, VARIANTS[k][0], VARIANTS[k][1], NULL);
        check_derivatives(&s, VARIANTS[k][1], 299 + k);
    }
}

/* Every built-in system declares an energy-shell preset (the cross-system tests run each system on it:
 * test_shell in tests/helpers.h), a shell above the minimum of V at the preset's parameters on which states
 * can be drawn; all of the X-macro list's systems are in the registry, so none escapes the check. */
Test(systems, every_builtin_system_declares_a_shell)
{
#define COUNT_SYSTEM(name) +1
    const int listed = 0 NH_BUILTIN_SYSTEMS(COUNT_SYSTEM);
#undef COUNT_SYSTEM
    cr_assert(eq(int, nh_registry_system_count(test_registry()), listed));
    for (int k = 0; k < listed; ++k) {
        const nh_system_type *t = nh_registry_system_at(test_registry(), k);
        int shells = 0;
        for (int i = 0; i < t->n_presets; ++i)
            shells += nh_preset_is_shell(&t->presets[i]);
        cr_assert(shells > 0, "built-in system %s declares no energy-shell preset (give it one: docs/guide/extending.md)",
                  t->name);
        nh_system s;
        nh_error err;
        const double energy = make_shell_system(&s, t);
        cr_assert(eq(int, nh_energy_shell_check(&s, energy, &err), NH_OK), "%s: %s", t->name, err.msg);
        cr_assert(energy > t->minimum_energy(&s), "%s: shell H = %g at min V = %g", t->name, energy,
                  t->minimum_energy(&s));
        nh_pcg32 rng;
        double q[NH_MAX_DIM], v[NH_MAX_DIM];
        nh_pcg32_for_trajectory(&rng, 1, 0);
        cr_assert(eq(int, nh_energy_shell_sample(&s, energy, &rng, q, v), NH_OK), "%s on H = %g", t->name, energy);
        /* the sampler scales v to H = E: round-off of O(1) terms */
        cr_assert(fabs(nh_energy(&s, q, v) - energy) <= 1e-12 * (1 + fabs(energy)), "%s: a shell state has H = %.17g, not %g",
                  t->name, nh_energy(&s, q, v), energy);
    }
}

/* A descriptor without one of its required callbacks (here V's Hessian, which the implicit methods' Newton
 * matrices call: dla, dd and newmark crashed on such a plugin system) is refused by the registry and by
 * nh_system_init, with a message naming the system and the callback, and so is an M(q) without its
 * derivative (the D* frames call both), and one declaring more parameters than an instance holds or
 * parameters without their definitions (nh_params_defaults would write past the set or read NULL); the
 * complete one is accepted. */
Test(systems, an_incomplete_descriptor_is_refused_by_name)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(reg != NULL, "%s", err.msg);
    nh_system_type missing = *nh_registry_find_system(reg, "quartic");
    missing.name = "quartic-without-hessian";
    missing.potential_hessian = NULL;
    const int added = nh_registry_add_system(reg, &missing, &err);
    cr_assert(eq(int, added, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "quartic-without-hessian") && strstr(err.msg, "has no potential_hessian;"), "%s", err.msg);
    nh_system s;
    const int made = nh_system_init(&s, &missing, NULL, NULL, 0, &err);
    cr_assert(eq(int, made, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "has no potential_hessian;") != NULL, "%s", err.msg);
    missing.potential_hessian = nh_registry_find_system(reg, "quartic")->potential_hessian;
    nh_system_type half = *nh_registry_find_system(reg, "sleigh");   /* M(q) without its derivative */
    half.mass_matrix_derivative = NULL;
    const int half_made = nh_system_init(&s, &half, NULL, NULL, 0, &err);
    cr_assert(eq(int, half_made, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "has no mass_matrix_derivative (it has mass_matrix)") != NULL, "%s", err.msg);
    nh_system_type crowded = *nh_registry_find_system(reg, "quartic");   /* more parameters than an instance holds */
    crowded.n_params = NH_MAX_PARAMS + 1;
    const int crowded_made = nh_system_init(&s, &crowded, NULL, NULL, 0, &err);
    cr_assert(eq(int, crowded_made, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "has n_params = 9; 0 to 8") != NULL, "%s", err.msg);
    crowded.n_params = 1;
    crowded.params = NULL;
    const int undefined_made = nh_system_init(&s, &crowded, NULL, NULL, 0, &err);
    cr_assert(eq(int, undefined_made, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "has n_params = 1 and no params;") != NULL, "%s", err.msg);
    const int complete = nh_registry_add_system(reg, &missing, &err);
    cr_assert(eq(int, complete, NH_OK), "%s", err.msg);
    nh_registry_free(reg);
}

static double preset_energy(const char *system, const char *preset, double *projection)
{
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    make_system(&s, system, NULL, preset);
    cr_assert(eq(int, nh_preset_state(&s, nh_system_find_preset(s.type, preset), q, v, projection), NH_OK));
    cr_assert(nh_constraint_residual(&s, q, v) < 1e-15, "preset state on D");
    return nh_energy(&s, q, v);
}

Test(systems, preset_energies_match_the_papers)
{
    double proj;
    /* Anahory Simoes et al. 2022 print the energies to 4 decimals; their velocities are rounded to 4 digits */
    cr_assert(epsilon_eq(dbl, preset_energy("quartic", "anahory2022-fig1", &proj), 3.2575, 5e-5));
    cr_assert(eq(dbl, proj, 0.0), "the quartic velocity of Anahory Simoes et al. 2022 satisfies the constraint exactly");
    cr_assert(epsilon_eq(dbl, preset_energy("cvt", "anahory2022-fig3", &proj), 0.2723, 5e-5));
    cr_assert(proj < 1e-4, "rounded velocity moved by %g onto D", proj);
    /* (1, 1, 0), (0, 0, 2.82842712): H = 1 + 1 + 8.0000000/2, exact to the 8 printed digits */
    cr_assert(epsilon_eq(dbl, preset_energy("cvt", "rotating", &proj), 6.0, 1e-7));
    cr_assert(epsilon_eq(dbl, preset_energy("cvt", "anahory2022-fig4", &proj), 6.0, 1e-7));
}

/* Driver of the CVT: count sign changes of xi' over T = 40 (several driver periods) with RK4. */
static int driver_turns(const char *preset)
{
    nh_system s;
    nh_method_spec rk4;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], proj;
    make_system(&s, "cvt", NULL, preset);
    make_method(&rk4, "rk4");
    nh_preset_state(&s, nh_system_find_preset(s.type, preset), q, v, &proj);
    int turns = 0;
    double last = v[2];
    for (int k = 0; k < 4000; ++k) {
        cr_assert(eq(int, integrate(&rk4, &s, NH_SOLVER_NEWTON, 0.01, 1, q, v), NH_OK));
        turns += (v[2] > 0) != (last > 0);
        last = v[2];
    }
    return turns;
}

Test(systems, presets_produce_the_regime_they_are_named_after)
{
    cr_assert(eq(int, driver_turns("rotating"), 0), "rotating driver never reverses");
    cr_assert(driver_turns("oscillating") >= 6, "oscillating driver swings back and forth");
}

Test(systems, preset_parameter_conflict_is_refused)
{
    nh_system s;
    nh_error err;
    const char *over[1] = {"n=3"};
    const nh_system_type *t = nh_registry_find_system(test_registry(), "quartic");
    cr_assert(eq(int, nh_system_init(&s, t, nh_system_find_preset(t, "anahory2022-fig1"), over, 1, &err),
                 NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "n=3") && strstr(err.msg, "n=2"), "message: %s", err.msg);
}

Test(systems, dstar_form_is_the_full_vector_field)
{
    /* For (q, v) on D: the D* field Pi grad H must give q' = v and rho' = d/dt (X^T M v) along the
     * index-1 ODE, i.e. (sum_j v_j dX/dq_j)^T M v + X^T M a. Both are evaluated in closed form, so
     * they agree to round-off (1e-12 relative to terms of size |v|^2 + |grad V| ~ 10). */
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), k)->name, NULL, NULL);
        if (!s.type->adapted_basis)
            continue;
        const int n = s.n, r = n - s.m;
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 17, k);
        for (int trial = 0; trial < 10; ++trial) {
            double q[NH_MAX_DIM], v[NH_MAX_DIM], zdot[2 * NH_MAX_DIM], dq[NH_MAX_DIM], a[NH_MAX_DIM];
            double x[NH_MAX_DIM * NH_MAX_DIM], dx[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM];
            cr_assert(eq(int, nh_energy_shell_sample(&s, s.type->minimum_energy(&s) + 3.0, &rng, q, v), NH_OK));
            cr_assert(eq(int, nh_dstar_vector_field(&s, q, v, zdot), 0));
            cr_assert(eq(int, nh_index1_rhs(&s, q, v, dq, a, NULL), NH_OK));
            nh_adapted_basis(&s, q, x, dx);
            /* rho = X^T M v: rho' = (dX[v])^T M v + X^T (dM[v]) v + X^T M a */
            double mass[NH_MAX_DIM * NH_MAX_DIM], dm[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM] = {0};
            double mv[NH_MAX_DIM], ma[NH_MAX_DIM], dmv[NH_MAX_DIM] = {0};
            nh_mass_matrix(&s, q, mass);
            if (nh_has_variable_mass(&s))
                s.type->mass_matrix_derivative(&s, q, dm);
            nh_matvec(n, n, mass, v, mv);
            nh_matvec(n, n, mass, a, ma);
            for (int i = 0; i < n; ++i)
                for (int l = 0; l < n; ++l)
                    for (int j = 0; j < n; ++j)
                        dmv[i] += dm[(i * n + l) * n + j] * v[j] * v[l];
            for (int i = 0; i < n; ++i) {   /* a reduced system has no configuration: q never moves */
                double expected = nh_is_reduced(&s) ? 0.0 : v[i];
                cr_assert(fabs(zdot[i] - expected) < 1e-12, "%s q'[%d]: %g vs %g", s.type->name, i, zdot[i], expected);
            }
            for (int b = 0; b < r; ++b) {
                double rhodot = 0;
                for (int i = 0; i < n; ++i) {
                    double dxv = 0;
                    for (int j = 0; j < n; ++j)
                        dxv += dx[(i * r + b) * n + j] * v[j];
                    rhodot += dxv * mv[i] + x[i * r + b] * (ma[i] + dmv[i]);
                }
                cr_assert(fabs(zdot[n + b] - rhodot) < 1e-12 * 10, "%s rho'[%d]: %g vs %g", s.type->name, b,
                          zdot[n + b], rhodot);
            }
        }
    }
}

/* A draw from values that make signed zeros and non-finite sums likely: +-0 (a quarter of the draws), +-1,
 * the smallest subnormal, +-inf, NaN and a random value, each sign. */
static double awkward_value(nh_pcg32 *rng)
{
    static const double fixed[] = {0.0, 0.0, 1.0, 4.9e-324, INFINITY, NAN};
    const uint32_t pick = nh_pcg32_next(rng) % 8;
    const double x = pick < 6 ? fixed[pick] : nh_pcg32_uniform(rng) * 3.0;
    return nh_pcg32_next(rng) & 1 ? -x : x;
}

Test(systems, dots_with_the_zeros_apart_give_the_bits_of_nh_dot)
{
    /* The quartic's step kernels dot A's row [1, 0, w] with vectors by nh_dot_zeros_apart, which adds the
     * structural zeros' products last (systems/mechanics_inline.h); its comment argues that this gives
     * nh_dot's bits for every vector. Checked bit for bit on 200 000 draws of the row and the vector from
     * +-0, +-1, the smallest subnormal, +-inf, NaN and random values, for k = 2 and 3; a NaN is compared as
     * NaN (its payload is the hardware's). Mutations: without the zeros' sum the NaNs differ (34 049 draws);
     * with both sums started at -0 the -0 sums do. */
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 31, 7);
    int differ = 0, zero_sums = 0, nans = 0;
    for (int trial = 0; trial < 200000; ++trial) {
        const int k = 2 + trial % 2, n = 2 * k + 1;
        double q[NH_MAX_DIM], row[NH_MAX_DIM], v[NH_MAX_DIM];
        for (int i = 0; i < n; ++i) {
            q[i] = awkward_value(&rng);
            v[i] = awkward_value(&rng);
        }
        constraint_of(k, q, row);
        const double expected = nh_dot(n, row, v), got = nh_dot_zeros_apart(n, row, v, constraint_zeros_of(k));
        zero_sums += expected == 0.0;
        nans += isnan(expected);
        const int same = isnan(expected) ? isnan(got) != 0 : memcmp(&expected, &got, sizeof got) == 0;
        differ += !same;
    }
    cr_expect(eq(int, differ, 0), "%d of 200000 dots differ from nh_dot", differ);
    cr_expect(gt(int, nans, 1000), "the draws make few NaN sums (%d)", nans);
    cr_expect(gt(int, zero_sums, 1000), "the draws make few zero sums (%d)", zero_sums);
}

Test(systems, exact_multiplier_keeps_the_velocity_on_the_constraint)
{
    /* lambda* is defined by d/dt (A v) = A a + (DA[v]) v = 0 with a = M^-1 (-f + A^T lambda*): check that
     * on every system (constant M through the inlined path, M(q) and the reduced ones through the general
     * one), to 1e-12 relative to the terms (|A| |a| + |DA[v] v|, all of order 1-10 here), and that
     * nh_exact_multiplier_from with A(q) and grad V(q) at hand gives the same bits. */
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), k)->name, NULL, NULL);
        const int n = s.n, m = s.m;
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 23, k);
        for (int trial = 0; trial < 10; ++trial) {
            double q[NH_MAX_DIM], v[NH_MAX_DIM], dq[NH_MAX_DIM], acc[NH_MAX_DIM], grad[NH_MAX_DIM];
            double lam[NH_MAX_CON], lam_from[NH_MAX_CON], a[NH_MAX_CON * NH_MAX_DIM], curvature[NH_MAX_CON];
            cr_assert(eq(int, nh_energy_shell_sample(&s, s.type->minimum_energy(&s) + 3.0, &rng, q, v), NH_OK));
            cr_assert(eq(int, nh_exact_multiplier(&s, q, v, lam), NH_OK));
            s.type->constraint(&s, q, a);
            s.type->potential_gradient(&s, q, grad);
            cr_assert(eq(int, nh_exact_multiplier_from(&s, q, v, a, grad, lam_from), NH_OK));
            cr_expect(memcmp(lam, lam_from, (size_t)m * sizeof *lam) == 0, "%s: the two calls differ", s.type->name);
            cr_assert(eq(int, nh_index1_rhs(&s, q, v, dq, acc, NULL), NH_OK));
            nh_constraint_curvature(&s, q, v, curvature);
            for (int i = 0; i < m; ++i) {
                double drift = curvature[i], size = fabs(curvature[i]);
                for (int j = 0; j < n; ++j) {
                    drift += a[i * n + j] * acc[j];
                    size += fabs(a[i * n + j] * acc[j]);
                }
                cr_expect(fabs(drift) <= 1e-12 * fmax(size, 1.0), "%s row %d: A a + DA[v] v = %g (terms %g)",
                          s.type->name, i, drift, size);
            }
        }
    }
}

Test(systems, vertical_disk_follows_its_closed_form_solution)
{
    /* Modin & Verdier 2020, Sect. 2.2.3: xi = xi0 + w t, x3' = u constant, x1' = -cos(xi) u, x2' = -sin(xi) u.
     * CVODE at 1e-12 over T = 5 reproduces it to 1e-9. */
    nh_system s;
    nh_error err;
    make_system(&s, "vdisk", NULL, NULL);
    const double xi0 = 0.4, w = 1.3, u = 0.7, T = 5.0;
    double q0[4] = {0.2, -0.1, 0.5, xi0}, v0[4] = {-cos(xi0) * u, -sin(xi0) * u, u, w}, q[4], v[4];
    cr_assert(eq(int, nh_reference_solve(&s, q0, v0, T, 1e-12, 1e-12, q, v, &err), NH_OK), "%s", err.msg);
    const double xi = xi0 + w * T;
    double exact_q[4] = {q0[0] - u * (sin(xi) - sin(xi0)) / w, q0[1] + u * (cos(xi) - cos(xi0)) / w, q0[2] + u * T, xi};
    double exact_v[4] = {-cos(xi) * u, -sin(xi) * u, u, w};
    for (int i = 0; i < 4; ++i) {
        cr_assert(fabs(q[i] - exact_q[i]) < 1e-9, "q[%d]: %g vs %g", i, q[i], exact_q[i]);
        cr_assert(fabs(v[i] - exact_v[i]) < 1e-9, "v[%d]: %g vs %g", i, v[i], exact_v[i]);
    }
}

Test(systems, rolling_disk_momenta_are_constant)
{
    /* Celledoni et al. 2019, Sect. 3.2 example: rho = X^T M v is constant along the rolling disk's solutions (V = 0
     * and the brackets do not act); CVODE at 1e-12 over T = 10 keeps it to 1e-9 */
    nh_system s;
    nh_error err;
    const char *over[1] = {"r=0.7"};
    cr_assert(eq(int, nh_system_init(&s, nh_registry_find_system(test_registry(), "disk"), NULL, over, 1, &err), NH_OK));
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 4, 4);
    double q0[4], v0[4], q[4], v[4], x0[8], x1[8], dx[32], rho0[2], rho1[2], mv0[4], mv1[4];
    cr_assert(eq(int, nh_energy_shell_sample(&s, 2.0, &rng, q0, v0), NH_OK));
    cr_assert(eq(int, nh_reference_solve(&s, q0, v0, 10.0, 1e-12, 1e-12, q, v, &err), NH_OK));
    nh_adapted_basis(&s, q0, x0, dx);
    nh_adapted_basis(&s, q, x1, dx);
    for (int i = 0; i < 4; ++i) {
        mv0[i] = s.mass[i] * v0[i];
        mv1[i] = s.mass[i] * v[i];
    }
    nh_matvec_t(4, 2, x0, mv0, rho0);
    nh_matvec_t(4, 2, x1, mv1, rho1);
    cr_assert(fabs(rho0[0] - rho1[0]) < 1e-9 && fabs(rho0[1] - rho1[1]) < 1e-9, "rho (%g, %g) -> (%g, %g)", rho0[0],
              rho0[1], rho1[0], rho1[1]);
}

Test(systems, sleigh_midpoint_equilibria_have_the_eigenvalue_of_prop_4_1)
{
    /* Celledoni et al. 2019, Prop. 4.1: the implicit midpoint step on D* (our gonzalez: H = |rho|^2/2 is quadratic, so
     * every discrete gradient is the midpoint one) keeps rho1 = 0 fixed and has the linearised eigenvalue
     * lambda1 = (2 - h C rho2)/(2 + h C rho2), C = a sqrt(m)/(J + m a^2). Central differences with
     * delta = 1e-6 of the step map: the map is smooth, error O(delta^2) plus solver round-off / delta,
     * about 1e-9; tolerance 1e-7. Both signs of rho2 (stable and unstable). */
    nh_system s;
    nh_method_spec m;
    make_system(&s, "sleigh", "J=8,a=1,m=1", NULL);
    make_method(&m, "gonzalez");
    const double h = 0.5, C = 1.0 / 9.0, theta = 0.1, delta = 1e-6;
    for (int sign = -1; sign <= 1; sign += 2) {
        const double rho2 = 0.6 * sign;
        double rho1_out[2];
        for (int k = 0; k < 2; ++k) {
            double rho1 = k ? delta : -delta, x[6], dx[18], mass[9], mv[3], rho[2];
            double q[3] = {-5, 0, theta};
            double v[3] = {rho2 * cos(theta), rho2 * sin(theta), rho1 / 3.0};
            cr_assert(eq(int, integrate(&m, &s, NH_SOLVER_NEWTON, h, 1, q, v), NH_OK));
            nh_adapted_basis(&s, q, x, dx);
            nh_mass_matrix(&s, q, mass);
            nh_matvec(3, 3, mass, v, mv);
            nh_matvec_t(3, 2, x, mv, rho);
            rho1_out[k] = rho[0];
        }
        double lambda = (rho1_out[1] - rho1_out[0]) / (2 * delta), expected = (2 - h * C * rho2) / (2 + h * C * rho2);
        cr_assert(fabs(lambda - expected) < 1e-7, "rho2 = %g: eigenvalue %.12f, Prop. 4.1 %.12f", rho2, lambda, expected);
        cr_assert(sign > 0 ? lambda < 1 : lambda > 1, "stable for rho2 > 0, unstable for rho2 < 0");
    }
}

Test(systems, sleigh_fig3_runs_from_the_unstable_to_the_stable_equilibrium)
{
    /* Celledoni et al. 2019, Fig. 3: from rho = (+-0.001, -0.6) (next to the unstable equilibrium rho2 < 0) the
     * midpoint method on D* with h = 0.5 ends at the stable one, rho = (0, +0.6); |rho| is conserved exactly.
     * T = 400: the departure grows like exp(C |rho2| t) from 1e-3 (C = 1/9), then settles; 1e-3 margin. */
    const char *presets[] = {"celledoni2019-fig3-plus", "celledoni2019-fig3-minus"};
    for (int k = 0; k < 2; ++k) {
        nh_system s;
        nh_method_spec m;
        double q[3], v[3], proj, x[6], dx[18], mass[9], mv[3], rho[2];
        make_system(&s, "sleigh", NULL, presets[k]);
        make_method(&m, "gonzalez");
        nh_preset_state(&s, nh_system_find_preset(s.type, presets[k]), q, v, &proj);
        cr_assert(eq(int, integrate(&m, &s, NH_SOLVER_NEWTON, 0.5, 800, q, v), NH_OK));
        nh_adapted_basis(&s, q, x, dx);
        nh_mass_matrix(&s, q, mass);
        nh_matvec(3, 3, mass, v, mv);
        nh_matvec_t(3, 2, x, mv, rho);
        cr_assert(fabs(rho[0]) < 1e-3 && fabs(rho[1] - 0.6) < 1e-3, "%s: rho = (%g, %g)", presets[k], rho[0], rho[1]);
    }
}

Test(systems, suslov_follows_the_papers_equations)
{
    /* Celledoni et al. 2019, Sect. 4.3: rho1' = -(C1 rho1 + C2 rho2) rho2 / I22, rho2' = (C1 rho1 + C2 rho2) rho1 / I11
     * with C1 = I13/I11, C2 = I23/I22 (closed forms on both sides: round-off agreement); and the midpoint method on D*
     * (gonzalez) keeps omega_3 = 0 exactly and the energy (H = 0.46) to the solver's tolerance: each step may leave a
     * residual of 5e-16 |zeta| (finite-difference Newton stops there), i.e. ~3e-16 of energy, and 1000 such steps stay
     * below 1e-11. */
    nh_system s;
    make_system(&s, "suslov", "I11=1.5,I22=2.5,I13=0.4,I23=-0.7", NULL);
    const double i11 = 1.5, i22 = 2.5, c1 = 0.4 / 1.5, c2 = -0.7 / 2.5;
    double q[3] = {0, 0, 0}, v[3] = {0.8, -0.3, 0}, zdot[5];
    cr_assert(eq(int, nh_dstar_vector_field(&s, q, v, zdot), 0));
    const double rho1 = i11 * v[0], rho2 = i22 * v[1], kappa = c1 * rho1 + c2 * rho2;
    cr_assert(fabs(zdot[3] + kappa * rho2 / i22) < 1e-15 && fabs(zdot[4] - kappa * rho1 / i11) < 1e-15,
              "rho' = (%g, %g), Celledoni et al. 2019 (%g, %g)", zdot[3], zdot[4], -kappa * rho2 / i22,
              kappa * rho1 / i11);
    nh_method_spec m;
    make_method(&m, "gonzalez");
    double h0 = nh_energy(&s, q, v);
    cr_assert(eq(int, integrate(&m, &s, NH_SOLVER_NEWTON, 0.1, 1000, q, v), NH_OK));
    cr_assert(fabs(nh_energy(&s, q, v) - h0) < 1e-11 && fabs(v[2]) < 1e-15, "dH %g, omega3 %g",
              nh_energy(&s, q, v) - h0, v[2]);
    cr_assert(q[0] == 0 && q[1] == 0 && q[2] == 0, "no configuration moves");
}

Test(systems, coupled_systems_obey_the_reduced_equations)
{
    /* Modin & Verdier 2020, eqs. 9-10: for q = (x, xi) on D, x' = v k(xi) with A k = 0 and |k| = 1, and
     * u = (kappa x, v) satisfies y' = k0 v, v' = -k0^T y + k^T f with k0 = kappa k. u' by the chain rule from the
     * index-1 field, with dk/dxi by central differences (step 1e-6: error ~1e-10; tolerance 1e-7). */
    int covered = 0;
    for (int t = 0; t < nh_registry_system_count(test_registry()); ++t) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), t)->name, NULL, NULL);
        if (!s.type->coupled_structure)
            continue;
        ++covered;
        const int n = s.n, p = n - 1;
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 23, t);
        for (int trial = 0; trial < 10; ++trial) {
            double q[NH_MAX_DIM], v[NH_MAX_DIM], dq[NH_MAX_DIM], acc[NH_MAX_DIM], u[NH_MAX_DIM], a[NH_MAX_CON * NH_MAX_DIM];
            double k[NH_MAX_DIM], kp[NH_MAX_DIM], km[NH_MAX_DIM], kappa[NH_MAX_DIM * NH_MAX_DIM], f[NH_MAX_DIM];
            int rows;
            cr_assert(eq(int, nh_energy_shell_sample(&s, s.type->minimum_energy(&s) + 3.0, &rng, q, v), NH_OK));
            cr_assert(eq(int, nh_index1_rhs(&s, q, v, dq, acc, NULL), NH_OK));
            const double xi = q[p];
            s.type->coupled_structure(&s, xi, k, kappa, &rows, f);
            s.type->coupled_structure(&s, xi + 1e-6, kp, kappa, &rows, f);
            s.type->coupled_structure(&s, xi - 1e-6, km, kappa, &rows, f);
            s.type->constraint(&s, q, a);
            cr_assert(eq(int, nh_reduced_vector(&s, q, v, u), rows + 1));
            cr_assert(fabs(nh_dot(p, k, k) - 1) < 1e-15 && fabs(nh_dot(p, a, k)) < 1e-15, "%s: k unit, in ker A",
                      s.type->name);
            const double vel = u[rows];
            for (int i = 0; i < p; ++i)
                cr_assert(fabs(v[i] - vel * k[i]) < 1e-13, "%s: x' = v k", s.type->name);
            double vdot = nh_dot(p, acc, k);
            for (int i = 0; i < p; ++i)
                vdot += v[i] * (kp[i] - km[i]) / 2e-6 * v[p];
            double k0[NH_MAX_DIM], expected = nh_dot(p, k, f);
            nh_matvec(rows, p, kappa, k, k0);
            for (int r = 0; r < rows; ++r) {
                double ydot = nh_dot(p, kappa + r * p, v);
                cr_assert(fabs(ydot - k0[r] * vel) < 1e-12, "%s: y'", s.type->name);
                expected -= k0[r] * u[r];
            }
            cr_assert(fabs(vdot - expected) < 1e-7 * (1 + fabs(expected)), "%s: v' = %g, eq. 10 gives %g", s.type->name,
                      vdot, expected);
        }
    }
    cr_assert(eq(int, covered, 6), "cvt, knife, hcvt, mvparticle, vdisk, robot");
}

Test(systems, dstar_gradient_matches_differences_and_pi_is_skew)
{
    /* grad H against central differences of H (FD tolerance as for the other derivatives) and
     * a^T Pi b = -b^T Pi a for random a, b (round-off, 1e-13 of the products' size) for every system with a
     * D* form, at random zeta */
    for (int t = 0; t < nh_registry_system_count(test_registry()); ++t) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), t)->name, NULL, NULL);
        if (!s.type->adapted_basis)
            continue;
        const int dim = 2 * s.n - s.m;
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 29, t);
        for (int trial = 0; trial < 5; ++trial) {
            double z[2 * NH_MAX_DIM], g[2 * NH_MAX_DIM], zz[2 * NH_MAX_DIM], hp, hm, h0, a[2 * NH_MAX_DIM], b[2 * NH_MAX_DIM];
            double pa[2 * NH_MAX_DIM], pb[2 * NH_MAX_DIM];
            s.type->sample_configuration(&s, &rng, z);
            for (int i = s.n; i < dim; ++i)
                z[i] = nh_pcg32_gaussian(&rng);
            cr_assert(eq(int, nh_dstar_hamiltonian(&s, z, &h0, g), 0));
            for (int j = 0; j < dim; ++j) {
                memcpy(zz, z, sizeof(double) * dim);
                zz[j] = z[j] + FD_STEP;
                nh_dstar_hamiltonian(&s, zz, &hp, NULL);
                zz[j] = z[j] - FD_STEP;
                nh_dstar_hamiltonian(&s, zz, &hm, NULL);
                double fd = (hp - hm) / (2 * FD_STEP);
                cr_assert(fabs(fd - g[j]) <= FD_TOL * (1 + fabs(fd)), "%s dH/dzeta_%d: %g vs %g", s.type->name, j, g[j], fd);
            }
            for (int i = 0; i < dim; ++i) {
                a[i] = nh_pcg32_gaussian(&rng);
                b[i] = nh_pcg32_gaussian(&rng);
            }
            nh_dstar_pi_times(&s, z, b, pb);
            nh_dstar_pi_times(&s, z, a, pa);
            double ab = nh_dot(dim, a, pb), ba = nh_dot(dim, b, pa);
            cr_assert(fabs(ab + ba) < 1e-13 * (1 + fabs(ab)), "%s: a.Pi b = %g, b.Pi a = %g", s.type->name, ab, ba);
        }
    }
}

Test(systems, driver_state_is_the_last_coordinate_of_coupled_systems)
{
    nh_system s;
    double q[3] = {0.1, 0.2, 0.3}, v[3] = {0, 0, 1.5}, xi, xid;
    make_system(&s, "cvt", NULL, NULL);
    cr_assert(eq(int, nh_driver_state(&s, q, v, &xi, &xid), 1));
    cr_assert(eq(dbl, xi, 0.3));
    cr_assert(eq(dbl, xid, 1.5));
    /* the driver energy is its own: 1/2 xi'^2 + cos xi for eps = 0 */
    cr_assert(ieee_ulp_eq(dbl, s.type->driver_energy(&s, q, v), 0.5 * 1.5 * 1.5 + cos(0.3), 4));
    make_system(&s, "quartic", NULL, NULL);
    double qq[7] = {0}, vv[7] = {0};
    cr_assert(eq(int, nh_driver_state(&s, qq, vv, &xi, &xid), 0));
}
