/* What a stepper keeps of its last steps: the step history's warm start (methods/stepper.c,
 * nh_method_solve), starts that forget the trajectory before, lf's end point, and the step kernels that
 * give the bits of the methods' steps. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "method_fixtures.h"
#include "nhens/ensemble.h"
#include "kernels.h"
#include "stepper.h"

/* The compositions keep one history per stage (methods/compose.c): a stage's starts are one outer step
 * apart, while the inner stepper alternates step sizes. */
static const char *HISTORY_METHODS[] = {"dla",        "idla",     "dd",
                                        "gonzalez",   "itoh-abe", "gonzalez-r",
                                        "genfun",     "gonzalez-f", "triple-jump:inner=dla",  "newmark:beta=0.1,beta2=0.1",
                                        "newmark:beta=0.2,beta2=0.2"};

enum { HISTORY_SAVES = 9 };   /* all but the last two save iterations within 200 steps */

/* Iterations over 200 steps with the history: the measured counts (next test) plus about 8 %. Their
 * guesses: the quadratic through the past (v1, lam) (dla, idla, dd), z0 + the quintic through the past
 * increments (D*), F from the quintic through the past forces (genfun), q1 from the quintic with p1 and lam
 * from the rows of gonzalez-f's residual (gonzalez-f; z0 + the quintic for all of z1 and lam needed more
 * iterations than explicit Euler, since its p and lam ripple with period 2). The cubics they replaced needed
 * gonzalez 596, itoh-abe 603, gonzalez-r 574 and genfun 542 iterations (itoh-abe's bound does not tell
 * them apart), the guesses before those gonzalez 602, itoh-abe 780, gonzalez-r 602 and genfun 606, and
 * the quadratic through genfun's past q1 758. The residuals of the end of every solve (solver.h) count as
 * iterations: with them dd takes 485, itoh-abe 743, gonzalez-f 873, newmark at beta = 0.1 and 0.2 528 and
 * 675 (whose Newton matrix is ill-conditioned as beta + beta' nears 1/2, so its floor lies above a few ulp). */
static const long HISTORY_MAX_ITERATIONS[] = {435, 435, 525, 470, 800, 450, 455, 945, 1350, 570, 730};

enum { N_HISTORY_METHODS = sizeof HISTORY_METHODS / sizeof HISTORY_METHODS[0] };

_Static_assert(sizeof HISTORY_MAX_ITERATIONS / sizeof HISTORY_MAX_ITERATIONS[0] == N_HISTORY_METHODS,
               "one bound per history method");

static void quartic_shell_state(nh_system *s, double *q, double *v)
{
    nh_pcg32 rng;
    make_system(s, "quartic", "n=3", NULL);
    nh_pcg32_for_trajectory(&rng, 1, 0);
    cr_assert(nh_energy_shell_sample(s, 3.06, &rng, q, v) == NH_OK);
}

