/* The option-table parser of the program and of nhens/job.h (options.h, library-private); the numbers follow
 * params.h's strict policy (nh_parse_double_in, nh_parse_long_in, nh_parse_u64). */
#include "options.h"
#include "nhens/params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nh_options_index(const nh_option_table *table, const char *name)
{
    for (int i = 0; i < table->n_options; ++i)
        if (strcmp(table->options[i].name, name) == 0)
            return i;
    return -1;
}

/* The option named by "--name" or "--name=value" (name_len from the '='). */
static int find_option(const nh_option_table *t, const char *arg, const char **inline_value)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    *inline_value = eq ? eq + 1 : NULL;
    for (int i = 0; i < t->n_options; ++i)
        if (strlen(t->options[i].name) == len && strncmp(t->options[i].name, name, len) == 0)
            return i;
    return -1;
}

static int store_value(const nh_option_table *t, const nh_option *o, const char *value, void *target, nh_error *err)
{
    char *field = (char *)target + o->offset;
    switch (o->kind) {
    case NH_OPTION_FLAG: *(int *)field = 1; return NH_OK;
    case NH_OPTION_STRING: *(const char **)field = value; return NH_OK;
    case NH_OPTION_LIST: {
        int *count = (int *)((char *)target + o->count_offset);
        if (*count >= o->max_count)
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s given more than %d times (last '%s')", t->command,
                           o->name, o->max_count, value);
        ((const char **)field)[(*count)++] = value;
        return NH_OK;
    }
    case NH_OPTION_DOUBLE:
        if (nh_parse_double_in(value, o->min, o->max, (double *)field))
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s '%s' must be a finite number in [%g, %g]", t->command,
                           o->name, value, o->min, o->max);
        return NH_OK;
    case NH_OPTION_LONG:
        if (nh_parse_long_in(value, (long)o->min, (long)o->max, (long *)field))
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s '%s' must be a decimal integer in [%.0f, %.0f]",
                           t->command, o->name, value, o->min, o->max);
        return NH_OK;
    case NH_OPTION_U64:
        if (nh_parse_u64(value, (uint64_t *)field))
            return nh_fail(err, NH_ERR_INPUT,
                           "nhens %s: --%s '%s' must be a decimal integer in [0, 18446744073709551615]", t->command,
                           o->name, value);
        return NH_OK;
    }
    return NH_ERR_INPUT;
}

/* An option the table does not have, with the closest of its names; --plugin, a global option, is placed. */
static int unknown_option(const nh_option_table *t, int argc, char **argv, int at, nh_error *err)
{
    const char *arg = argv[at];
    if (!strcmp(arg, "--plugin") || !strncmp(arg, "--plugin=", 9)) {
        const char *path = arg[8] == '=' ? arg + 9 : at + 1 < argc ? argv[at + 1] : "PATH.so";
        return nh_fail(err, NH_ERR_INPUT, "nhens %s: --plugin goes before the command: nhens --plugin %.200s %s ...",
                       t->command, path, t->command);
    }
    char word[64], near[128] = "";
    const char *names[64];
    const int n = t->n_options < 64 ? t->n_options : 64;
    snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    for (int i = 0; i < n; ++i)
        names[i] = t->options[i].name;
    const char *closest = nh_closest_name(word, names, n);
    if (closest)
        snprintf(near, sizeof near, "; did you mean '--%s'?", closest);
    return nh_fail(err, NH_ERR_INPUT, "nhens %s: unknown option '%s'%s (nhens help %s lists the options)", t->command,
                   arg, near, t->command);
}

/* One "--name[=value]" at argv[*i] (its value may be argv[*i + 1]). */
static int parse_one(const nh_option_table *t, int argc, char **argv, int *i, void *target, uint64_t *seen,
                     nh_error *err)
{
    const char *inline_value, *arg = argv[*i];
    int idx = find_option(t, arg, &inline_value);
    if (idx < 0)
        return unknown_option(t, argc, argv, *i, err);
    const nh_option *o = &t->options[idx];
    if (o->kind != NH_OPTION_LIST && (*seen >> idx & 1u))
        return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s given twice", t->command, o->name);
    *seen |= (uint64_t)1 << idx;
    if (o->kind == NH_OPTION_FLAG) {
        if (inline_value)
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s takes no value", t->command, o->name);
        return store_value(t, o, NULL, target, err);
    }
    const char *value = inline_value;
    if (!value) {
        if (*i + 1 >= argc)
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: --%s needs a value %s", t->command, o->name, o->metavar);
        value = argv[++*i];
        if (!strncmp(value, "--", 2))   /* "--out --dry-run": a forgotten value, not a folder named --dry-run */
            return nh_fail(err, NH_ERR_INPUT,
                           "nhens %s: --%s needs a value %s, got the option '%s' (write --%s=%s for a value that "
                           "starts with --)",
                           t->command, o->name, o->metavar, value, o->name, value);
    }
    return store_value(t, o, value, target, err);
}

/* "-h VALUE": -h is help and takes no value; the option --h is probably meant. */
static int help_with_value(const nh_option_table *table, const char *value, nh_error *err)
{
    if (nh_options_index(table, "h") >= 0)
        return nh_fail(err, NH_ERR_INPUT, "nhens %s: -h is not an option; did you mean --h %s? (-h alone or --help "
                       "prints the help)", table->command, value);
    return nh_fail(err, NH_ERR_INPUT, "nhens %s: -h takes no value (got '%s'); -h alone or --help prints the help",
                   table->command, value);
}

int nh_options_parse(const nh_option_table *table, int argc, char **argv, void *target, uint64_t *seen,
                     const char **positional, int *n_positional, int *help, nh_error *err)
{
    *seen = 0;
    *help = 0;
    *n_positional = 0;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") && i + 1 < argc && strncmp(argv[i + 1], "--", 2))
            return help_with_value(table, argv[i + 1], err);
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            *help = 1;
            return NH_OK;
        }
        if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            int rc = parse_one(table, argc, argv, &i, target, seen, err);
            if (rc)
                return rc;
        } else if (*n_positional < table->max_positional) {
            positional[(*n_positional)++] = arg;
        } else {
            return nh_fail(err, NH_ERR_INPUT, "nhens %s: unexpected argument '%s'", table->command, arg);
        }
    }
    return NH_OK;
}

static size_t append(char *buf, size_t len, size_t used, const char *fmt, const char *a, const char *b)
{
    if (used >= len)
        return used;
    int w = snprintf(buf + used, len - used, fmt, a, b);
    return w > 0 ? used + (size_t)w : used;
}

static void range_text(const nh_option *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->kind == NH_OPTION_DOUBLE)
        snprintf(buf, len, " [%g, %g]", o->min, o->max);
    else if (o->kind == NH_OPTION_LONG)
        snprintf(buf, len, " [%.0f, %.0f]", o->min, o->max);
    else if (o->kind == NH_OPTION_LIST)
        snprintf(buf, len, " (repeatable, up to %d)", o->max_count);
}

void nh_options_format_help(const nh_option_table *t, char *buf, size_t len)
{
    size_t used = append(buf, len, 0, "usage: nhens %s %s\n", t->command, t->synopsis);
    used = append(buf, len, used, "\n%s%s\n\noptions:\n", t->summary, "");
    for (int i = 0; i < t->n_options; ++i) {
        const nh_option *o = &t->options[i];
        char head[64], range[64];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        range_text(o, range, sizeof range);
        used = append(buf, len, used, "  %-22s %s", head, o->help);
        used = append(buf, len, used, "%s%s\n", range, "");
    }
    append(buf, len, used, "  %-22s %s\n", "--help", "this text");
}
