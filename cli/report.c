/* `nhens report EXPERIMENT [--out DIR] [--scale F] [--threads K]` (see experiment.h). Results of each
 * (panel, method) run live in DIR/PANEL/NN-METHOD/ with a config.hash; a later report with the same
 * configuration reuses them. Figures are drawn by gnuplot from the CSV files (cli/report_figure.c); report.md
 * and report.html are written from one gathering of the results (cli/report_doc.c, cli/report_html.c). */
#include "cli.h"
#include "experiment.h"
#include "report_doc.h"

#include "nhens/ensemble.h"
#include "nhens/output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_config.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct report_options {
    const char *experiment, *out, *solver;
    int allow_plugins, check_claims, dry_run, ci, quiet;
    double scale;
    long threads;
    nh_solver_kind solver_kind;
    uint64_t seen;
} report_options;

static const nh_option REPORT_OPTIONS[] = {
    {"out", NH_OPTION_STRING, offsetof(report_options, out), 0, 0, "DIR",
     "output folder (default results/FOLDER/NAME: the experiment file's folder and name)", 0, 0},
    {"scale", NH_OPTION_DOUBLE, offsetof(report_options, scale), 1e-6, 1, "F",
     "scale horizons and ensembles by F (default 1)", 0, 0},
    {"threads", NH_OPTION_LONG, offsetof(report_options, threads), 1, 1024, "K", "OpenMP threads (default: the cores)", 0, 0},
    {"solver", NH_OPTION_STRING, offsetof(report_options, solver), 0, 0, "kinsol|newton",
     "nonlinear solver (default " NH_CLI_DEFAULT_SOLVER ")", 0, 0},
    {"allow-plugins", NH_OPTION_FLAG, offsetof(report_options, allow_plugins), 0, 0, NULL,
     "honour the experiment's plugin keys (they load and run code; refused otherwise)", 0, 0},
    {"dry-run", NH_OPTION_FLAG, offsetof(report_options, dry_run), 0, 0, NULL,
     "check the whole file (every panel and method at this scale), print the plan, run nothing", 0, 0},
    {"check-claims", NH_OPTION_FLAG, offsetof(report_options, check_claims), 0, 0, NULL,
     "exit 4 when a claim marked ci does not hold or its foil holds too (every claim is reported either way)", 0, 0},
    {"ci", NH_OPTION_FLAG, offsetof(report_options, ci), 0, 0, NULL,
     "--check-claims at the experiment's ci_scale (default 0.01) instead of --scale: what the test suite runs", 0, 0},
    {"quiet", NH_OPTION_FLAG, offsetof(report_options, quiet), 0, 0, NULL,
     "no trajectory counts on stderr (the line of each run stays)", 0, 0},
};

const nh_option_table nh_cli_report_table = {
    "report", "EXPERIMENT.ini [--out DIR] [--scale F] [--threads K] [--solver kinsol|newton] [--allow-plugins] [--check-claims] [--ci] [--dry-run] [--quiet]",
    "run an experiment file: results, figures (gnuplot), report.md and report.html", REPORT_OPTIONS,
    sizeof REPORT_OPTIONS / sizeof REPORT_OPTIONS[0], 1};

static uint64_t fnv1a(const char *text)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *text; ++text)
        h = (h ^ (unsigned char)*text) * 1099511628211ULL;
    return h;
}

int nh_report_run_dir(const char *out, const nh_exp_panel *p, int k, char *dir, size_t len, nh_error *err)
{
    char safe[128];
    snprintf(safe, sizeof safe, "%s", p->methods[k]);
    for (char *c = safe; *c; ++c)
        if (*c == ':' || *c == ',' || *c == '/' || *c == '=')
            *c = '_';
    return nh_path_format(dir, len, err, "%s/%s/%02d-%s%s", out, p->name, k + 1, safe, p->step_tag);
}

/* The key of a run's results: its panel's fields, the method, nhens' version and, when plugins are loaded, the
 * SHA-256 of each (a rebuilt plugin or another nhens computes the run again). */
