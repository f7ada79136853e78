/* An ensemble run held in memory, for foreign-function interfaces (the Python package drives it through
 * ctypes): configured from the options of `nhens run` as text (the program's own table, defaults, limits and
 * messages), run with an interrupt flag and a progress counter another thread may read, its
 * tables read column by column by name (nh_run_table_*), written to a folder only when asked. Opaque handle,
 * plain C types. */
#ifndef NHENS_JOB_H
#define NHENS_JOB_H

#include "nhens/output.h"
#include "nhens/registry.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_job nh_job;

/* A run from argv[1..argc-1], the options of `nhens run` (argv[0] is ignored), systems and methods looked up
 * in reg (which must outlive the job). The options that only the program has (--out, --checkpoint,
 * --checkpoint-every, --resume, --blocks, --smooth, --initial, --project, --dry-run, --quiet, --help) are
 * refused. NULL with err's message on bad input (the CLI's message) or without memory. */
nh_job *nh_job_create(const nh_registry *reg, int argc, char **argv, nh_error *err);
void nh_job_free(nh_job *job);

/* Runs the ensemble (once: a second call is refused). An interrupted run returns 0 with the finished blocks
 * (its result is incomplete); a non-zero return is an error with err's message. */
int nh_job_run(nh_job *job, nh_error *err);
/* Asks the running job to stop: the blocks in flight are abandoned, the merged prefix kept. Safe from any
 * thread while nh_job_run runs (an atomic flag; not from a signal handler). */
void nh_job_interrupt(nh_job *job);
/* Trajectories merged so far and the ensemble size; safe from any thread while nh_job_run runs. */
void nh_job_progress(const nh_job *job, long *done, long *total);

const nh_run_config *nh_job_config(const nh_job *job);
/* The result of a finished nh_job_run (nh_run_table_* read its columns), NULL before. */
const nh_run_result *nh_job_result(const nh_job *job);
/* Whether every trajectory of the finished run is in its statistics (0 after an interruption). */
int nh_job_complete(const nh_job *job);
/* summary.json of the finished run as text, with `command` as its command (free with nh_job_text_free);
 * NULL before the run or without memory. */
char *nh_job_summary(const nh_job *job, const char *command);
void nh_job_text_free(char *text);
/* The finished run's files (timeseries.csv, summary.json, quantiles.csv, paths.csv) into dir, as `nhens run
 * --out dir` writes them (one set, dir locked while writing). */
int nh_job_write(const nh_job *job, const char *dir, const char *command, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
