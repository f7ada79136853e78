/* Work-precision panels of `nhens report` (see experiment.h): per method, the panel's error measure at
 * every step size against what it cost (the method's thread-seconds over the ensemble, from summary.json's
 * performance.method_seconds, which leaves out the reference solution of the global error), the observed
 * order of the error in h, the data table (PANEL/work_precision.csv), the log-log figure and report.md's
 * table. A claim on such a panel reads its smallest step size's run plus the observed order. */
#include "experiment.h"
#include "figure.h"
#include "report_doc.h"

#include "nhens/files.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One (method, step size) point: the error measure with its standard error (NAN if none). */
typedef struct wp_point {
    double h, steps, cost, ns_per_step, error, error_err, failures;
} wp_point;

/* The point of method k at step size j; 0, or 1 when the run has no summary. */
static int wp_point_at(const char *out, const nh_exp_panel *p, int k, int j, wp_point *pt)
{
    nh_exp_panel run;
    char dir[NH_PATH_MAX];
    nh_experiment_step_run(p, j, &run);
    cJSON *s = nh_report_run_dir(out, &run, k, dir, sizeof dir, NULL) ? NULL : nh_report_load_summary(dir);
    if (!s)
        return 1;
    *pt = (wp_point){.h = run.h, .steps = nh_report_json_number(s, "performance", "steps"),
                     .cost = nh_report_json_number(s, "performance", "method_seconds"),
                     .ns_per_step = nh_report_json_number(s, "performance", "ns_per_step"),
                     .failures = nh_report_json_number(s, "failures", "count")};
    pt->error = nh_claim_metric_value(s, p->error, &pt->error_err);
    cJSON_Delete(s);
    return 0;
}

/* Least-squares slope of log |error| against log h over the points with a positive finite error, and its
 * standard error from the residuals (NAN with fewer than 3 points). */
static double observed_order(const wp_point *pts, int n, double *stderr_out)
{
    double x[NH_EXP_MAX_STEPS], y[NH_EXP_MAX_STEPS], mx = 0, my = 0;
    int m = 0;
    for (int i = 0; i < n; ++i)
        if (isfinite(pts[i].error) && pts[i].error > 0) {
            x[m] = log(pts[i].h);
            y[m] = log(fabs(pts[i].error));
            mx += x[m];
            my += y[m++];
        }
    *stderr_out = NAN;
    if (m < 2)
        return NAN;
    mx /= m;
    my /= m;
    double sxx = 0, sxy = 0, rss = 0;
    for (int i = 0; i < m; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    const double slope = sxx > 0 ? sxy / sxx : NAN;
    for (int i = 0; i < m; ++i) {
        const double r = y[i] - my - slope * (x[i] - mx);
        rss += r * r;
    }
    if (m > 2 && sxx > 0)
        *stderr_out = sqrt(rss / (m - 2) / sxx);
    return slope;
}

/* Every point of method k (missing runs are left out); the count. */
static int method_points(const char *out, const nh_exp_panel *p, int k, wp_point *pts)
{
    int n = 0;
    for (int j = 0; j < p->n_steps; ++j)
        n += wp_point_at(out, p, k, j, &pts[n]) == 0;
    return n;
}

typedef struct wp_table {
    const char *out;
    const nh_exp_panel *panel;
} wp_table;

static int csv_body(FILE *f, const void *data)
{
    const wp_table *t = data;
    const nh_exp_panel *p = t->panel;
    fprintf(f, "method_index,method,h,steps,method_seconds,ns_per_step,%s,%s_stderr,failures\n", p->error, p->error);
    for (int k = 0; k < p->n_methods; ++k) {
        wp_point pts[NH_EXP_MAX_STEPS];
        const int n = method_points(t->out, p, k, pts);
        for (int i = 0; i < n; ++i)
            fprintf(f, "%d,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", k + 1, p->methods[k], pts[i].h,
                    pts[i].steps, pts[i].cost, pts[i].ns_per_step, pts[i].error, pts[i].error_err, pts[i].failures);
    }
    return ferror(f);
}

int nh_work_precision_write_csv(const char *out, const nh_exp_panel *p, nh_error *err)
{
    char path[NH_PATH_MAX];
    wp_table t = {out, p};
    if (nh_path_format(path, sizeof path, err, "%s/%s/work_precision.csv", out, p->name))
        return NH_ERR_INPUT;
    return nh_write_file(path, csv_body, &t, err);
}

/* "error_final": its words on the figure's axis. */
static const char *metric_label(const char *metric)
{
    static const char *const labels[][2] = {
        {"error_final", "global error at T, ensemble mean (‖z − z_ref‖ / ‖z_ref‖)"},
        {"error_final_max", "global error at T, ensemble max (‖z − z_ref‖ / ‖z_ref‖)"},
        {"dH_absmax", "max |H(t) − H(0)|"},
        {"rel_energy_absmax", "max |H(t) − H(0)| / |H(0)|"},
        {"constraint_max", "max ‖A(q)v‖"},
        {"latitude_last_tenth", "latitude error, last tenth of T (rad)"},
        {"passenger_energy_absmax", "max |E(t) − E(0)| (passenger)"},
        {"C_over_h4", "C / h^4 of Var dH = a + C t"}};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; ++i)
        if (!strcmp(labels[i][0], metric))
            return labels[i][1];
    return metric;
}

