/* Layer base: parameter sets and their messages, dense linear algebra. (PCG: test_pcg.c.) */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "nhens/linalg.h"
#include "nhens/params.h"
#include "sha256.h"

#include <stdlib.h>
#include <unistd.h>

static const nh_param_def DEFS[] = {
    {"alpha", 0.5, 0.0, 1.0, 0, "a weight", NULL},
    {"n", 3, 2, 15, 1, "a count", NULL},
};

Test(params, overrides_and_messages)
{
    nh_param_set set;
    nh_error err;
    nh_params_defaults(&set, 2, DEFS);
    cr_assert(eq(int, nh_params_apply_list(&set, "alpha=0.25,n=4", "m", &err), NH_OK));
    cr_assert(eq(dbl, set.value[0], 0.25));
    cr_assert(eq(dbl, set.value[1], 4.0));
    cr_assert(eq(int, nh_params_apply(&set, "alpha=0.5", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "parameter alpha given twice") != NULL, "message: %s", err.msg);
    cr_assert(eq(dbl, set.value[0], 0.25), "a refused repetition changes nothing");
    cr_assert(eq(int, nh_params_apply_list(&set, "", "m", &err), NH_OK));
    set.explicit_mask = 0; /* as for a fresh list of user overrides */
    cr_assert(eq(int, nh_params_apply(&set, "alpha=0x1p-1", "m", &err), NH_ERR_INPUT), "decimal numbers only");
    cr_assert(eq(int, nh_params_apply(&set, "alpha=1.5", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "alpha=1.5") && strstr(err.msg, "[0, 1]"), "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "n=2.5", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "integer") != NULL, "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "beta=1", "m", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "beta") && strstr(err.msg, "alpha, n"), "message: %s", err.msg);
    cr_assert(eq(int, nh_params_apply(&set, "alpha=nan", "m", &err), NH_ERR_INPUT));
    cr_assert(eq(int, nh_params_apply(&set, "alpha", "m", &err), NH_ERR_INPUT));
}

Test(linalg, lu_solves_a_pivoting_system)
{
    /* exact answer (1, 2, 3); the zero leading entry forces a row exchange */
    double a[9] = {0, 2, 1, 1, 1, 1, 2, 1, 0}, b[3] = {7, 6, 4};
    int piv[3];
    cr_assert(eq(int, nh_lu_factor(3, a, piv), 0));
    nh_lu_solve(3, a, piv, b);
    for (int i = 0; i < 3; ++i)
        cr_assert(ieee_ulp_eq(dbl, b[i], i + 1.0, 8));
    double singular[4] = {1, 2, 2, 4};
    cr_assert(eq(int, nh_lu_factor(2, singular, piv), 1));
    /* beyond NH_MAX_UNKNOWNS the solve would have no room for b's permuted rows: refused, not overrun */
    double too_big[(NH_MAX_UNKNOWNS + 1) * (NH_MAX_UNKNOWNS + 1)] = {0};
    int too_many_pivots[NH_MAX_UNKNOWNS + 1];
    for (int i = 0; i <= NH_MAX_UNKNOWNS; ++i)
        too_big[i * (NH_MAX_UNKNOWNS + 1) + i] = 1.0;
    cr_assert(eq(int, nh_lu_factor(NH_MAX_UNKNOWNS + 1, too_big, too_many_pivots), 1));
    cr_assert(eq(int, nh_lu_factor(0, too_big, too_many_pivots), 1));
}

Test(linalg, spd_solve)
{
    double c[4] = {4, 2, 2, 3}, b[2] = {10, 8}; /* solution (1.75, 1.5) */
    cr_assert(eq(int, nh_spd_solve(2, c, b), 0));
    cr_assert(ieee_ulp_eq(dbl, b[0], 1.75, 8));
    cr_assert(ieee_ulp_eq(dbl, b[1], 1.5, 8));
    double notspd[4] = {1, 2, 2, 1}, r[2] = {1, 1};
    cr_assert(eq(int, nh_spd_solve(2, notspd, r), 1));
}

Test(linalg, spd_inverse_is_the_solves_of_the_unit_vectors)
{
    /* For every size (1, the unrolled 2..16 and the generic loop above them): c = B^T B + m I with
     * |B_ij| <= 1, so its eigenvalues lie in [m, m + m^2] (cond <= m + 1 = 19), and c c^-1 = I to about
     * m cond eps = 8e-14 at worst (measured 8.9e-16); the bound is 1e-13. Each column must also have the
     * bits of nh_spd_solve_factored on e_i, which the D* frames used before. */
    enum { MAX = 18 };
    for (int m = 1; m <= MAX; ++m) {
        double c[MAX * MAX], factors[MAX * MAX], inv[MAX * MAX], b[MAX] = {0};
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < m; ++j) {
                double sum = i == j ? m : 0.0;
                for (int k = 0; k < m; ++k)
                    sum += sin(1.0 + k * m + i) * sin(1.0 + k * m + j);
                c[i * m + j] = sum;
            }
        memcpy(factors, c, sizeof c);
        cr_assert(eq(int, nh_spd_solve(m, factors, b), 0), "m = %d", m);
        nh_spd_inverse_factored(m, factors, inv);
        for (int i = 0; i < m; ++i) {
            double unit[MAX] = {0};
            unit[i] = 1.0;
            nh_spd_solve_factored(m, factors, unit);
            for (int j = 0; j < m; ++j) {
                cr_assert(memcmp(&unit[j], &inv[j * m + i], sizeof unit[j]) == 0, "m = %d, entry (%d, %d): %.17g, %.17g",
                          m, j, i, inv[j * m + i], unit[j]);
                double product = 0.0;
                for (int k = 0; k < m; ++k)
                    product += c[j * m + k] * inv[k * m + i];
                cr_assert(fabs(product - (i == j)) < 1e-13, "m = %d: (c c^-1)_%d%d = %.17g", m, j, i, product);
            }
        }
    }
}

