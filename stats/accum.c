/* Welford accumulation and Chan merge (see include/nhens/stats.h). A statistic of too few samples is
 * NAN, never 0: missing data must not read as a measured zero. */
#include "nhens/stats.h"

#include <math.h>

void nh_accum_reset(nh_accum *a)
{
    a->count = 0.0;
    a->mean = 0.0;
    a->m2 = 0.0;
    a->absmax = 0.0;
}

static inline void welford_add(nh_accum *a, double x)
{
    a->count += 1.0;
    double d = x - a->mean;
    a->mean += d / a->count;
    a->m2 += d * (x - a->mean);
    if (fabs(x) > a->absmax)
        a->absmax = fabs(x);
}

void nh_accum_add(nh_accum *a, double x)
{
    welford_add(a, x);
}

void nh_accum_add_each(nh_accum *a, const double *x, int n, int skip)
{
    for (int i = 0; i < n; ++i)
        if (i != skip)
            welford_add(&a[i], x[i]);
}

static inline void chan_merge(nh_accum *into, const nh_accum *from)
{
    if (from->count == 0.0)
        return;
    if (into->count == 0.0) {
        *into = *from;
        return;
    }
    double n = into->count + from->count;
    double d = from->mean - into->mean;
    into->mean += d * from->count / n;
    into->m2 += from->m2 + d * d * into->count * from->count / n;
    into->count = n;
    if (from->absmax > into->absmax)
        into->absmax = from->absmax;
}

void nh_accum_merge(nh_accum *into, const nh_accum *from)
{
    chan_merge(into, from);
}

void nh_accum_merge_each(nh_accum *into, const nh_accum *from, long n)
{
    for (long i = 0; i < n; ++i)
        chan_merge(&into[i], &from[i]);
}

double nh_accum_variance(const nh_accum *a)
{
    return a->count > 1.0 ? a->m2 / (a->count - 1.0) : NAN;
}

double nh_accum_mean_stderr(const nh_accum *a)
{
    return a->count > 1.0 ? sqrt(nh_accum_variance(a) / a->count) : NAN;
}

double nh_accum_rms(const nh_accum *a)
{
    return a->count > 0.0 ? sqrt(a->mean * a->mean + a->m2 / a->count) : NAN;
}
