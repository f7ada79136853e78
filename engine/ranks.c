/* MPI ranks (see include/nhens/ranks.h). The only file that calls MPI; built without it when
 * NHENS_MPI is off. Rank 0 merges the partial results in rank order, which is chunk order. */
#include "nhens/ranks.h"
#include "nhens/partial.h"
#include "run_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NHENS_HAVE_MPI
#include <mpi.h>
#include <stdatomic.h>
#include <time.h>

enum { TAG_PARTIAL = 7301, TAG_STOP = 7302 };

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

/* Stopping a run over ranks. A rank whose own interrupted() says stop (its SIGINT or SIGTERM) tells every
 * other rank with a TAG_STOP message; a rank stops at its own signal or at the first message. Only the
 * main thread calls MPI (MPI_THREAD_FUNNELED): worker threads see the flags it sets. After the shards,
 * every rank counts the stops it sent to each other rank, so each rank receives exactly those. */
typedef struct rank_stop {
    const nh_run_config *cfg; /* the caller's interrupted() and hook_ctx */
    atomic_int local, remote; /* this rank was interrupted; another rank was */
    int rank, size, sent;     /* sent: the stops went out (main thread only) */
    int *received;            /* size: stops received from each rank (main thread only) */
    MPI_Request *requests;    /* size: the stops' sends */
} rank_stop;

static int main_thread(void)
{
    int flag = 0;
    MPI_Is_thread_main(&flag);
    return flag;
}

/* Main thread: tell the other ranks once this rank is interrupted, and take the stops that arrived. */
static void exchange_stops(rank_stop *s)
{
    static const int stop = 1;
    if (atomic_load(&s->local) && !s->sent) {
        for (int r = 0; r < s->size; ++r)
            if (r != s->rank)
                MPI_Isend(&stop, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD, &s->requests[r]);
        s->sent = 1;
    }
    for (int flag = 1; flag;) {
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, &flag, &status);
        if (flag) {
            int value;
            MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            s->received[status.MPI_SOURCE]++;
            atomic_store(&s->remote, 1);
        }
    }
}

/* The shard's interrupted(): this rank's own, or a stop from another rank. */
static int rank_interrupted(void *ctx)
{
    rank_stop *s = ctx;
    if (!atomic_load(&s->local) && s->cfg->interrupted && s->cfg->interrupted(s->cfg->hook_ctx))
        atomic_store(&s->local, 1);
    if (main_thread())
        exchange_stops(s);
    return atomic_load(&s->local) || atomic_load(&s->remote);
}

static int rank_stop_init(rank_stop *s, const nh_run_config *cfg)
{
    *s = (rank_stop){.cfg = cfg, .rank = nh_rank(), .size = nh_rank_count()};
    atomic_init(&s->local, 0);
    atomic_init(&s->remote, 0);
    s->received = calloc((size_t)s->size, sizeof *s->received);
    s->requests = malloc((size_t)s->size * sizeof *s->requests);
    for (int r = 0; s->requests && r < s->size; ++r)
        s->requests[r] = MPI_REQUEST_NULL;
    return s->received && s->requests ? NH_OK : NH_ERR_NOMEM;
}

/* Collective, after the shards: wait for every rank while passing stops on (a signal that comes while this
 * rank waits still stops the others), then receive every stop sent to this rank. */
