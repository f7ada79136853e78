/* Speed of the shared sine (systems/trig_inline.h) against libm's sin: ns per value of a loop of nh_sin_kernel
 * over 4096 doubles uniform on [-8, 8], vectorised by gcc for the baseline (SSE2) and, by target attributes, for
 * AVX2 and AVX-512 (512-bit vectors), of a loop of the scalar nh_sin and of a loop of libm's sin, interleaved;
 * the minimum over the repeats of each (thread CPU time: the machine is shared). Also checks that every loop
 * gives nh_sin's bits. Prints one JSON object; exit 1 if a loop's bits differ.
 * usage: nhens_trig_speed [REPEATS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trig_inline.h"

enum { VALUES = 4096, ROUNDS = 200 };

typedef void loop_fn(const double *restrict x, double *restrict y);

#define KERNEL_LOOP(name, attributes)                                                                              \
    attributes __attribute__((noinline)) static void name(const double *restrict x, double *restrict y)          \
    {                                                                                                              \
        for (int l = 0; l < VALUES; ++l)                                                                           \
            y[l] = nh_sin_kernel(x[l]);                                                                            \
    }
/* gcc and clang spell 512-bit vectors and an unvectorised loop differently */
#ifdef __clang__
#define AVX512_TARGET __attribute__((target("avx512f,fma")))
#define SCALAR_LOOP_FUNCTION __attribute__((noinline))
#define NO_VECTORISING _Pragma("clang loop vectorize(disable)")
#else
#define AVX512_TARGET __attribute__((target("avx512f,fma,prefer-vector-width=512")))
#define SCALAR_LOOP_FUNCTION __attribute__((noinline, optimize("no-tree-vectorize")))
#define NO_VECTORISING
#endif

KERNEL_LOOP(kernel_baseline, )
KERNEL_LOOP(kernel_avx2, __attribute__((target("avx2,fma"))))
KERNEL_LOOP(kernel_avx512, AVX512_TARGET)

SCALAR_LOOP_FUNCTION static void scalar_loop(const double *restrict x, double *restrict y)
{
    NO_VECTORISING
    for (int l = 0; l < VALUES; ++l)
        y[l] = nh_sin(x[l]);
}

__attribute__((noinline)) static void libm_loop(const double *restrict x, double *restrict y)
{
    for (int l = 0; l < VALUES; ++l)
        y[l] = sin(x[l]);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? atoi(argv[1]) : 15;
    if (repeats < 1 || repeats > 1000) {
        fprintf(stderr, "nhens_trig_speed: REPEATS must be 1..1000, got %s\n", argv[1]);
        return 2;
    }
    static double x[VALUES], y[VALUES], reference[VALUES];
    uint64_t state = 12345;
    for (int l = 0; l < VALUES; ++l) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        x[l] = 8.0 * (2.0 * (double)(state >> 11) * 0x1p-53 - 1.0);
        reference[l] = nh_sin(x[l]);
    }
    struct {
        const char *name;
        loop_fn *run;
        int available;
        double best;
    } loops[] = {
        {"kernel_sse2", kernel_baseline, 1, 1e30},
        {"kernel_avx2", kernel_avx2, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), 1e30},
        {"kernel_avx512", kernel_avx512, __builtin_cpu_supports("avx512f"), 1e30},
        {"scalar_nh_sin", scalar_loop, 1, 1e30},
        {"libm_sin", libm_loop, 1, 1e30},
    };
    const int n_loops = sizeof loops / sizeof loops[0];
    int identical = 1;
    for (int k = 0; k < n_loops; ++k)
        if (loops[k].available && k != n_loops - 1) {
            loops[k].run(x, y);
            identical &= memcmp(y, reference, sizeof y) == 0;
        }
    for (int r = 0; r < repeats; ++r)
        for (int k = 0; k < n_loops; ++k) {
            if (!loops[k].available)
                continue;
            const double t0 = cpu_seconds();
            for (int round = 0; round < ROUNDS; ++round) {
                loops[k].run(x, y);
                __asm__ volatile("" ::: "memory");
            }
            const double ns = 1e9 * (cpu_seconds() - t0) / ((double)ROUNDS * VALUES);
            if (ns < loops[k].best)
                loops[k].best = ns;
        }
    printf("{\"statistic\": \"minimum of %d repeats, ns per value\", \"identical_bits\": %s", repeats,
           identical ? "true" : "false");
    for (int k = 0; k < n_loops; ++k)
        if (loops[k].available)
            printf(", \"%s\": %.2f", loops[k].name, loops[k].best);
    printf("}\n");
    return identical ? 0 : 1;
}
