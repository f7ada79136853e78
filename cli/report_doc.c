/* A report's content (see report_doc.h): its tables built once from the results, and report.md written from
 * them. */
#include "report_doc.h"

#include "nhens/files.h"
#include "nhens/stats.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_config.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

void nh_table_init(nh_table *t, int cols)
{
    *t = (nh_table){.cols = cols};
}

void nh_table_add(nh_table *t, nh_cell_style style, const char *fmt, ...)
{
    if (t->failed)
        return;
    if (t->n == t->cap) {
        const int cap = t->cap ? 2 * t->cap : 64;
        nh_cell *cells = realloc(t->cells, (size_t)cap * sizeof *cells);
        if (!cells) {
            t->failed = 1;
            return;
        }
        t->cells = cells;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    const int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text) {
        t->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
    t->cells[t->n++] = (nh_cell){text, style};
}

int nh_table_rows(const nh_table *t)
{
    return t->cols ? t->n / t->cols : 0;
}

void nh_table_free(nh_table *t)
{
    for (int i = 0; i < t->n; ++i)
        free(t->cells[i].text);
    free(t->cells);
    *t = (nh_table){0};
}

void nh_report_value_text(char *buf, size_t len, double v, double e)
{
    snprintf(buf, len, isfinite(e) && e > 0 ? "%.3g ± %.2g" : "%.3g", v, e);
}

/* The summary value an observer's table column shows: max |value|, or for the event observer its drift
 * (first and last tenth). NAN where the observer does not apply to the system. */
static double observer_value(const cJSON *s, const nh_observer *obs, int last)
{
    char key[96];
    if (!obs->event)
        return nh_report_json_number(s, "extremes", obs->extreme_key);
    snprintf(key, sizeof key, "%s_%s_tenth", obs->name, last ? "last" : "first");
    return nh_report_json_number(s, "extremes", key);
}

/* Columns for the observers that apply to the panel (a finite value in some method's summary), in the
 * order of the observer table. */
static unsigned applicable_observers(const nh_observer_table *observers, cJSON *const *summaries, int n)
{
    unsigned mask = 0;
    for (int o = 0; o < nh_observer_count(observers); ++o)
        for (int k = 0; k < n; ++k)
            if (summaries[k] && isfinite(observer_value(summaries[k], nh_observer_at(observers, o), 0)))
                mask |= 1u << o;
    return mask;
}

static int mask_count(unsigned mask)
{
    int n = 0;
    for (; mask; mask &= mask - 1)
        ++n;
    return n;
}

/* A fit cell "value ± error" ("no fit" without a value, no "±" without an error); p also says when the data do
 * not support the law (summary.json's caveats say why). */
static void fit_cell(nh_table *t, const cJSON *s, const char *key, int slope)
{
    char err_key[64], text[96] = "no fit";
    snprintf(err_key, sizeof err_key, "%s_stderr", key);
    const double v = nh_report_json_number(s, "variance_fit", key), e = nh_report_json_number(s, "variance_fit", err_key);
    if (!isnan(v))
        snprintf(text, sizeof text, slope ? "%.2f" : "%.2e", v);
    if (!isnan(v) && isfinite(e))
        snprintf(text + strlen(text), sizeof text - strlen(text), slope ? " ± %.2f" : " ± %.1e", e);
    const cJSON *supported = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "variance_fit"),
                                                              "supported");
    nh_table_add(t, NH_CELL_TEXT, "%s%s", text,
                 slope && cJSON_IsFalse(supported) ? " (not supported by the data: see caveats)" : "");
}