/* A Newton stepper of HISTORY_METHODS[c] on the quartic, and its shell state in (q, v). */
static nh_stepper *history_stepper(int c, nh_system *s, nh_method_spec *m, double *q, double *v)
{
    nh_error err;
    quartic_shell_state(s, q, v);
    make_method(m, HISTORY_METHODS[c]);
    nh_stepper *st = nh_stepper_create(m, s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    return st;
}

/* Steps of size h from (q, v) in place; with `fresh`, nh_stepper_start before every step, which clears
 * the history, so every step starts from the method's own guess. Returns the solver's iterations. */
static long history_steps(nh_stepper *st, double h, int steps, int fresh, double *q, double *v)
{
    double carried[NH_MAX_UNKNOWNS] = {0};
    const long before = nh_stepper_solver_stats(st).iterations;
    for (int k = 0; k < steps; ++k) {
        if (fresh || k == 0)
            cr_assert(nh_stepper_start(st, q, v, carried) == NH_OK);
        cr_assert(nh_stepper_step(st, h, q, v, carried) == NH_OK, "step %d", k);
    }
    return nh_stepper_solver_stats(st).iterations - before;
}

/* `steps` steps from (q0, v0) with the history (into q[0], v[0]) and with a fresh start before every step
 * (q[1], v[1]); the solver's iterations of each run. */
static void both_ways(nh_stepper *st, int steps, const double *q0, const double *v0, double q[2][NH_MAX_DIM],
                      double v[2][NH_MAX_DIM], long *iterations)
{
    const size_t n = (size_t)nh_stepper_system(st)->n;
    for (int fresh = 0; fresh < 2; ++fresh) {
        memcpy(q[fresh], q0, n * sizeof *q0);
        memcpy(v[fresh], v0, n * sizeof *v0);
        iterations[fresh] = history_steps(st, 0.1, steps, fresh, q[fresh], v[fresh]);
    }
}

Test(structure, step_history_saves_iterations_and_keeps_the_solution)
{
    /* Measured on the quartic n = 3, H = 3.06, h = 0.1 (Newton): over 200 steps with the history and with
     * a fresh start before every step, dla and idla 415 and 496 iterations, dd 485 and 523, gonzalez 434 and
     * 800, itoh-abe 743 and 1108, gonzalez-r 413 and 800, genfun 417 and 600, gonzalez-f 873 and 1312,
     * triple-jump of dla 1274 and 1786 (one history per stage); newmark beta = beta' = 0.1 and 0.2 (full
     * Newton) 528 and 560, 675 and 734. (newmark's default, beta = 0, solves no equations on the quartic.)
     * The bound asks for fewer iterations, and for the same solution: both runs end at the solver's
     * rounding floor, and 20 steps of this chaotic system keep
     * such differences below 1e-12 (measured at most 2.6e-14). */
    for (int c = 0; c < N_HISTORY_METHODS; ++c) {
        nh_system s;
        nh_method_spec m;
        double q0[NH_MAX_DIM], v0[NH_MAX_DIM], q[2][NH_MAX_DIM], v[2][NH_MAX_DIM];
        nh_stepper *st = history_stepper(c, &s, &m, q0, v0);
        long iterations[2];
        both_ways(st, 200, q0, v0, q, v, iterations);
        cr_expect(c >= HISTORY_SAVES ? iterations[0] <= iterations[1] : iterations[0] < iterations[1],
                  "%s: %ld iterations with the history, %ld without", HISTORY_METHODS[c], iterations[0],
                  iterations[1]);
        cr_expect(iterations[0] <= HISTORY_MAX_ITERATIONS[c], "%s: %ld iterations with the history, bound %ld",
                  HISTORY_METHODS[c], iterations[0], HISTORY_MAX_ITERATIONS[c]);
        both_ways(st, 20, q0, v0, q, v, iterations);
        const double d = fmax(max_abs_diff(s.n, q[0], q[1]), max_abs_diff(s.n, v[0], v[1]));
        cr_expect(d < 1e-12, "%s: with and without the history the states differ by %g after 20 steps",
                  HISTORY_METHODS[c], d);
        nh_stepper_free(st);
    }
}

static int same_bits(int n, const double *a, const double *b)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

Test(structure, uniform_composition_continues_the_inner_history)
{
    /* Two half steps of dla: every inner step continues the one before it with h/2, so the composition keeps
     * the inner stepper's own history (solutions h/2 apart), not one per stage (h apart), and its steps are
     * bit for bit those of dla with h/2 continuing its own history. With one history per stage the guesses
     * differ, and so do the last bits (measured: 3.3e-15 apart after 100 steps). */
    nh_system s;
    nh_method_spec composed, inner;
    nh_error err;
    double q[2][NH_MAX_DIM], v[2][NH_MAX_DIM];
    quartic_shell_state(&s, q[0], v[0]);
    memcpy(q[1], q[0], sizeof q[0]);
    memcpy(v[1], v[0], sizeof v[0]);
    make_method(&composed, "compose:inner=dla,coeffs=0.5/0.5");
    make_method(&inner, "dla");
    nh_stepper *st = nh_stepper_create(&composed, &s, NH_SOLVER_NEWTON, &err);
    nh_stepper *half = nh_stepper_create(&inner, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL && half != NULL, "%s", err.msg);
    const long composed_iterations = history_steps(st, 0.1, 100, 0, q[0], v[0]);
    const long inner_iterations = history_steps(half, 0.05, 200, 0, q[1], v[1]);
    cr_expect(same_bits(s.n, q[0], q[1]) && same_bits(s.n, v[0], v[1]),
              "compose of dla and dla with h/2 differ by %g", max_abs_diff(s.n, q[0], q[1]));
    cr_expect(eq(long, composed_iterations, inner_iterations));
    nh_stepper_free(st);
    nh_stepper_free(half);
}

/* One step from (q, v) with a stepper that has just been started: the method's own guess. */
static void fresh_step(const nh_method_spec *m, const nh_system *s, double h, double *q, double *v)
{
    nh_error err;
    nh_stepper *st = nh_stepper_create(m, s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    cr_assert(history_steps(st, h, 1, 1, q, v) > 0);
    nh_stepper_free(st);
}

/* One step of st from (q, v) in place; whether it gave the bits of a freshly started stepper's step. */
static int step_is_fresh(nh_stepper *st, double h, double *q, double *v)
{
    const nh_system *s = nh_stepper_system(st);
    double qf[NH_MAX_DIM], vf[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS] = {0};
    memcpy(qf, q, (size_t)s->n * sizeof *q);
    memcpy(vf, v, (size_t)s->n * sizeof *v);
    fresh_step(nh_stepper_method(st), s, h, qf, vf);
    cr_assert(nh_stepper_step(st, h, q, v, carried) == NH_OK);
    return same_bits(s->n, q, qf) && same_bits(s->n, v, vf);
}

/* One step of st from (q, v) in place, and one of `twin`, which has the same past, from a copy with its
 * history cleared (the method's own guess); whether they give the same bits. */
static int step_is_twins_without_history(nh_stepper *st, nh_stepper *twin, double h, double *q, double *v)
{
    const int n = nh_stepper_system(st)->n;
    double qt[NH_MAX_DIM], vt[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS] = {0};
    memcpy(qt, q, (size_t)n * sizeof *q);
    memcpy(vt, v, (size_t)n * sizeof *v);
    twin->history.count = 0;
    cr_assert(nh_stepper_step(twin, h, qt, vt, carried) == NH_OK);
    cr_assert(nh_stepper_step(st, h, q, v, carried) == NH_OK);
    return same_bits(n, q, qt) && same_bits(n, v, vt);
}

Test(structure, step_history_is_ignored_when_the_state_or_the_step_changes)
{
    /* The history only extrapolates a sequence of steps of one size, each from the state the previous one
     * returned. A reversed velocity (the reversibility audit) or an edited position must give the bits of
     * a freshly started stepper's step; a new step size from the returned state those of the same stepper
     * without its history (a twin with the same past): a D* stepper still continues from the rho it kept
     * (dstar.c), which is a property of the state, not of the step size. */
    for (int c = 0; c < N_HISTORY_METHODS; ++c) {
        nh_system s;
        nh_method_spec m;
        double q[NH_MAX_DIM], v[NH_MAX_DIM], qt[NH_MAX_DIM], vt[NH_MAX_DIM];
        nh_stepper *st = history_stepper(c, &s, &m, q, v), *twin = history_stepper(c, &s, &m, qt, vt);
        history_steps(st, 0.1, 10, 0, q, v);
        history_steps(twin, 0.1, 10, 0, qt, vt);
        for (int change = 0; change < 3; ++change) {
            double h = 0.1;
            if (change == 0)
                for (int i = 0; i < s.n; ++i)
                    v[i] = -v[i];
            else if (change == 1)
                q[0] += 1e-9;   /* off the returned state; the constraint here reads w, not x */
            else
                h = 0.05;
            if (change < 2)
                cr_expect(step_is_fresh(st, h, q, v), "%s: change %d used a stale history", HISTORY_METHODS[c],
                          change);
            else
                cr_expect(step_is_twins_without_history(st, twin, h, q, v), "%s: a new h used a stale history",
                          HISTORY_METHODS[c]);
            memcpy(qt, q, sizeof qt);   /* both start again from st's state */
            memcpy(vt, v, sizeof vt);
            history_steps(st, h, 5, 0, q, v);   /* the history fills again */
            history_steps(twin, h, 5, 0, qt, vt);
        }
        nh_stepper_free(st);
        nh_stepper_free(twin);
    }
}

Test(structure, a_start_forgets_the_trajectory_before)
{
    /* What a stepper keeps of its last step (the history; a D* stepper's rho) belongs to one trajectory. A
     * trajectory that starts where the one before ended must still step as with a fresh stepper, or its
     * bits would depend on which worker integrated what before it. */
    for (int c = 0; c < N_HISTORY_METHODS; ++c) {
        nh_system s;
        nh_method_spec m;
        double q[NH_MAX_DIM], v[NH_MAX_DIM], qf[NH_MAX_DIM], vf[NH_MAX_DIM];
        nh_stepper *st = history_stepper(c, &s, &m, q, v);
        history_steps(st, 0.1, 10, 0, q, v);
        memcpy(qf, q, sizeof qf);
        memcpy(vf, v, sizeof vf);
        fresh_step(&m, &s, 0.1, qf, vf);
        history_steps(st, 0.1, 1, 1, q, v);
        cr_expect(same_bits(s.n, q, qf) && same_bits(s.n, v, vf), "%s: the new trajectory continued the last one",
                  HISTORY_METHODS[c]);
        nh_stepper_free(st);
    }
}

Test(structure, step_history_falls_back_to_the_own_guess_when_its_solve_fails)
{
    /* A history whose newest solution is NaN makes the extrapolated guess's residual NaN: that solve fails,
     * and the step restarts from the method's own guess, which gives the bits of the same stepper without
     * its history (a twin with the same past). */
    for (int c = 0; c < N_HISTORY_METHODS; ++c) {
        nh_system s;
        nh_method_spec m;
        double q[NH_MAX_DIM], v[NH_MAX_DIM], qt[NH_MAX_DIM], vt[NH_MAX_DIM];
        nh_stepper *st = history_stepper(c, &s, &m, q, v), *twin = history_stepper(c, &s, &m, qt, vt);
        history_steps(st, 0.1, NH_HISTORY_POINTS, 0, q, v);
        history_steps(twin, 0.1, NH_HISTORY_POINTS, 0, qt, vt);
        if (st->history.dim == 0) {   /* a composition records only states (dim 0): its stages solve through the
                                          inner method's nh_method_solve, whose restart the others test here */
            nh_stepper_free(st);
            nh_stepper_free(twin);
            continue;
        }
        cr_assert(st->history.count == NH_HISTORY_POINTS, "%s: %d steps recorded", HISTORY_METHODS[c],
                  st->history.count);
        for (int i = 0; i < st->history.dim; ++i)
            st->history.solution[i] = NAN;
        const long failures = nh_stepper_solver_stats(st).failures;
        cr_expect(step_is_twins_without_history(st, twin, 0.1, q, v), "%s: the restart is not the own guess's step",
                  HISTORY_METHODS[c]);
        cr_expect(nh_stepper_solver_stats(st).failures == failures + 1, "%s: the extrapolated solve did not fail",
                  HISTORY_METHODS[c]);
        nh_stepper_free(st);
        nh_stepper_free(twin);
    }
}

/* `steps` lf steps of h = 0.1 from (q, v, lam) in place; with `start`, nh_stepper_start first (lam = lambda*). */
static void lf_steps(nh_stepper *st, int start, int steps, double *q, double *v, double *lam)
{
    if (start)
        cr_assert(nh_stepper_start(st, q, v, lam) == NH_OK);
    for (int k = 0; k < steps; ++k)
        cr_assert(nh_stepper_step(st, 0.1, q, v, lam) == NH_OK, "step %d", k);
}

/* After a step whose multiplier solve fails (a NaN lam gives a NaN end point), lf's key still names the
 * point whose grad V and A its slots hold ([key, q, grad V, A]): the step kernel leaves the slots at the
 * start point, the step through the callbacks moves them to the NaN end point. */
static void lf_failure_leaves_consistent_slots(const char *over, double energy)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], lam[NH_MAX_CON];
    shell_state(&s, "quartic", over, energy, 1, q, v);
    make_method(&m, "lf");
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    lf_steps(st, 1, 2, q, v, lam);
    lam[0] = NAN;
    cr_expect(nh_stepper_step(st, 0.1, q, v, lam) != NH_OK, "quartic %s: a NaN multiplier gave a finite step", over);
    const double *kept = nh_stepper_workspace(st);
    const size_t bytes = (size_t)s.n * sizeof(double);
    double grad[NH_MAX_DIM], a[NH_MAX_CON * NH_MAX_DIM];
    s.type->potential_gradient(&s, kept + 1, grad);
    s.type->constraint(&s, kept + 1, a);
    const int consistent = kept[0] == 0.0 || (memcmp(kept + 1 + s.n, grad, bytes) == 0 &&
                                              memcmp(kept + 1 + 2 * s.n, a, (size_t)s.m * bytes) == 0);
    cr_expect(consistent, "quartic %s: the failed step left a key that is not the point of the kept values", over);
    nh_stepper_free(st);
}

