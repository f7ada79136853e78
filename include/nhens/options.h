/* Strict parsing of numbers and of command-line options, one policy for every subcommand and for
 * experiment files:
 *   numbers   the whole string, finite, in the stated range; integers are decimal only (no octal
 *             "010", no hex, no silent wrap of "-1" into an unsigned value);
 *   options   "--name VALUE" or "--name=VALUE" from a const table that also produces the help text;
 *             an unknown option, a missing value, a bad number or a repeated single option is an
 *             error whose message names the option, the value and what is allowed.
 * Nothing here prints: help is formatted into a buffer for the caller. */
#ifndef NHENS_OPTIONS_H
#define NHENS_OPTIONS_H

#include "nhens/core.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* 0 on success; 1 if text is not the whole of a finite decimal number / integer in [min, max]. */
int nh_parse_double_in(const char *text, double min, double max, double *out);
int nh_parse_long_in(const char *text, long min, long max, long *out);
/* Unsigned 64-bit decimal ("18446744073709551615" at most; no sign). */
int nh_parse_u64(const char *text, uint64_t *out);

typedef enum nh_option_kind {
    NH_OPTION_FLAG,     /* int, set to 1 */
    NH_OPTION_STRING,   /* const char * */
    NH_OPTION_LIST,     /* const char *[max_count] with an int count at count_offset: repeatable */
    NH_OPTION_DOUBLE,   /* double in [min, max] */
    NH_OPTION_LONG,     /* long in [min, max] */
    NH_OPTION_U64       /* uint64_t (a seed) */
} nh_option_kind;

typedef struct nh_option {
    const char *name;       /* without the leading "--" */
    nh_option_kind kind;
    size_t offset;          /* of the value in the target struct */
    double min, max;        /* DOUBLE / LONG */
    const char *metavar;    /* "H", "N", ... (NULL for flags) */
    const char *help;
    size_t count_offset;    /* LIST: offset of its int count */
    int max_count;          /* LIST: capacity */
} nh_option;

typedef struct nh_option_table {
    const char *command;    /* "run" */
    const char *synopsis;   /* one line after "usage: nhens run " */
    const char *summary;    /* what the command does */
    const nh_option *options;
    int n_options;
    int max_positional;     /* positional arguments allowed */
} nh_option_table;

/* Parse argv[1..argc-1] into target (fields not given keep their values). seen receives one bit
 * per option index that was given (so presence can be told from defaults); positional arguments go
 * to positional[] (at most table->max_positional). *help is set when --help or -h was given. */
int nh_options_parse(const nh_option_table *table, int argc, char **argv, void *target, uint64_t *seen,
                     const char **positional, int *n_positional, int *help, nh_error *err);
/* Index of option `name` in the table (for testing `seen`), or -1. */
int nh_options_index(const nh_option_table *table, const char *name);
/* "usage: nhens CMD SYNOPSIS\n\nSUMMARY\n\noptions:\n  --name METAVAR  help [range]\n ..." */
void nh_options_format_help(const nh_option_table *table, char *buf, size_t len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
