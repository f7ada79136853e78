/* Experiment files (INI, parsed with libinih) and `nhens report`: an experiment names a system,
 * presets or energy shells, methods, step size, horizon, ensemble size and seed, and the columns to
 * plot; it has one or more panels (one figure each). The report runs every (panel, method) pair (or
 * reuses results already on disk with the same configuration hash), plots with gnuplot (PNG and SVG)
 * and writes a Markdown page with the figures, a table per panel and the command to reproduce it, and an HTML
 * page with all of it, the figures inline and the provenance (report_doc.h). */
#ifndef NHENS_EXPERIMENT_H
#define NHENS_EXPERIMENT_H

#include <stdio.h>

#include "nhens/core.h"
#include "nhens/files.h"
#include "nhens/registry.h"

enum { NH_EXP_MAX_CLAIMS = 32,
       NH_EXP_MAX_PANELS = 12, NH_EXP_MAX_METHODS = 20, NH_EXP_MAX_STEPS = 8, NH_EXP_MAX_PLOTS = 4, NH_EXP_MAX_PLUGINS = 4, NH_EXP_NAME_MAX = 41,
       NH_EXP_MAX_PATHS = 16 };

typedef struct nh_exp_panel {
    const struct nh_observer_table *observers; /* the built-in and the loaded plugins' observers (set by report) */
    int line;                   /* of its first [panel NAME] header (for messages) */
    char name[64];              /* [A-Za-z0-9._-], at most NH_EXP_NAME_MAX - 1, no leading dot: a folder name */
    char title[256];
    char system[64];
    char params[256];           /* "k=v,k=v" */
    char preset[64];
    double energy;
    int have_energy;
    double perturb;             /* with a state preset: an ensemble around it (nh_run_config.perturb); 0: none */
    double h, T;
    long ensemble, every;
    long paths;                 /* sample paths recorded per run (plot columns NAME_path draw them) */
    unsigned long long seed;
    char methods[NH_EXP_MAX_METHODS][128];
    int n_methods;
    char plot[NH_EXP_MAX_PLOTS][64];
    int n_plot;
    int logy;
    double smooth;              /* running-mean window in time units; 0: none */
    double section;             /* driver section angle for the latitude (have_section) */
    int have_section;
    char reference_column[64];  /* `reference = COLUMN: A*t^P`: the line A t^P drawn in COLUMN's plot ("" none) */
    double reference_a, reference_p;
    char reference_label[128];  /* its key entry (default "A t^P") */
    /* A work-precision panel (`steps = h1; h2; ...`): every method runs at every step size, and the figure is
     * `error` (a claim metric: error_final, rel_energy_absmax, ...) against the method's cost in thread-seconds,
     * log-log; plot, logy, reference, paths and smooth do not apply. */
    double steps[NH_EXP_MAX_STEPS];
    int n_steps;
    char error[64];
    /* set on the panel of one step size (nh_experiment_step_run): its folder suffix and observers */
    char step_tag[16];
    char observe[32];
} nh_exp_panel;

/* `claim = PANEL/METHOD:METRIC OP RHS | SOURCE [| ci [vs FOIL]]`, a paper's statement checked against the
 * results: OP is <, <=, > or >=; RHS a number, PANEL/METHOD:METRIC or FACTOR*PANEL/METHOD:METRIC, optionally
 * followed by `+ K*se` or `- K*se` (or just `K*se`): K times the combined standard error of the two sides,
 * sqrt(se_lhs^2 + se_rhs^2), so that the claim holds only with that margin. METRIC is a number of summary.json or
 * a trend metric FUNC(COLUMN[,FROM[,TO]]) of timeseries.csv (cli/trend.c). `ci` marks a claim checked at the
 * experiment's ci_scale by the test suite (report --ci), together with its foil: the same claim with the
 * methods of two runs swapped, or with METHOD replaced by FOIL, must NOT hold there (the claim discriminates).
 * See cli/claims.c. */