Test(structure, lf_reuses_its_end_point_only_at_that_point)
{
    /* lf keeps grad V and A of each end point for the next step, keyed on q's bits. Another trajectory, an
     * edited position or a step that fails must give the bits of a stepper that never saw the old point. */
    nh_system s;
    nh_method_spec m;
    nh_error err;
    double qa[NH_MAX_DIM], va[NH_MAX_DIM], qb[NH_MAX_DIM], vb[NH_MAX_DIM], lam[NH_MAX_CON];
    shell_state(&s, "quartic", "n=3", 3.06, 1, qa, va);
    shell_state(&s, "quartic", "n=3", 3.06, 2, qb, vb);
    make_method(&m, "lf");
    nh_stepper *used = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err), *fresh = NULL;
    cr_assert(used != NULL, "%s", err.msg);
    const size_t bytes = (size_t)s.n * sizeof(double);
    double q[2][NH_MAX_DIM], v[2][NH_MAX_DIM], l[2][NH_MAX_CON];
    for (int change = 0; change < 2; ++change) {
        lf_steps(used, 1, 5, qa, va, lam);   /* the kept point is A's end point */
        memcpy(q[0], change == 0 ? qb : qa, bytes);
        memcpy(v[0], change == 0 ? vb : va, bytes);
        memcpy(l[0], lam, sizeof lam);
        if (change == 1)
            q[0][0] += 1e-9;   /* x: grad V reads it, A does not */
        memcpy(q[1], q[0], bytes);
        memcpy(v[1], v[0], bytes);
        memcpy(l[1], l[0], sizeof lam);
        fresh = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
        lf_steps(used, change == 0, 3, q[0], v[0], l[0]);
        lf_steps(fresh, change == 0, 3, q[1], v[1], l[1]);
        nh_stepper_free(fresh);
        const int same = memcmp(q[0], q[1], bytes) == 0 && memcmp(v[0], v[1], bytes) == 0;
        cr_expect(same, "change %d: lf stepped with a kept end point of another q", change);
    }
    nh_stepper_free(used);
    lf_failure_leaves_consistent_slots("n=3", 3.06);   /* through the step kernel */
    lf_failure_leaves_consistent_slots("n=5", 5.0);    /* through the system's callbacks */
}

