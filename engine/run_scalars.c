/* The run's scalar results by name (include/nhens/output.h, nh_run_scalar): the counts, timings, solver work and
 * variance fit that summary.json records, under its member names, read from the opaque result. */
#include "nhens/output.h"
#include "run_result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The fixed scalars, in the order nh_run_scalar_name lists them; the extremes of the recorded observers follow. */
#define RUN_SCALARS(X) \
    X("ensemble", (double)res->ensemble) \
    X("trajectories_done", (double)res->trajectories_done) \
    X("complete", (double)(res->complete != 0)) \
    X("steps_per_trajectory", (double)res->n_steps) \
    X("output_rows", (double)res->n_out) \
    X("failures.count", (double)res->failed) \
    X("performance.steps", (double)res->completed_steps) \
    X("performance.wall_seconds", res->wall_seconds) \
    X("performance.method_seconds", res->method_seconds) \
    X("performance.reference_seconds", res->reference_seconds) \
    X("performance.steps_per_second", res->steps_per_second) \
    X("performance.ns_per_step", nh_run_ns_per_step(res)) \
    X("performance.nonlinear_solves", (double)res->solver.solves) \
    X("performance.newton_iterations", (double)res->solver.iterations) \
    X("performance.solver_failures", (double)res->solver.failures) \
    X("preset_velocity_projection", res->preset_projection) \
    X("variance_fit.t_start", res->fit.t_start) \
    X("variance_fit.t_end", res->fit.t_end) \
    X("variance_fit.points", (double)res->fit.points) \
    X("variance_fit.a", res->fit.a) \
    X("variance_fit.C", res->fit.C) \
    X("variance_fit.p", res->fit.p) \
    X("variance_fit.C_over_h4", res->fit.C_over_h4) \
    X("variance_fit.C_scaled", res->fit.C_scaled) \
    X("variance_fit.p_of_fit", res->fit.p_of_fit) \
    X("variance_fit.a_stderr", res->fit.a_err) \
    X("variance_fit.C_stderr", res->fit.C_err) \
    X("variance_fit.p_stderr", res->fit.p_err) \
    X("variance_fit.C_over_h4_stderr", res->fit.C_over_h4_err) \
    X("variance_fit.C_scaled_stderr", res->fit.C_scaled_err) \
    X("variance_fit.groups", (double)res->fit.groups) \
    X("variance_fit.dof", (double)res->fit.dof) \
    X("variance_fit.t95", res->fit.t95)

#define SCALAR_NAME(name, value) name,
static const char *const fixed_names[] = {RUN_SCALARS(SCALAR_NAME)};
#undef SCALAR_NAME
enum { N_FIXED = (int)(sizeof fixed_names / sizeof fixed_names[0]) };

static double fixed_value(const nh_run_result *res, int i)
{
    int k = 0;
#define SCALAR_CASE(name, value) if (i == k++) return value;
    RUN_SCALARS(SCALAR_CASE)
#undef SCALAR_CASE
    return NAN;
}

/* The observer of extremes entry i (the recorded observers in table order), or -1. */
static int extreme_observer(const nh_run_result *res, int i)
{
    for (int o = 0; res->observers && o < res->n_observers; ++o)
        if ((res->observer_mask & (1u << o)) && i-- == 0)
            return o;
    return -1;
}

int nh_run_scalar_count(const nh_run_result *res)
{
    int n = N_FIXED;
    while (extreme_observer(res, n - N_FIXED) >= 0)
        ++n;
    return n;
}

int nh_run_scalar_name(const nh_run_result *res, int i, char *buf, size_t len)
{
    if (i >= 0 && i < N_FIXED)
        return snprintf(buf, len, "%s", fixed_names[i]), NH_OK;
    const int o = i >= N_FIXED ? extreme_observer(res, i - N_FIXED) : -1;
    if (o < 0)
        return NH_ERR_INPUT;
    snprintf(buf, len, "extremes.%s", nh_observer_at(res->observers, o)->extreme_key);
    return NH_OK;
}

int nh_run_scalar(const nh_run_result *res, const char *name, double *value, nh_error *err)
{
    const int n = nh_run_scalar_count(res);
    char names[NH_MAX_OBSERVERS + N_FIXED][96];
    const char *list[NH_MAX_OBSERVERS + N_FIXED];
    for (int i = 0; i < n && i < NH_MAX_OBSERVERS + N_FIXED; ++i) {
        nh_run_scalar_name(res, i, names[i], sizeof names[i]);
        list[i] = names[i];
        if (name && strcmp(name, names[i]) == 0) {
            *value = i < N_FIXED ? fixed_value(res, i) : nh_run_observer_max(res, extreme_observer(res, i - N_FIXED));
            return NH_OK;
        }
    }
    char hint[128];
    nh_did_you_mean(name ? name : "", list, n < NH_MAX_OBSERVERS + N_FIXED ? n : NH_MAX_OBSERVERS + N_FIXED, hint,
                    sizeof hint);
    return nh_fail(err, NH_ERR_INPUT, "a run has no scalar result '%.100s'%s (nh_run_scalar_name lists them)",
                   name ? name : "(null)", hint);
}
