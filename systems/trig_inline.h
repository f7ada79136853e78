/* The sine and cosine of the systems' callbacks (systems-private; methods/ includes it for its lane kernels):
 * one implementation, always inline and branch-free, that the scalar callbacks call and that gcc vectorises in a
 * loop over trajectories, so that a trajectory's bits do not depend on whether it ran alone or in a lane
 * (docs/decisions/0020-shared-trigonometric-functions.md). libm's sin cannot be shared so: a loop that calls it
 * is not vectorised, and a vector sine (libmvec) rounds otherwise.
 *
 * Contract.
 *  - nh_sin_kernel(x), nh_cos_kernel(x), nh_sincos_kernel(x, &s, &c): for |x| <= NH_TRIG_BOUND (2^20) the sine
 *    and cosine within 0.52 ulp of the exact value (tests/systems/test_trig.c measures 0.516 at 1.3 million
 *    points), sin(+-0) = +-0, sin x = x for subnormal x. For any other x (|x| > NH_TRIG_BOUND, +-inf, NaN) the
 *    value is unspecified (no trap with the default floating-point environment). Arithmetic and bit masks
 *    only: no calls, no tables, no branch on data; gcc 12 -O3 vectorises a loop of them for SSE2, AVX2 and
 *    AVX-512.
 *  - nh_sin(x), nh_cos(x), nh_sincos(x, &s, &c): the kernel where fabs(x) <= NH_TRIG_BOUND, else libm's sin and
 *    cos (so NaN in gives NaN out and +-inf gives NaN). The scalar callers use these.
 *  - A lane loop computes y[l] = nh_sin_kernel(x[l]) for every lane, then, for each lane with
 *    !(fabs(x[l]) <= NH_TRIG_BOUND) (rare: beyond the bound, inf or NaN), y[l] = nh_sin(x[l]) in scalar code.
 *    The result is then bit for bit the scalar path's, for any lane width.
 *  - Compile with -ffp-contract=off and without -ffast-math (the project's flags, docs/decisions/0011): the
 *    exact products and sums below rely on every operation being rounded once, as written.
 *
 * Method. Cody and Waite's reduction r = x - k pi/2, k = nearest integer to x 2/pi (the 1.5 2^52 shifter, whose
 * low bits are k mod 4), with pi/2 in three 33-bit parts and a 53-bit tail (Payne and Hanek's reduction is not
 * needed below 2^20): k times a part is exact for |k| < 2^20, the first subtraction is exact (Sterbenz), the
 * next two keep their rounding errors (2Sum), so r = r_hi + r_lo to about 2^-100 relative even for the closest
 * double to a multiple of pi/2 below the bound (|r| >= 2^-60.5, at k = 29). On |r| <= pi/4 (+ 2^-31):
 *    sin r = r - r^3/6 + r^5 P(r^2),   cos r = 1 - r^2/2 + r^4/24 + r^6 Q(r^2),
 * P and Q with 6 coefficients each, fitted by scripts/trig_coefficients.py (relative errors 2^-64 and 2^-65
 * on the interval). The leading terms are summed exactly (Dekker's products without FMA; 1/6 = 1/8 + 1/32 +
 * 1/96 and 1/24 = 1/32 + 1/96, the first parts exact scalings), so that the final rounding is the only error
 * of size: the rest, the roundings of tails below 0.1 |sin r| and 0.03 cos r, adds about 0.02 ulp. The
 * quadrant k mod 4 then selects +-sin r or +-cos r by bit masks. */
#ifndef NHENS_SYSTEMS_TRIG_INLINE_H
#define NHENS_SYSTEMS_TRIG_INLINE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define NH_TRIG_INLINE static inline __attribute__((always_inline))

/* the kernels' domain, |x| <= 2^20: k stays below 2^20, so that k times a 33-bit part of pi/2 is exact */
#define NH_TRIG_BOUND 0x1p20

/* a = hi + lo with hi on 26 bits (Veltkamp's split), so that products of halves are exact */
NH_TRIG_INLINE void nh_trig_split(double a, double *hi, double *lo)
{
    const double c = 0x1.0000002p27 * a;   /* 2^27 + 1 */
    *hi = c - (c - a);
    *lo = a - *hi;
}

/* the rounding error of s = a + b (Knuth's 2Sum: no condition on |a|, |b|) */
NH_TRIG_INLINE double nh_trig_sum_error(double a, double b, double s)
{
    const double b_part = s - a;
    return (a - (s - b_part)) + (b - b_part);
}