/* The distinct orders of the panel's methods (method.order of their summaries), ascending; how many. */
static int method_orders(const char *out, const nh_exp_panel *p, int *orders)
{
    int n = 0;
    for (int k = 0; k < p->n_methods; ++k) {
        nh_exp_panel run;
        char dir[NH_PATH_MAX];
        nh_experiment_step_run(p, p->n_steps - 1, &run);
        cJSON *s = nh_report_run_dir(out, &run, k, dir, sizeof dir, NULL) ? NULL : nh_report_load_summary(dir);
        const double order = s ? nh_report_json_number(cJSON_GetObjectItemCaseSensitive(s, "method"), NULL, "order") : NAN;
        cJSON_Delete(s);
        int at = 0;
        while (at < n && orders[at] < order)
            ++at;
        if (!(order >= 1 && order <= 12) || (at < n && orders[at] == (int)order))
            continue;
        memmove(orders + at + 1, orders + at, (size_t)(n - at) * sizeof *orders);
        orders[at] = (int)order;
        ++n;
    }
    return n;
}

enum { WP_BOX_HEIGHT = 380, WP_GAP = 84 };

/* (a) error against cost, (b) error against step size: side by side. */
static nh_fig_box wp_box(int right)
{
    const int width = (NH_FIG_WIDTH - NH_FIG_LEFT - NH_FIG_RIGHT - WP_GAP) / 2, top = NH_FIG_TITLE + NH_FIG_LETTER;
    const int left = NH_FIG_LEFT + right * (width + WP_GAP);
    return (nh_fig_box){left, left + width, top, top + WP_BOX_HEIGHT};
}

/* Every method's points, x from CSV column `x` (5: cost, 3: h), with error bars where the measure has them. */
static void wp_plot_command(FILE *g, const char *data, const nh_exp_panel *p, int x)
{
    const int with_errors = !strcmp(p->error, "error_final") || !strcmp(p->error, "C_over_h4");
    fputs("plot ", g);
    for (int k = 0; k < p->n_methods; ++k) {
        fprintf(g, "%s", k ? ", " : "");
        nh_gp_string(g, data, "");
        if (with_errors) /* the bar's lower end kept above 0 for the log axis */
            fprintf(g, " using %d:($1 == %d ? $7 : NaN):($7 > $8 ? $7 - $8 : $7 / 10):($7 + $8) with yerrorlines ls %d "
                       "notitle", x, k + 1, k % NH_FIG_STYLES + 1);
        else
            fprintf(g, " using %d:($1 == %d ? $7 : NaN) with linespoints ls %d notitle", x, k + 1, k % NH_FIG_STYLES + 1);
    }
    fputc('\n', g);
}

/* The first pass: the ranges of cost, step size and error, and the free strip below every point where the
 * slope triangles go (22 % of the error axis). */
static void wp_measure(FILE *g, const char *data, const nh_exp_panel *p)
{
    fputs("set datafile separator ','\nset datafile missing 'nan'\nset table '/dev/null'\nset logscale xy\n", g);
    wp_plot_command(g, data, p, 5);
    fputs("nh_cxlo = GPVAL_X_MIN\nnh_cxhi = GPVAL_X_MAX\nnh_ylo = GPVAL_Y_MIN\nnh_yhi = GPVAL_Y_MAX\n", g);
    wp_plot_command(g, data, p, 3);
    fputs("nh_hxlo = GPVAL_X_MIN\nnh_hxhi = GPVAL_X_MAX\nunset table\n"
          "nh_ylox = nh_ylo / 10**(0.22 / 0.78 * log10(nh_yhi / nh_ylo))\n", g);
}