Test(linalg, all_finite_finds_every_non_finite_entry)
{
    /* the largest finite values, the smallest subnormal and -0 are finite; +-inf and NaN at any position of
     * x, or of either array of a pair, are not (the exponent test of nh_nonfinite_bit) */
    double x[5] = {1.0, -DBL_MAX, DBL_MAX, 4.9e-324, -0.0}, y[5] = {-1.0, DBL_MAX, 4.9e-324, -0.0, 2.0};
    cr_assert(nh_all_finite(5, x));
    cr_assert(nh_all_finite(0, x));
    const int pair_finite = nh_all_finite_pair(5, x, y);
    cr_assert(pair_finite);
    const double bad[3] = {INFINITY, -INFINITY, NAN};
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 5; ++i) {
            const double kept_x = x[i], kept_y = y[i];
            x[i] = bad[k];
            const int single = nh_all_finite(5, x), pair_with_bad_x = nh_all_finite_pair(5, x, y);
            x[i] = kept_x;
            y[i] = bad[k];
            const int pair_with_bad_y = nh_all_finite_pair(5, x, y);
            y[i] = kept_y;
            cr_assert(single == 0 && pair_with_bad_x == 0 && pair_with_bad_y == 0, "entry %d = %g", i, bad[k]);
        }
}

Test(core, every_status_has_a_name)
{
    /* every code a step, a sample or a setup can return is named in failure reports */
    const int codes[] = {NH_OK, NH_STEP_NO_CONVERGENCE, NH_STEP_NONFINITE, NH_STEP_SINGULAR, NH_SAMPLE_REJECTED,
                         NH_ERR_INPUT, NH_ERR_NOMEM, NH_ERR_IO, NH_ERR_SOLVER};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i)
        cr_assert(strcmp(nh_status_name(codes[i]), "unknown status") != 0, "code %d", codes[i]);
    cr_assert(eq(str, (char *)nh_status_name(NH_SAMPLE_REJECTED), "energy shell sampling failed"));
    cr_assert(eq(str, (char *)nh_status_name(77), "unknown status"));
}

/* SHA-256 against the known answers of FIPS 180-4's examples (NIST, "SHA256.pdf" of the Cryptographic
 * Standards and Guidelines examples): one block, the empty message, two blocks (448 bits, the padding spills
 * into a second block), 896 bits, and a million 'a' fed in uneven pieces (updates across block ends). */
static void digest_of(const char *text, size_t len, char *hex)
{
    nh_sha256 h;
    nh_sha256_init(&h);
    nh_sha256_update(&h, text, len);
    nh_sha256_hex(&h, hex);
}

Test(sha256, fips_180_4_vectors)
{
    static const struct {
        const char *message, *digest;
    } cases[] = {
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[NH_SHA256_HEX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        digest_of(cases[i].message, strlen(cases[i].message), hex);
        cr_assert(eq(str, hex, (char *)cases[i].digest), "message %zu", i);
    }
    char piece[997];
    memset(piece, 'a', sizeof piece);
    nh_sha256 h;
    nh_sha256_init(&h);
    for (size_t left = 1000000; left > 0;) {
        const size_t take = left < sizeof piece ? left : sizeof piece;
        nh_sha256_update(&h, piece, take);
        left -= take;
    }
    nh_sha256_hex(&h, hex);
    cr_assert(eq(str, hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

Test(sha256, file_digest_equals_the_digest_of_its_bytes)
{
    char path[] = "/tmp/nhens-sha256-XXXXXX", hex[NH_SHA256_HEX], expected[NH_SHA256_HEX];
    const int fd = mkstemp(path);
    cr_assert(fd >= 0);
    char bytes[20000];
    for (size_t i = 0; i < sizeof bytes; ++i)
        bytes[i] = (char)(i * 7 + 3);
    cr_assert(eq(sz, (size_t)write(fd, bytes, sizeof bytes), sizeof bytes));
    close(fd);
    cr_assert(eq(int, nh_sha256_file(path, hex), 0));
    digest_of(bytes, sizeof bytes, expected);
    cr_assert(eq(str, hex, expected));
    unlink(path);
    cr_assert(eq(int, nh_sha256_file(path, hex), -1), "a missing file has no digest");
}

/* The "did you mean" rule: typos within distance 2 (1 for short words), swaps of neighbours as one edit, a
 * beginning of a name, case ignored; nothing for a word far from every name. */
Test(names, closest_name_suggests_typos_swaps_and_beginnings)
{
    const char *systems[] = {"quartic", "cvt", "knife", "disk", "hcvt", "sleigh", "suslov"};
    const char *methods[] = {"dla", "dla01", "gonzalez", "gonzalez-r", "gonzalez-f", "rk4", "dd"};
    cr_assert(eq(str, (char *)nh_closest_name("quartc", systems, 7), "quartic"), "one deletion");
    cr_assert(eq(str, (char *)nh_closest_name("qaurtic", systems, 7), "quartic"), "a swap is one edit");
    cr_assert(eq(str, (char *)nh_closest_name("Knief", systems, 7), "knife"), "case and a swap");
    cr_assert(eq(str, (char *)nh_closest_name("sleight", systems, 7), "sleigh"), "one insertion");
    cr_assert(eq(str, (char *)nh_closest_name("cvtt", systems, 7), "cvt"));
    cr_assert(eq(str, (char *)nh_closest_name("gonz", methods, 7), "gonzalez"), "a beginning: the first listed");
    cr_assert(eq(str, (char *)nh_closest_name("gonzales", methods, 7), "gonzalez"));
    cr_assert(eq(str, (char *)nh_closest_name("rk5", methods, 7), "rk4"));
    cr_assert(nh_closest_name("xyz", methods, 7) == NULL, "3 characters: distance 1 only (xyz vs dd is 3)");
    cr_assert(nh_closest_name("ab", methods, 7) == NULL, "ab vs dd: 2 > 1");
    cr_assert(nh_closest_name("pendulum", systems, 7) == NULL);
    cr_assert(nh_closest_name("", systems, 7) == NULL);
}
