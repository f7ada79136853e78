/* The JSON encoding of an ensemble's mergeable state, shared by checkpoints (a merged prefix) and
 * partial results (a shard's unmerged chunks); not installed. Doubles are the 16 hex digits of their
 * IEEE-754 bits (exact), counters decimal strings (exact beyond 2^53). Readers treat the text as
 * untrusted: every size, count and range is checked, and restoring adds into a result, so the
 * order-free parts of several states sum. */
#ifndef NHENS_STATE_JSON_H
#define NHENS_STATE_JSON_H

#include <cjson/cJSON.h>

#include "nhens/ensemble.h"

enum { NH_STATE_MAX_ARGS = 128 };

void nh_json_put_long(cJSON *obj, const char *key, long value);
/* 0 when obj[key] is a decimal string of a long in [min, max]. */
int nh_json_get_long(const cJSON *obj, const char *key, long min, long max, long *out);
/* key: `count` doubles as one string of 16 hex digits each (1 when out of memory). */
int nh_json_add_doubles(cJSON *obj, const char *key, const double *values, size_t count);
int nh_json_get_doubles(const cJSON *obj, const char *key, double *values, size_t count);
int nh_json_add_failures(cJSON *obj, const char *key, const nh_failure *failures, int n);
int nh_json_get_failures(const cJSON *obj, const char *key, nh_failure *failures, int *n);

/* The configuration as stored and compared: summary.json's, without the thread count. */
cJSON *nh_json_configuration(const nh_run_config *cfg);

/* A new state document: format, version, nhens version, args, configuration, sizes, the order-free
 * statistics of res (counts, live, sketches) and the sample paths of trajectories [path_first,
 * trajectories_done). NULL when out of memory. */
cJSON *nh_state_create(const char *format, int version, const nh_run_config *cfg, const nh_run_result *res,
                       long path_first, int n_args, char *const *args);

/* Parses text (from `name`) and checks its format and version; args point into the returned tree. */
cJSON *nh_state_parse(const char *text, const char *name, const char *format, int version, char **args, int *n_args,
                      nh_error *err);
/* Checks that root was written for cfg (threads aside) and res's sizes. */
int nh_state_check_configuration(const cJSON *root, const nh_run_config *cfg, const nh_run_result *res,
                                 const char *what, nh_error *err);
/* Adds root's order-free statistics into res and sets its paths of trajectories [path_first, path_end);
 * `trajectories` bounds every count. 1 when anything is missing or out of range. */
int nh_state_add(const cJSON *root, nh_run_result *res, long trajectories, long path_first, long path_end);

/* A state document's text to path, whole or absent (nh_write_file). */
int nh_state_write(const char *path, const char *text, nh_error *err);

#endif
