/* libFuzzer harness: the command-line parser. The input is split at newlines into arguments; its first
 * byte picks the subcommand. `run` goes through the whole of nhens' own parsing and validation with
 * --dry-run given first (nothing is computed or written); the other subcommands' option tables go through
 * nh_options_parse. Nothing may crash, hang, leak or trip a sanitizer; an error must carry a message. */
#include "cli.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_ARGS = 48, MAX_INPUT = 4096 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO); /* nhens prints its plans and messages; the fuzzer's own log stays on stderr */
    close(null);
    return 0;
}

static int split(char *text, size_t size, char **args, int first)
{
    int n = first;
    char *start = text;
    for (size_t i = 0; i <= size && n < MAX_ARGS - 2; ++i)
        if (i == size || text[i] == '\n') {
            text[i] = '\0';
            args[n++] = start;
            start = text + i + 1;
        }
    return n;
}

static void parse_table(const nh_option_table *table, int argc, char **argv)
{
    _Alignas(16) unsigned char target[4096] = {0};
    uint64_t seen = 0;
    const char *positional[4];
    int n_positional = 0, help = 0;
    nh_error err = {{0}};
    if (nh_options_parse(table, argc, argv, target, &seen, positional, &n_positional, &help, &err) && !err.msg[0])
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT)
        return 0;
    const nh_option_table *tables[] = {&nh_run_option_table, &nh_cli_order_table, &nh_cli_audit_table,
                                       &nh_cli_report_table, &nh_cli_check_table, &nh_cli_list_table};
    const int pick = data[0] % 7;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    char *args[MAX_ARGS];
    if (pick == 6) { /* the real program, run subcommand, dry run */
        args[0] = "nhens";
        args[1] = "run";
        args[2] = "--dry-run"; /* first, so no fuzzed option can take it as its value */
        int n = split(text, size - 1, args, 3);
        args[n] = NULL;
        nh_cli_main(n, args);
    } else {
        args[0] = (char *)tables[pick]->command;
        int n = split(text, size - 1, args, 1);
        args[n] = NULL;
        parse_table(tables[pick], n, args);
    }
    free(text);
    return 0;
}
