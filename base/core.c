/* Error carrier and status names (see include/nhens/core.h). */
#include "nhens/core.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void nh_join_names(const char *const *names, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

enum { CLOSEST_MAX_LEN = 63 };

/* Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions and swaps of
 * neighbours, each 1), ignoring case; a and b at most CLOSEST_MAX_LEN characters. Three rows of the table:
 * the row before the previous one is what a swap reads. */
static int edit_distance(const char *a, const char *b)
{
    const int la = (int)strlen(a), lb = (int)strlen(b);
    int rows[3][CLOSEST_MAX_LEN + 1];
    for (int j = 0; j <= lb; ++j)
        rows[0][j] = j;
    for (int i = 1; i <= la; ++i) {
        int *d = rows[i % 3], *up = rows[(i - 1) % 3], *up2 = rows[(i + 1) % 3];
        d[0] = i;
        for (int j = 1; j <= lb; ++j) {
            const int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = up[j - 1] + (ca != cb);
            best = up[j] + 1 < best ? up[j] + 1 : best;
            best = d[j - 1] + 1 < best ? d[j - 1] + 1 : best;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                up2[j - 2] + 1 < best)
                best = up2[j - 2] + 1;
            d[j] = best;
        }
    }
    return rows[la % 3][lb];
}

const char *nh_closest_name(const char *word, const char *const *names, int n)
{
    const size_t len = word ? strlen(word) : 0;
    if (len == 0 || len > CLOSEST_MAX_LEN)
        return NULL;
    const int allowed = len <= 3 ? 1 : 2;
    const char *best = NULL;
    int best_score = allowed + 1;
    for (int i = 0; i < n; ++i) {
        if (!names[i] || strlen(names[i]) > CLOSEST_MAX_LEN)
            continue;
        int score = edit_distance(word, names[i]);
        if (len >= 3 && strncasecmp(names[i], word, len) == 0 && score > 1)
            score = 1;   /* the beginning of the name */
        if (score < best_score) {
            best_score = score;
            best = names[i];
        }
    }
    return best;
}

const char *nh_did_you_mean(const char *word, const char *const *names, int n, char *buf, size_t len)
{
    const char *near = nh_closest_name(word, names, n);
    if (len > 0)
        buf[0] = '\0';
    if (near)
        snprintf(buf, len, " (did you mean '%s'?)", near);
    return buf;
}

int nh_fail(nh_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *nh_version(void)
{
    return NH_VERSION;
}

int nh_abi_version(void)
{
    return NH_ABI_VERSION;
}

const char *nh_status_name(int status)
{
    switch (status) {
    case NH_OK: return "ok";
    case NH_STEP_NO_CONVERGENCE: return "nonlinear solve did not converge";
    case NH_STEP_NONFINITE: return "non-finite state";
    case NH_STEP_SINGULAR: return "singular linear system";
    case NH_SAMPLE_REJECTED: return "energy shell sampling failed";
    case NH_REFERENCE_FAILED: return "reference solution failed";
    case NH_STEP_ERROR: return "the step returned an error";
    case NH_ERR_INPUT: return "invalid input";
    case NH_ERR_NOMEM: return "out of memory";
    case NH_ERR_IO: return "i/o error";
    case NH_ERR_SOLVER: return "solver setup failed";
    default: return "unknown status";
    }
}
