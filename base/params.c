/* Parsing and validation of named parameters, and the strict number policy every parser of the library and the
 * program uses (see include/nhens/params.h). */
#include "nhens/params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nh_parse_double(const char *text, double *out)
{
    if (!text || !*text || strpbrk(text, "xXpP")) /* decimal only: no hex floats */
        return 1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return 1;
    *out = v;
    return 0;
}

int nh_parse_double_in(const char *text, double min, double max, double *out)
{
    double v;
    if (nh_parse_double(text, &v) || !(v >= min && v <= max))
        return 1;
    *out = v;
    return 0;
}

/* optional sign, then decimal digits only, no leading zero before another digit (no octal look-alike) */
static int decimal_integer_text(const char *text, int allow_sign)
{
    const char *p = text;
    if (allow_sign && (*p == '-' || *p == '+'))
        ++p;
    if (!*p || (p[0] == '0' && p[1] != '\0'))
        return 0;
    for (; *p; ++p)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

int nh_parse_long_in(const char *text, long min, long max, long *out)
{
    if (!text || !decimal_integer_text(text, 1))
        return 1;
    errno = 0;
    long v = strtol(text, NULL, 10);
    if (errno != 0 || v < min || v > max)
        return 1;
    *out = v;
    return 0;
}

int nh_parse_u64(const char *text, uint64_t *out)
{
    if (!text || !decimal_integer_text(text, 0))
        return 1;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno != 0)
        return 1;
    *out = (uint64_t)v;
    return 0;
}

static int valid_param_name(const char *name)
{
    const size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > 31 || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
        return 0;
    for (const char *p = name; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.' || *p == '-'))
            return 0;
    return 1;
}

/* Parameter i's numeric fields: bounds, default, integrality. */
static int check_param_numbers(const nh_param_def *d, int i, const char *owner, nh_error *err)
{
    if (isnan(d->min_value) || isnan(d->max_value) || d->min_value > d->max_value)
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %d '%s' has min_value %g and max_value %g; bounds that are "
                       "numbers (infinite for none) with min <= max are allowed", owner, i + 1, d->name, d->min_value,
                       d->max_value);
    if (!isfinite(d->default_value) || d->default_value < d->min_value || d->default_value > d->max_value ||
        (d->integer && d->default_value != floor(d->default_value)))
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %d '%s' has default_value %g; a finite %s in [%g, %g] is "
                       "allowed", owner, i + 1, d->name, d->default_value, d->integer ? "integer" : "number",
                       d->min_value, d->max_value);
    return NH_OK;
}

int nh_param_defs_check(int count, const nh_param_def *defs, const char *owner, nh_error *err)
{
    for (int i = 0; i < count; ++i) {
        const nh_param_def *d = &defs[i];
        if (!valid_param_name(d->name))
            return nh_fail(err, NH_ERR_INPUT, "%s: parameter %d has %s%.40s%s; a name of 1-31 characters, a letter "
                           "and then [A-Za-z0-9_.-], is allowed", owner, i + 1, d->name ? "the name '" : "no name (NULL)",
                           d->name ? d->name : "", d->name ? "'" : "");
        for (int j = 0; j < i; ++j)
            if (!strcmp(defs[j].name, d->name))
                return nh_fail(err, NH_ERR_INPUT, "%s: parameters %d and %d are both named '%s'", owner, j + 1, i + 1,
                               d->name);
        if (!d->help)
            return nh_fail(err, NH_ERR_INPUT, "%s: parameter %d '%s' has no help text", owner, i + 1, d->name);
        if (d->default_text && strlen(d->default_text) >= NH_PARAM_TEXT_MAX)
            return nh_fail(err, NH_ERR_INPUT, "%s: parameter %d '%s' has a default_text of %zu characters; at most "
                           "%d are allowed", owner, i + 1, d->name, strlen(d->default_text), NH_PARAM_TEXT_MAX - 1);
        if (!d->default_text && check_param_numbers(d, i, owner, err))
            return NH_ERR_INPUT;
    }
    return NH_OK;
}

