/* Experiment files (see experiment.h): INI sections [experiment] (title, figure, description, expect and
 * panel defaults) and [panel NAME] (overrides). Lists (methods, plot) are ';'-separated because method
 * specs contain commas. */
#include "experiment.h"
#include "cli.h"

#include "nhens/files.h"
#include "options.h"
#include "nhens/params.h"
#include "nhens/plugin.h"

#include <ctype.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* libinih (Debian's build) reads lines into 200-byte buffers and treats " ;" as the start of a comment;
 * lines it would split or cut short are refused before it sees them. */
enum { EXP_MAX_BYTES = 1 << 18, EXP_MAX_LINE = 198 };

typedef struct load_state {
    nh_experiment *exp;
    nh_error *err;
    int allow_plugins;
} load_state;

/* A ';'-separated list into at most `max` words of `check_word`'s alphabet; more items, or an item that
 * does not fit, is refused (nothing is dropped or cut). Returns the count, or -1 with err set. */
static int split_list(const char *key, const char *value, char (*out)[128], int max, size_t item_max,
                      const char *extra, nh_error *err)
{
    char buf[1024];
    int count = 0;
    if (strlen(value) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "key %s: the list is longer than %zu characters", key, sizeof buf - 1), -1;
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        while (*tok == ' ')
            ++tok;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ')
            tok[--len] = '\0';
        if (!len)
            continue;
        if (count == max)
            return nh_fail(err, NH_ERR_INPUT, "key %s: more than %d items", key, max), -1;
        if (nh_cli_check_name(key, tok, item_max, extra, err))
            return -1;
        snprintf(out[count++], 128, "%s", tok);
    }
    return count;
}

/* value into field (appended after a space when `append`: description and expect continue on indented
 * lines); a value that does not fit is refused, never cut. */
static int put_text(char *field, size_t size, const char *name, const char *value, int append, nh_error *err)
{
    const size_t used = append ? strlen(field) : 0, extra = used ? 1 : 0;
    if (used + extra + strlen(value) >= size)
        return nh_fail(err, NH_ERR_INPUT, "key %s: the text has more than %zu characters", name, size - 1);
    snprintf(field + used, size - used, "%s%s", extra ? " " : "", value);
    return NH_OK;
}

/* `reference = COLUMN: A*t^P` (or `A*t`, or a constant `A`), numbers only: nothing of it reaches gnuplot
 * but the numbers we print ourselves. */
static int reference_key(nh_exp_panel *p, const char *value, nh_error *err)
{
    char buf[160], *colon, *star;
    if (strlen(value) >= sizeof buf || !(colon = strchr(strcpy(buf, value), ':')))
        return nh_fail(err, NH_ERR_INPUT, "key reference: '%.100s' must be 'COLUMN: A*t^P', 'COLUMN: A*t' or "
                                          "'COLUMN: A'", value);
    *colon = '\0';
    char *expr = colon + 1 + strspn(colon + 1, " ");
    if (nh_cli_check_name("reference column", buf, sizeof p->reference_column, "", err))
        return NH_ERR_INPUT;
    double power = 0;
    if ((star = strchr(expr, '*'))) {
        *star = '\0';
        const char *rest = star + 1;
        if (strcmp(rest, "t") && (strncmp(rest, "t^", 2) || nh_parse_double_in(rest + 2, -10, 10, &power)))
            return nh_fail(err, NH_ERR_INPUT, "key reference: '%s' after '*' must be t or t^P with P in [-10, 10]", rest);
        power = strcmp(rest, "t") ? power : 1.0;
    }
    if (nh_parse_double(expr, &p->reference_a))
        return nh_fail(err, NH_ERR_INPUT, "key reference: '%s' is not a finite number", expr);
    snprintf(p->reference_column, sizeof p->reference_column, "%s", buf);
    p->reference_p = power;
    return NH_OK;
}

