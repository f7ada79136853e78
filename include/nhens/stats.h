/* Streaming statistics: Welford accumulators with Chan's pairwise merge, the per-output-time
 * observers that feed them, and the variance-law fit of Celledoni et al. 2019, Fig. 2. Memory is one accumulator
 * per (output time, observed quantity), independent of the number of trajectories. */
#ifndef NHENS_STATS_H
#define NHENS_STATS_H

#include "nhens/observer.h"
#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_accum {
    double count;
    double mean;
    double m2;      /* sum of squared deviations from the mean */
    double absmax;
} nh_accum;

void nh_accum_reset(nh_accum *a);
void nh_accum_add(nh_accum *a, double x);
/* Chan et al. 1979: into <- into (+) from. The order of merges fixes the rounding. */
void nh_accum_merge(nh_accum *into, const nh_accum *from);
/* nh_accum_add(&a[i], x[i]) for each i in [0, n) but skip (-1: none), and nh_accum_merge(&into[i], &from[i]) for
 * each i in [0, n), in order: a row of a run's accumulators at once. */
void nh_accum_add_each(nh_accum *a, const double *x, int n, int skip);
void nh_accum_merge_each(nh_accum *into, const nh_accum *from, long n);
/* Unbiased sample variance (n - 1 in the denominator); NAN for fewer than two samples (missing, not 0). */
double nh_accum_variance(const nh_accum *a);
/* Standard error of the mean, sqrt(variance / count); NAN with fewer than 2 samples. */
double nh_accum_mean_stderr(const nh_accum *a);
/* Root mean square, sqrt(mean^2 + m2/n); NAN when empty. */
double nh_accum_rms(const nh_accum *a);

/* A mergeable fixed-memory quantile sketch: a histogram of counts on signed logarithmic bins,
 * NH_SKETCH_PER_DECADE per decade of |x| in [1e NH_SKETCH_MIN_EXP, 1e NH_SKETCH_MAX_EXP), one bin for
 * |x| below (and exactly 0), one for |x| above on each side. Counts add, so merged sketches do not
 * depend on the merge order: the same ensemble gives the same bytes for any number of threads. A
 * quantile is exact to one bin, a factor 10^(1/8) = 1.33 in |x|; within its bin it is interpolated
 * log-linearly. */
enum {
    NH_SKETCH_PER_DECADE = 8,
    NH_SKETCH_MIN_EXP = -20,
    NH_SKETCH_MAX_EXP = 8,
    NH_SKETCH_SIDE = (NH_SKETCH_MAX_EXP - NH_SKETCH_MIN_EXP) * NH_SKETCH_PER_DECADE,
    NH_SKETCH_BINS = 2 * NH_SKETCH_SIDE + 3   /* below -max, negatives, |x| < min, positives, above max */
};

typedef struct nh_sketch {
    unsigned count[NH_SKETCH_BINS];
} nh_sketch;

/* Bin of x (NaN: -1, not counted). */
int nh_sketch_bin(double x);
void nh_sketch_add(nh_sketch *s, double x);
void nh_sketch_merge(nh_sketch *into, const nh_sketch *from);
unsigned long nh_sketch_total(const nh_sketch *s);
/* The level-quantile (0 <= level <= 1) of the counted values; NAN when the sketch is empty. */
double nh_sketch_quantile(const nh_sketch *s, double level);

typedef enum nh_stat_kind { NH_STAT_MEAN, NH_STAT_VARIANCE, NH_STAT_ABSMAX, NH_STAT_RMS, NH_STAT_COUNT } nh_stat_kind;

typedef struct nh_column {
    const char *name;
    nh_stat_kind kind;
} nh_column;

/* An observer maps a state to one number; its columns say which statistics are written. A run's observers are
 * a table (nh_observer_table): the built-in rows of stats/observers.c, the only place that names observers,
 * then a row per component of each plugin observer (nhens/observer.h). Everything else looks them up by name
 * (user selections) or by role (the fitted and the event observer) and writes what the table says. */
