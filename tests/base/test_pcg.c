/* PCG32 known answers (docs/TOOLCHAIN.md, from the published reference) and a long-stream comparison
 * with Debian's pcg-cpp. All comparisons are exact: a random-number generator is right or wrong. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <inttypes.h>
#include <stdio.h>

#include "nhens/pcg.h"

static const uint32_t KNOWN_42_54[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};

Test(pcg, seed_42_54_state_and_first_outputs)
{
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 42, 54);
    cr_assert(eq(u64, rng.state, 0x185706b82c2e03f8ULL));
    cr_assert(eq(u64, rng.inc, 0x6dULL));
    for (int i = 0; i < 6; ++i)
        cr_assert(eq(u32, nh_pcg32_next(&rng), KNOWN_42_54[i]), "output %d", i);
}

Test(pcg, advance_backwards_repeats_outputs)
{
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 42, 54);
    for (int i = 0; i < 6; ++i)
        nh_pcg32_next(&rng);
    nh_pcg32_advance(&rng, (uint64_t)-6);
    for (int i = 0; i < 6; ++i)
        cr_assert(eq(u32, nh_pcg32_next(&rng), KNOWN_42_54[i]), "output %d after advance(-6)", i);
}

Test(pcg, advance_one_million_matches_stepping)
{
    nh_pcg32 jump, walk;
    nh_pcg32_seed(&jump, 42, 54);
    walk = jump;
    nh_pcg32_advance(&jump, 1000000);
    for (int i = 0; i < 1000000; ++i)
        nh_pcg32_next(&walk);
    cr_assert(eq(u64, jump.state, 0x5230a7ae1b365db8ULL));
    cr_assert(eq(u64, walk.state, jump.state));
    cr_assert(eq(u32, nh_pcg32_next(&jump), 0x11918599u));
}

Test(pcg, splitmix64_known_answer)
{
    uint64_t x = 0;
    cr_assert(eq(u64, nh_splitmix64_next(&x), 0xe220a8397b1dcdafULL));
}

Test(pcg, long_stream_matches_debian_pcg_cpp)
{
    const char *oracle = PCG_ORACLE_PATH;
    cr_assert(oracle[0] != '\0', "pcg_oracle was not built (libpcg-cpp-dev missing)");
    const uint64_t state = 0x853c49e6748fea9bULL, seq = 0xda3e39cb94b95bdbULL;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %" PRIu64 " %" PRIu64 " 100000", oracle, state, seq);
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL);
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, state, seq);
    unsigned expected;
    long count = 0;
    while (fscanf(p, "%x", &expected) == 1) {
        uint32_t got = nh_pcg32_next(&rng);
        cr_assert(eq(u32, got, (uint32_t)expected), "output %ld", count);
        ++count;
    }
    cr_assert(eq(int, pclose(p), 0));
    cr_assert(eq(long, count, 100000L));
}

Test(pcg, trajectory_streams_depend_only_on_seed_and_index)
{
    nh_pcg32 a, b, c;
    nh_pcg32_for_trajectory(&a, 7, 3);
    nh_pcg32_for_trajectory(&c, 7, 4);
    nh_pcg32_for_trajectory(&b, 7, 3);
    cr_assert(eq(u64, a.state, b.state));
    cr_assert(eq(u64, a.inc, b.inc));
    cr_assert(a.inc != c.inc && a.state != c.state, "neighbouring trajectories must differ in state and increment");
}

Test(pcg, uniform_and_gaussian_moments)
{
    /* 1e6 draws: the sample mean of U[0,1) has standard error 2.9e-4 and of N(0,1) 1e-3; the
     * tolerances are 5 standard errors, so a correct generator fails with probability < 1e-6. */
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, 1, 2);
    double su = 0, sg = 0, sg2 = 0;
    const int n = 1000000;
    for (int i = 0; i < n; ++i) {
        double u = nh_pcg32_uniform(&rng), g = nh_pcg32_gaussian(&rng);
        cr_assert(u >= 0.0 && u < 1.0);
        su += u;
        sg += g;
        sg2 += g * g;
    }
    cr_assert(epsilon_eq(dbl, su / n, 0.5, 5 * 2.9e-4));
    cr_assert(epsilon_eq(dbl, sg / n, 0.0, 5e-3));
    cr_assert(epsilon_eq(dbl, sg2 / n, 1.0, 5 * 1.5e-3));
}
