/* Result files of a run: DIR/timeseries.csv, DIR/summary.json, DIR/quantiles.csv, DIR/smoothed.csv. Each is written
 * whole or not at all (nh_write_file); write them into an nh_output_set's stage to commit them as one set. */
#ifndef NHENS_OUTPUT_H
#define NHENS_OUTPUT_H

#include "nhens/ensemble.h"
#include "nhens/files.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* The CSV tables of a run in memory, column by column in the files' order (the files print these values with
 * %.17g, so a value read back from the file is this double): timeseries.csv (t, n_live, the observers'
 * statistics, the fitted variance scaled), quantiles.csv (t at the sketch rows, then the quantiles) and
 * paths.csv (t, then O_i per sample path i and recorded observer O; no columns without sample paths). */
typedef enum nh_run_table {
    NH_RUN_TABLE_TIMESERIES, NH_RUN_TABLE_QUANTILES, NH_RUN_TABLE_PATHS,
    NH_RUN_TABLE_TRAJECTORIES /* a row per trajectory of the merged prefix: trajectory, failed, failure_time,
                                 failure_status, then the reductions (no rows without reductions) */
} nh_run_table;
int nh_run_table_columns(const nh_run_result *res, nh_run_table table);
long nh_run_table_rows(const nh_run_result *res, nh_run_table table);
/* The name of column j (0 <= j < nh_run_table_columns) into buf; 0, or NH_ERR_INPUT for no such column. */
int nh_run_table_column_name(const nh_run_result *res, nh_run_table table, int column, char *buf, size_t len);
/* The nh_run_table_rows values of column j into values; 0, or NH_ERR_INPUT for no such column. */
int nh_run_table_column_values(const nh_run_result *res, nh_run_table table, int column, double *values);

int nh_write_timeseries(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/paths.csv: t, then O_i for every sample path i and recorded observer O (values of one trajectory,
 * nan after it failed); written only for runs with res->n_paths > 0. */
int nh_write_paths(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/trajectories.csv: the trajectory rows (NH_RUN_TABLE_TRAJECTORIES) of a run with reductions. */
int nh_write_trajectories(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/quantiles.csv: t, then PREFIX_q05, PREFIX_q50, PREFIX_q95 of every sketched observer (dH and the
 * constraint residual) at up to NH_SKETCH_MAX_ROWS output times: the ensemble's median and 5-95 % band,
 * from mergeable sketches (exact to a factor 10^(1/8) in |value|; nan where no trajectory was live). */
int nh_write_quantiles(const char *dir, const nh_run_result *res, nh_error *err);
/* command: the exact command line, recorded for reproduction. */
int nh_write_summary(const char *dir, const nh_run_config *cfg, const nh_run_result *res, const char *command,
                     nh_error *err);
/* DIR/smoothed.csv: every column of DIR/timeseries.csv as a running mean over a centred window of `window`
 * time units (the plots of Modin & Verdier 2020 use 3 and 30); event columns average their finite values. */
int nh_write_smoothed(const char *dir, double window, nh_error *err);
/* A run's files committed as one set into dir (nh_output_set): timeseries.csv, summary.json, smoothed.csv
 * when smooth > 0 (window in time units), quantiles.csv, paths.csv when the run has sample paths; any other file of the
 * set left by an earlier run (config.hash, an older smoothed.csv) is removed by the commit. */
int nh_write_run(const char *dir, const nh_run_config *cfg, const nh_run_result *res, const char *command,
                 double smooth, nh_error *err);
/* The summary as a JSON string (caller frees with free()). */
char *nh_summary_json(const nh_run_config *cfg, const nh_run_result *res, const char *command);
/* The run's configuration (system, method, solver, h, T, every, ensemble, seed, threads, initial states) as
 * a JSON object string, member for member as summary.json records it (caller frees with free()). */
char *nh_configuration_json(const nh_run_config *cfg);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
