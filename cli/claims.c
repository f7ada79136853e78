/* Claims of experiment files: parsing (`claim = PANEL/METHOD:METRIC OP RHS [+|- K*se] | SOURCE [| ci [vs FOIL]]`),
 * checking that they name panels, methods and metrics that exist, and evaluating them (and the foils of ci
 * claims) against the runs' results. A metric is a number of summary.json: a key of "extremes" (dH_absmax,
 * rel_energy_absmax, constraint_max, latitude_last_tenth, ...), of "variance_fit" (C, C_over_h4, a, p, with
 * their standard errors), of "global_error" (error_final, error_final_max), of "performance" (ns_per_step), of
 * "work_precision" (error_order: the slope of a work-precision panel's error against h, least squares over its
 * step sizes), or "failures"; or a trend metric of timeseries.csv, FUNC(COLUMN[,FROM[,TO]]) (cli/trend.c). A
 * claim on a work-precision panel reads the run of its smallest step size. `K*se` is K times the combined
 * standard error sqrt(se_lhs^2 + se_rhs^2) (an error the summary does not give counts as 0; with neither side's
 * error the claim is not measured). A claim never runs anything: it compares numbers. */
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

static int summary_metric(const char *name)
{
    for (int i = 0; i < N_METRICS; ++i)
        if (!strcmp(METRICS[i], name))
            return 1;
    return 0;
}