/* Steps `steps` with both steppers from the same state and counts the steps whose status, q, v or carried
 * state differ in any bit; a failing step ends the run after it is compared. *status: a's last status. */
static int steps_that_differ(nh_stepper *a, nh_stepper *b, int n, const double *q0, const double *v0, int steps,
                             int *status)
{
    const size_t bytes = (size_t)n * sizeof(double);
    double q[2][NH_MAX_DIM], v[2][NH_MAX_DIM], carried[2][NH_MAX_UNKNOWNS] = {{0}};
    nh_stepper *st[2] = {a, b};
    int rc[2], differ = 0;
    for (int i = 0; i < 2; ++i) {
        memcpy(q[i], q0, bytes);
        memcpy(v[i], v0, bytes);
        cr_assert(eq(int, nh_stepper_start(st[i], q[i], v[i], carried[i]), NH_OK));
    }
    for (int k = 0; k < steps; ++k) {
        for (int i = 0; i < 2; ++i)
            rc[i] = nh_stepper_step(st[i], 0.1, q[i], v[i], carried[i]);
        differ += rc[0] != rc[1] || memcmp(q[0], q[1], bytes) != 0 || memcmp(v[0], v[1], bytes) != 0 ||
                  memcmp(carried[0], carried[1], sizeof carried[0]) != 0;
        if (rc[0] || rc[1])
            break;
    }
    *status = rc[0];
    return differ;
}

