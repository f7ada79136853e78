/* Per-trajectory reductions (include/nhens/ensemble.h): the grammar of --reduce into the columns of a
 * trajectory row, and a finished trajectory's record into its row. The row reads the values the statistics
 * read, at the output rows the trajectory reached, so it is the same for any threads, lanes, ranks or shards. */
#include "ensemble_internal.h"
#include "nhens/registry.h"
#include "run_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDUCE_FORMS "final, max:OBS, min:OBS, first:OBS<X, first:OBS<=X, first:OBS>X or first:OBS>=X (OBS an " \
                     "observer, or |OBS| its absolute value; X a number)"

static int refuse(const char *term, size_t len, const char *why, nh_error *err)
{
    return nh_fail(err, NH_ERR_INPUT, "--reduce term '%.*s': %s; a term is %s", (int)(len < 200 ? len : 200), term,
                   why, REDUCE_FORMS);
}

static int add_column(nh_reduction *out, int *n, const nh_reduction *r, const char *term, size_t len, nh_error *err)
{
    if (*n == NH_MAX_REDUCTIONS) {
        char why[64];
        snprintf(why, sizeof why, "more than %d columns in all", NH_MAX_REDUCTIONS);
        return refuse(term, len, why, err);
    }
    out[(*n)++] = *r;
    return NH_OK;
}

/* final: q_1 .. q_n, v_1 .. v_n. */
static int add_final(int n_coords, nh_reduction *out, int *n, const char *term, size_t len, nh_error *err)
{
    for (int v = 0; v < 2; ++v)
        for (int i = 0; i < n_coords; ++i) {
            nh_reduction r = {.kind = v ? NH_REDUCE_FINAL_V : NH_REDUCE_FINAL_Q, .index = v * n_coords + i};
            snprintf(r.name, sizeof r.name, "%c_%d", v ? 'v' : 'q', i + 1);
            if (add_column(out, n, &r, term, len, err))
                return NH_ERR_INPUT;
        }
    return NH_OK;
}

/* The rows of observer word w[0..len) in t (a row's name, or a plugin observer's for all its components). */
static unsigned observer_rows(const nh_observer_table *t, const char *w, size_t len)
{
    unsigned rows = 0;
    for (int i = 0; i < nh_observer_count(t); ++i) {
        const nh_observer *o = nh_observer_at(t, i);
        const char *group = o->plugin ? o->plugin->name : o->name;
        if ((strlen(o->name) == len && !strncmp(o->name, w, len)) || (strlen(group) == len && !strncmp(group, w, len)))
            rows |= 1u << i;
    }
    return rows;
}

/* The comparison at s: its test and its length (0: none). */
static int comparison(const char *s, nh_reduction_test *test)
{
    if (s[0] == '<')
        return *test = s[1] == '=' ? NH_TEST_AT_MOST : NH_TEST_BELOW, 1 + (s[1] == '=');
    if (s[0] == '>')
        return *test = s[1] == '=' ? NH_TEST_AT_LEAST : NH_TEST_ABOVE, 1 + (s[1] == '=');
    return 0;
}

/* max:OBS, min:OBS, first:OBS<X: one column per row of OBS. */
static int add_observed(const nh_observer_table *t, unsigned mask, nh_reduction_kind kind, const char *term,
                        size_t len, nh_reduction *out, int *n, nh_error *err)
{
    const char *colon = memchr(term, ':', len), *end = term + len, *w = colon + 1;
    nh_reduction r = {.kind = kind};
    if ((r.absolute = w < end && *w == '|'))
        ++w;
    size_t wlen = strcspn(w, "|<>,");
    if (w + wlen > end)
        wlen = (size_t)(end - w);
    const char *after = w + wlen;
    if (r.absolute && (after >= end || *after++ != '|'))
        return refuse(term, len, "an opening '|' without its closing one", err);
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(wlen < 63 ? wlen : 63), w);
    const unsigned rows = observer_rows(t, w, wlen);
    if (!rows) {
        char msg[256];
        snprintf(msg, sizeof msg, "'%s' is no observer (nhens list observers)", word);
        return refuse(term, len, msg, err);
    }
    if (rows & (1u << nh_observer_event()))
        return refuse(term, len, "the latitude is sampled at section crossings, not at the output rows", err);
    if ((rows & mask) != rows) {
        char msg[256];
        snprintf(msg, sizeof msg, "observer '%s' is not recorded in this run (add it to --observe, or it does not "
                 "apply to the system)", word);
        return refuse(term, len, msg, err);
    }
    int op = 0;
    if (kind == NH_REDUCE_FIRST) {
        char *num_end;
        op = after < end ? comparison(after, &r.test) : 0;
        if (!op)
            return refuse(term, len, "first: needs a condition <, <=, > or >= and a number", err);
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)((size_t)(end - after - op) < 63 ? (size_t)(end - after - op) : 63),
                 after + op);
        r.threshold = strtod(num, &num_end);
        if (!num[0] || *num_end || !isfinite(r.threshold))
            return refuse(term, len, "the condition's threshold is no finite number", err);
    } else if (after != end) {
        return refuse(term, len, "max: and min: take an observer and nothing after it", err);
    }
    const char *cond = after;
    const size_t cond_len = kind == NH_REDUCE_FIRST ? (size_t)(end - after) : 0;
    const char *prefix = kind == NH_REDUCE_MAX ? "max" : kind == NH_REDUCE_MIN ? "min" : "first";
    for (int i = 0; i < nh_observer_count(t); ++i)
        if (rows & (1u << i)) {
            const char *name = nh_observer_at(t, i)->name;
            r.index = i;
            snprintf(r.name, sizeof r.name, r.absolute ? "%s:|%s|%.*s" : "%s:%s%.*s", prefix, name, (int)cond_len, cond);
            if (add_column(out, n, &r, term, len, err))
                return NH_ERR_INPUT;
        }
    return NH_OK;
}

