/* SHA-256 (FIPS 180-4), for the provenance of plugins: the digest of a shared object's bytes names the
 * build that ran. A private header of the base layer (the engine reads it; tests/base/test_base.c checks
 * the standard's test vectors). */
#ifndef NHENS_BASE_SHA256_H
#define NHENS_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

enum { NH_SHA256_BYTES = 32, NH_SHA256_HEX = 2 * NH_SHA256_BYTES + 1 };

typedef struct nh_sha256 {
    uint32_t state[8];
    uint64_t length;            /* bytes hashed so far */
    unsigned char block[64];
    size_t used;                /* bytes of block filled */
} nh_sha256;

void nh_sha256_init(nh_sha256 *h);
void nh_sha256_update(nh_sha256 *h, const void *data, size_t len);
/* The digest as 64 lowercase hex digits and a NUL; h is spent. */
void nh_sha256_hex(nh_sha256 *h, char hex[NH_SHA256_HEX]);
/* The digest of the file at path (read in blocks); 0, or -1 with errno set when it cannot be read. */
int nh_sha256_file(const char *path, char hex[NH_SHA256_HEX]);

#endif