void nh_params_defaults(nh_param_set *set, int count, const nh_param_def *defs)
{
    memset(set, 0, sizeof *set);
    set->count = count;
    set->defs = defs;
    for (int i = 0; i < count; ++i) {
        set->value[i] = defs[i].default_value;
        if (defs[i].default_text)
            snprintf(set->text[i], sizeof set->text[i], "%s", defs[i].default_text);
    }
}

int nh_params_find(const nh_param_set *set, const char *name)
{
    for (int i = 0; i < set->count; ++i)
        if (strcmp(set->defs[i].name, name) == 0)
            return i;
    return -1;
}

static void list_names(const nh_param_set *set, char *buf, size_t len)
{
    buf[0] = '\0';
    if (set->count == 0) {
        snprintf(buf, len, "none");
        return;
    }
    const char *names[NH_MAX_PARAMS];
    for (int i = 0; i < set->count; ++i)
        names[i] = set->defs[i].name;
    nh_join_names(names, set->count, buf, len);
}

static int check_range(const nh_param_def *def, double v, const char *owner, nh_error *err)
{
    if (def->integer && v != floor(v))
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %s=%g must be an integer in [%g, %g]",
                       owner, def->name, v, def->min_value, def->max_value);
    if (v < def->min_value || v > def->max_value)
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %s=%g is out of range; allowed [%g, %g] (%s)",
                       owner, def->name, v, def->min_value, def->max_value, def->help);
    return NH_OK;
}

int nh_params_apply(nh_param_set *set, const char *assignment, const char *owner, nh_error *err)
{
    char name[64];
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof name)
        return nh_fail(err, NH_ERR_INPUT, "%s: '%s' is not of the form name=value", owner, assignment);
    memcpy(name, assignment, (size_t)(eq - assignment));
    name[eq - assignment] = '\0';
    int idx = nh_params_find(set, name);
    if (idx < 0) {
        char names[256];
        list_names(set, names, sizeof names);
        return nh_fail(err, NH_ERR_INPUT, "%s has no parameter '%s'; its parameters are: %s", owner, name, names);
    }
    if (set->explicit_mask & (1u << idx))
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %s given twice", owner, name);
    if (set->defs[idx].default_text) {
        if (strlen(eq + 1) >= sizeof set->text[idx] || eq[1] == '\0')
            return nh_fail(err, NH_ERR_INPUT, "%s: parameter %s needs a value of 1 to %d characters", owner, name,
                           NH_PARAM_TEXT_MAX - 1);
        strcpy(set->text[idx], eq + 1);
        set->explicit_mask |= 1u << idx;
        return NH_OK;
    }
    double v;
    if (nh_parse_double(eq + 1, &v))
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter %s: '%s' is not a finite number", owner, name, eq + 1);
    int rc = check_range(&set->defs[idx], v, owner, err);
    if (rc)
        return rc;
    set->value[idx] = v;
    set->explicit_mask |= 1u << idx;
    return NH_OK;
}

int nh_params_apply_list(nh_param_set *set, const char *list, const char *owner, nh_error *err)
{
    char buf[512];
    if (!list || !*list)
        return NH_OK;
    if (strlen(list) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "%s: parameter list too long", owner);
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int rc = nh_params_apply(set, tok, owner, err);
        if (rc)
            return rc;
    }
    return NH_OK;
}

/* Shortest of %.15g / %.17g that reads back as the same double. */
static void format_exact(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, len, "%.17g", v);
}

void nh_params_format(const nh_param_set *set, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < set->count && used < len; ++i) {
        char value[NH_PARAM_TEXT_MAX];
        if (set->defs[i].default_text)
            snprintf(value, sizeof value, "%s", set->text[i]);
        else
            format_exact(set->value[i], value, sizeof value);
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "", set->defs[i].name, value);
    }
}
