/* Named parameters with defaults and allowed ranges, shared by systems and methods. A parameter is
 * numeric (range-checked double) or, when its definition has a default_text, text (e.g. the inner
 * method of a composition, checked by its owner). A set holds both forms, indexed like the table. */
#ifndef NHENS_PARAMS_H
#define NHENS_PARAMS_H

#include "nhens/core.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_param_def {
    const char *name;
    double default_value;
    double min_value;       /* inclusive */
    double max_value;       /* inclusive */
    int integer;            /* 1: value must be an integer */
    const char *help;
    const char *default_text; /* non-NULL: a text parameter */
} nh_param_def;

enum { NH_PARAM_TEXT_MAX = 128 };

typedef struct nh_param_set {
    int count;
    const nh_param_def *defs;
    double value[NH_MAX_PARAMS];
    char text[NH_MAX_PARAMS][NH_PARAM_TEXT_MAX];
    unsigned explicit_mask; /* bit i set when value[i] came from the user */
} nh_param_set;

void nh_params_defaults(nh_param_set *set, int count, const nh_param_def *defs);

/* Index of `name` in the set, or -1. */
int nh_params_find(const nh_param_set *set, const char *name);

/* Apply one "name=value" override; `owner` names the system or method in messages. */
int nh_params_apply(nh_param_set *set, const char *assignment, const char *owner, nh_error *err);

/* Apply a comma-separated list "a=1,b=2" (empty string allowed). */
int nh_params_apply_list(nh_param_set *set, const char *list, const char *owner, nh_error *err);

/* Checks a descriptor's parameter table (a plugin's is untrusted): every name 1-31 characters, a letter then
 * [A-Za-z0-9_.-], unique; a help text; a numeric parameter's bounds not NaN (infinite bounds mean "no
 * bound") with min <= max and a finite default within them (an integer one whole); a text parameter's
 * default shorter than NH_PARAM_TEXT_MAX. `owner` (e.g. "method 'x'") starts the message, which names the
 * parameter and the field. */
int nh_param_defs_check(int count, const nh_param_def *defs, const char *owner, nh_error *err);

/* Strict numbers, the one policy of the program's options, experiment files and the library's parsers, for
 * plugins that read numbers from a text parameter too: the whole string, finite, decimal only (no hex, no
 * octal "010", no silent wrap of "-1" into an unsigned value). 0 on success, 1 otherwise (out unchanged). */
int nh_parse_double(const char *text, double *out);
/* A finite decimal number / integer in [min, max]. */
int nh_parse_double_in(const char *text, double min, double max, double *out);
int nh_parse_long_in(const char *text, long min, long max, long *out);
/* Unsigned 64-bit decimal ("18446744073709551615" at most; no sign). */
int nh_parse_u64(const char *text, uint64_t *out);

/* "name=value, ..." into buf (for summaries). */
void nh_params_format(const nh_param_set *set, char *buf, size_t len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
