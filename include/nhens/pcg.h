/* PCG32 (O'Neill 2014, XSH-RR output, 64-bit LCG state), written from the published algorithm,
 * plus SplitMix64 for deriving per-trajectory streams. State is always an explicit value. */
#ifndef NHENS_PCG_H
#define NHENS_PCG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_pcg32 {
    uint64_t state;
    uint64_t inc;   /* always odd */
} nh_pcg32;

void nh_pcg32_seed(nh_pcg32 *rng, uint64_t initstate, uint64_t initseq);
uint32_t nh_pcg32_next(nh_pcg32 *rng);
/* Jump ahead (or back, with a negative delta in two's complement) in O(log delta). */
void nh_pcg32_advance(nh_pcg32 *rng, uint64_t delta);

/* Uniform double in [0, 1) with 53 random bits (two outputs). */
double nh_pcg32_uniform(nh_pcg32 *rng);
/* Standard normal deviate (Marsaglia polar method; consumes a variable number of outputs). */
double nh_pcg32_gaussian(nh_pcg32 *rng);

uint64_t nh_splitmix64_next(uint64_t *x);

/* Stream of trajectory `index` of a run with `seed`: state and increment both from a SplitMix64
 * hash of (seed, index), never from the thread that runs it. */
void nh_pcg32_for_trajectory(nh_pcg32 *rng, uint64_t seed, uint64_t index);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
