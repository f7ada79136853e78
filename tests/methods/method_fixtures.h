/* Fixtures shared by the method tests (tests/methods/): the rotating CVT, a state on an energy shell,
 * and a run's energy error profile. */
#ifndef NHENS_TEST_METHOD_FIXTURES_H
#define NHENS_TEST_METHOD_FIXTURES_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "nhens/ensemble.h"
#include "nhens/pcg.h"

/* The CVT with parameters `eps` (e.g. "eps=0.1") at its "rotating" preset state. */
static inline void rotating_state(nh_system *s, const char *eps, double *q, double *v)
{
    double proj;
    make_system(s, "cvt", eps, NULL);
    nh_preset_state(s, nh_system_find_preset(s->type, "rotating"), q, v, &proj);
}

/* `system` with `over` on the energy shell H = `energy`: trajectory 0 of `seed`. */
static inline void shell_state(nh_system *s, const char *system, const char *over, double energy, uint64_t seed,
                               double *q, double *v)
{
    make_system(s, system, over, NULL);
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, seed, 0);
    cr_assert(eq(int, nh_energy_shell_sample(s, energy, &rng, q, v), NH_OK));
}

/* Built-in system k of the registry at its test shell (test_shell), on that shell: trajectory 0 of `seed`. */
static inline void registry_shell_state(nh_system *s, int k, uint64_t seed, double *q, double *v)
{
    const nh_system_type *t = nh_registry_system_at(test_registry(), k);
    const double energy = make_shell_system(s, t);
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, seed, 0);
    cr_assert(eq(int, nh_energy_shell_sample(s, energy, &rng, q, v), NH_OK), "%s on H = %g", t->name, energy);
}

/* Max |H - H0| over a run of `steps` steps and the mean |H - H0| over its first and last tenth. */
static inline void energy_profile(const nh_method_spec *m, nh_system *s, double *q, double *v, double h, long steps,
                                  double *max_err, double *first, double *last)
{
    nh_error err;
    nh_stepper *st = nh_stepper_create(m, s, NH_SOLVER_NEWTON, &err);
    double carried[NH_MAX_UNKNOWNS], h0 = nh_energy(s, q, v);
    long tenth = steps / 10;
    *max_err = *first = *last = 0;
    nh_stepper_start(st, q, v, carried);
    for (long k = 1; k <= steps; ++k) {
        cr_assert(eq(int, nh_stepper_step(st, h, q, v, carried), NH_OK), "step %ld", k);
        double e = fabs(nh_energy(s, q, v) - h0);
        *max_err = fmax(*max_err, e);
        if (k <= tenth)
            *first += e / tenth;
        if (k > steps - tenth)
            *last += e / tenth;
    }
    nh_stepper_free(st);
}

#endif
