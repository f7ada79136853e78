/* The variance law of seed 000 Fig. 2: Var dH(t) ~ a + C t over the late part of a run. The offset a
 * is the bounded O(h^4) oscillation of each trajectory's energy error; C is the random-walk rate.
 * A power law through the origin would be dominated by a at early times, so both are reported. */
#include "nhens/stats.h"

#include <math.h>
#include <stdlib.h>

static void linear_fit(int n, const double *x, const double *y, double *intercept, double *slope)
{
    double sx = 0, sy = 0;
    for (int i = 0; i < n; ++i) {
        sx += x[i];
        sy += y[i];
    }
    double mx = sx / n, my = sy / n, sxx = 0, sxy = 0;
    for (int i = 0; i < n; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    *slope = sxx > 0 ? sxy / sxx : 0.0;
    *intercept = my - *slope * mx;
}

static double log_log_slope(const double *t, const double *var, long first, long n)
{
    long count = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (long i = first; i < n; ++i) {
        if (!(t[i] > 0 && var[i] > 0))
            continue;
        double x = log(t[i]), y = log(var[i]);
        ++count;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    if (count < 2)
        return NAN;
    double den = count * sxx - sx * sx;
    return den > 0 ? (count * sxy - sx * sy) / den : NAN;
}

int nh_variance_fit_compute(const double *t, const double *var, long n, double window_start, double h,
                            int order, nh_variance_fit *fit)
{
    long first = 0;
    while (first < n && t[first] < window_start)
        ++first;
    fit->t_start = first < n ? t[first] : window_start;
    fit->t_end = n > 0 ? t[n - 1] : 0.0;
    fit->points = (int)(n - first);
    fit->scaling_power = 2 * order;
    fit->a = fit->C = fit->p = fit->C_over_h4 = fit->C_scaled = NAN;
    fit->a_err = fit->C_err = fit->p_err = fit->C_over_h4_err = fit->C_scaled_err = NAN;
    fit->groups = 0;
    if (n - first < 3)
        return 1;
    linear_fit((int)(n - first), t + first, var + first, &fit->a, &fit->C);
    fit->p = log_log_slope(t, var, first, n);
    fit->C_over_h4 = fit->C / pow(h, 4);
    fit->C_scaled = fit->C / pow(h, fit->scaling_power);
    return 0;
}

/* The variance at every output time of all groups but g, for each g (var: n_groups x n): the groups
 * before g merged in order, then merged with those after g (merged from the last back). 3 n_groups merges
 * an output time, not n_groups^2. NaN where fewer than two trajectories remain (9 trajectories make a
 * group of 8 and a group of 1), whose variance nh_accum_variance would give as 0. */
static void leave_one_out_variances(const nh_accum *groups, int n_groups, long n, double *var)
{
    nh_accum before[NH_FIT_GROUPS + 1], after[NH_FIT_GROUPS + 1];
    for (long k = 0; k < n; ++k) {
        nh_accum_reset(&before[0]);
        for (int g = 0; g < n_groups; ++g) {
            before[g + 1] = before[g];
            nh_accum_merge(&before[g + 1], &groups[(long)g * n + k]);
        }
        nh_accum_reset(&after[n_groups]);
        for (int g = n_groups - 1; g >= 0; --g) {
            after[g] = after[g + 1];
            nh_accum_merge(&after[g], &groups[(long)g * n + k]);
        }
        for (int g = 0; g < n_groups; ++g) {
            nh_accum rest = before[g];
            nh_accum_merge(&rest, &after[g + 1]);
            var[(long)g * n + k] = rest.count >= 2.0 ? nh_accum_variance(&rest) : NAN;
        }
    }
}

/* NaN when a leave-one-out estimate is (a set without a variance somewhere): no error rather than a wrong one */
static double jackknife_error(const double *theta, int m)
{
    double mean = 0, ss = 0;
    for (int g = 0; g < m; ++g)
        mean += theta[g] / m;
    for (int g = 0; g < m; ++g)
        ss += (theta[g] - mean) * (theta[g] - mean);
    return sqrt((m - 1.0) / m * ss);
}

int nh_variance_fit_jackknife(const double *t, const nh_accum *groups, int n_groups, long n, double window_start,
                              double h, int order, nh_variance_fit *fit)
{
    double theta[5][NH_FIT_GROUPS];
    if (n_groups > NH_FIT_GROUPS)
        n_groups = NH_FIT_GROUPS;
    double *var = n > 0 ? malloc((size_t)n_groups * (size_t)n * sizeof *var) : NULL;
    int m = 0;
    if (var)
        leave_one_out_variances(groups, n_groups, n, var);
    for (int g = 0; var && g < n_groups; ++g) {
        if (groups[(long)g * n].count <= 0)
            continue; /* an empty group (fewer blocks than groups) */
        nh_variance_fit part;
        nh_variance_fit_compute(t, var + (long)g * n, n, window_start, h, order, &part);
        const double values[5] = {part.a, part.C, part.p, part.C_over_h4, part.C_scaled};
        for (int i = 0; i < 5; ++i)
            theta[i][m] = values[i];
        ++m;
    }
    free(var);
    fit->groups = m;
    if (m < 2)
        return 1;
    fit->a_err = jackknife_error(theta[0], m);
    fit->C_err = jackknife_error(theta[1], m);
    fit->p_err = jackknife_error(theta[2], m);
    fit->C_over_h4_err = jackknife_error(theta[3], m);
    fit->C_scaled_err = jackknife_error(theta[4], m);
    return isfinite(fit->C_err) ? 0 : 1;
}
