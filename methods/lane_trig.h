/* Sines and cosines lane by lane (lane systems): the kernels of trig_inline.h in every lane, vectorised, and
 * nh_sin / nh_cos in scalar code for a lane beyond their bound (trig_inline.h's contract), so that each lane has
 * the bits of the scalar callbacks. */
#ifndef NHENS_METHODS_LANE_TRIG_H
#define NHENS_METHODS_LANE_TRIG_H

#include "nhens/lanes.h"
#include "trig_inline.h"

/* y = sin(scale x) lane by lane (x: L entries) */
static inline __attribute__((always_inline)) void nh_sin_lanes(double scale, const double *restrict x,
                                                               double *restrict y, int L)
{
    int beyond = 0;
    for (int l = 0; l < L; ++l) {
        y[l] = nh_sin_kernel(scale * x[l]);
        beyond |= !(fabs(scale * x[l]) <= NH_TRIG_BOUND);
    }
    for (int l = 0; beyond && l < L; ++l)
        if (!(fabs(scale * x[l]) <= NH_TRIG_BOUND))
            y[l] = nh_sin(scale * x[l]);
}

/* y = cos(scale x) lane by lane */
static inline __attribute__((always_inline)) void nh_cos_lanes(double scale, const double *restrict x,
                                                               double *restrict y, int L)
{
    int beyond = 0;
    for (int l = 0; l < L; ++l) {
        y[l] = nh_cos_kernel(scale * x[l]);
        beyond |= !(fabs(scale * x[l]) <= NH_TRIG_BOUND);
    }
    for (int l = 0; beyond && l < L; ++l)
        if (!(fabs(scale * x[l]) <= NH_TRIG_BOUND))
            y[l] = nh_cos(scale * x[l]);
}

#endif
