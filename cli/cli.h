/* Command-line front end: `nhens list`, `nhens run`. Exit codes: 0 success, 1 internal or I/O
 * error, 2 bad input (message names the value and what is allowed), 3 the run finished but some
 * trajectories failed (they are counted in the summary). */
#ifndef NHENS_CLI_H
#define NHENS_CLI_H

#include <stdio.h>

#include "nhens/system.h"

enum { NH_EXIT_OK = 0, NH_EXIT_ERROR = 1, NH_EXIT_USAGE = 2, NH_EXIT_FAILED_TRAJECTORIES = 3 };

int nh_cli_main(int argc, char **argv);
/* System by name with an optional preset and "k=v" overrides; messages list what is allowed. */
int nh_cli_build_system(const char *name, const char *preset_name, const char *const *params, int n_params,
                        nh_system *sys, const nh_preset **preset, nh_error *err);
int nh_cli_order(int argc, char **argv);
/* "nhens COMMAND: " + fmt (with one %s for value) + the usage text on stderr; returns NH_EXIT_USAGE. */
int nh_cli_usage_error(const char *command, const char *usage, const char *fmt, const char *value);
int nh_cli_audit(int argc, char **argv);
int nh_cli_list(FILE *out);
int nh_cli_run(int argc, char **argv);
void nh_cli_run_usage(FILE *out);

#endif
