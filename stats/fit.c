/* The variance law of Celledoni et al. 2019, Fig. 2: Var dH(t) ~ a + C t over the late part of a run. The offset a
 * is the bounded O(h^4) oscillation of each trajectory's energy error; C is the random-walk rate.
 * A power law through the origin would be dominated by a at early times, so both are reported. This module
 * owns the fit, its delete-one-group jackknife errors with their degrees of freedom and Student t quantile,
 * and the caveats that say when the data do not support the law. */
#include "nhens/stats.h"

#include <math.h>
#include <stdlib.h>

/* Least squares y ~ intercept + slope x over the rows [first, n) whose y is not NAN (missing data);
 * returns the number of rows used. */
static long linear_fit(const double *x, const double *y, long first, long n, double *intercept, double *slope)
{
    long count = 0;
    double sx = 0, sy = 0;
    for (long i = first; i < n; ++i)
        if (!isnan(y[i])) {
            sx += x[i];
            sy += y[i];
            ++count;
        }
    double mx = sx / count, my = sy / count, sxx = 0, sxy = 0;
    for (long i = first; i < n; ++i)
        if (!isnan(y[i])) {
            sxx += (x[i] - mx) * (x[i] - mx);
            sxy += (x[i] - mx) * (y[i] - my);
        }
    *slope = sxx > 0 ? sxy / sxx : 0.0;
    *intercept = my - *slope * mx;
    return count;
}

/* Log-log slope of var against t over the rows [first, n) with t > 0 and var > 0; with `line` (a, C), of
 * a + C t instead, at the rows where var is not NAN (the fitted rows). NAN with fewer than 2 rows. log_t: log(t[i])
 * where t[i] > 0, computed once for several fits (NULL: computed here). */
