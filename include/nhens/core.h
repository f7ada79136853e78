/* nhens core: size limits, status codes and the error-message carrier shared by every module.
 * Library code never prints or exits; it returns a status and fills an nh_error. */
#ifndef NHENS_CORE_H
#define NHENS_CORE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API; the library's other symbols are hidden */

/* The release (semantic versioning, pre-1.0: a minor release may change the API) and the ABI: NH_ABI_VERSION
 * rises with every change of a public header that breaks binary compatibility (a struct's layout, a
 * function's signature, a removed symbol). It is the shared library's soname (libnhens.so.N) and the
 * version a plugin is built for (NH_PLUGIN_ABI_VERSION). A program can compare these macros, the headers it
 * was compiled with, against nh_version() and nh_abi_version(), the library it runs with. */
#define NH_VERSION_MAJOR 0
#define NH_VERSION_MINOR 9
#define NH_VERSION_PATCH 0
#define NH_VERSION "0.9.0"
#define NH_ABI_VERSION 6

enum {
    NH_MAX_DIM = 32,        /* configuration dimension n */
    NH_MAX_VARIABLE_MASS_DIM = 12, /* n of a system with a configuration-dependent M(q) (its dM is n^3) */
    NH_MAX_CON = 4,         /* number of constraints m */
    NH_MAX_PARAMS = 8,      /* named parameters of a system or method */
    NH_MAX_ENSEMBLE = 100000000, /* trajectories of one run (the merge tree's counts stay exact far beyond) */
    NH_MAX_UNKNOWNS = 2 * NH_MAX_DIM + 2 * NH_MAX_CON
};

/* Step status, after ARKODE's step modules: 0 ok, > 0 recoverable failure of this step, < 0 fatal. */
enum {
    NH_OK = 0,
    NH_STEP_NO_CONVERGENCE = 1,
    NH_STEP_NONFINITE = 2,
    NH_STEP_SINGULAR = 3,
    NH_SAMPLE_REJECTED = 4,     /* no initial state could be drawn on the energy shell */
    NH_REFERENCE_FAILED = 5,    /* the reference solution of the global-error observer failed (not the method) */
    NH_STEP_ERROR = 6,          /* a trajectory's step returned an error (< 0: out of memory, a solver it could not
                                 * build) or a status unknown here (a plugin's): the failure it is recorded as */
    NH_ERR_INPUT = -1,
    NH_ERR_NOMEM = -2,
    NH_ERR_IO = -3,
    NH_ERR_SOLVER = -4
};

typedef struct nh_error {
    char msg[512];
} nh_error;

/* printf-style; returns the code passed in so callers can write `return nh_fail(err, NH_ERR_INPUT, ...)`. */
int nh_fail(nh_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "a, b, c": the n names joined into buf (cut to len - 1 characters); the one list format of every
 * "known ...:" message. */
void nh_join_names(const char *const *names, int n, char *buf, size_t len);

/* The "did you mean" of every "unknown ..." message: the name among `names` closest to `word`, or NULL when
 * none is close. Close: within Damerau-Levenshtein distance 2 ignoring case (1 for words of up to 3 characters),
 * or `word` (3 characters or more) begins the name; the smallest distance wins, then the first listed. */
const char *nh_closest_name(const char *word, const char *const *names, int n);
/* " (did you mean 'NAME'?)" with nh_closest_name's answer, or "" when there is none: written into buf, returned. */
const char *nh_did_you_mean(const char *word, const char *const *names, int n, char *buf, size_t len);

/* NH_VERSION and NH_ABI_VERSION of the library the program runs with. */
const char *nh_version(void);
int nh_abi_version(void);

/* Human name of a step status (for failure reports). */
const char *nh_status_name(int status);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