typedef struct nh_claim_ref {
    char panel[64];
    char method[128];
    char metric[64];
} nh_claim_ref;

typedef struct nh_claim {
    int line;
    char text[200];             /* as written, before the first '|' */
    char source[160];
    int ci;
    char foil[128];             /* `ci vs FOIL`: the method that must fail the claim ("" : swap the two runs) */
    nh_claim_ref lhs, rhs;      /* rhs.metric[0] == 0: the right-hand side is just `factor` */
    char op[3];
    double factor;
    double se_factor;           /* signed K of `+ K*se` (0: none) */
    int has_se;
} nh_claim;

typedef struct nh_experiment {
    char title[256];
    char figure[128];
    char description[2048];
    char expect[2048];
    char plugins[NH_EXP_MAX_PLUGINS][512];   /* `plugin` keys: paths relative to the file's folder */
    int n_plugins;
    char directory[NH_PATH_MAX];             /* folder of the experiment file */
    nh_exp_panel defaults;
    nh_exp_panel panels[NH_EXP_MAX_PANELS];
    int n_panels;
    nh_claim claims[NH_EXP_MAX_CLAIMS];
    int n_claims;
    double ci_scale;                         /* `ci_scale`: the scale of report --ci (default 0.01) */
} nh_experiment;

/* The run of step size j of a work-precision panel: p with h = steps[j], outputs at 0 and T only (or at 11
 * times when T/h is a multiple of 10) and the global error recorded when `error` needs it. For another
 * panel (j = 0) a copy of p. nh_experiment_runs: how many step sizes a panel runs (1 for another panel). */
void nh_experiment_step_run(const nh_exp_panel *p, int j, nh_exp_panel *run);
int nh_experiment_runs(const nh_exp_panel *p);
/* Whether `metric` names a claim metric (cli/claims.c); the metrics a work-precision panel may plot. */
int nh_claim_metric_known(const char *metric);
int nh_work_precision_metric(const char *metric);

struct cJSON;

/* A claim metric's value in a summary.json (cJSON) and its standard error (NAN if none); NAN if absent. */
double nh_claim_metric_value(const struct cJSON *summary, const char *metric, double *stderr_out);

/* cli/report.c, shared with cli/work_precision.c: the folder of (panel, method k) (NH_ERR_INPUT where
 * it does not fit in len), its summary.json (NULL if none or not a whole regular file of JSON; the caller
 * deletes it) and numbers from it; cli/report_figure.c and cli/figure.c: a gnuplot string literal (every text
 * reaches a script through it) and the methods' line styles (figure.h). */
int nh_report_run_dir(const char *out, const nh_exp_panel *p, int k, char *dir, size_t len, nh_error *err);
struct cJSON *nh_report_load_summary(const char *dir);
/* cli/report_cache.c: PATH made a real folder (a symbolic link or file in its place is removed, with a note
 * on stderr, never followed); whether DIR holds the complete results of the run cfg, made by `command`, with
 * config hash `hash` and every configuration field summary.json records alike (0: not, and why non-empty
 * says what was wrong with what is there). */
int nh_report_settle_folder(const char *path, nh_error *err);
/* Removes (with a note) whatever sits in DIR under a result file's name and is not a regular file: a folder,
 * FIFO or symbolic link there is no cache, and a commit could not replace it. */
int nh_report_clear_strays(const char *dir, nh_error *err);
struct nh_run_config;
int nh_report_cache_valid(const struct nh_run_config *cfg, const char *command, const char *dir, uint64_t hash,
                          char *why, size_t len);
/* root[object][key] (root[key] when object is NULL) if it is a number, else NAN. */
double nh_report_json_number(const struct cJSON *root, const char *object, const char *key);
void nh_gp_string(FILE *g, const char *text, const char *suffix);
void nh_gp_line_styles(FILE *g);

struct nh_observer;
struct nh_observer_table;
/* cli/report_figure.c: the observer of a plotted column NAME_path (sample paths) or NAME_band (median and 5-95 %
 * band), NULL for another column; a panel's figure, PNG and SVG, whole or absent (0, or 1 after a message on
 * stderr: gnuplot's own, or why it could not run). */
const struct nh_observer *nh_report_path_observer(const struct nh_observer_table *t, const char *column);
const struct nh_observer *nh_report_band_observer(const struct nh_observer_table *t, const char *column);
int nh_report_plot_panel(const char *out, const nh_exp_panel *p);

/* cli/work_precision.c: a work-precision panel's PANEL/work_precision.csv, its gnuplot script, and the summary
 * claims read for method k (its smallest step size's, with work_precision.error_order added; NULL if missing);
 * its report table: report_doc.h. */
int nh_work_precision_write_csv(const char *out, const nh_exp_panel *p, nh_error *err);
/* the whole script: both terminals, writing png and svg; non-zero: a path too long */
int nh_work_precision_script(FILE *g, const char *out, const nh_exp_panel *p, const char *png, const char *svg);
struct cJSON *nh_work_precision_summary(const char *out, const nh_exp_panel *p, int k);

/* cli/claims.c: a claim's syntax (at load), its panels/methods (after load), its value against the results. */
int nh_claim_parse(const char *value, nh_claim *c, nh_error *err);
int nh_claims_check(const char *path, const nh_experiment *exp, nh_error *err);
/* Where a claim reads (panel, method index): its summary.json as cJSON (caller deletes; NULL if none) and
 * its run folder (trend metrics read timeseries.csv there). */
typedef struct nh_claim_source {
    struct cJSON *(*summary)(const nh_exp_panel *p, int method, void *ctx);
    int (*run_dir)(const nh_exp_panel *p, int method, void *ctx, char *dir, size_t len); /* non-zero: none */
    void *ctx;
} nh_claim_source;
typedef struct nh_claim_result {
    double lhs, lhs_err, rhs, rhs_err;  /* errors: standard errors where there are, else NAN; rhs is the threshold
                                           compared with (the `K*se` margin included) */
    int holds;                          /* 1, 0, or -1 when a value (or an error the claim needs) is missing */
    double foil_lhs, foil_rhs;          /* the foil's sides (ci claims; NAN otherwise) */
    int foil_holds;                     /* as holds, for the foil; -2: no foil (not a ci claim) */
} nh_claim_result;
void nh_claim_evaluate(const nh_experiment *exp, const nh_claim *c, const nh_claim_source *src, nh_claim_result *out);
/* Whether a ci claim passes its check: it holds and its foil does not. */
int nh_claim_discriminates(const nh_claim_result *r);
/* cli/trend.c: the syntax of a trend metric FUNC(COLUMN[,FROM[,TO]]) and its value (and jackknife standard error)
 * from DIR/timeseries.csv (NAN when unreadable or too short). */
int nh_trend_metric_check(const char *metric, nh_error *err);
double nh_trend_metric_value(const char *dir, const char *metric, double *stderr_out);
/* Whether the CSV file's column holds a finite value on some row: 1, 0 (every value nan), or -1 (no such
 * file or column). */
int nh_csv_column_has_finite(const char *path, const char *column);

/* allow_plugins: honour `plugin` keys (they load and run code); otherwise such a key is refused. */
int nh_experiment_load(const char *path, int allow_plugins, nh_experiment *exp, nh_error *err);
/* Load the experiment's plugins into the registry. */
int nh_experiment_load_plugins(const nh_experiment *exp, nh_registry *reg, nh_error *err);
/* Scale horizons, ensemble sizes and smoothing windows by 0 < scale <= 1 (ensembles keep at least one
 * trajectory; sample paths are cut to the ensemble). */
void nh_experiment_scale(nh_experiment *exp, double scale);


#endif
