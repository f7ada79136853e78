/* MPI ranks: an ensemble spread over the processes of `mpirun -n K` (and the OpenMP threads of each).
 * Rank r computes shard r of K (nh_run_config.shards) and sends its partial result (nhens/partial.h) to
 * rank 0, which merges them in chunk order: the outputs are the bytes of a one-process run with the
 * same seed. Without NHENS_MPI, or when the program was not started by an MPI launcher, there is one
 * rank and every function here is a no-op (nh_run_ensemble_ranks is nh_run_ensemble). */
#ifndef NHENS_RANKS_H
#define NHENS_RANKS_H

#include "nhens/ensemble.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Starts MPI when built with it and started by mpirun/srun (their environment says so); 0 or an error. */
int nh_ranks_init(int *argc, char ***argv, nh_error *err);
void nh_ranks_finalize(void);
int nh_rank(void);
int nh_rank_count(void);
/* 1 when libnhens was built with MPI. */
int nh_ranks_built_with_mpi(void);

/* Rank 0 sends args (n_args >= 0; 0 asks the others to stop), the other ranks receive them into a new
 * array (*args: one allocation to free) and *n_args. Collective: every rank calls it. */
int nh_ranks_share_args(int *n_args, char ***args, nh_error *err);

/* Collective: every rank calls it with the same cfg. One rank: nh_run_ensemble. Several: each computes its
 * shard; on rank 0 res is the merged whole run with each rank's timing (summary.json's performance.rank_wall_seconds), on the
 * others res is left empty. cfg->interrupted stopping any rank stops every rank (a message to each): rank 0
 * then merges the finished prefix of chunks in order (every chunk of the ranks before the first unfinished
 * shard and that shard's finished chunks) as an incomplete result, as one process keeps its merged prefix. A
 * rank that fails fails the run on rank 0 with the rank's message. */
int nh_run_ensemble_ranks(const nh_run_config *cfg, nh_run_result *res, nh_error *err);
/* Ends every rank (MPI_Abort): for a rank that cannot take part in a run rank 0 shared (its arguments
 * do not build there, e.g. a plugin missing on one node), since the collective run cannot go on. */
void nh_ranks_abort(void);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