static int parse_term(const nh_observer_table *t, unsigned mask, int n_coords, const char *term, size_t len,
                      nh_reduction *out, int *n, nh_error *err)
{
    if (len == 5 && !strncmp(term, "final", 5))
        return add_final(n_coords, out, n, term, len, err);
    static const struct { const char *prefix; nh_reduction_kind kind; } forms[] = {
        {"max:", NH_REDUCE_MAX}, {"min:", NH_REDUCE_MIN}, {"first:", NH_REDUCE_FIRST}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; ++f)
        if (len > strlen(forms[f].prefix) && !strncmp(term, forms[f].prefix, strlen(forms[f].prefix)))
            return add_observed(t, mask, forms[f].kind, term, len, out, n, err);
    return refuse(term, len, len ? "not a known form" : "an empty term", err);
}

int nh_reductions_parse(const nh_observer_table *t, unsigned mask, int n_coords, const char *text, nh_reduction *out,
                        int *n_out, nh_error *err)
{
    *n_out = 0;
    if (!text || !*text)
        return NH_OK;
    for (const char *p = text;; ++p) {
        const size_t len = strcspn(p, ",");
        if (parse_term(t, mask, n_coords, p, len, out, n_out, err))
            return NH_ERR_INPUT;
        for (int i = 0; i < *n_out - 1; ++i)
            if (!strcmp(out[i].name, out[*n_out - 1].name))
                return refuse(p, len, "a column given twice", err);
        p += len;
        if (!*p)
            return NH_OK;
    }
}

static int holds(const nh_reduction *r, double x)
{
    switch (r->test) {
    case NH_TEST_BELOW: return x < r->threshold;
    case NH_TEST_AT_MOST: return x <= r->threshold;
    case NH_TEST_ABOVE: return x > r->threshold;
    case NH_TEST_AT_LEAST: return x >= r->threshold;
    }
    return 0;
}

/* Reduction r over the record's rows (values n_obs per row); output times `time`. */
static double reduce_rows(const nh_reduction *r, const trajectory_record *rec, int n_obs, const double *time)
{
    double result = NAN;
    for (long k = 0; k < rec->rows; ++k) {
        const double raw = rec->values[k * n_obs + r->index], x = r->absolute ? fabs(raw) : raw;
        if (r->kind == NH_REDUCE_FIRST && holds(r, x))
            return time[k];
        if (r->kind == NH_REDUCE_MAX && !(x <= result))
            result = x;
        if (r->kind == NH_REDUCE_MIN && !(x >= result))
            result = x;
    }
    return result;
}

void nh_trajectory_row(const nh_run_result *run, const trajectory_record *rec, double *row)
{
    const int complete = !rec->failed && rec->rows == run->n_out;
    row[0] = (double)rec->index;
    row[1] = rec->failed;
    row[2] = rec->failed ? rec->failure.time : NAN;
    row[3] = rec->failed ? rec->failure.status : 0;
    for (int j = 0; j < run->n_reductions; ++j) {
        const nh_reduction *r = &run->reductions[j];
        double *cell = &row[NH_TRAJECTORY_FIXED_COLUMNS + j];
        if (r->kind == NH_REDUCE_FINAL_Q || r->kind == NH_REDUCE_FINAL_V)
            *cell = complete ? rec->final_state[r->index] : NAN;
        else
            *cell = reduce_rows(r, rec, run->n_observers, run->time);
    }
}

nh_observer_table *nh_registry_observer_table(const nh_registry *reg, nh_error *err)
{
    const nh_observer_type *types[NH_MAX_OBSERVERS];
    int n_types = 0;
    for (int i = 0; i < nh_registry_observer_count(reg) && n_types < NH_MAX_OBSERVERS; ++i)
        types[n_types++] = nh_registry_observer_at(reg, i);
    return nh_observer_table_create(types, n_types, err);
}

nh_observer_table *nh_run_observer_table(const nh_run_config *cfg, unsigned *mask, nh_error *err)
{
    nh_observer_table *t = nh_registry_observer_table(cfg->registry, err);
    unsigned selected;
    if (t && nh_observer_select(t, cfg->observe, &selected, err)) {
        nh_observer_table_free(t);
        return NULL;
    }
    if (t)
        *mask = nh_observer_mask(t, cfg->system) & selected;
    return t;
}

int nh_run_reductions(const nh_run_config *cfg, const nh_observer_table *t, unsigned mask, nh_reduction **out,
                      int *n, nh_error *err)
{
    *out = NULL;
    *n = 0;
    if (!cfg->reduce || !*cfg->reduce)
        return NH_OK;
    if (!(*out = malloc(NH_MAX_REDUCTIONS * sizeof **out)))
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for the reductions");
    const int rc = nh_reductions_parse(t, mask, cfg->system->n, cfg->reduce, *out, n, err);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