typedef struct nh_observer {
    const char *name;
    const char *help;
    double (*value)(const nh_system *s, const double *q, const double *v, const nh_initial_values *init);
    int n_columns;
    nh_column columns[4];
    int (*applies)(const nh_system *s);   /* NULL: every system (a core observer) */
    int event;                            /* sampled at Poincare crossings by the driver, not at output times */
    int fitted;                           /* the variance law (Celledoni et al. 2019, Fig. 2) is fitted to this one */
    const char *label;                    /* "|dH|": how a summary names max |value| */
    const char *extreme_key;              /* summary.json "extremes" key of max |value| */
    const char *symbol;                   /* "H(t) − H(0)": how figures name the quantity (UTF-8) */
    const char *quantile_prefix;          /* non-NULL: a quantile sketch per output time, columns PREFIX_q05,
                                             PREFIX_q50, PREFIX_q95 of quantiles.csv */
    int versus_reference;                 /* measured against a CVODE reference integrated alongside each
                                             trajectory by the driver (value is NULL); costly, so recorded only
                                             when selected by name, never by "all" */
    const nh_observer_type *plugin;       /* a plugin observer's component `component` (value and applies NULL:
                                             the plugin's own compute all its components at once); NULL built in */
    int component;
} nh_observer;

/* The quantile levels written for every sketched observer, and their column suffixes. */
enum { NH_QUANTILE_LEVELS = 3 };
extern const double nh_quantile_levels[NH_QUANTILE_LEVELS];
extern const char *const nh_quantile_suffixes[NH_QUANTILE_LEVELS];

/* Rows of a table: observed values per state (the masks below have a bit per row). */
enum { NH_MAX_OBSERVERS = 32 };

/* A run's observers. The built-in rows come first, in the same order in every table, so the roles below and a
 * built-in's index do not depend on the table. */
typedef struct nh_observer_table nh_observer_table;
/* The built-in observers alone (a constant, never freed). */
const nh_observer_table *nh_observer_table_builtin(void);
/* The built-in observers, then a row per component of each of the n_types plugin observers (checked by
 * nh_observer_type_check; a component name taken by another row or column is refused, as are more than
 * NH_MAX_OBSERVERS rows). NULL with err set when refused or out of memory; free with nh_observer_table_free. */
nh_observer_table *nh_observer_table_create(const nh_observer_type *const *types, int n_types, nh_error *err);
void nh_observer_table_free(nh_observer_table *t);

/* Index of the observer named `name` in t, or -1. */
int nh_observer_index(const nh_observer_table *t, const char *name);
/* Index of the observer the variance law is fitted to (there is exactly one). */
int nh_observer_fitted(void);
/* Index of the event (Poincare-section) observer, or -1 if the table has none. */
int nh_observer_event(void);
/* Index of the observer measured against a reference solution (the global error), or -1. */
int nh_observer_reference(void);
/* Relative global error |z - z_ref| / |z_ref| of z = (q, v) (Euclidean norms over the 2n components). */
double nh_global_error(int n, const double *q, const double *v, const double *q_ref, const double *v_ref);
/* Tolerances (rtol = atol) of the reference the global error is measured against. */
#define NH_REFERENCE_TOLERANCE 1e-13

/* Bit i set when observer i applies to the system; only those are sampled and written. */
unsigned nh_observer_mask(const nh_observer_table *t, const nh_system *s);
/* Mask of the comma-separated observer names in `list`; "all" (alone, NULL, or as an item: "all,error")
 * stands for every observer but those measured against a reference, and a plugin observer's name for all its
 * components (p for p_1, p_2, p_3). The fitted observer is always included. An unknown name is refused with
 * the list of known ones. */
int nh_observer_select(const nh_observer_table *t, const char *list, unsigned *mask, nh_error *err);

int nh_observer_count(const nh_observer_table *t);
/* A core observer: built in and applying to every system (summaries print these first, on one line). */
int nh_observer_core(const nh_observer *o);
const nh_observer *nh_observer_at(const nh_observer_table *t, int i);
void nh_initial_values_compute(const nh_system *s, const double *q, const double *v, nh_initial_values *init);
/* values[i] for every observer i of t. */
void nh_observe(const nh_observer_table *t, const nh_system *s, const double *q, const double *v,
                const nh_initial_values *init, double *values);
/* nh_observe with its mask of the observers that apply, nh_observer_mask(t, s), computed once by the caller (a
 * run observes many states of one system). */
void nh_observe_applying(const nh_observer_table *t, unsigned applying, const nh_system *s, const double *q,
                         const double *v, const nh_initial_values *init, double *values);
/* nh_observe_applying of `count` states at once (a batch of lanes at one output row): state j is (q[j], v[j]) with
 * init[j], its values into values[j] (the same bits as one by one). */
