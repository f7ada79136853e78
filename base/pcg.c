/* PCG32 and SplitMix64: the only random-number source of nhens (see include/nhens/pcg.h). */
#include "nhens/pcg.h"

#include <math.h>

static const uint64_t PCG_MULTIPLIER = 6364136223846793005ULL;

void nh_pcg32_seed(nh_pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0U;
    rng->inc = (initseq << 1u) | 1u;
    nh_pcg32_next(rng);
    rng->state += initstate;
    nh_pcg32_next(rng);
}

uint32_t nh_pcg32_next(nh_pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG_MULTIPLIER + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* Brown's "Random number generation with arbitrary strides": compose the affine map
 * x -> a x + c with itself, bit by bit of delta. */
void nh_pcg32_advance(nh_pcg32 *rng, uint64_t delta)
{
    uint64_t cur_mult = PCG_MULTIPLIER, cur_plus = rng->inc;
    uint64_t acc_mult = 1u, acc_plus = 0u;
    while (delta > 0) {
        if (delta & 1u) {
            acc_mult *= cur_mult;
            acc_plus = acc_plus * cur_mult + cur_plus;
        }
        cur_plus = (cur_mult + 1u) * cur_plus;
        cur_mult *= cur_mult;
        delta >>= 1u;
    }
    rng->state = acc_mult * rng->state + acc_plus;
}

double nh_pcg32_uniform(nh_pcg32 *rng)
{
    uint64_t hi = nh_pcg32_next(rng) >> 5;   /* 27 bits */
    uint64_t lo = nh_pcg32_next(rng) >> 6;   /* 26 bits */
    return (double)((hi << 26) | lo) * 0x1.0p-53;
}

double nh_pcg32_gaussian(nh_pcg32 *rng)
{
    for (;;) {
        double u = 2.0 * nh_pcg32_uniform(rng) - 1.0;
        double v = 2.0 * nh_pcg32_uniform(rng) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0)
            return u * sqrt(-2.0 * log(s) / s);
    }
}

uint64_t nh_splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void nh_pcg32_for_trajectory(nh_pcg32 *rng, uint64_t seed, uint64_t index)
{
    uint64_t chain = seed;
    chain = nh_splitmix64_next(&chain) + index;
    uint64_t state = nh_splitmix64_next(&chain);
    uint64_t sequence = nh_splitmix64_next(&chain);
    nh_pcg32_seed(rng, state, sequence);
}
