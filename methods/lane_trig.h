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

/* One lane's sin x and cos x inside a lane kernel's loop (lane_steps.h): the kernel when `exact` is 0 (the
 * vectorised pass), with |x| added to *angles (a sum beyond the kernel's bound, where the kernel's value may not be
 * the callbacks', makes the pass leave the lane to the exact one), and nh_sin / nh_cos when `exact` is 1 (the lane
 * stepped again in scalar code): the scalar callbacks' bits either way. */
static inline __attribute__((always_inline)) double nh_sin_lane(double x, int exact, double *angles)
{
    *angles += fabs(x);
    return exact ? nh_sin(x) : nh_sin_kernel(x);
}

static inline __attribute__((always_inline)) double nh_cos_lane(double x, int exact, double *angles)
{
    *angles += fabs(x);
    return exact ? nh_cos(x) : nh_cos_kernel(x);
}

#endif