/* x reduced: x - k pi/2 = r_hi + r_lo (|r_lo| <= ulp(r_hi)/2, |r| <= pi/4 + 2^-31), k mod 4 in the low bits
 * of quadrant, and the exact square r_hi^2 = zh + zl with the 26-bit halves of r_hi and zh */
typedef struct nh_trig_reduced {
    double r_hi, r_lo, h, l, zh, zl, zh_h, zh_l;
    uint64_t quadrant;
} nh_trig_reduced;

NH_TRIG_INLINE nh_trig_reduced nh_trig_reduce(double x)
{
    const double two_over_pi = 0x1.45f306dc9c883p-1;
    const double shifter = 0x1.8p52;
    const double pio2_1 = 0x1.921fb544p0, pio2_2 = 0x1.0b4611a6p-34, pio2_3 = 0x1.3198a2ep-69;
    const double pio2_3t = 0x1.b839a252049c1p-104;
    nh_trig_reduced v;
    const double t = x * two_over_pi + shifter;
    const double k = t - shifter;
    memcpy(&v.quadrant, &t, sizeof v.quadrant);
    const double a = x - k * pio2_1;                    /* exact */
    const double w2 = k * pio2_2, b = a - w2;           /* w2 and w3 exact */
    const double w3 = k * pio2_3, c = b - w3;
    const double tail = (nh_trig_sum_error(a, -w2, b) + nh_trig_sum_error(b, -w3, c)) - k * pio2_3t;
    v.r_hi = c + tail;
    v.r_lo = tail - (v.r_hi - c);
    nh_trig_split(v.r_hi, &v.h, &v.l);
    v.zh = v.r_hi * v.r_hi;
    v.zl = ((v.h * v.h - v.zh) + (v.h + v.h) * v.l) + v.l * v.l;
    nh_trig_split(v.zh, &v.zh_h, &v.zh_l);
    return v;
}

/* -r_hi^3/8 - r_hi^3/32 = cube + its rounding error, with r_hi zh rounded to mh */
NH_TRIG_INLINE double nh_trig_cube(const nh_trig_reduced *v, double *mh, double *cube_error)
{
    *mh = v->r_hi * v->zh;
    const double cube_8 = -0.125 * *mh, cube_32 = -0.03125 * *mh, cube = cube_8 + cube_32;
    *cube_error = (cube_8 - cube) + cube_32;
    return cube;
}

/* sin r = r_hi - (mh + ml + r_hi zl)/6 + r_hi^5 P(zh) + r_lo (1 - zh/2), r_hi zh = mh + ml exactly and 1/6 =
 * 1/8 + 1/32 + 1/96: the head r_hi - mh/8 - mh/32 is summed exactly, the rest is below 0.1 r */
NH_TRIG_INLINE double nh_trig_sin_reduced(const nh_trig_reduced *v)
{
    double mh, cube_error;
    const double cube = nh_trig_cube(v, &mh, &cube_error);
    const double ml = (((v->h * v->zh_h - mh) + v->h * v->zh_l) + v->l * v->zh_h) + v->l * v->zh_l;
    const double zh = v->zh;
    const double p = 0x1.1111111111111p-7 + zh * (-0x1.a01a01a019ecep-13 + zh * (0x1.71de3a550abe6p-19
        + zh * (-0x1.ae64552f0b66fp-26 + zh * (0x1.612255ef727cep-33 + zh * -0x1.ab902d44edd21p-41))));
    const double head = v->r_hi + cube;
    const double head_error = (v->r_hi - head) + cube;
    const double tail = head_error + (cube_error - mh * 0x1.5555555555555p-7
        - (ml + v->r_hi * v->zl) * 0x1.5555555555555p-3) + mh * zh * p + v->r_lo * (1.0 - 0.5 * zh);
    return head + tail;
}

/* cos r = 1 - zh/2 - zl/2 + (sh + sl + 2 zh zl)/24 + zh^3 Q(zh) - r_lo sin r_hi, zh^2 = sh + sl exactly and
 * 1/24 = 1/32 + 1/96: the head 1 - zh/2 + sh/32 is summed exactly, the rest is below 0.01 */
