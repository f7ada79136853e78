/* The variance law of seed 000 Fig. 2: Var dH(t) ~ a + C t over the late part of a run. The offset a
 * is the bounded O(h^4) oscillation of each trajectory's energy error; C is the random-walk rate.
 * A power law through the origin would be dominated by a at early times, so both are reported. */
#include "nhens/stats.h"

#include <math.h>

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
    if (n - first < 3)
        return 1;
    linear_fit((int)(n - first), t + first, var + first, &fit->a, &fit->C);
    fit->p = log_log_slope(t, var, first, n);
    fit->C_over_h4 = fit->C / pow(h, 4);
    fit->C_scaled = fit->C / pow(h, fit->scaling_power);
    return 0;
}