static void config_key(const nh_cli *cli, const nh_exp_panel *p, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s|%s|%.17g|%d|%s|%.17g|%.17g|%ld|%llu|%ld|%d|%.17g|%ld|" NH_VERSION, p->system,
             p->params, p->preset, p->energy, p->have_energy, p->methods[k], p->h, p->T, p->ensemble, p->seed, p->every,
             p->have_section, p->section, p->paths);
    /* appended only when set, so earlier reports' results stay reusable */
    if (p->observe[0])
        snprintf(buf + strlen(buf), len - strlen(buf), "|observe=%s", p->observe);
    if (p->perturb > 0)
        snprintf(buf + strlen(buf), len - strlen(buf), "|perturb=%.17g", p->perturb);
    for (int i = 0; i < nh_registry_plugin_count(cli->registry); ++i)
        snprintf(buf + strlen(buf), len - strlen(buf), "|plugin=%s", nh_registry_plugin_at(cli->registry, i)->sha256);
}

static int split_params(char *buf, const char **list)
{
    int count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && count < 16; tok = strtok_r(NULL, ",", &save))
        list[count++] = tok;
    return count;
}

static int hash_body(FILE *f, const void *data)
{
    return fprintf(f, "%016llx\n", *(const unsigned long long *)data) < 0;
}

/* The run's files committed as one set, then config.hash (what makes a later report reuse them) only when
 * the run is complete: a process killed in between leaves no hash, so the run is redone. */
static int commit_run(const nh_exp_panel *p, const char *dir, const nh_run_config *cfg, const nh_run_result *res,
                      unsigned long long hash, const char *command, nh_error *err)
{
    char path[NH_PATH_MAX];
    int rc = nh_path_format(path, sizeof path, err, "%s/config.hash", dir);
    if (!rc)
        rc = nh_write_run(dir, cfg, res, command, p->smooth, err);
    return rc || !res->complete ? rc : nh_write_file(path, hash_body, &hash, err);
}

/* The run configuration of (panel, method k), validated like `nhens run` validates its options. */
static int panel_config(const nh_cli *cli, const report_options *o, const nh_exp_panel *p, int k, nh_system *sys,
                        nh_run_config *cfg, nh_error *err)
{
    char params[256];
    const char *list[16];
    snprintf(params, sizeof params, "%s", p->params);
    const nh_preset *preset = NULL;
    int rc = nh_cli_build_system(cli, p->system, p->preset[0] ? p->preset : NULL, list, split_params(params, list),
                                 sys, &preset, err);
    if (rc)
        return rc;
    nh_run_config_init(cfg); /* the fit window and the rest of run's defaults */
    cfg->system = sys, cfg->h = p->h, cfg->T = p->T, cfg->every = p->every, cfg->ensemble = p->ensemble;
    cfg->seed = p->seed, cfg->threads = (int)o->threads, cfg->energy = p->energy, cfg->solver = o->solver_kind;
    cfg->section = p->section, cfg->have_section = p->have_section, cfg->interrupted = nh_cli_interrupted;
    cfg->paths = p->paths, cfg->observe = p->observe[0] ? p->observe : NULL, cfg->perturb = p->perturb;
    cfg->registry = cli->registry;
    nh_run_config_use_preset(cfg, preset);
    if ((rc = nh_cli_parse_method(cli, p->methods[k], &cfg->method, err)))
        return rc;
    return nh_run_validate(cfg, err);
}

