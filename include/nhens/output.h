/* Result files of a run: DIR/timeseries.csv and DIR/summary.json. Each is written to a temporary
 * file in DIR and renamed into place, so a file is either whole or absent. */
#ifndef NHENS_OUTPUT_H
#define NHENS_OUTPUT_H

#include "nhens/ensemble.h"

/* mkdir -p */
int nh_make_directory(const char *path, nh_error *err);
int nh_write_timeseries(const char *dir, const nh_run_result *res, nh_error *err);
/* command: the exact command line, recorded for reproduction. */
int nh_write_summary(const char *dir, const nh_run_config *cfg, const nh_run_result *res, const char *command,
                     nh_error *err);
/* DIR/smoothed.csv: every column of DIR/timeseries.csv as a running mean over a centred window of `window`
 * time units (seed 004's plots use 3 and 30); event columns average their finite values. */
int nh_write_smoothed(const char *dir, double window, nh_error *err);
/* The summary as a JSON string (caller frees with free()). */
char *nh_summary_json(const nh_run_config *cfg, const nh_run_result *res, const char *command);

#endif
