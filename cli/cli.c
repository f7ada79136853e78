/* Subcommand dispatch for the nhens program. */
#include "cli.h"
#include "experiment.h"

#include "nhens/core.h"

#include <string.h>

static const char USAGE[] =
    "nhens " NH_VERSION " - ensemble studies of nonholonomic integrators\n"
    "usage: nhens list                  systems, presets, methods, parameters and flags\n"
    "       nhens run [options]         one ensemble study (nhens run --help for options)\n"
    "       nhens order [options]       convergence study of one method against CVODE\n"
    "       nhens audit [options]       order, constraint, energy and reversibility of every method on a system\n"
    "       nhens report EXP.ini [--out DIR] [--scale F]   run an experiment file, write figures and report.md\n";

int nh_cli_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? NH_EXIT_USAGE : NH_EXIT_OK;
    }
    if (!strcmp(argv[1], "list"))
        return nh_cli_list(stdout);
    if (!strcmp(argv[1], "run")) {
        for (int i = 2; i < argc; ++i)
            if (!strcmp(argv[i], "--help")) {
                nh_cli_run_usage(stdout);
                return NH_EXIT_OK;
            }
        return nh_cli_run(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "report"))
        return nh_cli_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "audit"))
        return nh_cli_audit(argc - 1, argv + 1);
    if (!strcmp(argv[1], "order"))
        return nh_cli_order(argc - 1, argv + 1);
    fprintf(stderr, "nhens: unknown command '%s'; commands: list, run, order, audit, report\n%s", argv[1], USAGE);
    return NH_EXIT_USAGE;
}