/* Plotted columns and the reference's column must be timeseries columns (and the reference one plotted). */
static int check_plotted_columns(const nh_exp_panel *p, nh_error *err)
{
    char label[256];
    for (int c = 0; c < p->n_plot; ++c)
        if (nh_report_band_observer(p->observers, p->plot[c]))
            continue;
        else if (nh_report_path_observer(p->observers, p->plot[c]) && p->paths < 1)
            return nh_fail(err, NH_ERR_INPUT, "plot column '%s' draws sample paths: set paths = K (1 to %d)",
                           p->plot[c], NH_EXP_MAX_PATHS);
        else if (!nh_report_path_observer(p->observers, p->plot[c]) &&
                 nh_column_label(p->observers, p->plot[c], label, sizeof label))
            return nh_fail(err, NH_ERR_INPUT, "plot column '%s' is not a timeseries column (nhens list names the "
                                              "observers; columns are NAME_mean, NAME_var, NAME_absmax, ..., "
                                              "dH_var_scaled, NAME_path for sample paths and "
                                              "dH_band, constraint_band for the median and 5-95 %% band)", p->plot[c]);
    int plotted = !p->reference_column[0];
    for (int c = 0; c < p->n_plot; ++c)
        plotted |= !strcmp(p->plot[c], p->reference_column);
    return plotted ? NH_OK : nh_fail(err, NH_ERR_INPUT, "the reference's column '%s' is not plotted",
                                     p->reference_column);
}

/* Every (panel, method) checked before anything runs: a bad file is refused whole, with its line. */
static int validate_experiment(const nh_cli *cli, const report_options *o, const nh_experiment *exp, nh_error *err)
{
    for (int i = 0; i < exp->n_panels; ++i)
        for (int j = 0; j < nh_experiment_runs(&exp->panels[i]); ++j)
            for (int k = 0; k < exp->panels[i].n_methods; ++k) {
                nh_exp_panel p;
                nh_experiment_step_run(&exp->panels[i], j, &p);
                nh_system sys;
                nh_run_config cfg;
                nh_error why;
                char step[48] = "";
                if (p.n_steps)
                    snprintf(step, sizeof step, ", step size h = %g", p.h);
                if (panel_config(cli, o, &p, k, &sys, &cfg, &why))
                    return nh_fail(err, NH_ERR_INPUT, "%s:%d: panel '%s', method '%s'%s: %s", o->experiment, p.line,
                                   p.name, p.methods[k], step, why.msg);
            }
    for (int i = 0; i < exp->n_panels; ++i) {
        if (exp->panels[i].n_steps) /* a work-precision panel plots no columns */
            continue;
        nh_error why;
        if (check_plotted_columns(&exp->panels[i], &why))
            return nh_fail(err, NH_ERR_INPUT, "%s:%d: panel '%s': %s", o->experiment, exp->panels[i].line,
                           exp->panels[i].name, why.msg);
    }
    return NH_OK;
}

/* The run (panel_config) of (panel p, method k) in DIR with its command, made by panel_method. */
static int run_one(const report_options *o, const nh_exp_panel *p, nh_run_config cfg, const char *command,
                   const char *dir, uint64_t hash, nh_error *err)
{
    nh_run_result res;
    nh_cli_progress progress;
    nh_cli_progress_start(&progress, "   ");
    cfg.progress = o->quiet ? NULL : nh_cli_progress_report;
    cfg.progress_ctx = &progress;
    int rc = nh_make_directory(dir, err);
    if (rc || (rc = nh_cli_compute_run(&cfg, &res, err)))
        return rc;
    rc = commit_run(p, dir, &cfg, &res, hash, command, err);
    nh_run_result_clear(&res);
    return rc;
}

