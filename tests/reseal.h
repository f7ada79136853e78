/* The checksum of nhens's checkpoints and partial results recomputed after a test edits one, so that the
 * edit reaches the domain and consistency checks behind it. The algorithm as docs/guide/scaling.md documents it: the
 * 64-bit FNV-1a hash of cJSON_PrintUnformatted of the document without its "checksum" member, as 16
 * lower-case hex digits in a last member "checksum". */
#ifndef NHENS_TEST_RESEAL_H
#define NHENS_TEST_RESEAL_H

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* text resealed (malloc'ed), or NULL when it is not a JSON object. */
static inline char *reseal_text(const char *text)
{
    cJSON *root = cJSON_Parse(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "checksum");
    char *body = cJSON_PrintUnformatted(root);
    uint64_t hash = 0xcbf29ce484222325u;
    for (const unsigned char *c = (const unsigned char *)body; *c; ++c)
        hash = (hash ^ *c) * 0x100000001b3u;
    char sum[17];
    snprintf(sum, sizeof sum, "%016" PRIx64, hash);
    cJSON_AddStringToObject(root, "checksum", sum);
    char *sealed = cJSON_PrintUnformatted(root);
    cJSON_free(body);
    cJSON_Delete(root);
    return sealed;
}

#endif