static void table_row(nh_table *t, const nh_observer_table *observers, const char *method, const cJSON *s,
                      unsigned mask, int fit)
{
    nh_table_add(t, NH_CELL_CODE, "%s", method);
    nh_table_add(t, NH_CELL_TEXT, "%.0f", nh_report_json_number(cJSON_GetObjectItemCaseSensitive(s, "method"), NULL, "order"));
    for (int o = 0; o < nh_observer_count(observers); ++o) {
        const nh_observer *obs = nh_observer_at(observers, o);
        if (!(mask & (1u << o)))
            continue;
        if (obs->event)
            nh_table_add(t, NH_CELL_TEXT, "%.1e → %.1e", observer_value(s, obs, 0), observer_value(s, obs, 1));
        else
            nh_table_add(t, NH_CELL_TEXT, "%.2e", observer_value(s, obs, 0));
    }
    if (fit) {
        fit_cell(t, s, "C", 0);
        fit_cell(t, s, "C_scaled", 0);
        fit_cell(t, s, "p", 1);
    }
    nh_table_add(t, NH_CELL_TEXT, "%.0f", nh_report_json_number(s, "failures", "count"));
    nh_table_add(t, NH_CELL_TEXT, "%.2f", nh_report_json_number(s, "performance", "wall_seconds"));
}

/* A panel's table: a row per method, a column per applicable observer and the variance law's fit. */
static void summary_table(nh_table *t, const char *out, const nh_exp_panel *p)
{
    cJSON *summaries[NH_EXP_MAX_METHODS];
    for (int k = 0; k < p->n_methods; ++k) {
        char dir[NH_PATH_MAX];
        summaries[k] = nh_report_run_dir(out, p, k, dir, sizeof dir, NULL) ? NULL : nh_report_load_summary(dir);
    }
    const unsigned mask = applicable_observers(p->observers, summaries, p->n_methods);
    const int fit = p->ensemble > 1; /* the variance law needs an ensemble */
    nh_table_init(t, 4 + mask_count(mask) + 3 * fit);
    nh_table_add(t, NH_CELL_TEXT, "method");
    nh_table_add(t, NH_CELL_TEXT, "order");
    const nh_observer_table *observers = p->observers;
    for (int o = 0; o < nh_observer_count(observers); ++o) {
        const nh_observer *obs = nh_observer_at(observers, o);
        if (mask & (1u << o))
            nh_table_add(t, NH_CELL_TEXT, obs->event ? "%s drift (first → last tenth)" : "max %s", obs->label);
    }
    if (fit) {
        nh_table_add(t, NH_CELL_TEXT, "C (Var dH ~ a + C t) ± s.e.");
        nh_table_add(t, NH_CELL_TEXT, "C/h^(2r) ± s.e. (r: the order)");
        nh_table_add(t, NH_CELL_TEXT, "p ± s.e.");
    }
    nh_table_add(t, NH_CELL_TEXT, "failures");
    nh_table_add(t, NH_CELL_TEXT, "wall s");
    for (int k = 0; k < p->n_methods; ++k)
        if (summaries[k])
            table_row(t, observers, p->methods[k], summaries[k], mask, fit);
    for (int k = 0; k < p->n_methods; ++k)
        cJSON_Delete(summaries[k]);
}

static void build_panel(nh_report_panel *rp, const char *out, const nh_exp_panel *p)
{
    char steps[160] = "", figure[NH_PATH_MAX];
    for (int j = 0; j < p->n_steps; ++j)
        snprintf(steps + strlen(steps), sizeof steps - strlen(steps), "%s%g", j ? ", " : "", p->steps[j]);
    if (!p->n_steps)
        snprintf(steps, sizeof steps, "%g", p->h);
    rp->panel = p;
    snprintf(rp->setting, sizeof rp->setting, "Methods on %s%s%s%s, %s%s%s, h = %s, T = %g, %ld trajector%s, seed %llu.",
             p->system, p->params[0] ? "(" : "", p->params, p->params[0] ? ")" : "", p->preset[0] ? "preset " : "energy ",
             p->preset[0] ? p->preset : "shell", p->perturb > 0 ? " perturbed" : "", steps, p->T, p->ensemble,
             p->ensemble == 1 ? "y" : "ies", p->seed);
    struct stat st;
    rp->figure = !nh_path_format(figure, sizeof figure, NULL, "%s/%s.png", out, p->name) && stat(figure, &st) == 0 &&
                 S_ISREG(st.st_mode);
    rp->note[0] = '\0';
    if (p->n_steps)
        nh_work_precision_table(&rp->table, rp->note, sizeof rp->note, out, p);
    else
        summary_table(&rp->table, out, p);
}

static const char *verdict(int holds)
{
    return holds > 0 ? "holds" : holds == 0 ? "does not hold" : "not measured";
}