/* `steps = h1; h2; ...`: distinct step sizes > 0, kept largest first (a work-precision panel). */
static int steps_key(nh_exp_panel *p, const char *value, nh_error *err)
{
    char items[NH_EXP_MAX_STEPS][128];
    const int n = split_list("steps", value, items, NH_EXP_MAX_STEPS, 32, ".+-", err);
    if (n < 2)
        return n < 0 ? NH_ERR_INPUT : nh_fail(err, NH_ERR_INPUT, "key steps: give 2 to %d step sizes separated by ';'",
                                                NH_EXP_MAX_STEPS);
    for (int i = 0; i < n; ++i) {
        double h;
        if (nh_parse_double(items[i], &h) || !(h >= 1e-12 && h <= 1e6))
            return nh_fail(err, NH_ERR_INPUT, "key steps: '%s' is not a step size in [1e-12, 1e6]", items[i]);
        int at = i;
        for (; at > 0 && p->steps[at - 1] < h; --at)
            p->steps[at] = p->steps[at - 1];
        if (at > 0 && p->steps[at - 1] == h)
            return nh_fail(err, NH_ERR_INPUT, "key steps: step size %s is given twice", items[i]);
        p->steps[at] = h;
    }
    p->n_steps = n;
    return NH_OK;
}

static int error_key(nh_exp_panel *p, const char *value, nh_error *err)
{
    if (!nh_work_precision_metric(value))
        return nh_fail(err, NH_ERR_INPUT, "key error: '%.60s' is not an error measure; allowed: error_final, "
                                          "error_final_max, dH_absmax, rel_energy_absmax, constraint_max, "
                                          "latitude_last_tenth, passenger_energy_absmax, C_over_h4", value);
    snprintf(p->error, sizeof p->error, "%s", value);
    return NH_OK;
}

static int panel_key(nh_exp_panel *p, const char *name, const char *value, nh_error *err)
{
    double d;
    long l;
#define TEXT(field)                                                                                              \
    do {                                                                                                         \
        if (put_text(p->field, sizeof p->field, name, value, 0, err))                                            \
            return NH_ERR_INPUT;                                                                                 \
    } while (0)
    if (!strcmp(name, "system")) TEXT(system);
    else if (!strcmp(name, "params")) TEXT(params);
    else if (!strcmp(name, "preset")) { TEXT(preset); p->have_energy = 0; }
    else if (!strcmp(name, "title")) TEXT(title);
    else if (!strcmp(name, "reference_label")) TEXT(reference_label);
    else if (!strcmp(name, "reference")) { if (reference_key(p, value, err)) return NH_ERR_INPUT; }
    else if (!strcmp(name, "steps")) { if (steps_key(p, value, err)) return NH_ERR_INPUT; }
    else if (!strcmp(name, "error")) { if (error_key(p, value, err)) return NH_ERR_INPUT; }
    else if (!strcmp(name, "methods")) {
        if ((p->n_methods = split_list(name, value, p->methods, NH_EXP_MAX_METHODS, 128, ":=,/+", err)) < 0)
            return NH_ERR_INPUT;
    } else if (!strcmp(name, "plot")) {
        char tmp[NH_EXP_MAX_PLOTS][128];
        if ((p->n_plot = split_list(name, value, tmp, NH_EXP_MAX_PLOTS, sizeof p->plot[0], "", err)) < 0)
            return NH_ERR_INPUT;
        for (int i = 0; i < p->n_plot; ++i)
            snprintf(p->plot[i], sizeof p->plot[i], "%.*s", (int)sizeof p->plot[i] - 1, tmp[i]); /* fits: checked above */
    } else if (strcmp(name, "energy") && strcmp(name, "h") && strcmp(name, "T") && strcmp(name, "smooth") &&
               strcmp(name, "section") && strcmp(name, "logy") && strcmp(name, "seed") && strcmp(name, "ensemble") &&
               strcmp(name, "every") && strcmp(name, "paths") && strcmp(name, "perturb"))
        return nh_fail(err, NH_ERR_INPUT, "unknown key '%s'", name);
    else if (!strcmp(name, "paths")) {
        if (nh_parse_long_in(value, 0, NH_EXP_MAX_PATHS, &l))
            return nh_fail(err, NH_ERR_INPUT, "key paths: '%s' is not a decimal integer in [0, %d]", value,
                           NH_EXP_MAX_PATHS);
        p->paths = l;
    } else if (strcmp(name, "seed") && strcmp(name, "ensemble") && strcmp(name, "every") && nh_parse_double(value, &d))
        return nh_fail(err, NH_ERR_INPUT, "key %s: '%s' is not a finite number", name, value);
    else if (!strcmp(name, "energy")) { p->energy = d; p->have_energy = 1; p->preset[0] = '\0'; }
    else if (!strcmp(name, "h")) p->h = d;
    else if (!strcmp(name, "perturb")) p->perturb = d;
    else if (!strcmp(name, "T")) p->T = d;
    else if (!strcmp(name, "smooth") && !(d >= 0))
        return nh_fail(err, NH_ERR_INPUT, "key smooth: '%s' must be a window >= 0 time units (0: none)", value);
    else if (!strcmp(name, "smooth")) p->smooth = d;
    else if (!strcmp(name, "section")) { p->section = d; p->have_section = 1; }
    else if (!strcmp(name, "logy") && d != 0 && d != 1)
        return nh_fail(err, NH_ERR_INPUT, "key logy: '%s' must be 0 or 1", value);
    else if (!strcmp(name, "logy")) p->logy = d != 0;
    else if (!strcmp(name, "seed")) {
        uint64_t seed;
        if (nh_parse_u64(value, &seed))
            return nh_fail(err, NH_ERR_INPUT, "key seed: '%s' is not a decimal integer in [0, 2^64)", value);
        p->seed = seed;
    } else if (nh_parse_long_in(value, 1, 2000000000, &l))
        return nh_fail(err, NH_ERR_INPUT, "key %s: '%s' is not a decimal integer in [1, 2e9]", name, value);
    else if (!strcmp(name, "ensemble")) p->ensemble = l;
    else if (!strcmp(name, "every")) p->every = l;
    else
        return nh_fail(err, NH_ERR_INPUT, "unknown key '%s'", name);
#undef TEXT
    return NH_OK;
}

