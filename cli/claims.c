/* Claims of experiment files: parsing (`claim = PANEL/METHOD:METRIC OP RHS | SOURCE [| ci]`), checking
 * that they name panels, methods and metrics that exist, and evaluating them against the runs'
 * summary.json files. A metric is a number of summary.json: a key of "extremes" (dH_absmax,
 * rel_energy_absmax, constraint_max, latitude_last_tenth, ...), of "variance_fit" (C, C_over_h4, a, p,
 * with their standard errors), of "global_error" (error_final, error_final_max), of "performance"
 * (ns_per_step), of "work_precision" (error_order: the slope of a work-precision panel's error against h,
 * least squares over its step sizes), or "failures". A claim on a work-precision panel reads the run of its
 * smallest step size. A claim never runs anything: it compares numbers. */
#include "experiment.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nhens/params.h"

static const char *const METRICS[] = {"dH_absmax", "rel_energy_absmax", "constraint_max", "driver_energy_absmax",
                                      "passenger_energy_absmax", "latitude_absmax", "latitude_first_tenth",
                                      "latitude_last_tenth", "final_dH_var", "C", "C_over_h4", "C_scaled", "a", "p",
                                      "failures", "error_final", "error_final_max", "ns_per_step", "error_order"};
enum { N_METRICS = sizeof METRICS / sizeof METRICS[0] };

int nh_claim_metric_known(const char *name)
{
    for (int i = 0; i < N_METRICS; ++i)
        if (!strcmp(METRICS[i], name))
            return 1;
    return 0;
}

static void trim(char *s)
{
    size_t start = strspn(s, " \t"), len = strlen(s);
    while (len > start && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        s[--len] = '\0';
    memmove(s, s + start, len - start + 1);
}

/* PANEL/METHOD:METRIC (methods may hold '/', ':' and ','; the panel ends at the first '/', the metric
 * starts after the last ':') */
static int parse_ref(char *text, nh_claim_ref *ref, nh_error *err)
{
    trim(text);
    char *slash = strchr(text, '/'), *colon = strrchr(text, ':');
    if (!slash || !colon || colon < slash || slash == text || colon == slash + 1 || !colon[1])
        return nh_fail(err, NH_ERR_INPUT, "'%.80s' must be PANEL/METHOD:METRIC", text);
    *slash = *colon = '\0';
    if (strlen(text) >= sizeof ref->panel || strlen(slash + 1) >= sizeof ref->method ||
        strlen(colon + 1) >= sizeof ref->metric)
        return nh_fail(err, NH_ERR_INPUT, "a name in '%.80s' is too long", text);
    strcpy(ref->panel, text);
    strcpy(ref->method, slash + 1);
    strcpy(ref->metric, colon + 1);
    if (!nh_claim_metric_known(ref->metric))
        return nh_fail(err, NH_ERR_INPUT, "unknown metric '%s'; known: dH_absmax, rel_energy_absmax, constraint_max, "
                                          "driver_energy_absmax, passenger_energy_absmax, latitude_absmax, "
                                          "latitude_first_tenth, latitude_last_tenth, final_dH_var, C, C_over_h4, "
                                          "C_scaled, a, p, failures, error_final, error_final_max, ns_per_step, "
                                          "error_order", ref->metric);
    return NH_OK;
}

/* The measures a work-precision panel can plot against cost: the claim metrics that are errors. */
int nh_work_precision_metric(const char *metric)
{
    static const char *const errors[] = {"error_final", "error_final_max", "dH_absmax", "rel_energy_absmax",
                                         "constraint_max", "latitude_last_tenth", "passenger_energy_absmax",
                                         "C_over_h4"};
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; ++i)
        if (!strcmp(errors[i], metric))
            return 1;
    return 0;
}

/* RHS: NUMBER, NUMBER*PANEL/METHOD:METRIC or PANEL/METHOD:METRIC */
static int parse_rhs(char *text, nh_claim *c, nh_error *err)
{
    trim(text);
    if (strchr(text, '/') && !strchr(text, '*')) {
        c->factor = 1.0;
        return parse_ref(text, &c->rhs, err);
    }
    char *star = strchr(text, '*');
    if (star)
        *star = '\0';
    trim(text);
    if (nh_parse_double(text, &c->factor))
        return nh_fail(err, NH_ERR_INPUT, "'%.80s' is not a finite number", text);
    return star ? parse_ref(star + 1, &c->rhs, err) : NH_OK;
}

static char *find_operator(char *text, char op[3])
{
    for (char *p = text; *p; ++p)
        if (*p == '<' || *p == '>') {
            op[0] = *p;
            op[1] = p[1] == '=' ? '=' : '\0';
            op[2] = '\0';
            return p;
        }
    return NULL;
}