Test(structure, step_kernels_give_the_bits_of_the_methods_steps)
{
    /* The step kernels (methods/kernels.h) compile dla01, lf, spark2 and rk4 again for the quartic with 2
     * and 3 pairs. A kernel must be the method's step: the same bits at each of 400 steps and the same status
     * when a step fails (a velocity of 1e150 overflows the quartic's forces), chosen exactly where it
     * matches (not for 5 pairs, another system or a mass other than the quartic's M = I). */
    static const char *const methods[] = {"dla01", "lf", "spark2", "rk4"};
    static const struct {
        const char *over;
        double energy;
        int has_kernel;
    } sizes[] = {{"n=3", 3.06, 1}, {"n=2", 1.535, 1}, {"n=5", 5.0, 0}};
    nh_error err;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z)
        for (size_t i = 0; i < sizeof methods / sizeof methods[0]; ++i) {
            nh_system s;
            nh_method_spec m;
            double q0[NH_MAX_DIM], v0[NH_MAX_DIM];
            shell_state(&s, "quartic", sizes[z].over, sizes[z].energy, 7, q0, v0);
            make_method(&m, methods[i]);
            nh_stepper *kernel = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
            nh_stepper *generic = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
            cr_assert(kernel && generic, "%s", err.msg);
            const int has_kernel = kernel->step != kernel->type->step;
            cr_expect(eq(int, has_kernel, sizes[z].has_kernel), "%s on the quartic %s", methods[i], sizes[z].over);
            generic->step = generic->type->step;
            int status;
            const int differ = steps_that_differ(kernel, generic, s.n, q0, v0, 400, &status);
            cr_expect(eq(int, differ, 0), "%s, quartic %s: %d steps differ", methods[i], sizes[z].over, differ);
            cr_expect(eq(int, status, NH_OK), "%s, quartic %s: a step failed", methods[i], sizes[z].over);
            v0[0] = 1e150;
            const int failing = steps_that_differ(kernel, generic, s.n, q0, v0, 3, &status);
            cr_expect(eq(int, failing, 0), "%s, quartic %s: the failing step differs", methods[i], sizes[z].over);
            cr_expect(ne(int, status, NH_OK), "%s, quartic %s: v = 1e150 gave a finite step", methods[i],
                      sizes[z].over);
            nh_system heavier = s;
            heavier.inv_mass[0] = 0.5;
            cr_expect(nh_step_kernel_for(m.type, &heavier) == NULL, "%s: a kernel for M != I", methods[i]);
            nh_stepper_free(kernel);
            nh_stepper_free(generic);
        }
    nh_system cvt;
    nh_method_spec m;
    make_system(&cvt, "cvt", NULL, NULL);
    make_method(&m, "dla01");
    cr_expect(nh_step_kernel_for(m.type, &cvt) == NULL, "a quartic kernel for the CVT");
}