/* The panel of that name (a repeated section continues it); names that differ only in case would share
 * a folder on a case-insensitive file system and are refused (NULL with *clash set). */
static nh_exp_panel *panel_for(nh_experiment *exp, const char *name, int *clash)
{
    *clash = 0;
    for (int i = 0; i < exp->n_panels; ++i) {
        if (!strcmp(exp->panels[i].name, name))
            return &exp->panels[i];
        if (!strcasecmp(exp->panels[i].name, name))
            return *clash = 1, NULL;
    }
    if (exp->n_panels == NH_EXP_MAX_PANELS)
        return NULL;
    nh_exp_panel *p = &exp->panels[exp->n_panels++];
    *p = exp->defaults;
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* A key of [experiment]: its own texts, plugins, or a default of every panel. */
static int experiment_key(load_state *st, const char *name, const char *value)
{
    nh_experiment *exp = st->exp;
    if (!strcmp(name, "title"))
        return put_text(exp->title, sizeof exp->title, name, value, 0, st->err);
    if (!strcmp(name, "figure"))
        return put_text(exp->figure, sizeof exp->figure, name, value, 0, st->err);
    if (!strcmp(name, "description"))
        return put_text(exp->description, sizeof exp->description, name, value, 1, st->err);
    if (!strcmp(name, "expect"))
        return put_text(exp->expect, sizeof exp->expect, name, value, 1, st->err);
    if (!strcmp(name, "claim")) {
        if (exp->n_claims == NH_EXP_MAX_CLAIMS)
            return nh_fail(st->err, NH_ERR_INPUT, "more than %d claims", NH_EXP_MAX_CLAIMS);
        return nh_claim_parse(value, &exp->claims[exp->n_claims++], st->err);
    }
    if (!strcmp(name, "ci_scale")) /* the scale at which the ci claims discriminate (report --ci) */
        return nh_parse_double(value, &exp->ci_scale) || !(exp->ci_scale > 0 && exp->ci_scale <= 1)
                   ? nh_fail(st->err, NH_ERR_INPUT, "ci_scale '%.40s' must be a number in (0, 1]", value)
                   : NH_OK;
    if (strcmp(name, "plugin"))
        return panel_key(&exp->defaults, name, value, st->err);
    if (!st->allow_plugins)
        return nh_fail(st->err, NH_ERR_INPUT, "key plugin '%.200s' would load and run code; an experiment file may "
                                              "do that only with nhens report --allow-plugins", value);
    if (exp->n_plugins == NH_EXP_MAX_PLUGINS)
        return nh_fail(st->err, NH_ERR_INPUT, "plugin '%s': at most %d plugins", value, NH_EXP_MAX_PLUGINS);
    return put_text(exp->plugins[exp->n_plugins++], sizeof exp->plugins[0], name, value, 0, st->err);
}

/* libinih's callback: 1 to go on, 0 for an error (st->err says which; libinih gives the line). */
static int handle(void *user, const char *section, const char *name, const char *value)
{
    load_state *st = user;
    if (!strcmp(section, "experiment"))
        return experiment_key(st, name, value) == NH_OK;
    int clash;
    nh_exp_panel *p = strncmp(section, "panel ", 6) ? NULL : panel_for(st->exp, section + 6, &clash);
    if (!p) { /* keys before any header (scan_lines refused every other section) */
        nh_fail(st->err, NH_ERR_INPUT, "key '%s' comes before [experiment] or any [panel NAME]", name);
        return 0;
    }
    return panel_key(p, name, value, st->err) == NH_OK;
}

static int check_panel(const char *path, const nh_exp_panel *p, nh_error *err)
{
    const double h = p->n_steps ? p->steps[0] : p->h; /* a work-precision panel's largest step size */
    if (!p->system[0] || p->n_methods == 0 || !(h > 0) || !(p->T >= h) || p->ensemble < 1)
        return nh_fail(err, NH_ERR_INPUT,
                       "%s:%d: panel '%s' needs system, methods, h > 0, T >= h and ensemble >= 1 (got system '%s', %d "
                       "methods, h=%g, T=%g, ensemble=%ld; a work-precision panel gives steps instead of h)",
                       path, p->line, p->name, p->system, p->n_methods, h, p->T, p->ensemble);
    if (!p->have_energy == !p->preset[0])
        return nh_fail(err, NH_ERR_INPUT, "%s:%d: panel '%s' needs exactly one of preset or energy", path, p->line,
                       p->name);
    return NH_OK;
}

/* The section headers in file order, found before libinih runs (which never reports a section without keys). */
typedef struct header_list {
    char names[NH_EXP_MAX_PANELS][NH_EXP_NAME_MAX];
    int lines[NH_EXP_MAX_PANELS];
    int n;
    int experiment_line;
    int claim_lines[NH_EXP_MAX_CLAIMS]; /* of the `claim` keys, in order (libinih does not give lines) */
    int n_claims;
} header_list;

/* "[experiment]" (before any panel, so every panel starts from the final defaults) or "[panel NAME]". */
static int section_header(header_list *h, const char *name, int line, nh_error *err)
{
    if (!strcmp(name, "experiment")) {
        if (h->n)
            return nh_fail(err, NH_ERR_INPUT, "[experiment] must come before the first [panel NAME]");
        h->experiment_line = h->experiment_line ? h->experiment_line : line;
        return NH_OK;
    }
    if (strncmp(name, "panel ", 6) != 0)
        return nh_fail(err, NH_ERR_INPUT, "unknown section [%.80s]; allowed: [experiment], [panel NAME]", name);
    name += 6;
    if (nh_cli_check_name("panel name", name, NH_EXP_NAME_MAX, "", err))
        return NH_ERR_INPUT;
    for (int i = 0; i < h->n; ++i) {
        if (!strcmp(h->names[i], name))
            return NH_OK; /* a repeated section continues the panel */
        if (!strcasecmp(h->names[i], name))
            return nh_fail(err, NH_ERR_INPUT, "panel name '%s' differs from panel '%s' (line %d) only in case", name,
                           h->names[i], h->lines[i]);
    }
    if (h->n == NH_EXP_MAX_PANELS)
        return nh_fail(err, NH_ERR_INPUT, "more than %d panels", NH_EXP_MAX_PANELS);
    snprintf(h->names[h->n], sizeof h->names[0], "%s", name);
    h->lines[h->n++] = line;
    return NH_OK;
}

/* One line as libinih will see it: refused if it would be split, cut or partly commented out. */
static int scan_line(header_list *h, const char *line, size_t len, int number, nh_error *err)
{
    char buf[EXP_MAX_LINE + 1];
    if (len > EXP_MAX_LINE)
        return nh_fail(err, NH_ERR_INPUT, "the line has %zu characters; at most %d are allowed (description and "
                                          "expect may continue on indented lines)", len, EXP_MAX_LINE);
    memcpy(buf, line, len);
    buf[len] = '\0';
    while (len && isspace((unsigned char)buf[len - 1]))
        buf[--len] = '\0';
    const char *start = buf + strspn(buf, " \t");
    if (!*start || *start == ';' || *start == '#')
        return NH_OK;
    for (const char *c = start + 1; *c; ++c)
        if (*c == ';' && (c[-1] == ' ' || c[-1] == '\t'))
            return nh_fail(err, NH_ERR_INPUT, "' ;' would start a comment and drop the rest of the line; separate "
                                              "list items with ';' and no space before it");
    if (*start == '[') {
        if (buf[len - 1] != ']')
            return nh_fail(err, NH_ERR_INPUT, "a section header must end with ']'");
        buf[len - 1] = '\0';
        return section_header(h, start + 1, number, err);
    }
    if (start == buf && !strpbrk(start, "=:"))
        return nh_fail(err, NH_ERR_INPUT, "expected 'key = value', a [section] or a comment");
    if (start == buf && !strncmp(start, "claim", 5) && start[5 + strspn(start + 5, " \t")] == '=' &&
        h->n_claims < NH_EXP_MAX_CLAIMS)
        h->claim_lines[h->n_claims++] = number;
    return NH_OK;
}

static int scan_lines(header_list *h, const char *text, size_t size, nh_error *err)
{
    int number = 1;
    for (const char *line = text; line < text + size; ++number) {
        const char *end = memchr(line, '\n', (size_t)(text + size - line));
        size_t len = end ? (size_t)(end - line) : (size_t)(text + size - line);
        if (memchr(line, '\0', len))
            return nh_fail(err, NH_ERR_INPUT, "%d: the line holds a NUL byte", number), number;
        nh_error local;
        if (scan_line(h, line, len, number, &local))
            return nh_fail(err, NH_ERR_INPUT, "%d: %s", number, local.msg), number;
        line += len + 1;
    }
    return 0;
}

int nh_experiment_load_plugins(const nh_experiment *exp, nh_registry *reg, nh_error *err)
{
    for (int i = 0; i < exp->n_plugins; ++i) {
        char path[NH_PATH_MAX];
        const char *name = exp->plugins[i];
        int rc = name[0] == '/' ? nh_path_format(path, sizeof path, err, "%s", name)
                                : nh_path_format(path, sizeof path, err, "%s/%s", exp->directory, name);
        if (!rc)
            rc = nh_registry_load_plugin(reg, path, err);
        if (rc)
            return rc;
    }
    return NH_OK;
}

/* Panels in file order, with line numbers; a section without keys is a panel of the defaults; no section
 * at all: one panel "main". */
static void order_panels(nh_experiment *exp, const header_list *h)
{
    nh_exp_panel *ordered = malloc(sizeof exp->panels);
    if (!ordered)
        return;
    for (int i = 0; i < h->n; ++i) {
        int clash;
        nh_exp_panel *p = panel_for(exp, h->names[i], &clash); /* created with the defaults if it had no keys */
        ordered[i] = p ? *p : exp->defaults;
        ordered[i].line = h->lines[i];
    }
    memcpy(exp->panels, ordered, sizeof exp->panels);
    free(ordered);
    exp->n_panels = h->n;
    if (h->n == 0) {
        exp->panels[0] = exp->defaults;
        snprintf(exp->panels[0].name, sizeof exp->panels[0].name, "main");
        exp->panels[0].line = h->experiment_line ? h->experiment_line : 1;
        exp->n_panels = 1;
    }
}

int nh_experiment_load(const char *path, int allow_plugins, nh_experiment *exp, nh_error *err)
{
    memset(exp, 0, sizeof *exp);
    const char *slash = strrchr(path, '/');
    if (nh_path_format(exp->directory, sizeof exp->directory, err, "%.*s", slash ? (int)(slash - path) : 1,
                       slash ? path : "."))
        return NH_ERR_INPUT;
    exp->defaults = (nh_exp_panel){.ensemble = 1, .every = 1, .seed = 1, .error = "error_final"};
    exp->ci_scale = 0.01;
    snprintf(exp->defaults.plot[0], sizeof exp->defaults.plot[0], "dH_absmax");
    exp->defaults.n_plot = 1;
    size_t size;
    char *text = nh_read_file(path, EXP_MAX_BYTES, &size, err);
    if (!text)
        return NH_ERR_INPUT;
    int rc;
    nh_error local = {{0}};
    load_state st = {exp, &local, allow_plugins};
    header_list headers = {0};
    int line = scan_lines(&headers, text, size, &local);
    if (line)
        return free(text), nh_fail(err, NH_ERR_INPUT, "%s:%s", path, local.msg);
    rc = ini_parse_string(text, handle, &st);
    free(text);
    if (rc != 0)
        return nh_fail(err, NH_ERR_INPUT, "%s:%d: %s", path, rc, local.msg[0] ? local.msg : "syntax error");
    order_panels(exp, &headers);
    for (int i = 0; i < exp->n_claims && i < headers.n_claims; ++i)
        exp->claims[i].line = headers.claim_lines[i];
    for (int i = 0; i < exp->n_panels; ++i) /* a panel without a title of its own shows the experiment's */
        if (!exp->panels[i].title[0])
            snprintf(exp->panels[i].title, sizeof exp->panels[i].title, "%s", exp->title);
    for (int i = 0; i < exp->n_panels; ++i)
        if (check_panel(path, &exp->panels[i], err))
            return NH_ERR_INPUT;
    return nh_claims_check(path, exp, err);
}

void nh_experiment_scale(nh_experiment *exp, double scale)
{
    for (int i = 0; i < exp->n_panels; ++i) {
        nh_exp_panel *p = &exp->panels[i];
        const double unit = p->n_steps ? p->steps[0] : p->h; /* a work-precision T stays a whole number of steps */
        p->T = fmax(unit, unit * floor(p->T * scale / unit + 0.5));
        p->ensemble = p->ensemble > 1 ? (long)fmax(2.0, floor(p->ensemble * scale + 0.5)) : 1;
        p->smooth *= scale; /* the window keeps its share of the horizon */
        p->paths = p->paths < p->ensemble ? p->paths : p->ensemble;
    }
}

int nh_experiment_runs(const nh_exp_panel *p)
{
    return p->n_steps ? p->n_steps : 1;
}

void nh_experiment_step_run(const nh_exp_panel *p, int j, nh_exp_panel *run)
{
    *run = *p;
    if (!p->n_steps)
        return;
    run->h = p->steps[j];
    const double n = floor(p->T / run->h + 0.5);
    run->every = n >= 10 && fmod(n, 10.0) == 0 ? (long)(n / 10) : (long)fmax(1.0, fmin(n, 2e9));
    snprintf(run->step_tag, sizeof run->step_tag, "-h%d", j + 1);
    snprintf(run->observe, sizeof run->observe, "%s", strncmp(p->error, "error_", 6) ? "" : "all,error");
}