NH_TRIG_INLINE double nh_trig_cos_reduced(const nh_trig_reduced *v)
{
    double mh, cube_error;
    const double cube = nh_trig_cube(v, &mh, &cube_error);
    const double zh = v->zh, sh = zh * zh;
    const double sl = ((v->zh_h * v->zh_h - sh) + (v->zh_h + v->zh_h) * v->zh_l) + v->zh_l * v->zh_l;
    const double q = -0x1.6c16c16c16c17p-10 + zh * (0x1.a01a01a019f86p-16 + zh * (-0x1.27e4fb775e831p-22
        + zh * (0x1.1eed8e6a049d6p-29 + zh * (-0x1.939579302bc85p-37 + zh * 0x1.abe366e664744p-45))));
    const double half_z = 0.5 * zh, head1 = 1.0 - half_z;
    const double head1_error = (1.0 - head1) - half_z;
    const double square_32 = 0.03125 * sh, head = head1 + square_32;
    const double head_error = (head1 - head) + square_32;
    const double tail = (head1_error + head_error) + ((sh * 0x1.5555555555555p-7 - 0.5 * v->zl
        - v->r_lo * (v->r_hi + cube)) + (sl + 2.0 * zh * v->zl) * 0x1.5555555555555p-5) + sh * zh * q;
    return head + tail;
}

/* the value of quadrant `quadrant` (k mod 4 in its low bits): sin r, cos r, -sin r, -cos r */
NH_TRIG_INLINE double nh_trig_select(uint64_t quadrant, double sin_r, double cos_r)
{
    uint64_t s, c;
    memcpy(&s, &sin_r, sizeof s);
    memcpy(&c, &cos_r, sizeof c);
    const uint64_t take_cos = 0 - (quadrant & 1);
    const uint64_t bits = ((s & ~take_cos) | (c & take_cos)) ^ ((quadrant & 2) << 62);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* sin x with the sign of x when x is +-0 (r + an odd correction is +0 for r = -0). Integer bit operations:
 * a select on x == 0 keeps gcc 12 from vectorising a loop of nh_sin_kernel, and so does a 64-bit compare for
 * SSE2. */
NH_TRIG_INLINE double nh_trig_zero_sign(double x, double sin_x)
{
    uint64_t xb, sb;
    memcpy(&xb, &x, sizeof xb);
    memcpy(&sb, &sin_x, sizeof sb);
    const uint64_t magnitude = xb << 1;      /* ~m & (m - 1) has its top bit set if and only if m = 0 */
    sb |= xb & ~magnitude & (magnitude - 1) & UINT64_C(1) << 63;
    double value;
    memcpy(&value, &sb, sizeof value);
    return value;
}

NH_TRIG_INLINE void nh_sincos_kernel(double x, double *sin_x, double *cos_x)
{
    const nh_trig_reduced v = nh_trig_reduce(x);
    const double sin_r = nh_trig_sin_reduced(&v), cos_r = nh_trig_cos_reduced(&v);
    *sin_x = nh_trig_zero_sign(x, nh_trig_select(v.quadrant, sin_r, cos_r));
    *cos_x = nh_trig_select(v.quadrant + 1, sin_r, cos_r);
}

NH_TRIG_INLINE double nh_sin_kernel(double x)
{
    double s, c;
    nh_sincos_kernel(x, &s, &c);
    return s;
}

NH_TRIG_INLINE double nh_cos_kernel(double x)
{
    double s, c;
    nh_sincos_kernel(x, &s, &c);
    return c;
}

/* The scalar functions: the kernel's bits, but only the polynomial that x's quadrant selects is evaluated. */
NH_TRIG_INLINE double nh_trig_scalar(double x, uint64_t shift)
{
    const nh_trig_reduced v = nh_trig_reduce(x);
    const uint64_t quadrant = v.quadrant + shift;
    const double r_value = quadrant & 1 ? nh_trig_cos_reduced(&v) : nh_trig_sin_reduced(&v);
    return nh_trig_select(quadrant, r_value, r_value);
}

NH_TRIG_INLINE double nh_sin(double x)
{
    return fabs(x) <= NH_TRIG_BOUND ? nh_trig_zero_sign(x, nh_trig_scalar(x, 0)) : sin(x);
}

NH_TRIG_INLINE double nh_cos(double x)
{
    return fabs(x) <= NH_TRIG_BOUND ? nh_trig_scalar(x, 1) : cos(x);
}

NH_TRIG_INLINE void nh_sincos(double x, double *sin_x, double *cos_x)
{
    if (fabs(x) <= NH_TRIG_BOUND) {
        nh_sincos_kernel(x, sin_x, cos_x);
    } else {
        *sin_x = sin(x);
        *cos_x = cos(x);
    }
}

#endif
