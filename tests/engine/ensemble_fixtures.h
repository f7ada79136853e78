/* Fixtures shared by the engine tests (tests/engine/): a system whose trajectories fail (x reaches 3 under
 * a unit push) and a run of it in which every trajectory fails. */
#ifndef NHENS_TEST_ENSEMBLE_FIXTURES_H
#define NHENS_TEST_ENSEMBLE_FIXTURES_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "nhens/ensemble.h"
#include "nhens/pcg.h"
#include "nhens/system.h"

/* A test-only system whose force is undefined beyond x = 3: trajectories that get there fail with a
 * non-finite state (explicit methods) or a failed solve (implicit ones). V = -x (constant push),
 * A = [0, 1] freezes y. */
static inline double push_potential(const nh_system *s, const double *q)
{
    (void)s;
    return q[0] > 3.0 ? NAN : -q[0];
}

static inline void push_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    g[0] = q[0] > 3.0 ? NAN : -1.0;
    g[1] = 0.0;
}

static inline void push_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    (void)q;
    memset(h, 0, 4 * sizeof *h);
}

static inline void push_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    (void)q;
    a[0] = 0.0;
    a[1] = 1.0;
}

static inline void push_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s;
    (void)q;
    (void)u;
    memset(out, 0, 2 * sizeof *out);
}

static inline void push_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s;
    (void)q;
    (void)lam;
    memset(out, 0, 4 * sizeof *out);
}

static inline void push_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    q[0] = 2.0 * nh_pcg32_uniform(rng) - 1.0;
    q[1] = 0.0;
}

static inline double push_minimum(const nh_system *s)
{
    (void)s;
    return -1.0;
}

static inline void push_dimensions(const double *par, int *n, int *m)
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

/* Every trajectory of the push fails: x(t) >= -1 - 2t + t^2/2 reaches 3 by t = 5.5, so over T = 16 the
 * second half (the fit window) has no live trajectory. 24 trajectories: 3 chunks, fit groups by trajectory. */
static inline void all_fail_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    nh_error err;
    cr_assert(eq(int, nh_system_init(s, &PUSH, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    *cfg = (nh_run_config){.system = s, .h = 0.05, .T = 16.0, .every = 4, .ensemble = 24, .seed = 1, .threads = 2,
                           .energy = 1.0, .fit_window_start = 0.5, .shard = shard, .shards = shards};
    make_method(&cfg->method, "rk4");
}

#endif
