/* The shared sine and cosine (systems/trig_inline.h): their error against libm's long double sinl and cosl
 * (64-bit significands on x86-64, so the reference's own error is below 0.001 ulp of a double) at 1.3 million
 * points of the kernels' domain, the special values, libm's bits beyond the domain, and the same bits from a
 * loop of the kernel compiled for SSE2, AVX2 and AVX-512 as from the scalar functions. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trig_inline.h"

/* the accuracy the header promises: every result within 0.52 ulp of the exact value */
static const double CLAIMED_MAX_ULP = 0.52;
/* largest quadrant count below the bound, 2^20 2/pi */
static const long MAX_K = 667544;

/* |got - exact| in ulps of a double of the exact value's size (the smallest subnormal at least) */
static double ulp_error(double got, long double exact)
{
    int e;
    frexpl(exact, &e);           /* exact = m 2^e, 1/2 <= |m| < 1: ulp = 2^(e - 53) */
    if (e - 53 < -1074)
        e = -1074 + 53;
    return (double)(fabsl((long double)got - exact) / ldexpl(1.0L, e - 53));
}

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static double unit_random(uint64_t *state)
{
    return (double)(next_random(state) >> 11) * 0x1p-53;
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* the test points: special values, doubles next to multiples of pi/2, uniform on [-pi, pi] and [-B, B], and
 * magnitudes spread log-uniformly over [2^-40, B] */
static double *test_points(size_t *count)
{
    const size_t n = 1300000;
    double *x = malloc(n * sizeof *x);
    cr_assert(x != NULL);
    size_t i = 0;
    const double special[] = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 0x1.fffffffffffffp-1023, DBL_MIN, 1e-300,
                              0x1p-27, -0x1p-26, M_PI_4, nextafter(M_PI_4, 1.0), nextafter(M_PI_4, 0.0), M_PI_2,
                              M_PI, -M_PI, 2 * M_PI, 1e6, NH_TRIG_BOUND, -NH_TRIG_BOUND,
                              nextafter(NH_TRIG_BOUND, 0.0)};
    for (size_t s = 0; s < sizeof special / sizeof special[0]; ++s)
        x[i++] = special[s];
    uint64_t state = 0x9e3779b97f4a7c15u;
    while (i < 100000) {
        /* the double nearest k pi/2 (rounded from long double) and its neighbours up to 3 ulps away */
        const long k = 1 + (long)(next_random(&state) % (uint64_t)MAX_K);
        const double sign = next_random(&state) & 1 ? 1.0 : -1.0;
        double below = (double)(k * (M_PI_2 * 1.0L)), above = below;
        x[i++] = sign * below;
        for (int step = 1; step <= 3 && i + 2 <= 100000; ++step) {
            below = nextafter(below, 0.0), above = nextafter(above, INFINITY);
            x[i++] = sign * below;
            x[i++] = sign * above;
        }
    }
    while (i < 400000)
        x[i++] = M_PI * (2.0 * unit_random(&state) - 1.0);
    while (i < 800000)
        x[i++] = NH_TRIG_BOUND * (2.0 * unit_random(&state) - 1.0);
    while (i < n)
        x[i++] = (next_random(&state) & 1 ? 1 : -1) * ldexp(1.0 + unit_random(&state), -40 + (int)(next_random(&state) % 60));
    *count = i;
    return x;
}

Test(trig, error_below_the_claimed_bound)
{
    size_t n;
    double *x = test_points(&n);
    double worst_sin = 0.0, worst_cos = 0.0, at_sin = 0.0, at_cos = 0.0;
    for (size_t i = 0; i < n; ++i) {
        cr_assert(fabs(x[i]) <= NH_TRIG_BOUND, "point %zu outside the domain", i);
        const double es = ulp_error(nh_sin_kernel(x[i]), sinl(x[i]));
        const double ec = ulp_error(nh_cos_kernel(x[i]), cosl(x[i]));
        if (es > worst_sin)
            worst_sin = es, at_sin = x[i];
        if (ec > worst_cos)
            worst_cos = ec, at_cos = x[i];
    }
    cr_log_info("%zu points: sin %.4f ulp at %a, cos %.4f ulp at %a", n, worst_sin, at_sin, worst_cos, at_cos);
    cr_expect(worst_sin <= CLAIMED_MAX_ULP, "sin: %.4f ulp at %a", worst_sin, at_sin);
    cr_expect(worst_cos <= CLAIMED_MAX_ULP, "cos: %.4f ulp at %a", worst_cos, at_cos);
    /* not correctly rounded everywhere: the error is measured, not zero (a reference equal to the tested
     * function would give 0) */
    cr_expect(worst_sin > 0.5 && worst_cos > 0.5);
    free(x);
}

Test(trig, scalar_functions_give_the_kernels_bits)
{
    size_t n;
    double *x = test_points(&n);
    for (size_t i = 0; i < n; ++i) {
        double s, c, ks, kc;
        nh_sincos(x[i], &s, &c);
        nh_sincos_kernel(x[i], &ks, &kc);
        cr_assert(same_bits(nh_sin(x[i]), nh_sin_kernel(x[i])) && same_bits(nh_cos(x[i]), nh_cos_kernel(x[i]))
                  && same_bits(s, ks) && same_bits(c, kc) && same_bits(s, nh_sin(x[i]))
                  && same_bits(c, nh_cos(x[i])), "at %a", x[i]);
    }
    free(x);
}

