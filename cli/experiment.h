/* Experiment files (INI, parsed with libinih) and `nhens report`: an experiment names a system,
 * presets or energy shells, methods, step size, horizon, ensemble size and seed, and the columns to
 * plot; it has one or more panels (one figure each). The report runs every (panel, method) pair (or
 * reuses results already on disk with the same configuration hash), plots with gnuplot (PNG and SVG)
 * and writes a Markdown page with the figures, a table per panel and the command to reproduce it. */
#ifndef NHENS_EXPERIMENT_H
#define NHENS_EXPERIMENT_H

#include "nhens/core.h"
#include "nhens/registry.h"

enum { NH_EXP_MAX_PANELS = 8, NH_EXP_MAX_METHODS = 12, NH_EXP_MAX_PLOTS = 4, NH_EXP_MAX_PLUGINS = 4, NH_EXP_NAME_MAX = 41,
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
} nh_experiment;

/* allow_plugins: honour `plugin` keys (they load and run code); otherwise such a key is refused. */
int nh_experiment_load(const char *path, int allow_plugins, nh_experiment *exp, nh_error *err);
/* Load the experiment's plugins into the registry. */
int nh_experiment_load_plugins(const nh_experiment *exp, nh_registry *reg, nh_error *err);
/* Scale horizons, ensemble sizes and smoothing windows by 0 < scale <= 1 (ensembles keep at least one
 * trajectory; sample paths are cut to the ensemble). */
void nh_experiment_scale(nh_experiment *exp, double scale);


#endif
