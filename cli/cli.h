/* The nhens executable (not part of libnhens): subcommands, their option tables, experiment files,
 * reports and plotting. Exit codes: 0 success, 1 internal or I/O error, 2 bad input (the message
 * names the value and what is allowed), 3 the run finished but some trajectories failed (counted in
 * the summary), 4 (report --check-claims) a claim marked ci does not hold. Every subcommand parses its options with nh_options_parse from one table, which
 * also gives its --help and `nhens help CMD`. */
#ifndef NHENS_CLI_H
#define NHENS_CLI_H

#include <stdio.h>

#include "nhens/ensemble.h"
#include "options.h"
#include "nhens/registry.h"
#include "run_options.h"
#include "run_result.h"

enum { NH_EXIT_OK = 0, NH_EXIT_ERROR = 1, NH_EXIT_USAGE = 2, NH_EXIT_FAILED_TRAJECTORIES = 3, NH_EXIT_CLAIMS = 4 };
enum { NH_CLI_MAX_PARAMS = NH_RUN_MAX_PARAMS };

/* What every subcommand receives: the registry (built-ins plus --plugin objects) and the global options
 * before the command word as given (the --plugin options, for the command line a run records). */
typedef struct nh_cli {
    nh_registry *registry;
    int n_global_args;
    char **global_args;
    nh_observer_table *observers;  /* the registry's: the built-in observers and the plugins' */
} nh_cli;

/* The one default nonlinear solver of run, order, audit and report. */
#define NH_CLI_DEFAULT_SOLVER NH_RUN_DEFAULT_SOLVER

int nh_cli_main(int argc, char **argv);

/* "nhens GLOBAL... ARGS...": the command line that reproduces a command (its global options, then argv), each
 * word quoted for a POSIX shell where it needs it, so that summary.json's command runs as recorded. prefix (or
 * NULL) goes first ("nhens merge of 2 parts of: "). malloc'ed; NULL when out of memory. */
char *nh_cli_command_line(const nh_cli *cli, const char *prefix, int argc, char **argv);

/* cli/progress.c: progress of an ensemble on stderr (fits nh_run_config.progress with the struct as ctx). */
enum { NH_PROGRESS_SECONDS = 5 };
typedef struct nh_cli_progress {
    const char *label;
    double start, last;
    int tty;
} nh_cli_progress;
void nh_cli_progress_start(nh_cli_progress *p, const char *label);
/* Monotonic clock in seconds (progress, checkpoint intervals). */
double nh_cli_seconds(void);
void nh_cli_progress_report(long done, long total, void *ctx);

/* cli/interrupt.c: graceful SIGINT/SIGTERM. nh_cli_interrupted fits nh_run_config.interrupted;
 * nh_cli_interrupt_status is 128 + the signal received, or 0. nh_cli_interrupted_by_peer: another MPI
 * rank was stopped (its run ended incomplete), so this process is as if it received SIGTERM. */
void nh_cli_catch_interrupts(void);
int nh_cli_interrupted(void *ctx);
int nh_cli_interrupt_status(void);
void nh_cli_interrupted_by_peer(void);

/* nh_options_parse plus the CLI's policy: --help prints the table's help (returns 1, *status 0);
 * an error prints the message (returns 1, *status NH_EXIT_USAGE); 0: go on. */
int nh_cli_parse(const nh_option_table *table, int argc, char **argv, void *target, uint64_t *seen,
                 const char **positional, int *n_positional, int *status);
void nh_cli_print_help(const nh_option_table *table, FILE *out);
/* Was option `name` of the table given? */
int nh_cli_given(const nh_option_table *table, uint64_t seen, const char *name);

/* A method spec "NAME[:k=v,...]" from the registry; an unknown name's message suggests the closest and, with no
 * plugin loaded, says where a plugin's methods come from. */