static void wp_plot(FILE *g, const char *data, const nh_exp_panel *p, int right, int height, const int *orders,
                    int n_orders)
{
    const nh_fig_box box = wp_box(right);
    fprintf(g, "unset object\nunset label\nnh_xlo = nh_%cxlo\nnh_xhi = nh_%cxhi\nset xrange [nh_xlo:nh_xhi]\n"
               "set yrange [nh_ylox:nh_yhi]\n", right ? 'h' : 'c', right ? 'h' : 'c');
    nh_fig_box_set(g, box, height, right);
    nh_fig_log_axis(g, 'x', "nh_xlo", "nh_xhi");
    nh_fig_log_axis(g, 'y', "nh_ylox", "nh_yhi");
    nh_fig_axis_label(g, 'x', right ? "step size h" : "cost: thread-seconds of the method over the ensemble",
                      box.right - box.left);
    nh_fig_axis_label(g, 'y', right ? "" : metric_label(p->error), box.bottom - box.top);
    nh_fig_slope_triangles(g, orders, n_orders, right ? 1 : -1, 1);
    wp_plot_command(g, data, p, right ? 3 : 5);
}

int nh_work_precision_script(FILE *g, const char *out, const nh_exp_panel *p, const char *png, const char *svg)
{
    char data[NH_PATH_MAX];
    if (nh_path_format(data, sizeof data, NULL, "%s/%s/work_precision.csv", out, p->name))
        return 1;
    int orders[NH_EXP_MAX_METHODS];
    const int n_orders = method_orders(out, p, orders);
    const nh_fig_key key = {p->methods, p->n_methods, NULL};
    const int key_top = wp_box(0).bottom + NH_FIG_TICKS + 2 * NH_FIG_LINE + 8;
    const int height = key_top + nh_fig_key_height(&key);
    wp_measure(g, data, p);
    for (int term = 0; term < 2; ++term) {
        nh_fig_terminal(g, term, term ? svg : png, NH_FIG_WIDTH, height);
        nh_fig_begin_multiplot(g, p->title[0] ? p->title : p->name, "");
        wp_plot(g, data, p, 0, height, orders, n_orders);
        wp_plot(g, data, p, 1, height, orders, n_orders);
        nh_fig_key_draw(g, &key, key_top, height);
        fputs("unset multiplot\nunset output\n", g);
    }
    return 0;
}

void nh_work_precision_table(nh_table *t, char *note, size_t len, const char *out, const nh_exp_panel *p)
{
    snprintf(note, len, "Error measure: `%s` (%s); cost: the method's thread-seconds over the ensemble (the reference "
                        "solution excluded). Observed order: least-squares slope of log error against log h (± its "
                        "standard error from the residuals).", p->error, metric_label(p->error));
    static const char *const headers[] = {"method", "h", "steps (ensemble)", NULL, "thread-s", "ns/step", "failures",
                                          "observed order"};
    nh_table_init(t, 8);
    for (int i = 0; i < 8; ++i)
        nh_table_add(t, NH_CELL_TEXT, "%s", headers[i] ? headers[i] : p->error);
    for (int k = 0; k < p->n_methods; ++k) {
        wp_point pts[NH_EXP_MAX_STEPS];
        const int n = method_points(out, p, k, pts);
        double order_err, order = observed_order(pts, n, &order_err);
        char error[64], observed[64];
        nh_report_value_text(observed, sizeof observed, order, order_err);
        for (int i = 0; i < n; ++i) {
            nh_report_value_text(error, sizeof error, pts[i].error, pts[i].error_err);
            nh_table_add(t, NH_CELL_CODE, "%s", p->methods[k]);
            nh_table_add(t, NH_CELL_TEXT, "%g", pts[i].h);
            nh_table_add(t, NH_CELL_TEXT, "%.0f", pts[i].steps);
            nh_table_add(t, NH_CELL_TEXT, "%s", error);
            nh_table_add(t, NH_CELL_TEXT, "%.3g", pts[i].cost);
            nh_table_add(t, NH_CELL_TEXT, "%.0f", pts[i].ns_per_step);
            nh_table_add(t, NH_CELL_TEXT, "%.0f", pts[i].failures);
            nh_table_add(t, NH_CELL_TEXT, "%s", i == 0 ? observed : "");
        }
    }
}

cJSON *nh_work_precision_summary(const char *out, const nh_exp_panel *p, int k)
{
    nh_exp_panel run;
    char dir[NH_PATH_MAX];
    nh_experiment_step_run(p, p->n_steps - 1, &run); /* steps are kept largest first */
    cJSON *s = nh_report_run_dir(out, &run, k, dir, sizeof dir, NULL) ? NULL : nh_report_load_summary(dir);
    if (!s)
        return NULL;
    wp_point pts[NH_EXP_MAX_STEPS];
    double order_err, order = observed_order(pts, method_points(out, p, k, pts), &order_err);
    cJSON *wp = cJSON_AddObjectToObject(s, "work_precision");
    cJSON_AddNumberToObject(wp, "error_order", order);
    cJSON_AddNumberToObject(wp, "error_order_stderr", order_err);
    return s;
}
