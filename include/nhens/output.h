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
/* The index of the column named `name` (as the CSV's header names it: "dH_var", "q_1", "max:dH"), or -1. */
int nh_run_table_column_index(const nh_run_result *res, nh_run_table table, const char *name);
/* The nh_run_table_rows values of the column named `column` into values; 0, or NH_ERR_INPUT with a message
 * naming the table and the column (and the closest name) when it has none. */
int nh_run_table_values(const nh_run_result *res, nh_run_table table, const char *column, double *values,
                        nh_error *err);

/* The run's scalar results by name, as summary.json names them: ensemble, trajectories_done, complete,
 * failures.count, performance.steps (steps taken by all trajectories), performance.wall_seconds,
 * performance.method_seconds, performance.reference_seconds, performance.steps_per_second,
 * performance.ns_per_step, performance.nonlinear_solves, performance.newton_iterations,
 * preset_velocity_projection, variance_fit.{t_start, t_end, points, a, C, p, C_over_h4, C_scaled, p_of_fit,
 * a_stderr, C_stderr, p_stderr, C_over_h4_stderr, C_scaled_stderr, groups, dof, t95} (NAN without a fit or an
 * error) and extremes.KEY (max |value| of each recorded observer: extremes.max_abs_dH); besides these,
 * steps_per_trajectory, output_rows and performance.solver_failures. Counts are exact (below 2^53); complete
 * is 1 or 0. */
int nh_run_scalar_count(const nh_run_result *res);
/* The name of scalar i (0 <= i < nh_run_scalar_count) into buf; 0, or NH_ERR_INPUT for no such scalar. */
int nh_run_scalar_name(const nh_run_result *res, int i, char *buf, size_t len);
/* The scalar named `name` into *value; 0, or NH_ERR_INPUT with a message naming it (and the closest name). */
int nh_run_scalar(const nh_run_result *res, const char *name, double *value, nh_error *err);

int nh_write_timeseries(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/paths.csv: t, then O_i for every sample path i and recorded observer O (values of one trajectory,
 * nan after it failed); written only for runs with sample paths (nh_run_config.paths > 0). */
int nh_write_paths(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/trajectories.csv: the trajectory rows (NH_RUN_TABLE_TRAJECTORIES) of a run with reductions. */
int nh_write_trajectories(const char *dir, const nh_run_result *res, nh_error *err);
/* DIR/quantiles.csv: t, then PREFIX_q05, PREFIX_q50, PREFIX_q95 of every sketched observer (dH and the
 * constraint residual) at up to 1000 output times: the ensemble's median and 5-95 % band,
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
