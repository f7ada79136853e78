/* Pieces shared by the subcommands: the option-parsing policy and building a system instance from
 * names given on the command line. */
#include "cli.h"

#include "nhens/files.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void nh_cli_print_help(const nh_option_table *table, FILE *out)
{
    char buf[8192];
    nh_options_format_help(table, buf, sizeof buf);
    fputs(buf, out);
}

int nh_cli_parse(const nh_option_table *table, int argc, char **argv, void *target, uint64_t *seen,
                 const char **positional, int *n_positional, int *status)
{
    nh_error err;
    int help, n_pos = 0;
    const char *unused[1];
    if (nh_options_parse(table, argc, argv, target, seen, positional ? positional : unused,
                         n_positional ? n_positional : &n_pos, &help, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        *status = NH_EXIT_USAGE;
        return 1;
    }
    if (help) {
        nh_cli_print_help(table, stdout);
        *status = NH_EXIT_OK;
        return 1;
    }
    return 0;
}

int nh_cli_given(const nh_option_table *table, uint64_t seen, const char *name)
{
    int idx = nh_options_index(table, name);
    return idx >= 0 && (seen >> idx & 1u);
}

int nh_cli_solver(const char *name, nh_solver_kind *kind, nh_error *err)
{
    if (nh_solver_kind_parse(name, kind))
        return nh_fail(err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", name);
    return NH_OK;
}

/* After a lookup's "unknown system/method ..." message: where a plugin's names come from, when none is loaded. */
int nh_cli_plugin_hint(const nh_cli *cli, int rc, nh_error *err)
{
    const int unknown = !strncmp(err->msg, "unknown method", 14) || !strncmp(err->msg, "unknown system", 14);
    const size_t used = strlen(err->msg);
    if (rc && unknown && nh_registry_plugin_count(cli->registry) == 0)
        snprintf(err->msg + used, sizeof err->msg - used, " (no plugin is loaded: a plugin's systems and methods need "
                 "nhens --plugin PATH.so before the command)");
    return rc;
}

int nh_cli_parse_method(const nh_cli *cli, const char *text, nh_method_spec *spec, nh_error *err)
{
    return nh_cli_plugin_hint(cli, nh_method_spec_parse(cli->registry, spec, text, err), err);
}

int nh_cli_build_system(const nh_cli *cli, const char *name, const char *preset_name, const char *const *params,
                        int n_params, nh_system *sys, const nh_preset **preset, nh_error *err)
{
    return nh_cli_plugin_hint(cli, nh_registry_build_system(cli->registry, name, preset_name, params, n_params, sys,
                                                            preset, err),
                              err);
}

int nh_cli_check_name(const char *what, const char *value, size_t max, const char *extra, nh_error *err)
{
    size_t len = strlen(value);
    if (len == 0 || len >= max || value[0] == '.')
        return nh_fail(err, NH_ERR_INPUT, "%s '%.80s' must have 1 to %zu characters and not start with '.'", what, value,
                       max - 1);
    for (const char *c = value; *c; ++c)
        if (!isalnum((unsigned char)*c) && !strchr("._-", *c) && !strchr(extra, *c))
            return nh_fail(err, NH_ERR_INPUT, "%s '%.80s': character 0x%02x is not allowed; allowed: letters, digits, ._-%s",
                           what, value, (unsigned char)*c, extra);
    return NH_OK;
}

/* part-I-of-K.json, the name of a shard's result (I and K digits) */
static int is_part_name(const char *name)
{
    size_t at = strlen("part-"), digits;
    if (strncmp(name, "part-", at) || !(digits = strspn(name + at, "0123456789")))
        return 0;
    at += digits;
    if (strncmp(name + at, "-of-", 4) || !(digits = strspn(name + at + 4, "0123456789")))
        return 0;
    return !strcmp(name + at + 4 + digits, ".json");
}

int nh_cli_check_output_name(const char *what, const char *value, size_t max, nh_error *err)
{
    static const char *const report_names[] = {"report.md", "report.html", "work_precision.csv", "plot.gp", NULL};
    if (nh_cli_check_name(what, value, max, "", err))
        return NH_ERR_INPUT;
    int reserved = is_part_name(value);
    for (int i = 0; nh_output_set_names[i]; ++i)
        reserved |= !strcmp(value, nh_output_set_names[i]);
    for (int i = 0; report_names[i]; ++i)
        reserved |= !strcmp(value, report_names[i]);
    if (!reserved)
        return NH_OK;
    char names[512] = "";
    for (int i = 0; nh_output_set_names[i]; ++i)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", nh_output_set_names[i]);
    for (int i = 0; report_names[i]; ++i)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", report_names[i]);
    return nh_fail(err, NH_ERR_INPUT, "%s '%s' is a name nhens writes itself; reserved: %spart-I-of-K.json", what,
                   value, names);
}

int nh_cli_check_path(const char *what, const char *path, nh_error *err)
{
    const size_t len = strlen(path);
    if (len == 0 || len > NH_CLI_PATH_MAX)
        return nh_fail(err, NH_ERR_INPUT, "%s '%.100s%s' has %zu characters; allowed: 1 to %d", what, path,
                       len > 100 ? "..." : "", len, NH_CLI_PATH_MAX);
    for (const char *c = path; *c; ++c)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return nh_fail(err, NH_ERR_INPUT, "%s has the control character 0x%02x at position %zu; a path may not "
                           "hold control characters", what, (unsigned char)*c, (size_t)(c - path) + 1);
    return NH_OK;
}

/* A word as a POSIX shell reads it back: bare when it holds only characters no shell treats specially, else in
 * single quotes (a ' inside written '\''). */
static size_t shell_word(const char *word, char *out)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
    size_t n = 0;
    if (*word && strspn(word, safe) == strlen(word)) {
        n = strlen(word);
        if (out)
            memcpy(out, word, n);
        return n;
    }
    if (out)
        out[n] = '\'';
    ++n;
    for (const char *c = word; *c; ++c) {
        if (*c == '\'') {
            if (out)
                memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            if (out)
                out[n] = *c;
            ++n;
        }
    }
    if (out)
        out[n] = '\'';
    return n + 1;
}

char *nh_cli_command_line(const nh_cli *cli, const char *prefix, int argc, char **argv)
{
    const int n_global = cli ? cli->n_global_args : 0;
    size_t len = strlen(prefix ? prefix : "") + strlen("nhens") + 1;
    for (int i = 0; i < n_global + argc; ++i)
        len += 1 + shell_word(i < n_global ? cli->global_args[i] : argv[i - n_global], NULL);
    char *line = malloc(len);
    if (!line)
        return NULL;
    size_t used = (size_t)snprintf(line, len, "%snhens", prefix ? prefix : "");
    for (int i = 0; i < n_global + argc; ++i) {
        line[used++] = ' ';
        used += shell_word(i < n_global ? cli->global_args[i] : argv[i - n_global], line + used);
    }
    line[used] = '\0';
    return line;
}
