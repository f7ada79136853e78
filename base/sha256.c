/* SHA-256 as FIPS 180-4 (Sect. 4.1.2, 4.2.2, 5.1.1, 6.2) specifies it (see sha256.h). */
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return x >> n | x << (32 - n);
}

static void compress(uint32_t state[8], const unsigned char *block)
{
    uint32_t w[64], s[8];
    for (int t = 0; t < 16; ++t)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 | (uint32_t)block[4 * t + 2] << 8 |
               block[4 * t + 3];
    for (int t = 16; t < 64; ++t) {
        const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ w[t - 15] >> 3;
        const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ w[t - 2] >> 10;
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(s, state, sizeof s);
    for (int t = 0; t < 64; ++t) {
        const uint32_t e = s[4], a = s[0];
        const uint32_t t1 = s[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & s[5]) ^ (~e & s[6])) + K[t] + w[t];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & s[1]) ^ (a & s[2]) ^ (s[1] & s[2]));
        memmove(s + 1, s, 7 * sizeof *s);
        s[4] += t1;
        s[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i)
        state[i] += s[i];
}

void nh_sha256_init(nh_sha256 *h)
{
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(h->state, H0, sizeof H0);
    h->length = 0;
    h->used = 0;
}

void nh_sha256_update(nh_sha256 *h, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    h->length += len;
    while (len > 0) {
        const size_t take = len < 64 - h->used ? len : 64 - h->used;
        memcpy(h->block + h->used, bytes, take);
        h->used += take, bytes += take, len -= take;
        if (h->used == 64) {
            compress(h->state, h->block);
            h->used = 0;
        }
    }
}

void nh_sha256_hex(nh_sha256 *h, char hex[NH_SHA256_HEX])
{
    const uint64_t bits = h->length * 8;
    unsigned char pad[72] = {0x80}, length[8];
    const size_t zeros = (h->used < 56 ? 56 : 120) - h->used;   /* then 8 bytes of length end a block */
    for (int i = 0; i < 8; ++i)
        length[i] = (unsigned char)(bits >> (56 - 8 * i));
    nh_sha256_update(h, pad, zeros);
    nh_sha256_update(h, length, sizeof length);
    for (int i = 0; i < 8; ++i)
        snprintf(hex + 8 * i, 9, "%08x", (unsigned)h->state[i]);
}

int nh_sha256_file(const char *path, char hex[NH_SHA256_HEX])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    nh_sha256 h;
    unsigned char buf[8192];
    size_t got;
    nh_sha256_init(&h);
    errno = 0;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        nh_sha256_update(&h, buf, got);
    const int failed = ferror(f), why = errno;
    fclose(f);
    if (failed) {
        errno = why ? why : EIO;
        return -1;
    }
    nh_sha256_hex(&h, hex);
    return 0;
}