int nh_claim_parse(const char *value, nh_claim *c, nh_error *err)
{
    char buf[400];
    memset(c, 0, sizeof *c);
    if (strlen(value) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "key claim: the text is too long");
    strcpy(buf, value);
    char *bar = strchr(buf, '|'), *flag = bar ? strchr(bar + 1, '|') : NULL;
    if (!bar)
        return nh_fail(err, NH_ERR_INPUT, "key claim: '%.80s' needs '| SOURCE' (where the paper says it)", value);
    *bar = '\0';
    if (flag) {
        *flag = '\0';
        trim(flag + 1);
        if (strcmp(flag + 1, "ci"))
            return nh_fail(err, NH_ERR_INPUT, "key claim: the third field may only be 'ci' (got '%.40s')", flag + 1);
        c->ci = 1;
    }
    snprintf(c->source, sizeof c->source, "%s", bar + 1);
    trim(c->source);
    snprintf(c->text, sizeof c->text, "%s", buf);
    trim(c->text);
    char *op = find_operator(buf, c->op);
    if (!op)
        return nh_fail(err, NH_ERR_INPUT, "key claim: '%.80s' needs a comparison <, <=, > or >=", c->text);
    char *rhs = op + strlen(c->op);
    *op = '\0';
    nh_error why;
    if (parse_ref(buf, &c->lhs, &why) || parse_rhs(rhs, c, &why))
        return nh_fail(err, NH_ERR_INPUT, "key claim: %s", why.msg);
    return NH_OK;
}

static const nh_exp_panel *find_panel(const nh_experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_panels; ++i)
        if (!strcmp(exp->panels[i].name, name))
            return &exp->panels[i];
    return NULL;
}

static int method_index(const nh_exp_panel *p, const char *method)
{
    for (int k = 0; k < p->n_methods; ++k)
        if (!strcmp(p->methods[k], method))
            return k;
    return -1;
}

static int check_ref(const nh_experiment *exp, const nh_claim_ref *r, nh_error *err)
{
    const nh_exp_panel *p = find_panel(exp, r->panel);
    if (!p)
        return nh_fail(err, NH_ERR_INPUT, "claim names panel '%s', which the file does not have", r->panel);
    if (method_index(p, r->method) < 0)
        return nh_fail(err, NH_ERR_INPUT, "claim names method '%s', which panel '%s' does not run", r->method, r->panel);
    return NH_OK;
}

int nh_claims_check(const char *path, const nh_experiment *exp, nh_error *err)
{
    for (int i = 0; i < exp->n_claims; ++i) {
        const nh_claim *c = &exp->claims[i];
        nh_error why;
        if (check_ref(exp, &c->lhs, &why) || (c->rhs.metric[0] && check_ref(exp, &c->rhs, &why)))
            return nh_fail(err, NH_ERR_INPUT, "%s:%d: %s", path, c->line, why.msg);
    }
    return NH_OK;
}

/* value (and standard error, NAN if none) of a metric in a summary */
double nh_claim_metric_value(const cJSON *summary, const char *metric, double *stderr_out)
{
    char key[96];
    *stderr_out = NAN;
    const char *objects[] = {"extremes", "variance_fit", "global_error", "performance", "work_precision"};
    if (!strcmp(metric, "failures")) {
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(summary, "failures"), "count");
        return cJSON_IsNumber(count) ? count->valuedouble : NAN;
    }
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; ++i) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(summary, objects[i]);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, metric);
        if (!cJSON_IsNumber(v))
            continue;
        snprintf(key, sizeof key, "%s_stderr", metric);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, key);
        *stderr_out = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        return v->valuedouble;
    }
    return NAN;
}

static double ref_value(const nh_experiment *exp, const nh_claim_ref *r, nh_claim_summary_fn load, void *ctx,
                        double *err)
{
    const nh_exp_panel *p = find_panel(exp, r->panel);
    cJSON *summary = p ? load(p, method_index(p, r->method), ctx) : NULL;
    double v = summary ? nh_claim_metric_value(summary, r->metric, err) : (*err = NAN, NAN);
    cJSON_Delete(summary);
    return v;
}

void nh_claim_evaluate(const nh_experiment *exp, const nh_claim *c, nh_claim_summary_fn load, void *ctx,
                       nh_claim_result *out)
{
    double rhs_err = NAN;
    out->lhs = ref_value(exp, &c->lhs, load, ctx, &out->lhs_err);
    out->rhs = c->rhs.metric[0] ? c->factor * ref_value(exp, &c->rhs, load, ctx, &rhs_err) : c->factor;
    out->rhs_err = c->factor * rhs_err;
    const double l = out->lhs, r = out->rhs;
    out->holds = !isfinite(l) || !isfinite(r) ? -1
                 : c->op[0] == '<'            ? (c->op[1] ? l <= r : l < r)
                                              : (c->op[1] ? l >= r : l > r);
}
