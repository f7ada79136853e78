/* Initial states: the energy-shell sampler and presets (see include/nhens/ensemble.h). */
#include "nhens/ensemble.h"
#include "nhens/linalg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int nh_energy_shell_check(const nh_system *s, double energy, nh_error *err)
{
    double lowest = s->type->minimum_energy(s);
    if (!(energy > lowest))
        return nh_fail(err, NH_ERR_INPUT,
                       "energy %g is unreachable for %s: the energy shell must lie above the minimum of V over "
                       "the sampled configurations, %.17g",
                       energy, s->type->name, lowest);
    return NH_OK;
}

static int random_direction_in_distribution(const nh_system *s, const double *q, nh_pcg32 *rng, double *v)
{
    double w[NH_MAX_DIM];
    for (int attempt = 0; attempt < 16; ++attempt) {
        /* N(0, M^-1) for a constant diagonal M; isotropic for M(q) (the direction is then rescaled) */
        for (int i = 0; i < s->n; ++i)
            w[i] = nh_pcg32_gaussian(rng) / (nh_has_variable_mass(s) ? 1.0 : sqrt(s->mass[i]));
        if (nh_project_velocity(s, q, w, v))
            return NH_STEP_SINGULAR;
        if (nh_kinetic_energy(s, q, v) > 0.0)
            return NH_OK;
    }
    return NH_STEP_SINGULAR;
}

int nh_energy_shell_sample(const nh_system *s, double energy, nh_pcg32 *rng, double *q, double *v)
{
    for (int tries = 0; tries < NH_SAMPLE_MAX_TRIES; ++tries) {
        s->type->sample_configuration(s, rng, q);
        double kinetic = energy - s->type->potential(s, q);
        if (!(kinetic > 0.0))
            continue;
        if (random_direction_in_distribution(s, q, rng, v))
            continue;
        double scale = sqrt(kinetic / nh_kinetic_energy(s, q, v));
        for (int i = 0; i < s->n; ++i)
            v[i] *= scale;
        return NH_OK;
    }
    return NH_SAMPLE_REJECTED;
}

int nh_preset_state(const nh_system *s, const nh_preset *p, double *q, double *v, double *change)
{
    memcpy(q, p->q, (size_t)s->n * sizeof *q);
    int rc = nh_project_velocity(s, q, p->v, v);
    if (rc)
        return rc;
    double d = 0.0;
    for (int i = 0; i < s->n; ++i)
        d += (v[i] - p->v[i]) * (v[i] - p->v[i]);
    *change = sqrt(d);
    return NH_OK;
}

int nh_initial_states_check(const nh_system *s, double *states, long rows, int project, nh_error *err)
{
    const int n = s->n;
    for (long r = 0; r < rows; ++r) {
        double *q = states + 2 * n * r, *v = q + n, projected[NH_MAX_DIM];
        if (!nh_all_finite(2 * n, q) || !isfinite(s->type->potential(s, q)))
            return nh_fail(err, NH_ERR_INPUT, "initial state row %ld: a value is not finite, or V(q) is not", r + 1);
        const double residual = nh_constraint_residual(s, q, v), bound = NH_INITIAL_TOLERANCE * (1.0 + nh_norm_inf(n, v));
        if (residual <= bound)
            continue;
        if (!project)
            return nh_fail(err, NH_ERR_INPUT,
                           "initial state row %ld: the velocity is off the constraint distribution, |A(q) v| = %.3g > "
                           "%.3g = %g (1 + |v|); give --project to project it onto D_q", r + 1, residual, bound,
                           NH_INITIAL_TOLERANCE);
        if (nh_project_velocity(s, q, v, projected))
            return nh_fail(err, NH_ERR_INPUT, "initial state row %ld: the constraint matrix is singular at q", r + 1);
        memcpy(v, projected, (size_t)n * sizeof *v);
    }
    return NH_OK;
}

int nh_preset_check(const nh_system *s, const nh_preset *p, int project, nh_error *err)
{
    if (!p || nh_preset_is_shell(p))
        return NH_OK;
    const int n = s->n;
    if (p->dim != n)
        return nh_fail(err, NH_ERR_INPUT, "preset '%s' of %s has dimension %d, and the system has n = %d", p->name,
                       s->type->name, p->dim, n);
    if (!isfinite(nh_energy(s, p->q, p->v)))
        return nh_fail(err, NH_ERR_INPUT, "preset '%s' of %s: its energy H(q, v) is not finite (V(q) = %g)", p->name,
                       s->type->name, s->type->potential(s, p->q));
    const double residual = nh_constraint_residual(s, p->q, p->v), bound = NH_INITIAL_TOLERANCE * (1.0 + nh_norm_inf(n, p->v));
    if (residual <= bound || project)
        return NH_OK;
    return nh_fail(err, NH_ERR_INPUT,
                   "preset '%s' of %s: the velocity is off the constraint distribution, |A(q) v| = %.3g > %.3g = %g "
                   "(1 + |v|); give --project to project it onto D_q", p->name, s->type->name, residual, bound,
                   NH_INITIAL_TOLERANCE);
}

int nh_perturbed_state(const nh_system *s, const nh_preset *p, double eps, nh_pcg32 *rng, double *q, double *v)
{
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM], w[NH_MAX_DIM], change;
    int rc = nh_preset_state(s, p, q0, v0, &change);
    if (rc)
        return rc;
    const double energy = nh_energy(s, q0, v0);
    for (int tries = 0; tries < NH_SAMPLE_MAX_TRIES; ++tries) {
        for (int i = 0; i < s->n; ++i)
            q[i] = q0[i] + eps * nh_pcg32_gaussian(rng);
        for (int i = 0; i < s->n; ++i)
            w[i] = v0[i] + eps * nh_pcg32_gaussian(rng);
        const double kinetic = energy - s->type->potential(s, q);
        if (!(kinetic > 0.0) || nh_project_velocity(s, q, w, v) || !(nh_kinetic_energy(s, q, v) > 0.0))
            continue;
        const double scale = sqrt(kinetic / nh_kinetic_energy(s, q, v));
        for (int i = 0; i < s->n; ++i)
            v[i] *= scale;
        return NH_OK;
    }
    return NH_SAMPLE_REJECTED;
}
