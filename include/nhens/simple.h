/* A flat entry point for foreign-function interfaces (nhens/job.h is the in-memory one the Python package uses): one
 * ensemble run from names and numbers, its outputs written to a folder (timeseries.csv, summary.json,
 * quantiles.csv, paths.csv) exactly as `nhens run` writes them. Plain C types only, no structs. */
#ifndef NHENS_SIMPLE_H
#define NHENS_SIMPLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* system_params: "k=v,k=v" or "" ; method: "dla:alpha=0.4" ; solver: "kinsol" or "newton" ; preset: NULL or a
 * name (a state, or an energy shell that sets energy and, when ensemble is 0, the ensemble); every 0: about
 * 1000 rows. Returns 0, or the nh_error code with message[] saying what was wrong (the value and what is
 * allowed). */
int nh_simple_run(const char *system, const char *system_params, const char *method, const char *solver,
                  double h, double T, long every, long ensemble, uint64_t seed, int threads, double energy,
                  const char *preset, long paths, const char *out_dir, char *message, size_t message_len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
