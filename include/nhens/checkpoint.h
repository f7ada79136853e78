/* Checkpoints of an ensemble run: the merged statistics of its first next_block blocks (every
 * accumulator bit for bit, the fit groups' and quantile sketches' too), the failure records, step and solver counts, the
 * run's configuration, and
 * the arguments that rebuild that configuration (the CLI stores its command line). Resuming restores
 * the statistics into a fresh result and continues at next_block; since blocks are merged in order,
 * the finished run is bitwise the uninterrupted one. A checkpoint is written atomically (nh_write_file)
 * with a checksum of its content as its last member, and read as untrusted input: the checksum, every
 * size, every number's domain and the counts' consistency are checked against the configuration it is
 * resumed with (a refusal names the file and the field), and a configuration that differs from the
 * stored one is refused. */
#ifndef NHENS_CHECKPOINT_H
#define NHENS_CHECKPOINT_H

#include "nhens/ensemble.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum { NH_CHECKPOINT_VERSION = 7, NH_CHECKPOINT_MAX_ARGS = 128 };

typedef struct nh_checkpoint nh_checkpoint;

/* Writes res (the blocks merged into it so far) and args to path. */
int nh_checkpoint_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                       char *const *args, nh_error *err);
/* Reads and checks the file's format; NULL with err set on failure. */
nh_checkpoint *nh_checkpoint_load(const char *path, nh_error *err);
/* The stored arguments (owned by the checkpoint). */
int nh_checkpoint_args(const nh_checkpoint *ck, char ***args);
/* Into res from nh_run_result_init(cfg): refuses a cfg whose configuration differs from the stored one
 * (the number of threads aside) or whose sizes do not match. */
int nh_checkpoint_restore(const nh_checkpoint *ck, const nh_run_config *cfg, nh_run_result *res, nh_error *err);
void nh_checkpoint_free(nh_checkpoint *ck);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