static void rank_stop_finish(rank_stop *s)
{
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int done = 0; !done;) {
        rank_interrupted(s);
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
        if (!done) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    int *sent = malloc(2 * (size_t)s->size * sizeof *sent), *expected = sent ? sent + s->size : NULL;
    if (!sent)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the stops in flight must be received to go on */
    for (int r = 0; r < s->size; ++r)
        sent[r] = s->sent && r != s->rank;
    MPI_Alltoall(sent, 1, MPI_INT, expected, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < s->size; ++r)
        for (; s->received[r] < expected[r]; s->received[r]++) {
            int value;
            MPI_Recv(&value, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            atomic_store(&s->remote, 1);
        }
    MPI_Waitall(s->size, s->requests, MPI_STATUSES_IGNORE);
    free(sent);
    free(s->received);
    free(s->requests);
}

/* The finished chunks of a shard's result: all of them, or those before an interruption. */
static long finished_chunks(const nh_run_config *cfg, const nh_run_result *res)
{
    long n = 0;
    while (n < res->n_chunks && nh_run_chunk_first_block(cfg, res->first_chunk + n + 1) <= res->next_block)
        ++n;
    return n;
}

/* This rank's shard, computed with the stops of every rank, as partial-result text of its finished chunks
 * ("" when none finished; "!" and the message when it failed, *rc says how) and its timing. NULL when out of
 * memory. */
static char *compute_shard(const nh_run_config *cfg, int shards, rank_stop *stop, double timing[2], int *rc,
                           nh_error *err)
{
    nh_run_config shard = *cfg;
    shard.shard = nh_rank();
    shard.shards = shards;
    shard.interrupted = rank_interrupted;
    shard.hook_ctx = stop;
    shard.merged = NULL;
    nh_run_result mine;
    if ((*rc = nh_run_ensemble(&shard, &mine, err)) != NH_OK) { /* "!" and the message: rank 0 fails with it */
        char *text = malloc(strlen(err->msg) + 2);
        if (text)
            sprintf(text, "!%s", err->msg);
        return text;
    }
    /* the finished chunks are a completed shard of their own: the merged prefix continues with them */
    nh_run_result finished = mine;
    finished.n_chunks = finished_chunks(&shard, &mine);
    finished.complete = 1;
    timing[0] = mine.wall_seconds;
    timing[1] = (double)mine.completed_steps;
    char *text = finished.n_chunks > 0 ? nh_partial_text(&shard, &finished, 0, NULL, err) : calloc(1, 1);
    nh_run_result_clear(&mine);
    return text;
}

/* Rank `from`'s text (its shard's finished chunks) into res; *stopped = 1 when the merged prefix ends in the
 * rank's shard (it was interrupted). 0, or NH_ERR_INPUT when the text does not merge (err says why). */
static int merge_text(const char *text, int from, int shards, const nh_run_config *cfg, nh_run_result *res,
                      int *stopped, nh_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "rank %d", from);
    if (text[0]) {
        nh_partial *p = nh_partial_parse(text, name, err);
        const int rc = p ? nh_partial_merge(p, cfg, res, err) : NH_ERR_INPUT;
        nh_partial_free(p);
        if (rc != NH_OK)
            return NH_ERR_INPUT;
    }
    nh_run_config next = *cfg;
    next.shards = shards;
    next.shard = from + 1;
    long first = nh_run_chunk_count(cfg), count;
    if (from + 1 < shards)
        nh_run_shard_chunks(&next, &first, &count);
    *stopped = res->next_block != nh_run_chunk_first_block(cfg, first);
    return NH_OK;
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

/* Every rank's wall seconds and steps into res (rank 0); collective. */
static int gather_timing(const double timing[2], nh_run_result *res)
{
    const int size = nh_rank_count();
    double *all = nh_rank() == 0 ? malloc(2 * (size_t)size * sizeof *all) : NULL;
    if (nh_rank() == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 1); /* every rank sends: rank 0 must receive to go on */
    MPI_Gather(timing, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (nh_rank() != 0)
        return NH_OK;
    res->rank_timing = malloc((size_t)size * sizeof *res->rank_timing);
    if (res->rank_timing) {
        res->ranks = size;
        for (int r = 0; r < size; ++r)
            res->rank_timing[r] = (nh_rank_timing){.wall_seconds = all[2 * r], .steps = (long)all[2 * r + 1]};
    }
    free(all);
    return res->rank_timing ? NH_OK : NH_ERR_NOMEM;
}

/* Rank 0: its own text and every other computing rank's, merged in rank (chunk) order while the prefix goes
 * on: an interrupted rank's finished chunks end it. 0, or the error of a rank that failed or of a text that
 * does not merge. */
static int merge_ranks(char *own, int shards, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    int rc = NH_OK, stopped = 0;
    for (int r = 0; r < shards; ++r) {
        char *text = r == 0 ? own : receive_text(r);
        if (!rc && text[0] == '!')
            rc = nh_fail(err, NH_ERR_SOLVER, "rank %d: %s", r, text + 1);
        else if (!rc && !stopped)
            rc = merge_text(text, r, shards, cfg, res, &stopped, err);
        free(text);
    }
    return rc;
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
    rank_stop stop;
    if (rank_stop_init(&stop, cfg))
        MPI_Abort(MPI_COMM_WORLD, 1); /* the other ranks wait for this one: it cannot take part */
    /* a run of fewer chunks than ranks leaves the last ranks idle */
    const int shards = size < nh_run_chunk_count(cfg) ? size : (int)nh_run_chunk_count(cfg);
    const double start = MPI_Wtime();
    double timing[2] = {0.0, 0.0};
    char *text = rank < shards ? compute_shard(cfg, shards, &stop, timing, &rc, err) : calloc(1, 1);
    if (!text)
        MPI_Abort(MPI_COMM_WORLD, 1);
    rank_stop_finish(&stop);
    if (rank != 0) {
        if (rank < shards)
            MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, TAG_PARTIAL, MPI_COMM_WORLD);
        free(text);
        gather_timing(timing, res);
        return rc;
    }
    if (!rc)
        rc = nh_run_result_init(cfg, res, err);
    if (rc) { /* rank 0 cannot merge: it still receives what the others send */
        free(text);
        for (int r = 1; r < shards; ++r)
            free(receive_text(r));
    } else {
        rc = merge_ranks(text, shards, cfg, res, err);
    }
    if (gather_timing(timing, res) && !rc)
        rc = nh_fail(err, NH_ERR_NOMEM, "out of memory for the timing of %d ranks", size);
    if (rc) {
        nh_run_result_clear(res);
        return rc;
    }
    res->complete = res->next_block == nh_run_block_count(cfg);
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
