/* Angles wrapped by whole turns (nh_stepper_recentre): Brouwer's law on an unbounded angle, and a
 * recentred run is the plain one in another frame. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "method_fixtures.h"
#include "stepper.h"

/* max |H - H0| / (u sqrt(N) (|T| + |V|)) over `steps` steps of h = 0.1 of `method` from (q, v) on s,
 * recentring the angles and ignorable coordinates between steps or not. */
static double brouwer_constant_from(const char *method, nh_system *s, double *q, double *v, int recentre, long steps)
{
    nh_method_spec m;
    nh_error err;
    double worst = 0.0, scale = 0.0;
    make_method(&m, method);
    nh_stepper *st = nh_stepper_create(&m, s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    nh_stepper_start(st, q, v, NULL);
    const double h0 = nh_energy(s, q, v);
    for (long k = 0; k < steps; ++k) {
        cr_assert(eq(int, nh_stepper_step(st, 0.1, q, v, NULL), NH_OK), "%s, step %ld", method, k);
        if (recentre)
            nh_stepper_recentre(st, q);
        const double kinetic = nh_kinetic_energy(s, q, v), energy = nh_energy(s, q, v);
        scale = fmax(scale, fabs(kinetic) + fabs(energy - kinetic));
        worst = fmax(worst, fabs(energy - h0));
    }
    nh_stepper_free(st);
    return worst / (0x1p-53 * sqrt((double)steps) * scale);
}

/* The same from the rotating driver at eps = 0.5, where xi grows by about 3 per unit time. */
static double brouwer_constant(const char *method, int recentre, long steps)
{
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    rotating_state(&s, "eps=0.5", q, v);
    return brouwer_constant_from(method, &s, q, v, recentre, steps);
}

/* Brouwer's law on an unbounded angle: over 2e4 steps (xi reaches ~6000, where an ulp is 9e-13, 8000
 * times that of an angle below 2 pi) the energy methods keep c <= 4 when the angle is wrapped (measured
 * 0.6-1.1; bench/sweep.c measures every method and start). Unwrapped, the rounding of xi alone lifts
 * gonzalez's c above 20 (measured 218): the control shows that the bound tells the two apart. */
Test(angles, wrapping_keeps_the_energy_methods_at_brouwers_law)
{
    const char *methods[] = {"dd", "avf", "gonzalez", "itoh-abe"};
    for (int i = 0; i < 4; ++i) {
        const double wrapped = brouwer_constant(methods[i], 1, 20000);
        cr_assert(wrapped <= 4.0, "%s: c = %.2f wrapped", methods[i], wrapped);
    }
    const double unwrapped = brouwer_constant("gonzalez", 0, 20000);
    cr_assert(unwrapped > 20.0, "gonzalez: c = %.2f unwrapped", unwrapped);
}

/* A recentred run is the plain one in another frame: dla01 (no solve) and gonzalez (a D* method that
 * continues rho across steps and a history guess), 3000 steps from the rotating driver (xi turns about 150
 * times) and from a state of the vertical disk (xi turns, x1..x3 are ignorable and move by whole units: 77
 * moves in all);
 * back in the start frame they agree with the run that never recentres to the rounding of coordinates of
 * ~1000 (ulp 1.1e-13) grown over the run: 1e-9 (measured 3e-12 .. 9e-11). */
static void compare_recentred_run(const char *method, nh_system *s, const double *q0, const double *v0)
{
    nh_method_spec m;
    nh_error err;
    double q[2][NH_MAX_DIM], v[2][NH_MAX_DIM], back[NH_MAX_DIM];
    nh_stepper *st[2];
    make_method(&m, method);
    for (int w = 0; w < 2; ++w) {
        memcpy(q[w], q0, (size_t)s->n * sizeof *q0);
        memcpy(v[w], v0, (size_t)s->n * sizeof *v0);
        st[w] = nh_stepper_create(&m, s, NH_SOLVER_NEWTON, &err);
        cr_assert(st[w] != NULL, "%s", err.msg);
        nh_stepper_start(st[w], q[w], v[w], NULL);
    }
    int moves = 0;
    for (int k = 0; k < 3000; ++k) {
        for (int w = 0; w < 2; ++w)
            cr_assert(eq(int, nh_stepper_step(st[w], 0.1, q[w], v[w], NULL), NH_OK));
        const int moved = nh_stepper_recentre(st[1], q[1]);
        const double *past;
        /* the step history moved with q: the next step still starts from all of it */
        const int kept = !moved || k < NH_HISTORY_POINTS || !nh_stepper_solver(st[1]) ||
                         nh_stepper_history(st[1], 0.1, q[1], v[1], &past) == NH_HISTORY_POINTS;
        cr_assert(kept, "%s on %s: the history was lost at step %d", method, s->type->name, k);
        moves += moved;
    }
    nh_stepper_in_start_frame(st[1], q[1], back);
    cr_assert(moves > 50, "%s on %s: %d moves", method, s->type->name, moves);
    for (int i = 0; i < s->n; ++i)
        cr_assert(fabs(q[1][i]) <= 2 * M_PI || q[0][i] == q[1][i], "%s on %s: q%d = %g", method, s->type->name, i, q[1][i]);
    cr_assert(max_abs_diff(s->n, q[0], back) < 1e-9, "%s on %s: %g", method, s->type->name, max_abs_diff(s->n, q[0], back));
    cr_assert(max_abs_diff(s->n, v[0], v[1]) < 1e-9, "%s on %s: %g", method, s->type->name, max_abs_diff(s->n, v[0], v[1]));
    nh_stepper_free(st[0]);
    nh_stepper_free(st[1]);
}

/* A method that is not built in (here a copy of dla01's descriptor, as a plugin would register it) cannot
 * say what it keeps of a step: recentring leaves its runs alone. */
Test(angles, a_plugin_method_is_not_recentred)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    rotating_state(&s, "eps=0.5", q, v);
    make_method(&m, "dla01");
    nh_method_type copy = *m.type;
    m.type = &copy;
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    q[2] = 100.0;
    cr_assert(eq(int, nh_stepper_recentre(st, q), 0));
    cr_assert(eq(dbl, q[2], 100.0));
    nh_stepper_free(st);
    make_method(&m, "dla01");
    st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(eq(int, nh_stepper_recentre(st, q), 1));   /* the built-in one: 100 - 15 turns */
    cr_assert(fabs(q[2] - (100.0 - 30.0 * M_PI)) < 1e-13, "%.17g", q[2]);
    nh_stepper_free(st);
}

Test(angles, a_recentred_run_is_the_plain_one_in_another_frame)
{
    const char *methods[] = {"dla01", "gonzalez"};
    for (int i = 0; i < 2; ++i) {
        nh_system s;
        double q[NH_MAX_DIM], v[NH_MAX_DIM];
        rotating_state(&s, "eps=0.5", q, v);
        compare_recentred_run(methods[i], &s, q, v);
        shell_state(&s, "vdisk", NULL, 1.0, 1, q, v);
        compare_recentred_run(methods[i], &s, q, v);
    }
}
