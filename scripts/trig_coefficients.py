#!/usr/bin/env python3
"""The constants of systems/trig_inline.h, from mpmath (python3-mpmath): pi/2 in three 33-bit parts and a
53-bit tail, the polynomials P and Q (Chebyshev fits of the remainders after the exact leading terms, on
r^2 <= 0.62 > (pi/4 + 2^-31)^2) with their relative errors, and with --closest the double nearest to a
multiple of pi/2 below 2^20 (the smallest |r| the reduction meets; about 20 s).
usage: scripts/trig_coefficients.py [--closest]"""
import sys

import mpmath as mp

mp.mp.prec = 200
Z_MAX = mp.mpf("0.62")


def leading_bits(v, bits):
    """v > 0 truncated to its first `bits` significant bits"""
    scale = mp.mpf(2) ** (bits - 1 - int(mp.floor(mp.log(v, 2))))
    return mp.floor(v * scale) / scale


def pi_over_2_parts():
    rest, parts = mp.pi / 2, []
    for _ in range(3):
        parts.append(leading_bits(rest, 33))
        rest -= parts[-1]
    return [float(p) for p in parts] + [float(rest)]


def sin_rest(z):  # (sin r - r + r^3/6) / r^5
    r = mp.sqrt(z)
    return mp.mpf(1) / 120 if z == 0 else (mp.sin(r) - r + r**3 / 6) / r**5


def cos_rest(z):  # (cos r - 1 + r^2/2 - r^4/24) / r^6
    r = mp.sqrt(z)
    return -mp.mpf(1) / 720 if z == 0 else (mp.cos(r) - 1 + z / 2 - z**2 / 24) / z**3


def fit(f, count, weight):
    """count double coefficients (ascending) and the largest weighted error on a grid of [0, Z_MAX]"""
    c = [float(x) for x in mp.chebyfit(f, [0, Z_MAX], count)[::-1]]
    grid = [Z_MAX * i / 4000 for i in range(4001)]
    worst = max(abs(sum(mp.mpf(a) * z**j for j, a in enumerate(c)) - f(z)) * weight(z) for z in grid)
    return c, float(mp.log(worst, 2))


def closest_to_a_multiple():
    best = (mp.inf, 0)
    for k in range(1, int(2**20 / (mp.pi / 2)) + 2):
        y = k * mp.pi / 2
        best = min(best, (abs(mp.mpf(float(y)) - y), k))
    return best


def main():
    print("pi/2 parts:", ", ".join(x.hex() for x in pi_over_2_parts()))
    print("2/pi:", float(2 / mp.pi).hex())
    p, err = fit(sin_rest, 6, lambda z: z**2)  # relative to sin r ~ r: r^5 dP / r
    print(f"P (sin r = r - r^3/6 + r^5 P(r^2)), relative error 2^{err:.1f}:", ", ".join(x.hex() for x in p))
    q, err = fit(cos_rest, 6, lambda z: z**3 / mp.cos(mp.sqrt(z)))
    print(f"Q (cos r = 1 - r^2/2 + r^4/24 + r^6 Q(r^2)), relative error 2^{err:.1f}:", ", ".join(x.hex() for x in q))
    if "--closest" in sys.argv[1:]:
        r, k = closest_to_a_multiple()
        print(f"closest double to k pi/2 below 2^20: k = {k}, |r| = {mp.nstr(r, 6)} = 2^{float(mp.log(r, 2)):.1f}")


if __name__ == "__main__":
    main()