static double log_log_slope(const double *t, const double *log_t, const double *var, long first, long n,
                            const double *line)
{
    long count = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (long i = first; i < n; ++i) {
        const double value = line && !isnan(var[i]) ? line[0] + line[1] * t[i] : var[i];
        if (!(t[i] > 0 && value > 0))
            continue;
        double x = log_t ? log_t[i] : log(t[i]), y = log(value);
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

static long window_first(const double *t, long n, double window_start)
{
    long first = 0;
    while (first < n && t[first] < window_start)
        ++first;
    return first;
}

/* nh_variance_fit_compute with log_t as in log_log_slope. */
static int fit_compute(const double *t, const double *log_t, const double *var, long n, double window_start, double h,
                       int order, nh_variance_fit *fit)
{
    const long first = window_first(t, n, window_start);
    long points = 0;
    for (long i = first; i < n; ++i)
        points += !isnan(var[i]);
    fit->t_start = first < n ? t[first] : window_start;
    fit->t_end = n > 0 ? t[n - 1] : 0.0;
    fit->points = (int)points;
    fit->scaling_power = 2 * order;
    fit->a = fit->C = fit->p = fit->C_over_h4 = fit->C_scaled = fit->p_of_fit = NAN;
    fit->a_err = fit->C_err = fit->p_err = fit->C_over_h4_err = fit->C_scaled_err = fit->t95 = NAN;
    fit->groups = fit->dof = 0;
    if (points < 3)
        return 1;
    linear_fit(t, var, first, n, &fit->a, &fit->C);
    fit->p = log_log_slope(t, log_t, var, first, n, NULL);
    const double line[2] = {fit->a, fit->C};
    fit->p_of_fit = log_log_slope(t, log_t, var, first, n, line);
    fit->C_over_h4 = fit->C / pow(h, 4);
    fit->C_scaled = fit->C / pow(h, fit->scaling_power);
    return 0;
}

int nh_variance_fit_compute(const double *t, const double *var, long n, double window_start, double h,
                            int order, nh_variance_fit *fit)
{
    return fit_compute(t, NULL, var, n, window_start, h, order, fit);
}

/* The variance at every output time of all groups but g, for each g (var: n_groups x n): the groups
 * before g merged in order, then merged with those after g (merged from the last back). 3 n_groups merges
 * an output time, not n_groups^2. NAN where the whole ensemble has no variance (the full fit leaves those
 * times out too); where it has one but the rest of g does not (9 trajectories in a group of 8 and a group
 * of 1) from `first` on, g's estimate is void (valid[g] = 0): it would be fitted on other times. */
static void leave_one_out_variances(const nh_accum *groups, int n_groups, long first, long n, double *var,
                                    unsigned char *valid)
{
    nh_accum before[NH_FIT_GROUPS + 1], after[NH_FIT_GROUPS + 1];
    for (int g = 0; g < n_groups; ++g)
        valid[g] = 1;
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
            if (rest.count < 2.0 && before[n_groups].count >= 2.0 && k >= first)
                valid[g] = 0;
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
    unsigned char valid[NH_FIT_GROUPS];
    if (n_groups > NH_FIT_GROUPS)
        n_groups = NH_FIT_GROUPS;
    double *var = n > 0 ? malloc(((size_t)n_groups + 1) * (size_t)n * sizeof *var) : NULL;
    double *log_t = var ? var + (size_t)n_groups * (size_t)n : NULL;   /* the same for every group's fit */
    int m = 0;
    if (var)
        leave_one_out_variances(groups, n_groups, window_first(t, n, window_start), n, var, valid);
    for (long i = 0; log_t && i < n; ++i)
        log_t[i] = t[i] > 0 ? log(t[i]) : NAN;
    for (int g = 0; var && g < n_groups; ++g) {
        if (groups[(long)g * n].count <= 0)
            continue; /* an empty group (fewer trajectories or chunks than groups) */
        nh_variance_fit part;
        fit_compute(t, log_t, var + (long)g * n, n, window_start, h, order, &part);
        const double values[5] = {part.a, part.C, part.p, part.C_over_h4, part.C_scaled};
        for (int i = 0; i < 5; ++i)
            theta[i][m] = valid[g] ? values[i] : NAN;
        ++m;
    }
    free(var);
    fit->groups = m;
    if (m < 2)
        return 1;
    fit->dof = m - 1;
    fit->t95 = nh_student_t95(fit->dof);
    fit->a_err = jackknife_error(theta[0], m);
    fit->C_err = jackknife_error(theta[1], m);
    fit->p_err = jackknife_error(theta[2], m);
    fit->C_over_h4_err = jackknife_error(theta[3], m);
    fit->C_scaled_err = jackknife_error(theta[4], m);
    return isfinite(fit->C_err) ? 0 : 1;
}

/* t_0.975 for 1 to 10 degrees of freedom (standard tables, e.g. Abramowitz & Stegun 26.10, to 8 digits); above,
 * the Cornish-Fisher expansion in 1/dof to its fourth term, within 2e-5 of the table from 11 on. */
double nh_student_t95(int dof)
{
    static const double table[10] = {12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.5705818,
                                     2.4469119, 2.3646243, 2.3060041, 2.2621572, 2.2281389};
    if (dof < 1)
        return NAN;
    if (dof <= 10)
        return table[dof - 1];
    const double z = 1.959963984540054, z2 = z * z, v = dof;
    const double g1 = (z2 + 1) * z / 4, g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

unsigned nh_variance_fit_caveats(const nh_variance_fit *fit)
{
    if (!isfinite(fit->a) || !isfinite(fit->C))
        return NH_FIT_NO_FIT;
    if (!isfinite(fit->C_err) || !isfinite(fit->t95))
        return NH_FIT_NO_ERRORS;
    unsigned caveats = 0;
    if (!(fit->C > fit->t95 * fit->C_err))
        caveats |= NH_FIT_C_UNRESOLVED;
    if (isfinite(fit->p) && isfinite(fit->p_err) && fit->p - fit->t95 * fit->p_err > 1.0)
        caveats |= NH_FIT_FASTER;
    if (isfinite(fit->p) && isfinite(fit->p_err) && isfinite(fit->p_of_fit) &&
        fabs(fit->p - fit->p_of_fit) > fit->t95 * fit->p_err)
        caveats |= NH_FIT_CURVED;
    return caveats;
}

const char *nh_variance_fit_caveat_text(unsigned bit)
{
    if (bit & NH_FIT_NO_FIT)
        return "no fit: the window has fewer than 3 output times with a variance (2 live trajectories), or the "
               "variance is not finite";
    if (bit & NH_FIT_NO_ERRORS)
        return "no standard errors (a set of all jackknife groups but one has fewer than 2 live trajectories in the "
               "window), so the data cannot be judged";
    if (bit & NH_FIT_C_UNRESOLVED)
        return "C is within its 95 % interval of 0: no growth of Var dH is resolved, so the data do not support a "
               "random walk and C is no rate";
    if (bit & NH_FIT_FASTER)
        return "p exceeds 1 beyond its 95 % interval: Var dH grows faster than linearly in t (a drift or an "
               "instability), which a + C t does not describe";
    if (bit & NH_FIT_CURVED)
        return "p differs from the log-log slope of the fitted a + C t beyond its 95 % interval: Var dH is curved in "
               "t where a + C t is not";
    return "";
}