static void claims_table(nh_table *t, const nh_experiment *exp, const nh_claim_result *r)
{
    static const char *const headers[] = {"claim", "source", "measured", "against", "verdict", "ci foil"};
    nh_table_init(t, 6);
    for (int i = 0; i < 6 && exp->n_claims; ++i)
        nh_table_add(t, NH_CELL_TEXT, "%s", headers[i]);
    for (int i = 0; i < exp->n_claims; ++i) {
        char lhs[64], rhs[64];
        nh_report_value_text(lhs, sizeof lhs, r[i].lhs, r[i].lhs_err);
        nh_report_value_text(rhs, sizeof rhs, r[i].rhs, r[i].rhs_err);
        nh_table_add(t, NH_CELL_CODE, "%s", exp->claims[i].text);
        nh_table_add(t, NH_CELL_TEXT, "%s", exp->claims[i].source);
        nh_table_add(t, NH_CELL_TEXT, "%s", lhs);
        nh_table_add(t, NH_CELL_TEXT, "%s", rhs);
        nh_table_add(t, r[i].holds == 0 ? NH_CELL_STRONG : NH_CELL_TEXT, "%s", verdict(r[i].holds));
        if (r[i].foil_holds == -2)
            nh_table_add(t, NH_CELL_TEXT, "—");
        else
            nh_table_add(t, r[i].foil_holds > 0 ? NH_CELL_STRONG : NH_CELL_TEXT, "%.3g vs %.3g: %s", r[i].foil_lhs,
                         r[i].foil_rhs, r[i].foil_holds == 0 ? "fails" : r[i].foil_holds > 0 ? "holds too" : "not measured");
    }
}

/* FNV-1a (64 bits) of a plugin file's bytes: which build of the plugin made the results. */
static void plugin_checksum(nh_report_plugin *pl)
{
    nh_error err;
    size_t size;
    char *bytes = nh_read_file(pl->path, (size_t)1 << 30, &size, &err);
    if (!bytes) {
        snprintf(pl->checksum, sizeof pl->checksum, "unreadable");
        pl->bytes = -1;
        return;
    }
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; ++i)
        h = (h ^ (unsigned char)bytes[i]) * 1099511628211ULL;
    free(bytes);
    snprintf(pl->checksum, sizeof pl->checksum, "fnv1a-64:%016llx", (unsigned long long)h);
    pl->bytes = (long long)size;
}

/* The CPU's model name (/proc/cpuinfo), or "unknown". */
static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            const char *value = strchr(line, ':') + 1;
            value += strspn(value, " \t");
            snprintf(buf, len, "%.*s", (int)strcspn(value, "\n"), value);
            break;
        }
    if (f)
        fclose(f);
}

static void provenance(nh_report_doc *doc)
{
    const nh_experiment *exp = doc->exp;
    snprintf(doc->versions, sizeof doc->versions, "nhens %s (ABI %d), SUNDIALS %s, cJSON %s", nh_version(),
             nh_abi_version(), SUNDIALS_VERSION, cJSON_Version());
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(doc->system, sizeof doc->system, "%s %s %s (%s)", u.sysname, u.release, u.machine, u.version);
    cpu_model(doc->cpu, sizeof doc->cpu);
    const time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc))
        strftime(doc->date, sizeof doc->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    doc->n_plugins = 0;
    for (int i = 0; i < exp->n_plugins; ++i) {
        nh_report_plugin *pl = &doc->plugins[doc->n_plugins];
        const char *name = exp->plugins[i];
        if (name[0] == '/' ? nh_path_format(pl->path, sizeof pl->path, NULL, "%s", name)
                           : nh_path_format(pl->path, sizeof pl->path, NULL, "%s/%s", exp->directory, name))
            continue;
        plugin_checksum(pl);
        ++doc->n_plugins;
    }
}

