/* Mergeable quantile sketches: signed logarithmic histograms of counts (see include/nhens/stats.h). */
#include "nhens/stats.h"

#include <math.h>

const double nh_quantile_levels[NH_QUANTILE_LEVELS] = {0.05, 0.5, 0.95};
const char *const nh_quantile_suffixes[NH_QUANTILE_LEVELS] = {"q05", "q50", "q95"};

enum { ZERO_BIN = NH_SKETCH_SIDE + 1 };   /* bins 0: below -max, 1..SIDE: negatives, then |x| < min, ... */

int nh_sketch_bin(double x)
{
    if (isnan(x))
        return -1;
    const double a = fabs(x);
    if (a < pow(10.0, NH_SKETCH_MIN_EXP))
        return ZERO_BIN;
    const double position = (log10(a) - NH_SKETCH_MIN_EXP) * NH_SKETCH_PER_DECADE;   /* >= 0 */
    const int offset = position >= NH_SKETCH_SIDE ? NH_SKETCH_SIDE : (int)position;  /* SIDE: beyond max */
    return x > 0 ? ZERO_BIN + 1 + offset : ZERO_BIN - 1 - offset;
}

void nh_sketch_add(nh_sketch *s, double x)
{
    const int bin = nh_sketch_bin(x);
    if (bin >= 0)
        s->count[bin]++;
}

void nh_sketch_merge(nh_sketch *into, const nh_sketch *from)
{
    for (int i = 0; i < NH_SKETCH_BINS; ++i)
        into->count[i] += from->count[i];
}

unsigned long nh_sketch_total(const nh_sketch *s)
{
    unsigned long total = 0;
    for (int i = 0; i < NH_SKETCH_BINS; ++i)
        total += s->count[i];
    return total;
}

/* |x| at the lower edge of the magnitude bin `offset` (0 .. SIDE) */
static double magnitude_edge(double offset)
{
    return pow(10.0, NH_SKETCH_MIN_EXP + offset / NH_SKETCH_PER_DECADE);
}

/* The value a fraction f (0..1) of the way through bin `bin`, in increasing x. */
static double within_bin(int bin, double f)
{
    if (bin == ZERO_BIN)
        return 0.0;
    if (bin > ZERO_BIN) {
        const int offset = bin - ZERO_BIN - 1;
        return offset >= NH_SKETCH_SIDE ? magnitude_edge(NH_SKETCH_SIDE) : magnitude_edge(offset + f);
    }
    const int offset = ZERO_BIN - 1 - bin;   /* larger offset: more negative */
    return offset >= NH_SKETCH_SIDE ? -magnitude_edge(NH_SKETCH_SIDE) : -magnitude_edge(offset + 1.0 - f);
}

double nh_sketch_quantile(const nh_sketch *s, double level)
{
    const unsigned long total = nh_sketch_total(s);
    if (total == 0)
        return NAN;
    const double target = level * (double)(total - 1);   /* rank of the quantile, 0-based */
    double below = 0.0;
    for (int i = 0; i < NH_SKETCH_BINS; ++i) {
        const double c = s->count[i];
        if (c > 0 && below + c > target)
            return within_bin(i, (target - below + 0.5) / c);
        below += c;
    }
    return within_bin(NH_SKETCH_BINS - 1, 1.0);
}
