/* Error carrier and status names (see include/nhens/core.h). */
#include "nhens/core.h"

#include <stdarg.h>
#include <stdio.h>

void nh_join_names(const char *const *names, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
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
