/* MPI ranks (see include/nhens/ranks.h). The only file that calls MPI; built without it when
 * NHENS_MPI is off. Rank 0 merges the partial results in rank order, which is chunk order. */
#include "nhens/ranks.h"
#include "nhens/partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NHENS_HAVE_MPI
#include <mpi.h>

enum { TAG_PARTIAL = 7301 };

static int launched_by_mpi(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

static int mpi_running(void)
{
    int started = 0, finished = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&finished);
    return started && !finished;
}

int nh_ranks_init(int *argc, char ***argv, nh_error *err)
{
    if (!launched_by_mpi())
        return NH_OK;
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return nh_fail(err, NH_ERR_SOLVER, "MPI_Init_thread failed");
    return NH_OK;
}

void nh_ranks_finalize(void)
{
    if (mpi_running())
        MPI_Finalize();
}

int nh_rank(void)
{
    int rank = 0;
    if (mpi_running())
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int nh_rank_count(void)
{
    int size = 1;
    if (mpi_running())
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

int nh_ranks_built_with_mpi(void)
{
    return 1;
}

/* args as one buffer of NUL-terminated strings */
static char *pack_args(int n_args, char *const *args, long *len)
{
    *len = 0;
    for (int i = 0; i < n_args; ++i)
        *len += (long)strlen(args[i]) + 1;
    char *buf = malloc((size_t)*len + 1), *p = buf;
    for (int i = 0; buf && i < n_args; ++i)
        p = stpcpy(p, args[i]) + 1;
    return buf;
}

static char **unpack_args(char *buf, long len, int n_args)
{
    char **args = malloc((size_t)(n_args + 1) * sizeof *args + (size_t)len);
    if (!args)
        return NULL;
    char *text = (char *)(args + n_args + 1);
    memcpy(text, buf, (size_t)len);
    for (int i = 0; i < n_args; ++i) {
        args[i] = text;
        text += strlen(text) + 1;
    }
    args[n_args] = NULL;
    return args;
}

int nh_ranks_share_args(int *n_args, char ***args, nh_error *err)
{
    if (nh_rank_count() == 1)
        return NH_OK;
    long header[2] = {0, 0};
    char *buf = NULL;
    if (nh_rank() == 0) {
        buf = pack_args(*n_args, *args, &header[1]);
        header[0] = buf ? *n_args : 0;
    }
    MPI_Bcast(header, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    if (nh_rank() != 0)
        buf = malloc((size_t)header[1] + 1);
    if (!buf)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory sharing %ld bytes of arguments", header[1]);
    MPI_Bcast(buf, (int)header[1], MPI_CHAR, 0, MPI_COMM_WORLD);
    if (nh_rank() != 0) {
        *n_args = (int)header[0];
        *args = unpack_args(buf, header[1], *n_args);
    }
    free(buf);
    return nh_rank() != 0 && !*args ? nh_fail(err, NH_ERR_NOMEM, "out of memory for shared arguments") : NH_OK;
}

/* This rank's shard as partial-result text ("" when it did not complete: *rc says why, or 0 when
 * interrupted). NULL when out of memory. */
static char *compute_shard(const nh_run_config *cfg, int shards, int *rc, nh_error *err)
{
    nh_run_config shard = *cfg;
    shard.shard = nh_rank();
    shard.shards = shards;
    nh_run_result mine;
    char *text = NULL;
    if ((*rc = nh_run_ensemble(&shard, &mine, err)) == NH_OK) {
        text = mine.complete ? nh_partial_text(&shard, &mine, 0, NULL, err) : calloc(1, 1);
        nh_run_result_free(&mine);
        return text;
    }
    return calloc(1, 1);
}

/* Rank `from`'s text into res: 0, 1 when the rank did not complete its shard, 2 when its text does not merge
 * (err says why). */
static int merge_text(const char *text, int from, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "rank %d", from);
    if (!text[0])
        return 1;
    nh_partial *p = nh_partial_parse(text, name, err);
    const int rc = p ? nh_partial_merge(p, cfg, res, err) : NH_ERR_INPUT;
    nh_partial_free(p);
    return rc != NH_OK ? 2 : 0;
}

static char *receive_text(int from)
{
    MPI_Status status;
    int count;
    MPI_Probe(from, TAG_PARTIAL, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_CHAR, &count);
    char *text = malloc((size_t)count + 1);
    if (!text)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the message must be received to go on; nothing is written */
    MPI_Recv(text, count, MPI_CHAR, from, TAG_PARTIAL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    text[count] = '\0';
    return text;
}

void nh_ranks_abort(void)
{
    if (mpi_running())
        MPI_Abort(MPI_COMM_WORLD, 1);
}

int nh_run_ensemble_ranks(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    const int size = nh_rank_count(), rank = nh_rank();
    if (size == 1)
        return nh_run_ensemble(cfg, res, err);
    memset(res, 0, sizeof *res);
    int rc = nh_run_validate(cfg, err);
    if (rc)
        return rc;
    /* a run of fewer chunks than ranks leaves the last ranks idle */
    const int shards = size < nh_run_chunk_count(cfg) ? size : (int)nh_run_chunk_count(cfg);
    if (rank >= shards)
        return NH_OK;
    const double start = MPI_Wtime();
    char *text = compute_shard(cfg, shards, &rc, err);
    if (!text)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank != 0) {
        MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, TAG_PARTIAL, MPI_COMM_WORLD);
        free(text);
        return rc;
    }
    if (!rc)
        rc = nh_run_result_init(cfg, res, err);
    int stopped = rc ? 1 : merge_text(text, 0, cfg, res, err);
    free(text);
    for (int r = 1; r < shards; ++r) {
        char *received = receive_text(r);
        if (!stopped)
            stopped = merge_text(received, r, cfg, res, err);
        free(received);
    }
    if (!rc && stopped == 2)
        rc = NH_ERR_INPUT;
    if (rc) {
        nh_run_result_free(res);
        return rc;
    }
    res->wall_seconds = MPI_Wtime() - start;
    nh_run_result_finish(cfg, res);
    return NH_OK;
}

#else /* one rank */

int nh_ranks_init(int *argc, char ***argv, nh_error *err)
{
    (void)argc, (void)argv, (void)err;
    return NH_OK;
}

void nh_ranks_finalize(void)
{
}

int nh_rank(void)
{
    return 0;
}

int nh_rank_count(void)
{
    return 1;
}

int nh_ranks_built_with_mpi(void)
{
    return 0;
}

int nh_ranks_share_args(int *n_args, char ***args, nh_error *err)
{
    (void)n_args, (void)args, (void)err;
    return NH_OK;
}

void nh_ranks_abort(void)
{
}

int nh_run_ensemble_ranks(const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    return nh_run_ensemble(cfg, res, err);
}

#endif
