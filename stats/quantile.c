/* Mergeable quantile sketches: signed logarithmic histograms of counts (see include/nhens/stats.h). */
#include "nhens/stats.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

const double nh_quantile_levels[NH_QUANTILE_LEVELS] = {0.05, 0.5, 0.95};
const char *const nh_quantile_suffixes[NH_QUANTILE_LEVELS] = {"q05", "q50", "q95"};

enum { ZERO_BIN = NH_SKETCH_SIDE + 1 };   /* bins 0: below -max, 1..SIDE: negatives, then |x| < min, ... */

/* The magnitude bin's offset (0 .. SIDE) of |x| = a >= 1e MIN_EXP by its definition, from log10. */
static int offset_by_log10(double a)
{
    const double position = (log10(a) - NH_SKETCH_MIN_EXP) * NH_SKETCH_PER_DECADE;   /* >= 0 */
    return position >= NH_SKETCH_SIDE ? NH_SKETCH_SIDE : (int)position;               /* SIDE: beyond max */
}

/* The lower edge of magnitude offset o (0 .. SIDE): 10^(MIN_EXP + o / PER_DECADE) within 4e-16 relative (the
 * product of two correctly rounded constants). */
static double offset_edge(int o)
{
    static const double decade[NH_SKETCH_MAX_EXP - NH_SKETCH_MIN_EXP + 1] = {
        1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6,
        1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    static const double step[NH_SKETCH_PER_DECADE] = {1.0, 1.333521432163324, 1.7782794100389228, 2.371373705661655,
        3.1622776601683795, 4.216965034285822, 5.623413251903491, 7.498942093324558};   /* 10^(k/8) */
    return decade[o / NH_SKETCH_PER_DECADE] * step[o % NH_SKETCH_PER_DECADE];
}

_Static_assert(NH_SKETCH_MIN_EXP == -20 && NH_SKETCH_MAX_EXP == 8 && NH_SKETCH_PER_DECADE == 8,
               "offset_edge's tables are those of the sketch's range");

/* offset_by_log10(a) without the logarithm where a is not within a relative 1e-12 of a bin edge: there the
 * edges (within 4e-16) and log10 (within a few ulp, 1e-14 in the position) cannot disagree on the bin; near an
 * edge the definition decides. The estimate from a's binary exponent and mantissa is within 0.02 of a bin (the
 * loops below correct it). */
static int magnitude_offset(double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    const int exponent = (int)((bits >> 52) & 0x7ff) - 1023;   /* a >= 1e-20 is normal */
    const double mantissa = 1.0 + (double)(bits & 0xfffffffffffffull) * 0x1p-52;
    const double u = mantissa - 1.0, log2_mantissa = u * (1.3466 - 0.3466 * u);   /* within 0.0077 on [0, 1) */
    const double estimate = ((exponent + log2_mantissa) * 0.30102999566398120 - NH_SKETCH_MIN_EXP) * NH_SKETCH_PER_DECADE;
    int o = estimate < 0 ? 0 : estimate >= NH_SKETCH_SIDE ? NH_SKETCH_SIDE : (int)estimate;
    while (o > 0 && a < offset_edge(o))
        --o;
    while (o < NH_SKETCH_SIDE && a >= offset_edge(o + 1))
        ++o;
    const double margin = 1e-12;
    if (a < offset_edge(o) * (1.0 + margin) || (o < NH_SKETCH_SIDE && a > offset_edge(o + 1) * (1.0 - margin)))
        return offset_by_log10(a);
    return o;
}

int nh_sketch_bin(double x)
{
    if (isnan(x))
        return -1;
    const double a = fabs(x);
    if (a < pow(10.0, NH_SKETCH_MIN_EXP))
        return ZERO_BIN;
    const int offset = magnitude_offset(a);
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