double nh_report_json_number(const cJSON *root, const char *object, const char *key)
{
    const cJSON *o = object ? cJSON_GetObjectItemCaseSensitive(root, object) : root;
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int parse_report_options(int argc, char **argv, report_options *o, int *status)
{
    const char *positional[1];
    int n_positional;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (report_options){.scale = 1.0, .threads = cores > 0 ? cores : 1, .solver = NH_CLI_DEFAULT_SOLVER};
    if (nh_cli_parse(&nh_cli_report_table, argc, argv, o, &o->seen, positional, &n_positional, status))
        return 1;
    nh_error err;
    if (n_positional != 1 || nh_cli_solver(o->solver, &o->solver_kind, &err)) {
        fprintf(stderr, "nhens report: %s (nhens help report lists the options)\n",
                n_positional != 1 ? "give exactly one experiment file" : err.msg);
        *status = NH_EXIT_USAGE;
        return 1;
    }
    o->experiment = positional[0];
    if (nh_cli_check_path("the experiment file's path", o->experiment, &err) ||
        (o->out && nh_cli_check_path("--out", o->out, &err))) {
        fprintf(stderr, "nhens report: %s\n", err.msg);
        *status = NH_EXIT_USAGE;
        return 1;
    }
    return 0;
}

/* One (panel, method) pair: reused when DIR/config.hash matches (its smoothed.csv redone, since the window
 * is not part of the hash), else run and committed. 0, or 1 after a reported failure. */
/* The panel's folder and the run's folder DIR made real folders, what stands in for a result file and what
 * killed processes left removed (notes on stderr): before anything in DIR is read or written. */
static int prepare_run_folder(const report_options *o, const nh_exp_panel *p, const char *dir, nh_error *err)
{
    char panel_dir[NH_PATH_MAX];
    int rc = nh_path_format(panel_dir, sizeof panel_dir, err, "%s/%s", o->out, p->name);
    if (!rc && !(rc = nh_report_settle_folder(panel_dir, err)) && !(rc = nh_output_clean(panel_dir, err)) &&
        !(rc = nh_report_settle_folder(dir, err)) && !(rc = nh_report_clear_strays(dir, err)))
        rc = nh_output_clean(dir, err);
    return rc;
}

static int panel_method(const nh_cli *cli, const report_options *o, const nh_exp_panel *p, int k)
{
    char dir[NH_PATH_MAX], key[4096], why[512] = "", command[512];
    nh_error err;
    nh_system sys;
    nh_run_config cfg;
    snprintf(command, sizeof command, "nhens report (panel %s, method %s)", p->name, p->methods[k]);
    int rc = nh_report_run_dir(o->out, p, k, dir, sizeof dir, &err);
    if (!rc && !(rc = panel_config(cli, o, p, k, &sys, &cfg, &err)))
        rc = prepare_run_folder(o, p, dir, &err);
    config_key(cli, p, k, key, sizeof key);
    const uint64_t hash = fnv1a(key);
    fprintf(stderr, "[%s %d/%d] %s", p->name, k + 1, p->n_methods, p->methods[k]);
    if (p->n_steps)
        fprintf(stderr, " at h = %g", p->h);
    fputs(": ", stderr);
    if (!rc && nh_report_cache_valid(&cfg, command, dir, hash, why, sizeof why)) {
        if (p->smooth > 0)
            rc = nh_write_smoothed(dir, p->smooth, &err);
        if (!rc)
            fprintf(stderr, "reused\n");
    } else if (!rc) {
        fprintf(stderr, why[0] ? "running (the results there are not reused: %s)\n" : "running\n", why);
        if (!(rc = run_one(o, p, cfg, command, dir, hash, &err)))
            fprintf(stderr, nh_cli_interrupt_status() ? "   interrupted (not kept for reuse)\n" : "   done\n");
    }
    if (rc)
        fprintf(stderr, "failed: %s\n", err.msg);
    return rc != 0;
}

static void remove_figures(const char *out, const nh_exp_panel *p)
{
    for (int i = 0; i < 2; ++i) {
        char final[1100];
        snprintf(final, sizeof final, "%s/%s.%s", out, p->name, i ? "svg" : "png");
        remove(final);
    }
}

/* Runs (or reuses) every pair and plots every panel whose runs all succeeded; counts the failures. */
static void run_panels(const nh_cli *cli, const report_options *o, const nh_experiment *exp, int *runs_failed,
                       int *plots_failed)
{
    for (int i = 0; i < exp->n_panels && !nh_cli_interrupt_status(); ++i) {
        const nh_exp_panel *p = &exp->panels[i];
        int failed = 0;
        for (int j = 0; j < nh_experiment_runs(p) && !nh_cli_interrupt_status(); ++j)
            for (int k = 0; k < p->n_methods && !nh_cli_interrupt_status(); ++k) {
                nh_exp_panel run;
                nh_experiment_step_run(p, j, &run);
                failed += panel_method(cli, o, &run, k);
            }
        *runs_failed += failed;
        if (!failed && !nh_cli_interrupt_status() && nh_report_plot_panel(o->out, p)) {
            fprintf(stderr, "nhens report: the figure of panel %s is not drawn (the reason is above)\n", p->name);
            remove_figures(o->out, p); /* an older figure would show another configuration */
            ++*plots_failed;
        }
    }
}

static cJSON *claim_summary(const nh_exp_panel *p, int method, void *ctx)
{
    const report_options *o = ctx;
    if (p->n_steps)
        return nh_work_precision_summary(o->out, p, method);
    char dir[NH_PATH_MAX];
    return nh_report_run_dir(o->out, p, method, dir, sizeof dir, NULL) ? NULL : nh_report_load_summary(dir);
}

/* The run a claim reads: a work-precision panel's smallest step size (steps are kept largest first). */
static int claim_run_dir(const nh_exp_panel *p, int method, void *ctx, char *dir, size_t len)
{
    const report_options *o = ctx;
    nh_exp_panel run;
    nh_experiment_step_run(p, p->n_steps ? p->n_steps - 1 : 0, &run);
    return nh_report_run_dir(o->out, &run, method, dir, len, NULL);
}

static const char *foil_word(int foil_holds)
{
    return foil_holds == 0 ? "fails" : foil_holds > 0 ? "HOLDS TOO" : "not measured";
}

/* Every claim against the results, one line each on stderr; the number of ci claims that do not hold or
 * whose foil holds too. */
static int evaluate_claims(const report_options *o, const nh_experiment *exp, nh_claim_result *results)
{
    int held = 0, ci_failed = 0;
    const nh_claim_source src = {claim_summary, claim_run_dir, (void *)o};
    for (int i = 0; i < exp->n_claims; ++i) {
        const nh_claim *c = &exp->claims[i];
        const nh_claim_result *r = &results[i];
        nh_claim_evaluate(exp, c, &src, &results[i]);
        held += r->holds > 0;
        ci_failed += c->ci && !nh_claim_discriminates(r);
        fprintf(stderr, "claim %s%s: %s (%.3g against %.3g)", c->text, c->ci ? " [ci]" : "",
                r->holds > 0 ? "holds" : r->holds == 0 ? "DOES NOT HOLD" : "not measured", r->lhs, r->rhs);
        if (c->ci)
            fprintf(stderr, "; foil %s (%.3g against %.3g)", foil_word(r->foil_holds), r->foil_lhs, r->foil_rhs);
        fputc('\n', stderr);
    }
    if (exp->n_claims)
        fprintf(stderr, "claims: %d of %d hold\n", held, exp->n_claims);
    return ci_failed;
}

/* report.html, then report.md (which links it), from one gathering of the results. */
static int write_pages(const report_options *o, const nh_experiment *exp, int argc, char **argv,
                       const nh_claim_result *claims, nh_error *err)
{
    nh_report_doc *doc = calloc(1, sizeof *doc);
    if (!doc)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for the report");
    int rc = nh_report_doc_build(doc, exp, o->experiment, o->out, o->scale, argc, argv, claims, err);
    if (!rc)
        rc = nh_report_write_html(doc, err);
    if (!rc)
        rc = nh_report_write_markdown(doc, err);
    nh_report_doc_free(doc);
    free(doc);
    return rc;
}

/* The default output folder: results/FOLDER/NAME, from the experiment file's folder and its name up to the
 * first '.' (results/NAME for a file given without a folder, or in . or ..), so that files of one name in two
 * folders (experiments/<paper>/fig2_....ini) write apart. */
static void default_out(const char *experiment, char *out, size_t size)
{
    const char *slash = strrchr(experiment, '/');
    const char *base = slash ? slash + 1 : experiment;
    const int name_length = (int)strcspn(base, ".");
    const char *folder = slash;
    while (folder && folder > experiment && folder[-1] != '/')
        --folder;
    const size_t folder_length = slash ? (size_t)(slash - folder) : 0;
    if (folder_length == 0 || !strncmp(folder, ".", folder_length) || !strncmp(folder, "..", folder_length))
        snprintf(out, size, "results/%.*s", name_length, base);
    else
        snprintf(out, size, "results/%.*s/%.*s", (int)folder_length, folder, name_length, base);
}

static int report_experiment(const nh_cli *cli, report_options *o, nh_experiment *exp, int argc, char **argv);

int nh_cli_report(const nh_cli *cli, int argc, char **argv)
{
    report_options o;
    int rc;
    if (parse_report_options(argc, argv, &o, &rc))
        return rc;
    nh_experiment exp;
    nh_error err;
    if (nh_experiment_load(o.experiment, o.allow_plugins, &exp, &err) || nh_experiment_load_plugins(&exp, cli->registry, &err)) {
        fprintf(stderr, "nhens report: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    nh_observer_table *observers = nh_registry_observer_table(cli->registry, &err);
    if (!observers) {
        fprintf(stderr, "nhens report: the plugins' observers: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    for (int i = 0; i < exp.n_panels; ++i)
        exp.panels[i].observers = observers;
    rc = report_experiment(cli, &o, &exp, argc, argv);
    nh_observer_table_free(observers);
    return rc;
}

/* The loaded experiment validated, run, drawn and written. */
static int report_experiment(const nh_cli *cli, report_options *o, nh_experiment *exp, int argc, char **argv)
{
    nh_error err;
    int rc;
    if (o->ci && nh_cli_given(&nh_cli_report_table, o->seen, "scale")) {
        fprintf(stderr, "nhens report: --ci runs at the file's ci_scale; give --scale or --ci, not both\n");
        return NH_EXIT_USAGE;
    }
    if (o->ci) {
        o->scale = exp->ci_scale;
        o->check_claims = 1;
    }
    if (o->scale < 1)
        nh_experiment_scale(exp, o->scale);
    if (validate_experiment(cli, o, exp, &err)) {
        fprintf(stderr, "nhens report: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    if (o->dry_run) {
        int runs = 0;
        for (int i = 0; i < exp->n_panels; ++i)
            runs += exp->panels[i].n_methods * nh_experiment_runs(&exp->panels[i]);
        printf("nhens report (dry run): %s: %d panel(s), %d run(s), %d claim(s); all valid\n", o->experiment,
               exp->n_panels, runs, exp->n_claims);
        return NH_EXIT_OK;
    }
    char out[NH_PATH_MAX];
    nh_folder_lock lock; /* held until the process ends: one report or run in o->out at a time */
    if (!o->out) {
        default_out(o->experiment, out, sizeof out);
        o->out = out;
    }
    if ((rc = nh_output_folder_open(o->out, &lock, &err))) {
        fprintf(stderr, "nhens report: %s\n", err.msg);
        return rc == NH_ERR_INPUT ? NH_EXIT_USAGE : NH_EXIT_ERROR;
    }
    nh_cli_catch_interrupts();
    int runs_failed = 0, plots_failed = 0;
    run_panels(cli, o, exp, &runs_failed, &plots_failed);
    if (runs_failed) {
        fprintf(stderr, "nhens report: %d run(s) failed (above); report.md is not written without their results\n",
                runs_failed);
        return NH_EXIT_ERROR;
    }
    if (nh_cli_interrupt_status()) {
        fprintf(stderr, "nhens report: interrupted; report.md and the figures are as before. The same command "
                        "finishes the report (finished runs are reused).\n");
        return nh_cli_interrupt_status();
    }
    nh_claim_result claims[NH_EXP_MAX_CLAIMS];
    const int claims_failed = evaluate_claims(o, exp, claims);
    if (write_pages(o, exp, argc, argv, claims, &err)) {
        fprintf(stderr, "nhens report: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    printf("nhens report: wrote %s/report.md and %d of %d figure(s) (PNG and SVG)%s; the whole report on one page: "
           "%s/report.html\n", o->out, exp->n_panels - plots_failed, exp->n_panels,
           plots_failed ? "; the others are not drawn (above)" : "", o->out);
    if (plots_failed)
        return NH_EXIT_ERROR;
    return o->check_claims && claims_failed ? NH_EXIT_CLAIMS : NH_EXIT_OK;
}
