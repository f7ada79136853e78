/* The options of one ensemble run as `nhens run` takes them: the option table (names, ranges, help), their
 * parsing with the CLI's messages, and their translation into a validated nh_run_config with the CLI's
 * defaults. The nhens program and the in-memory runs of nhens/job.h (Python) share this one table, so a
 * value is refused by both with the same message and the same limits. Library-private like base/options.h:
 * not installed, not exported; the program compiles its own copy of engine/run_options.c. */
#ifndef NHENS_RUN_OPTIONS_H
#define NHENS_RUN_OPTIONS_H

#include "nhens/ensemble.h"
#include "nhens/registry.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { NH_RUN_MAX_PARAMS = 16 };
/* The one default nonlinear solver of run, order, audit and report. */
#define NH_RUN_DEFAULT_SOLVER "kinsol"

/* The values of the options (strings point into the parsed argv); seen: a bit per table index given. */
typedef struct nh_run_options {
    const char *system, *method, *preset, *out, *solver, *observe, *checkpoint, *resume, *blocks, *initial, *reduce;
    const char *params[NH_RUN_MAX_PARAMS];
    int n_params, quiet, dry_run, project;
    double h, T, energy, fit_start, section, smooth, checkpoint_every, perturb, burn_in;
    long ensemble, every, threads, lanes, paths;
    uint64_t seed;
    uint64_t seen;
} nh_run_options;

extern const nh_option_table nh_run_option_table;

/* argv[1..argc-1] ("--name VALUE" or "--name=VALUE"; argv[0] is the command's name) into o, from the
 * defaults of nhens run; *help is set for --help or -h. The message names the option, the value and the
 * allowed range ("nhens run: --ensemble '2.7' must be a decimal integer in [1, 100000000]"). */
int nh_run_options_parse(int argc, char **argv, nh_run_options *o, int *help, nh_error *err);
/* Whether option `name` (without "--") was given. */
int nh_run_options_given(const nh_run_options *o, const char *name);

/* Reads the rows of q_1..q_n, v_1..v_n of --initial FILE (*states malloc'ed). */
typedef int (*nh_states_reader)(const char *path, int n, double **states, long *rows, nh_error *err);

/* The run o describes into *cfg (its system instance into *sys): the required options, the system with
 * its preset and parameters from reg, the method and solver, the CLI's defaults (ensemble: the shell
 * preset's, 1 for a state, the states' rows, else 100; threads: the cores; every: about 1000 output rows),
 * --initial read by read_states (NULL: --initial is refused) and checked against the constraints, --blocks,
 * then nh_run_validate. cfg->initial_states (malloc'ed by the reader) is the caller's to free, also after
 * a failure. The options the run itself does not see (--out, --checkpoint, --smooth, ...) are not checked. */
int nh_run_options_config(const nh_registry *reg, const nh_run_options *o, nh_states_reader read_states,
                          nh_system *sys, nh_run_config *cfg, nh_error *err);

/* System `name` of reg with an optional preset and "k=v" parameter overrides; the messages list what is
 * allowed (the known systems, the system's presets). */
int nh_registry_build_system(const nh_registry *reg, const char *name, const char *preset_name,
                             const char *const *params, int n_params, nh_system *sys, const nh_preset **preset,
                             nh_error *err);

#ifdef __cplusplus
}
#endif

#endif