void nh_observe_states(const nh_observer_table *t, unsigned applying, const nh_system *s, int count,
                       const double *const *q, const double *const *v, const nh_initial_values *const *init,
                       double *const *values);
/* Axis label of a timeseries column ("Var(H(t) − H(0))" for dH_var); -1 for a name that is not a column. */
int nh_column_label(const nh_observer_table *t, const char *column, char *buf, size_t len);
/* Total number of timeseries columns after t and n_live. */
int nh_observer_column_count(const nh_observer_table *t);

/* Least-squares fit Var(t) ~ a + C t over the output times in [t_start, t_end] that have a variance (a NAN
 * variance, fewer than two live trajectories, is missing data and left out), the log-log slope p of Var
 * against t over the same times, and C / h^(2r) for a method of order r. */
typedef struct nh_variance_fit {
    double t_start, t_end;
    int points;             /* output times fitted */
    double a, C, p;
    double C_over_h4;
    int scaling_power;      /* 2r */
    double C_scaled;        /* C / h^(2r) */
    double p_of_fit;        /* log-log slope of the fitted a + C t itself at the same times (NAN where a + C t <= 0) */
    /* standard errors from nh_variance_fit_jackknife (NAN before it, and where it gives none) */
    double a_err, C_err, p_err, C_over_h4_err, C_scaled_err;
    int groups;             /* non-empty groups the errors come from */
    int dof;                /* groups - 1: the degrees of freedom of every error (0: none) */
    double t95;             /* Student t quantile for dof: value +- t95 x error is a two-sided 95 % interval */
} nh_variance_fit;

/* The jackknife's groups: trajectory i falls in group i mod NH_FIT_GROUPS when the run has fewer than
 * NH_FIT_GROUPS merge chunks (at most 152 trajectories: groups of whole chunks would be too few for an
 * error, 2 of them for 16 trajectories), else merge chunk c in group c mod NH_FIT_GROUPS. The fit's
 * standard errors are the delete-one-group jackknife over them. */
enum { NH_FIT_GROUPS = 20 };

/* t, var: n samples; returns 0, or 1 if the window holds fewer than 3 output times with a variance
 * (every estimate NAN then: a fit with no data). */
int nh_variance_fit_compute(const double *t, const double *var, long n, double window_start,
                            double h, int order, nh_variance_fit *fit);
/* Standard errors of fit's a, C, p, C/h^4 and C/h^(2r): the fit is repeated on the variance of every
 * group but one (groups[g * n + k]: the fitted observer's accumulator of group g at output time k) at the
 * output times the whole fit used, se = sqrt((G - 1)/G sum (theta_g - mean theta)^2) over the G non-empty
 * groups, of the first min(n_groups, NH_FIT_GROUPS), with G - 1 degrees of freedom (fit->dof, fit->t95).
 * Deterministic: for each g, the groups before g merged in index order, those after g merged from the
 * last back, then the two. Returns 1 (errors NAN) with fewer than 2 non-empty groups, or when C's error
 * is not finite; an error is NAN where a set of all groups but one holds fewer than 2 trajectories at an
 * output time the fit uses (it has no variance there: 9 trajectories in groups of 8 and 1) or gives no
 * estimate (p of a variance that is 0). */
int nh_variance_fit_jackknife(const double *t, const nh_accum *groups, int n_groups, long n, double window_start,
                              double h, int order, nh_variance_fit *fit);
/* Two-sided 95 % quantile of Student's t with dof degrees of freedom (t_0.975; NAN for dof < 1). */
double nh_student_t95(int dof);

/* What the data say against the variance law (bits of nh_variance_fit_caveats; 0: the law is supported). */
enum {
    NH_FIT_NO_FIT = 1,          /* no estimate: fewer than 3 output times with a variance, or a variance that overflows */
    NH_FIT_NO_ERRORS = 2,       /* no standard errors, so no judgement */
    NH_FIT_C_UNRESOLVED = 4,    /* C < 2 C_err (negative C included): no growth resolved, no random-walk rate */
    NH_FIT_FASTER = 8,          /* p - 2 p_err > 1: Var grows faster than linearly (drift, instability) */
    NH_FIT_CURVED = 16          /* |p - p_of_fit| > 2 p_err: Var is curved in t where a + C t is not */
};
unsigned nh_variance_fit_caveats(const nh_variance_fit *fit);
/* One sentence per caveat bit (the lowest set bit of `bit`), for summaries and printed reports. */
const char *nh_variance_fit_caveat_text(unsigned bit);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