int nh_report_doc_build(nh_report_doc *doc, const nh_experiment *exp, const char *experiment, const char *out,
                        double scale, int argc, char **argv, const nh_claim_result *claims, nh_error *err)
{
    doc->exp = exp;
    doc->experiment = experiment;
    doc->out = out;
    doc->scale = scale;
    doc->claims = claims;
    doc->command[0] = '\0';
    for (int i = 0; i < argc; ++i)
        snprintf(doc->command + strlen(doc->command), sizeof doc->command - strlen(doc->command), " %s", argv[i]);
    doc->claims_held = 0;
    for (int i = 0; i < exp->n_claims; ++i)
        doc->claims_held += claims[i].holds > 0;
    claims_table(&doc->claims_table, exp, claims);
    int failed = doc->claims_table.failed;
    for (int i = 0; i < exp->n_panels; ++i) {
        build_panel(&doc->panels[i], out, &exp->panels[i]);
        failed |= doc->panels[i].table.failed;
    }
    provenance(doc);
    return failed ? nh_fail(err, NH_ERR_NOMEM, "out of memory for the report's tables") : NH_OK;
}

void nh_report_doc_free(nh_report_doc *doc)
{
    nh_table_free(&doc->claims_table);
    for (int i = 0; i < doc->exp->n_panels; ++i)
        nh_table_free(&doc->panels[i].table);
}

/* A Markdown cell: `code`, **strong** or text, a | inside it escaped. */
static void markdown_cell(FILE *md, const nh_cell *c)
{
    const char *mark = c->style == NH_CELL_CODE ? "`" : c->style == NH_CELL_STRONG ? "**" : "";
    fprintf(md, " %s", mark);
    for (const char *s = c->text; *s; ++s) {
        if (*s == '|')
            fputc('\\', md);
        fputc(*s, md);
    }
    fprintf(md, "%s |", mark);
}

static void markdown_table(FILE *md, const nh_table *t)
{
    for (int r = 0; r < nh_table_rows(t); ++r) {
        fputc('|', md);
        for (int c = 0; c < t->cols; ++c)
            markdown_cell(md, &t->cells[r * t->cols + c]);
        fputc('\n', md);
        for (int c = 0; r == 0 && c < t->cols; ++c)
            fputs(c ? "---|" : "|---|", md);
        fputs(r == 0 ? "\n" : "", md);
    }
}

static void markdown_panel(FILE *md, const nh_report_panel *rp)
{
    const nh_exp_panel *p = rp->panel;
    fprintf(md, "\n### %s\n\n%s\n\n", p->title[0] ? p->title : p->name, rp->setting);
    if (rp->figure)
        fprintf(md, "![%s](%s.png)\n\n", p->name, p->name);
    else
        fputs("*Figure not drawn: gnuplot or the file system failed (the report printed the reason).*\n\n", md);
    if (rp->note[0])
        fprintf(md, "%s\n\n", rp->note);
    markdown_table(md, &rp->table);
}

static int markdown_body(FILE *md, const void *data)
{
    const nh_report_doc *doc = data;
    const nh_experiment *exp = doc->exp;
    fprintf(md, "# %s\n\n", exp->title[0] ? exp->title : doc->experiment);
    if (exp->figure[0])
        fprintf(md, "Reproduces: %s.\n\n", exp->figure);
    if (exp->description[0])
        fprintf(md, "%s\n\n", exp->description);
    if (exp->expect[0])
        fprintf(md, "What the run should show: %s\n\n", exp->expect);
    fputs("The whole report on one page, with the figures and the provenance: [report.html](report.html).\n\n", md);
    if (exp->n_claims) {
        fprintf(md, "## Claims\n\n%d of %d hold. `K*se` is K times the combined standard error of the two sides; a `ci` "
                    "claim's foil (the runs swapped, or `vs` METHOD in place of its method) must fail.\n\n",
                doc->claims_held, exp->n_claims);
        markdown_table(md, &doc->claims_table);
        fputc('\n', md);
    }
    fprintf(md, "Command: `nhens%s` (scale %g); %s.\n", doc->command, doc->scale, doc->versions);
    for (int i = 0; i < exp->n_panels; ++i)
        markdown_panel(md, &doc->panels[i]);
    return ferror(md);
}

int nh_report_write_markdown(const nh_report_doc *doc, nh_error *err)
{
    char path[NH_PATH_MAX];
    if (nh_path_format(path, sizeof path, err, "%s/report.md", doc->out))
        return NH_ERR_INPUT;
    return nh_write_file(path, markdown_body, doc, err);
}
