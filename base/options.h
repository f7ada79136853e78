/* The option-table parser of the program's subcommands and of the library's in-memory runs (nhens/job.h), one
 * policy for both. Library-private: not installed and not exported by libnhens.so; the nhens program compiles
 * its own copy of base/options.c (CMakeLists.txt, nhens_cli_objects).
 *   numbers   params.h's strict numbers (nh_parse_double_in, nh_parse_long_in, nh_parse_u64) in the stated range;
 *   options   "--name VALUE" or "--name=VALUE" from a const table that also produces the help text;
 *             an unknown option, a missing value, a bad number or a repeated single option is an
 *             error whose message names the option, the value and what is allowed.
 * Nothing here prints: help is formatted into a buffer for the caller. */
#ifndef NHENS_OPTIONS_H
#define NHENS_OPTIONS_H

#include "nhens/params.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif
