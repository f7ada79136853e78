/* Experiment files (INI, parsed with libinih) and `nhens report`: an experiment names a system,
 * presets or energy shells, methods, step size, horizon, ensemble size and seed, and the columns to
 * plot; it has one or more panels (one figure each). The report runs every (panel, method) pair (or
 * reuses results already on disk with the same configuration hash), plots with gnuplot (PNG and SVG)
 * and writes a Markdown page with the figures, a table per panel and the command to reproduce it. */
#ifndef NHENS_EXPERIMENT_H
#define NHENS_EXPERIMENT_H

#include "nhens/core.h"
#include "nhens/registry.h"

enum { NH_EXP_MAX_CLAIMS = 24,
       NH_EXP_MAX_PANELS = 8, NH_EXP_MAX_METHODS = 12, NH_EXP_MAX_PLOTS = 4, NH_EXP_MAX_PLUGINS = 4, NH_EXP_NAME_MAX = 41,
       NH_EXP_MAX_PATHS = 16 };

typedef struct nh_exp_panel {
    int line;                   /* of its first [panel NAME] header (for messages) */
    char name[64];              /* [A-Za-z0-9._-], at most NH_EXP_NAME_MAX - 1, no leading dot: a folder name */
    char title[256];
    char system[64];
    char params[256];           /* "k=v,k=v" */
    char preset[64];
    double energy;
    int have_energy;
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
} nh_exp_panel;

/* `claim = PANEL/METHOD:METRIC OP RHS | SOURCE [| ci]`, a paper's statement checked against the results:
 * OP is <, <=, > or >=; RHS a number, PANEL/METHOD:METRIC or FACTOR*PANEL/METHOD:METRIC; `ci` marks a claim that also holds at
 * the small scale of the test suite (report --check-claims asserts it). See cli/claims.c. */
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
    nh_claim_ref lhs, rhs;      /* rhs.metric[0] == 0: the right-hand side is just `factor` */
    char op[3];
    double factor;
} nh_claim;

typedef struct nh_experiment {
    char title[256];
    char figure[128];
    char description[2048];
    char expect[2048];
    char plugins[NH_EXP_MAX_PLUGINS][512];   /* `plugin` keys: paths relative to the file's folder */
    int n_plugins;
    char directory[1024];                    /* folder of the experiment file */
    nh_exp_panel defaults;
    nh_exp_panel panels[NH_EXP_MAX_PANELS];
    int n_panels;
    nh_claim claims[NH_EXP_MAX_CLAIMS];
    int n_claims;
} nh_experiment;

/* cli/claims.c: a claim's syntax (at load), its panels/methods (after load), its value against the results. */
int nh_claim_parse(const char *value, nh_claim *c, nh_error *err);
int nh_claims_check(const char *path, const nh_experiment *exp, nh_error *err);
/* summary.json of (panel, method index) as cJSON (caller deletes), or NULL */
typedef struct cJSON *(*nh_claim_summary_fn)(const nh_exp_panel *p, int method, void *ctx);
typedef struct nh_claim_result {
    double lhs, lhs_err, rhs, rhs_err;  /* errors: standard errors where the summary has them, else NAN */
    int holds;                          /* 1, 0, or -1 when a value is missing */
} nh_claim_result;
void nh_claim_evaluate(const nh_experiment *exp, const nh_claim *c, nh_claim_summary_fn load, void *ctx,
                       nh_claim_result *out);

/* allow_plugins: honour `plugin` keys (they load and run code); otherwise such a key is refused. */
int nh_experiment_load(const char *path, int allow_plugins, nh_experiment *exp, nh_error *err);
/* Load the experiment's plugins into the registry. */
int nh_experiment_load_plugins(const nh_experiment *exp, nh_registry *reg, nh_error *err);
/* Scale horizons, ensemble sizes and smoothing windows by 0 < scale <= 1 (ensembles keep at least one
 * trajectory; sample paths are cut to the ensemble). */
void nh_experiment_scale(nh_experiment *exp, double scale);


#endif