int nh_claim_metric_known(const char *name)
{
    nh_error err;
    return summary_metric(name) || (strchr(name, '(') && !nh_trend_metric_check(name, &err));
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
    if (strchr(ref->metric, '('))
        return nh_trend_metric_check(ref->metric, err);
    if (!summary_metric(ref->metric))
        return nh_fail(err, NH_ERR_INPUT, "unknown metric '%s'; known: dH_absmax, rel_energy_absmax, constraint_max, "
                                          "driver_energy_absmax, passenger_energy_absmax, latitude_absmax, "
                                          "latitude_first_tenth, latitude_last_tenth, final_dH_var, C, C_over_h4, "
                                          "C_scaled, a, p, failures, error_final, error_final_max, ns_per_step, "
                                          "error_order, or slope(COLUMN), growth(COLUMN), loglog(COLUMN)", ref->metric);
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

/* A trailing `[+|-] K*se` of text: cut off, K (signed) into c->se_factor. */
static int parse_se_margin(char *text, nh_claim *c, nh_error *err)
{
    size_t len = strlen(text);
    if (len < 3 || strcmp(text + len - 3, "*se"))
        return NH_OK;
    text[len - 3] = '\0';
    char *k = text + len - 3;
    while (k > text && (strchr("0123456789.eE", k[-1]) || ((k[-1] == '+' || k[-1] == '-') && k - 1 > text &&
                                                           (k[-2] == 'e' || k[-2] == 'E'))))
        --k;
    double factor;
    if (nh_parse_double(k, &factor) || !(factor >= 0))
        return nh_fail(err, NH_ERR_INPUT, "'%.40s*se' needs a number K >= 0 before *se", k);
    *k = '\0';
    trim(text);
    len = strlen(text);
    const int sign = len && text[len - 1] == '-' ? -1 : 1;
    if (len && (text[len - 1] == '+' || text[len - 1] == '-'))
        text[--len] = '\0';
    else if (len)
        return nh_fail(err, NH_ERR_INPUT, "'%.60s ...*se': the margin is added with + or -", text);
    c->se_factor = sign * factor;
    c->has_se = 1;
    return NH_OK;
}

/* PANEL/METHOD:METRIC, or a trend metric alone: the left-hand side's run */
static int parse_rhs_ref(char *text, nh_claim *c, nh_error *err)
{
    trim(text);
    if (strchr(text, '/') || !strchr(text, '('))
        return parse_ref(text, &c->rhs, err);
    if (strlen(text) >= sizeof c->rhs.metric)
        return nh_fail(err, NH_ERR_INPUT, "the metric '%.80s' is too long", text);
    c->rhs = c->lhs;
    strcpy(c->rhs.metric, text);
    return nh_trend_metric_check(text, err);
}

/* RHS: NUMBER, NUMBER*REF or REF (REF: PANEL/METHOD:METRIC, or a trend metric of the left-hand side's run), then
 * optionally [+|-] K*se; or K*se alone */
static int parse_rhs(char *text, nh_claim *c, nh_error *err)
{
    trim(text);
    if (parse_se_margin(text, c, err))
        return NH_ERR_INPUT;
    trim(text);
    if (c->has_se && !text[0]) {
        c->factor = 0.0;
        return NH_OK;
    }
    if ((strchr(text, '/') || strchr(text, '(')) && !strchr(text, '*')) {
        c->factor = 1.0;
        return parse_rhs_ref(text, c, err);
    }
    char *star = strchr(text, '*');
    if (star)
        *star = '\0';
    trim(text);
    if (nh_parse_double(text, &c->factor))
        return nh_fail(err, NH_ERR_INPUT, "'%.80s' is not a finite number", text);
    return star ? parse_rhs_ref(star + 1, c, err) : NH_OK;
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

static int same_run(const nh_claim_ref *a, const nh_claim_ref *b)
{
    return !strcmp(a->panel, b->panel) && !strcmp(a->method, b->method);
}

/* The third field: `ci` or `ci vs FOIL`. */
static int parse_ci(char *text, nh_claim *c, nh_error *err)
{
    trim(text);
    if (strncmp(text, "ci", 2) || (text[2] && text[2] != ' ' && text[2] != '\t'))
        return nh_fail(err, NH_ERR_INPUT, "key claim: the third field may only be 'ci' or 'ci vs METHOD' (got '%.40s')",
                       text);
    c->ci = 1;
    char *rest = text + 2;
    trim(rest);
    if (!rest[0])
        return NH_OK;
    if (strncmp(rest, "vs", 2) || (rest[2] != ' ' && rest[2] != '\t'))
        return nh_fail(err, NH_ERR_INPUT, "key claim: after 'ci' only 'vs METHOD' may follow (got '%.40s')", rest);
    rest += 2;
    trim(rest);
    if (!rest[0] || strlen(rest) >= sizeof c->foil)
        return nh_fail(err, NH_ERR_INPUT, "key claim: 'ci vs' needs a method name");
    strcpy(c->foil, rest);
    return NH_OK;
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
        if (parse_ci(flag + 1, c, err))
            return NH_ERR_INPUT;
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
    if (c->ci && !c->foil[0] && (!c->rhs.metric[0] || same_run(&c->lhs, &c->rhs)))
        return nh_fail(err, NH_ERR_INPUT, "key claim: '%.80s' is marked ci but compares one run: name its foil, "
                                          "'| ci vs METHOD' (a method of the panel for which it must not hold)", c->text);
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

/* The claim a ci claim must fail: METHOD replaced by its foil (in both runs when they are one), or the two
 * runs swapped. */
static void claim_foil(const nh_claim *c, nh_claim *foil)
{
    *foil = *c;
    if (!c->foil[0]) {
        foil->lhs = c->rhs;
        foil->rhs = c->lhs;
        snprintf(foil->lhs.metric, sizeof foil->lhs.metric, "%s", c->lhs.metric);
        snprintf(foil->rhs.metric, sizeof foil->rhs.metric, "%s", c->rhs.metric);
        return;
    }
    if (c->rhs.metric[0] && same_run(&c->lhs, &c->rhs))
        snprintf(foil->rhs.method, sizeof foil->rhs.method, "%s", c->foil);
    snprintf(foil->lhs.method, sizeof foil->lhs.method, "%s", c->foil);
}

int nh_claims_check(const char *path, const nh_experiment *exp, nh_error *err)
{
    for (int i = 0; i < exp->n_claims; ++i) {
        const nh_claim *c = &exp->claims[i];
        nh_error why;
        nh_claim foil;
        claim_foil(c, &foil);
        if (check_ref(exp, &c->lhs, &why) || (c->rhs.metric[0] && check_ref(exp, &c->rhs, &why)) ||
            (c->ci && check_ref(exp, &foil.lhs, &why)))
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

static double ref_value(const nh_experiment *exp, const nh_claim_ref *r, const nh_claim_source *src, double *err)
{
    const nh_exp_panel *p = find_panel(exp, r->panel);
    *err = NAN;
    if (!p)
        return NAN;
    const int k = method_index(p, r->method);
    if (strchr(r->metric, '(')) {
        char dir[NH_PATH_MAX];
        return src->run_dir(p, k, src->ctx, dir, sizeof dir) ? NAN : nh_trend_metric_value(dir, r->metric, err);
    }
    cJSON *summary = src->summary(p, k, src->ctx);
    double v = summary ? nh_claim_metric_value(summary, r->metric, err) : NAN;
    cJSON_Delete(summary);
    return v;
}

/* sqrt(a^2 + b^2) over the finite ones; NAN when neither is. */
static double combined_error(double a, double b)
{
    if (!isfinite(a) && !isfinite(b))
        return NAN;
    return hypot(isfinite(a) ? a : 0.0, isfinite(b) ? b : 0.0);
}

/* One claim's sides (rhs: the threshold, margin included); 1, 0, or -1 when a number is missing. */
static int evaluate_sides(const nh_experiment *exp, const nh_claim *c, const nh_claim_source *src, double *lhs,
                          double *lhs_err, double *rhs, double *rhs_err)
{
    double ref_err = NAN;
    *lhs = ref_value(exp, &c->lhs, src, lhs_err);
    *rhs = c->rhs.metric[0] ? c->factor * ref_value(exp, &c->rhs, src, &ref_err) : c->factor;
    *rhs_err = fabs(c->factor) * ref_err;
    if (c->has_se)
        *rhs += c->se_factor * combined_error(*lhs_err, *rhs_err);
    const double l = *lhs, r = *rhs;
    return !isfinite(l) || !isfinite(r) ? -1
           : c->op[0] == '<'            ? (c->op[1] ? l <= r : l < r)
                                        : (c->op[1] ? l >= r : l > r);
}

void nh_claim_evaluate(const nh_experiment *exp, const nh_claim *c, const nh_claim_source *src, nh_claim_result *out)
{
    out->holds = evaluate_sides(exp, c, src, &out->lhs, &out->lhs_err, &out->rhs, &out->rhs_err);
    out->foil_lhs = out->foil_rhs = NAN;
    out->foil_holds = -2;
    if (c->ci) {
        nh_claim foil;
        double e1, e2;
        claim_foil(c, &foil);
        out->foil_holds = evaluate_sides(exp, &foil, src, &out->foil_lhs, &e1, &out->foil_rhs, &e2);
    }
}

int nh_claim_discriminates(const nh_claim_result *r)
{
    return r->holds > 0 && r->foil_holds == 0;
}
