/* In-memory runs for foreign-function interfaces (include/nhens/job.h): a job owns its options' copy, its
 * system instance, its configuration and its result; another thread may raise its interrupt flag and read
 * its progress (atomics) while nh_job_run runs. */
#include "nhens/job.h"
#include "run_options.h"
#include "run_result.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct nh_job {
    char **argv;            /* a copy: the options point into it */
    int argc;
    nh_run_options options;
    nh_system system;
    nh_run_config cfg;
    nh_run_result res;
    int ran;                /* nh_job_run was called; res holds a result when it returned 0 */
    int have_result;
    atomic_int stop;
    atomic_long done, total;
};

/* The options of `nhens run` that belong to the program (files, checkpoints, the terminal), not to a run. */
static const char *const PROGRAM_OPTIONS[] = {"out", "checkpoint", "checkpoint-every", "resume", "blocks", "smooth",
                                              "initial", "project", "dry-run", "quiet"};

static int refuse_program_options(const nh_run_options *o, int help, nh_error *err)
{
    if (help)
        return nh_fail(err, NH_ERR_INPUT, "--help is an option of the nhens program, not of a run in memory");
    for (size_t i = 0; i < sizeof PROGRAM_OPTIONS / sizeof PROGRAM_OPTIONS[0]; ++i)
        if (nh_run_options_given(o, PROGRAM_OPTIONS[i]))
            return nh_fail(err, NH_ERR_INPUT, "--%s is an option of the nhens program, not of a run in memory",
                           PROGRAM_OPTIONS[i]);
    return NH_OK;
}

static int copy_arguments(nh_job *job, int argc, char **argv, nh_error *err)
{
    job->argv = calloc((size_t)(argc > 0 ? argc : 1), sizeof *job->argv);
    if (!job->argv)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory copying %d arguments", argc);
    job->argc = argc;
    for (int i = 0; i < argc; ++i)
        if (!argv[i] || !(job->argv[i] = strdup(argv[i])))
            return nh_fail(err, argv[i] ? NH_ERR_NOMEM : NH_ERR_INPUT, "argument %d is %s", i,
                           argv[i] ? "too long for the memory left" : "NULL");
    return NH_OK;
}

static int interrupted(void *ctx)
{
    return atomic_load(&((nh_job *)ctx)->stop);
}

static void progress(long done, long total, void *ctx)
{
    nh_job *job = ctx;
    atomic_store(&job->done, done);
    atomic_store(&job->total, total);
}

nh_job *nh_job_create(const nh_registry *reg, int argc, char **argv, nh_error *err)
{
    nh_job *job = calloc(1, sizeof *job);
    if (!job) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory for a job");
        return NULL;
    }
    int help = 0;
    int rc = copy_arguments(job, argc, argv, err);
    if (!rc && !(rc = nh_run_options_parse(argc, job->argv, &job->options, &help, err)) &&
        !(rc = refuse_program_options(&job->options, help, err)))
        rc = nh_run_options_config(reg, &job->options, NULL, &job->system, &job->cfg, err);
    if (rc) {
        nh_job_free(job);
        return NULL;
    }
    job->cfg.interrupted = interrupted;
    job->cfg.hook_ctx = job;
    job->cfg.progress = progress;
    job->cfg.progress_ctx = job;
    atomic_store(&job->total, job->cfg.ensemble);
    return job;
}

void nh_job_free(nh_job *job)
{
    if (!job)
        return;
    if (job->have_result)
        nh_run_result_clear(&job->res);
    for (int i = 0; job->argv && i < job->argc; ++i)
        free(job->argv[i]);
    free(job->argv);
    free(job);
}

int nh_job_run(nh_job *job, nh_error *err)
{
    if (job->ran)
        return nh_fail(err, NH_ERR_INPUT, "this job has run already; create another for another run");
    job->ran = 1;
    const int rc = nh_run_ensemble(&job->cfg, &job->res, err);
    job->have_result = rc == NH_OK;
    return rc;
}

void nh_job_interrupt(nh_job *job)
{
    atomic_store(&job->stop, 1);
}

void nh_job_progress(const nh_job *job, long *done, long *total)
{
    *done = atomic_load(&job->done);
    *total = atomic_load(&job->total);
}

const nh_run_config *nh_job_config(const nh_job *job)
{
    return &job->cfg;
}

const nh_run_result *nh_job_result(const nh_job *job)
{
    return job->have_result ? &job->res : NULL;
}

int nh_job_complete(const nh_job *job)
{
    return job->have_result && job->res.complete;
}

char *nh_job_summary(const nh_job *job, const char *command)
{
    return job->have_result ? nh_summary_json(&job->cfg, &job->res, command) : NULL;
}

void nh_job_text_free(char *text)
{
    free(text);
}

int nh_job_write(const nh_job *job, const char *dir, const char *command, nh_error *err)
{
    if (!job->have_result)
        return nh_fail(err, NH_ERR_INPUT, "the job has no result to write (nh_job_run first)");
    if (!dir || !dir[0])
        return nh_fail(err, NH_ERR_INPUT, "an output folder is needed");
    nh_folder_lock lock;
    int rc = nh_output_folder_open(dir, &lock, err);
    if (!rc)
        rc = nh_write_run(dir, &job->cfg, &job->res, command, 0.0, err);
    nh_folder_lock_release(&lock);
    return rc;
}
