/* Subcommand dispatch of the nhens program, global options (--plugin, --version) and `nhens help`. */
#include "cli.h"

#include "nhens/plugin.h"
#include "nhens/ranks.h"

#include <string.h>

typedef struct command {
    const char *name;
    const nh_option_table *table;
    int (*run)(const nh_cli *cli, int argc, char **argv);
} command;

static const command COMMANDS[] = {
    {"list", &nh_cli_list_table, nh_cli_list},       {"run", &nh_run_option_table, nh_cli_run},
    {"order", &nh_cli_order_table, nh_cli_order},    {"audit", &nh_cli_audit_table, nh_cli_audit},
    {"report", &nh_cli_report_table, nh_cli_report}, {"check", &nh_cli_check_table, nh_cli_check},
    {"merge", &nh_cli_merge_table, nh_cli_merge},
};
enum { N_COMMANDS = sizeof COMMANDS / sizeof COMMANDS[0], MAX_PLUGINS = 16 };

/* " (did you mean 'run'?)" for a word that is no command, or "". */
static const char *closest_command(const char *word, char *buf, size_t len)
{
    const char *names[N_COMMANDS + 1];
    for (int i = 0; i < N_COMMANDS; ++i)
        names[i] = COMMANDS[i].name;
    names[N_COMMANDS] = "help";
    return nh_did_you_mean(word, names, N_COMMANDS + 1, buf, len);
}

static const command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; ++i)
        if (!strcmp(COMMANDS[i].name, name))
            return &COMMANDS[i];
    return NULL;
}

const char *nh_cli_command_name(int i)
{
    return i >= 0 && i < N_COMMANDS ? COMMANDS[i].name : NULL;
}

const nh_option_table *nh_cli_command_table(const char *name)
{
    const command *c = find_command(name);
    return c ? c->table : NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "nhens %s - ensemble studies of nonholonomic integrators\n"
                 "usage: nhens [--plugin PATH.so ...] COMMAND [options]\n       nhens help COMMAND | nhens help --markdown | nhens --version\n"
                 "commands:\n",
            NH_VERSION);
    for (int i = 0; i < N_COMMANDS; ++i)
        fprintf(out, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].table->summary);
    fputs("  help     the options of a command (also: nhens COMMAND --help)\n", out);
}

static int help_command(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return NH_EXIT_OK;
    }
    if (!strcmp(argv[1], "--markdown")) { /* docs/guide/command-line.md */
        nh_cli_print_markdown(stdout);
        return NH_EXIT_OK;
    }
    const command *c = find_command(argv[1]);
    if (!c) {
        char near[128];
        fprintf(stderr, "nhens help: unknown command '%s'%s\n", argv[1], closest_command(argv[1], near, sizeof near));
        usage(stderr);
        return NH_EXIT_USAGE;
    }
    nh_cli_print_help(c->table, stdout);
    return NH_EXIT_OK;
}

/* Leading "--plugin PATH" / "--plugin=PATH" options; returns the index of the command word. */
static int load_plugins(nh_registry *reg, int argc, char **argv, int *status)
{
    int i = 1;
    while (i < argc && !strncmp(argv[i], "--plugin", 8) && (argv[i][8] == '\0' || argv[i][8] == '=')) {
        const char *path = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : NULL);
        nh_error err;
        if (!path) {
            fprintf(stderr, "nhens: --plugin needs a path to a shared object\n");
            *status = NH_EXIT_USAGE;
            return -1;
        }
        if (nh_registry_load_plugin(reg, path, &err)) {
            fprintf(stderr, "nhens: %s\n", err.msg);
            *status = NH_EXIT_USAGE;
            return -1;
        }
        i += argv[i][8] == '=' ? 1 : 2;
    }
    return i;
}

static int dispatch(const nh_cli *cli, int argc, char **argv)
{
    if (argc < 1) {
        usage(stderr);
        return NH_EXIT_USAGE;
    }
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") || !strcmp(argv[0], "help"))
        return help_command(argc, argv);
    if (!strcmp(argv[0], "--version")) {
        printf("nhens %s (library %s, ABI %d)\n", NH_VERSION, nh_version(), nh_abi_version());
        return NH_EXIT_OK;
    }
    const command *c = find_command(argv[0]);
    if (!c) {
        char near[128];
        fprintf(stderr, "nhens: unknown command '%s'%s\n", argv[0], closest_command(argv[0], near, sizeof near));
        usage(stderr);
        return NH_EXIT_USAGE;
    }
    return c->run(cli, argc, argv);
}

int nh_cli_main(int argc, char **argv)
{
    nh_error err;
    if (nh_ranks_init(&argc, &argv, &err)) {
        fprintf(stderr, "nhens: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    nh_cli cli = {nh_registry_create(&err), 0, argv + 1, NULL};
    int status = NH_EXIT_OK, first = cli.registry ? load_plugins(cli.registry, argc, argv, &status) : -1;
    cli.n_global_args = first > 1 ? first - 1 : 0;
    if (!cli.registry) {
        fprintf(stderr, "nhens: %s\n", err.msg);
        status = NH_EXIT_ERROR;
    } else if (first >= 0 && !(cli.observers = nh_registry_observer_table(cli.registry, &err))) {
        fprintf(stderr, "nhens: the plugins' observers: %s\n", err.msg);
        status = NH_EXIT_USAGE;
        first = -1;
    }
    if (nh_rank() != 0) /* every rank loads the same plugins; rank 0 runs the command */
        status = cli.registry && first >= 0 ? nh_cli_serve_runs(&cli) : NH_EXIT_ERROR;
    else if (first >= 0)
        status = dispatch(&cli, argc - first, argv + first);
    nh_cli_stop_serving();
    nh_observer_table_free(cli.observers);
    nh_registry_free(cli.registry);
    nh_ranks_finalize();
    return status;
}