/* rc, with a hint at --plugin appended to err when it is an unknown system or method and no plugin is loaded */
int nh_cli_plugin_hint(const nh_cli *cli, int rc, nh_error *err);
int nh_cli_parse_method(const nh_cli *cli, const char *text, nh_method_spec *spec, nh_error *err);
/* System by name with an optional preset and "k=v" overrides; messages list what is allowed (the closest name,
 * and --plugin for an unknown system when no plugin is loaded). */
int nh_cli_build_system(const nh_cli *cli, const char *name, const char *preset_name, const char *const *params,
                        int n_params, nh_system *sys, const nh_preset **preset, nh_error *err);
/* Names that become file or folder names or reach a gnuplot script (panel names, checkpoint names, methods,
 * plotted columns): letters, digits, ._- and `extra`, 1 to max - 1 characters, no leading dot. */
int nh_cli_check_name(const char *what, const char *value, size_t max, const char *extra, nh_error *err);
/* A file name nhens puts in an output folder for the user (--checkpoint): nh_cli_check_name, and none of
 * the names nhens writes there itself (a run's set, report's files, part-I-of-K.json). */
int nh_cli_check_output_name(const char *what, const char *value, size_t max, nh_error *err);
/* A path argument that reaches files or gnuplot (--out, --initial, --resume, an experiment file): 1 to
 * NH_CLI_PATH_MAX characters, no control characters (bytes below 0x20 and 0x7f). `what` names it. */
enum { NH_CLI_PATH_MAX = 2047 };
int nh_cli_check_path(const char *what, const char *path, nh_error *err);
/* "kinsol" / "newton" with the message of a bad name. */
int nh_cli_solver(const char *name, nh_solver_kind *kind, nh_error *err);

/* cli_run.c, shared with merge: a run's configuration from its stored arguments (argv[0] = "run"), and
 * the printed summary of a finished run. */
int nh_cli_run_config(const nh_cli *cli, int argc, char **argv, nh_system *sys, nh_run_config *cfg, double *smooth,
                      nh_error *err);
void nh_cli_run_print_summary(const nh_run_config *cfg, const nh_run_result *res, const char *out);

/* cli.c: the subcommands (name i, NULL past the last) and a subcommand's option table (NULL: unknown). */
const char *nh_cli_command_name(int i);
const nh_option_table *nh_cli_command_table(const char *name);
/* cli/help_markdown.c: `nhens help --markdown`, the command-line reference page from the option tables. */
void nh_cli_print_markdown(FILE *out);

/* cli/initial.c: rows of q_1..q_n, v_1..v_n from a CSV file (*states malloc'ed). */
int nh_cli_read_initial(const char *path, int n, double **states, long *rows, nh_error *err);
/* Frees what nh_cli_run_config allocated for cfg (its initial states). */
void nh_cli_run_config_free(nh_run_config *cfg);

/* cli_ranks.c: an ensemble over every MPI rank (nh_run_ensemble with one); the other ranks serve rank 0's
 * runs until it stops them (called once rank 0's command has finished). */
int nh_cli_compute_run(const nh_run_config *cfg, nh_run_result *res, nh_error *err);
int nh_cli_serve_runs(const nh_cli *cli);
void nh_cli_stop_serving(void);

extern const nh_option_table nh_cli_order_table, nh_cli_audit_table, nh_cli_report_table,
    nh_cli_check_table, nh_cli_list_table, nh_cli_merge_table;

int nh_cli_list(const nh_cli *cli, int argc, char **argv);
int nh_cli_run(const nh_cli *cli, int argc, char **argv);
int nh_cli_order(const nh_cli *cli, int argc, char **argv);
int nh_cli_audit(const nh_cli *cli, int argc, char **argv);
int nh_cli_report(const nh_cli *cli, int argc, char **argv);
int nh_cli_check(const nh_cli *cli, int argc, char **argv);
int nh_cli_merge(const nh_cli *cli, int argc, char **argv);

#endif