Test(trig, special_values)
{
    cr_expect(same_bits(nh_sin(0.0), 0.0) && same_bits(nh_sin(-0.0), -0.0), "sin(+-0) = +-0");
    cr_expect(same_bits(nh_sin_kernel(-0.0), -0.0));
    cr_expect(nh_cos(0.0) == 1.0 && nh_cos(-0.0) == 1.0);
    cr_expect(nh_sin(0x1p-1074) == 0x1p-1074 && nh_sin(-0x1p-1074) == -0x1p-1074, "sin x = x for subnormals");
    cr_expect(nh_sin(0x1p-30) == 0x1p-30, "sin x rounds to x below 2^-26");
    cr_expect(isnan(nh_sin(NAN)) && isnan(nh_cos(NAN)) && isnan(nh_sin(-NAN)));
    cr_expect(isnan(nh_sin(INFINITY)) && isnan(nh_sin(-INFINITY)) && isnan(nh_cos(INFINITY)));
    /* k pi/2 for k = 1..4: the doubles nearest them give the tiny remainders libm gives */
    const double quarter_turns[] = {M_PI_2, M_PI, 1.5 * M_PI, 2 * M_PI};
    for (int k = 0; k < 4; ++k) {
        cr_expect(ulp_error(nh_sin(quarter_turns[k]), sinl(quarter_turns[k])) <= CLAIMED_MAX_ULP, "k = %d", k + 1);
        cr_expect(ulp_error(nh_cos(quarter_turns[k]), cosl(quarter_turns[k])) <= CLAIMED_MAX_ULP, "k = %d", k + 1);
    }
}

Test(trig, libm_beyond_the_bound)
{
    const double beyond[] = {nextafter(NH_TRIG_BOUND, INFINITY), -nextafter(NH_TRIG_BOUND, INFINITY), 0x1p21, 1e7,
                             1e22, -1e300, DBL_MAX, INFINITY, NAN};
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; ++i) {
        double s, c;
        nh_sincos(beyond[i], &s, &c);
        cr_expect(same_bits(nh_sin(beyond[i]), sin(beyond[i])) && same_bits(nh_cos(beyond[i]), cos(beyond[i]))
                  && same_bits(s, sin(beyond[i])) && same_bits(c, cos(beyond[i])), "at %a", beyond[i]);
    }
}

/* A lane loop as the lane kernels write it: the kernel in every lane, then the scalar function in the lanes
 * beyond the bound. Compiled three times: for the baseline (SSE2) and, with their target attributes, for AVX2
 * and AVX-512 (run where the CPU has them); each vectorises at -O3 (Release). */
#define LANE_LOOP(name, attributes)                                                                                 \
    attributes static void name(size_t n, const double *restrict x, double *restrict s, double *restrict c)      \
    {                                                                                                              \
        for (size_t l = 0; l < n; ++l) {                                                                           \
            s[l] = nh_sin_kernel(x[l]);                                                                            \
            c[l] = nh_cos_kernel(x[l]);                                                                            \
        }                                                                                                          \
        for (size_t l = 0; l < n; ++l)                                                                             \
            if (!(fabs(x[l]) <= NH_TRIG_BOUND)) {                                                                  \
                s[l] = nh_sin(x[l]);                                                                               \
                c[l] = nh_cos(x[l]);                                                                               \
            }                                                                                                      \
    }
LANE_LOOP(lanes_baseline, )
LANE_LOOP(lanes_avx2, __attribute__((target("avx2,fma"))))
#ifdef __clang__   /* clang has no prefer-vector-width target attribute */
LANE_LOOP(lanes_avx512, __attribute__((target("avx512f,fma"))))
#else
LANE_LOOP(lanes_avx512, __attribute__((target("avx512f,fma,prefer-vector-width=512"))))
#endif

static void expect_scalar_bits(void (*lanes)(size_t, const double *restrict, double *restrict, double *restrict),
                               const char *isa)
{
    size_t n;
    double *x = test_points(&n);
    x[n - 1] = 1e7, x[n - 2] = NAN, x[n - 3] = -INFINITY;     /* lanes for the scalar fix-up */
    double *s = malloc(n * sizeof *s), *c = malloc(n * sizeof *c);
    cr_assert(s != NULL && c != NULL);
    lanes(n, x, s, c);
    for (size_t i = 0; i < n; ++i)
        cr_assert(same_bits(s[i], nh_sin(x[i])) && same_bits(c[i], nh_cos(x[i])), "%s at %a", isa, x[i]);
    free(x);
    free(s);
    free(c);
}

Test(trig, lanes_give_the_scalar_bits)
{
    expect_scalar_bits(lanes_baseline, "baseline");
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        expect_scalar_bits(lanes_avx2, "avx2");
    if (__builtin_cpu_supports("avx512f"))
        expect_scalar_bits(lanes_avx512, "avx512f");
}
