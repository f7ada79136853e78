/* The JSON encoding of an ensemble's mergeable state, shared by checkpoints (a merged prefix) and
 * partial results (a shard's unmerged chunks); not installed. Doubles are the 16 hex digits of their
 * IEEE-754 bits (exact), counters decimal strings (exact beyond 2^53); the last member is a checksum
 * of the rest. Readers treat the text as untrusted: the checksum, every size, every number's domain and
 * the counts' consistency are checked (a refusal names the file and the field), and restoring adds into
 * a result, so the order-free parts of several states sum. */
#ifndef NHENS_STATE_JSON_H
#define NHENS_STATE_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "nhens/ensemble.h"
#include "run_result.h"

enum { NH_STATE_MAX_ARGS = 128 };

/* How a reader checks a state: the file's name for messages and the bounds of its counts, from the
 * configuration it is read with (nh_state_scope_init). */
typedef struct nh_state_scope {
    char what[256];             /* "checkpoint 'PATH'" or "partial result 'PATH'" */
    long traj_first, traj_end;  /* the trajectories the state holds */
    long path_first, path_end;  /* its sample paths */
    double steps_per_trajectory; /* burn-in and integration steps of a trajectory that does not fail */
    double event_count_max;     /* an event cell counts at most every + 1 crossings per trajectory */
    double T;                   /* failure times lie in [0, T] */
} nh_state_scope;

void nh_state_scope_init(nh_state_scope *scope, const char *kind, const char *name, const nh_run_config *cfg,
                         const nh_run_result *res, long traj_first, long traj_end);
/* "WHAT: field 'FIELD' entry ENTRY (DETAIL) is VALUE; allowed: ALLOWED" (no entry when < 0, no detail when
 * NULL) as an input error. */
int nh_state_refuse(nh_error *err, const nh_state_scope *scope, const char *field, long entry, const char *detail,
                    const char *value, const char *allowed);

void nh_json_put_long(cJSON *obj, const char *key, long value);
/* 0 when obj[key] is a decimal string of a long in [min, max]. */
int nh_json_get_long(const cJSON *obj, const char *key, long min, long max, long *out);
/* key: `count` doubles as one string of 16 hex digits each (1 when out of memory). */
int nh_json_add_doubles(cJSON *obj, const char *key, const double *values, size_t count);
int nh_json_get_doubles(const cJSON *obj, const char *key, double *values, size_t count);
/* nh_json_get_doubles with the refusal naming the field (`field`: how the message names it). */
int nh_state_get_doubles(const cJSON *obj, const char *key, const char *field, double *values, size_t count,
                         const nh_state_scope *scope, nh_error *err);
int nh_json_add_failures(cJSON *obj, const char *key, const nh_failure *failures, int n);
/* obj[key]'s failure records: at most NH_MAX_REPORTED_FAILURES, trajectories increasing in
 * [first, end), times in [0, T], statuses 0 to 7. */
int nh_json_get_failures(const cJSON *obj, const char *key, const char *field, nh_failure *failures, int *n,
                         long first, long end, const nh_state_scope *scope, nh_error *err);
/* The domain of n accumulators (count, mean, m2, absmax): a whole count in [0, the scope's trajectories]
 * (an event observer's: [0, event_count_max]); where it is 0 the rest 0; else a finite mean, m2 >= 0,
 * absmax >= |mean|. The cells are n_out x the rows of `table` (NULL: all of the fitted observer, the fit groups). */
int nh_state_check_accums(const nh_accum *acc, size_t n, const nh_observer_table *table, const char *field,
                          const nh_state_scope *scope, nh_error *err);

/* The configuration as stored and compared: summary.json's, without the thread count. */
cJSON *nh_json_configuration(const nh_run_config *cfg);

/* A new state document: format, version, nhens version, args, configuration, sizes, the order-free
 * statistics of res (counts, live, sketches) and the sample paths of trajectories [path_first,
 * trajectories_done). NULL when out of memory. */
cJSON *nh_state_create(const char *format, int version, const nh_run_config *cfg, const nh_run_result *res,
                       long path_first, int n_args, char *const *args);
/* root's text with its checksum as the last member (malloc'ed; NULL when out of memory): "checksum" is
 * the 16 lower-case hex digits of the 64-bit FNV-1a hash of cJSON_PrintUnformatted of the document
 * without its checksum member. */
char *nh_state_print(const cJSON *root);
/* The FNV-1a hash (64 bits) of text. */
uint64_t nh_state_hash(const char *text);

/* Parses text (from `name`), checks its format and version, then its checksum; args point into the
 * returned tree. `kind` names the file in messages ("checkpoint"). */
cJSON *nh_state_parse(const char *text, const char *name, const char *kind, const char *format, int version,
                      char **args, int *n_args, nh_error *err);
/* Checks that root was written for cfg (threads aside) and res's sizes. */
int nh_state_check_configuration(const cJSON *root, const nh_run_config *cfg, const nh_run_result *res,
                                 const char *what, nh_error *err);
/* Checks root's order-free statistics against the scope (every domain, and the counts against each
 * other: failures by status sum to the failed ones, live counts between the trajectories less the
 * failed and the trajectories, never rising, each sketch counting the live trajectories at its output
 * time, steps between the surviving trajectories' and all trajectories') and adds them into res, with
 * its sample paths; the file's live counts into live (n_out of them) when not NULL. */
int nh_state_add(const cJSON *root, nh_run_result *res, const nh_state_scope *scope, long *live, nh_error *err);

/* A state document's text to path, whole or absent (nh_write_file). */
int nh_state_write(const char *path, const char *text, nh_error *err);

#endif
