/* Partial results: the mergeable state of one shard of an ensemble run (nh_run_config.shards > 0), so
 * that a run computed as shards on separate machines, job-array tasks or MPI ranks merges to the bytes
 * of the unsharded run. A partial result holds the run's configuration and arguments, the order-free
 * statistics (live counts, quantile sketches, failure, step and solver counts, the shard's sample
 * paths) and, unmerged, each of its chunks' accumulators, first failures and (runs whose fit groups are
 * trajectories, nh_run_fit_groups_by_trajectory) trajectory_fits of fitted values. Merging adds the
 * order-free parts and merges the chunks in chunk order, exactly as nh_run_ensemble does. The file is
 * JSON (docs/schema/partial.schema.json) ending with a checksum of its content, written atomically and
 * read as untrusted input: checksum, domains and consistency as a checkpoint's, plus its shard's chunk
 * range and each chunk's own trajectories. */
#ifndef NHENS_PARTIAL_H
#define NHENS_PARTIAL_H

#include "nhens/ensemble.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum { NH_PARTIAL_VERSION = 5, NH_PARTIAL_MAX_ARGS = 128 };

typedef struct nh_partial nh_partial;

/* The partial result of a completed shard run (res from nh_run_ensemble with cfg->shards > 0) as JSON
 * text (malloc'ed; NULL with err set), and written atomically to path. */
char *nh_partial_text(const nh_run_config *cfg, const nh_run_result *res, int n_args, char *const *args,
                      nh_error *err);
int nh_partial_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                    char *const *args, nh_error *err);
/* Parses a partial result (name: for messages); NULL with err set when it is not one. */
nh_partial *nh_partial_parse(const char *text, const char *name, nh_error *err);
nh_partial *nh_partial_load(const char *path, nh_error *err);
/* The run's arguments as stored (owned by p) and its chunk range. */
int nh_partial_args(const nh_partial *p, char ***args);
void nh_partial_chunks(const nh_partial *p, long *first, long *count);
/* Adds p into res (from nh_run_result_init of the whole run's cfg): p must continue res's merged prefix
 * (its first chunk starts where res's merged blocks end) and be of the same configuration. */
int nh_partial_merge(const nh_partial *p, const nh_run_config *cfg, nh_run_result *res, nh_error *err);
void nh_partial_free(nh_partial *p);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
