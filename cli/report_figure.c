/* The figure of a report panel (PNG and SVG, drawn by gnuplot in the house style of figure.h): one plot
 * per plotted column against t, stacked and lettered, a curve per method, one key below them; a
 * work-precision panel's figure comes from cli/work_precision.c.
 *
 * On a log axis a signed quantity is drawn as its magnitude, and its label says so: sample paths as |x|,
 * and a 5-95 % band as the band of |x| over it (from the smaller to the larger magnitude of its two ends,
 * or from the axis' bottom when it holds 0) with |median| as its line. Drawn as it is, its negative part
 * would vanish from a log axis and leave fragments. */
#include "cli.h"
#include "experiment.h"
#include "figure.h"

#include "nhens/output.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { BOX_HEIGHT = 220 };

/* The observer named by COLUMN = NAME + suffix ("_path", "_band"), or NULL. */
static const nh_observer *suffixed_observer(const nh_observer_table *t, const char *column, const char *suffix)
{
    const size_t len = strlen(column), tail = strlen(suffix);
    if (len <= tail || strcmp(column + len - tail, suffix))
        return NULL;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len - tail), column);
    const int o = nh_observer_index(t, name);
    return o >= 0 ? nh_observer_at(t, o) : NULL;
}

const nh_observer *nh_report_path_observer(const nh_observer_table *t, const char *column)
{
    const nh_observer *o = suffixed_observer(t, column, "_path");
    return o && !o->event ? o : NULL;
}

const nh_observer *nh_report_band_observer(const nh_observer_table *t, const char *column)
{
    const nh_observer *o = suffixed_observer(t, column, "_band");
    return o && o->quantile_prefix ? o : NULL;
}

/* gnuplot SCRIPT, started without a shell (an argument vector, nothing interpreted); 0 on exit 0. Its
 * messages reach stderr as they are. */
static int run_gnuplot(const char *script)
{
    char *const args[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int status;
    if (posix_spawnp(&pid, "gnuplot", NULL, NULL, args, environ) != 0) {
        fprintf(stderr, "nhens report: cannot start gnuplot (is it installed?)\n");
        return 1;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A gnuplot string literal: single quotes, in which gnuplot expands nothing; a quote is doubled and
 * control characters (which would end the command) become spaces. Every text from an experiment file or
 * the command line reaches a script only through this. */
void nh_gp_string(FILE *g, const char *text, const char *suffix)
{
    fputc('\'', g);
    for (const char *part[2] = {text, suffix}, **s = part; s < part + 2; ++s)
        for (const char *c = *s; *c; ++c) {
            if (*c == '\'')
                fputc('\'', g);
            fputc((unsigned char)*c < 0x20 ? ' ' : *c, g);
        }
    fputc('\'', g);
}

/* "(abs(column('dH_q05')))" or "'dH_q05'": a using-column, as its magnitude or as it is. */
static void gp_column(FILE *g, const char *column, int magnitude)
{
    fputs(magnitude ? "(abs(column(" : "", g);
    nh_gp_string(g, column, "");
    fputs(magnitude ? ")))" : "", g);
}

/* One plot of a panel: column c of method k's file in the run folders below out. */
typedef struct column_plot {
    const char *out, *file;
    const nh_exp_panel *p;
    int c;
    int magnitude;   /* a signed quantity on a log axis: drawn as |x| */
    int first_pass;  /* the pass that only measures the range: no band's lower edge (it is that range's bottom) */
} column_plot;

static int run_file(const column_plot *cp, int k, const char *file, char *data)
{
    char dir[NH_PATH_MAX];
    return nh_report_run_dir(cp->out, cp->p, k, dir, sizeof dir, NULL) ||
           nh_path_format(data, NH_PATH_MAX, NULL, "%s/%s", dir, file);
}

/* Every sample path of every method, thin lines in the method's colour. */
static int plot_paths(FILE *g, const column_plot *cp, const nh_observer *obs)
{
    for (int k = 0; k < cp->p->n_methods; ++k)
        for (long i = 0; i < cp->p->paths; ++i) {
            char data[NH_PATH_MAX], column[96];
            if (run_file(cp, k, "paths.csv", data))
                return 1;
            snprintf(column, sizeof column, "%s_%ld", obs->name, i);
            fputs(k || i ? ", " : "", g);
            nh_gp_string(g, data, "");
            fputs(" using 't':", g);
            gp_column(g, column, cp->magnitude);
            fprintf(g, " with lines ls %d dt 1 lw 0.8 notitle", k % NH_FIG_STYLES + 1);
        }
    return 0;
}

/* Per method: the 5-95 % band, filled and translucent, and the median as a line (magnitudes: see above). */
static int plot_band(FILE *g, const column_plot *cp, const nh_observer *obs)
{
    for (int k = 0; k < cp->p->n_methods; ++k) {
        char data[NH_PATH_MAX], q[3][96];
        if (run_file(cp, k, "quantiles.csv", data))
            return 1;
        for (int i = 0; i < 3; ++i)
            snprintf(q[i], sizeof q[i], "%s_%s", obs->quantile_prefix, nh_quantile_suffixes[i]);
        fputs(k ? ", " : "", g);
        nh_gp_string(g, data, "");
        fputs(" using 't':", g);
        if (!cp->magnitude) {
            nh_gp_string(g, q[0], "");
            fputc(':', g);
            nh_gp_string(g, q[2], "");
        } else {   /* nh_lo, nh_hi: the image of [a, b] under |x| (measure_ranges defines them) */
            if (!cp->first_pass) {
                fputs("(nh_lo(column(", g);
                nh_gp_string(g, q[0], "");
                fputs("), column(", g);
                nh_gp_string(g, q[2], "");
                fprintf(g, "), nh_ylo_%d)):", cp->c);
            }
            fputs("(nh_hi(column(", g);
            nh_gp_string(g, q[0], "");
            fputs("), column(", g);
            nh_gp_string(g, q[2], "");
            fputs(")))", g);
        }
        fprintf(g, cp->first_pass && cp->magnitude ? " with lines notitle, "
                   : " with filledcurves fs transparent solid 0.18 noborder lc rgb '%s' notitle, ", nh_fig_colour(k));
        nh_gp_string(g, data, "");
        fputs(" using 't':", g);
        gp_column(g, q[1], cp->magnitude);
        fprintf(g, " with lines ls %d notitle", k % NH_FIG_STYLES + 1);
    }
    return 0;
}

/* Whether some method's run has a finite value to draw in plotted column c (a band: its median; sample
 * paths: any path). */
static int column_has_data(const column_plot *cp)
{
    const nh_exp_panel *p = cp->p;
    const nh_observer *path = nh_report_path_observer(p->observers, p->plot[cp->c]), *band = nh_report_band_observer(p->observers, p->plot[cp->c]);
    int found = 0;
    for (int k = 0; k < p->n_methods && !found; ++k) {
        char data[NH_PATH_MAX], column[96];
        if (run_file(cp, k, path ? "paths.csv" : band ? "quantiles.csv" : cp->file, data))
            return 0;
        for (long i = 0; i < (path ? p->paths : 1) && !found; ++i) {
            if (path)
                snprintf(column, sizeof column, "%s_%ld", path->name, i);
            else if (band)
                snprintf(column, sizeof column, "%s_%s", band->quantile_prefix, nh_quantile_suffixes[1]);
            else
                snprintf(column, sizeof column, "%s", p->plot[cp->c]);
            found = nh_csv_column_has_finite(data, column) == 1;
        }
    }
    return found;
}

/* A plot without a finite value in any run (a section never crossed, every trajectory failed): empty axes
 * over [0, T] with a note saying so, where gnuplot would stop on an undefined range. */
static void plot_no_data(FILE *g, const nh_exp_panel *p, int c)
{
    char note[160];
    snprintf(note, sizeof note, "no finite value of %s in any run: every value is nan", p->plot[c]);
    fprintf(g, "unset logscale y\nset xrange [0:%.17g]\nset yrange [1:10]\nunset ytics\nset label 1 ", p->T);
    nh_gp_string(g, note, "");
    fputs(" at graph 0.5,0.5 center noenhanced\nplot NaN notitle\nunset label 1\nset autoscale xy\n", g);
}

/* The plot command of column cp->c (its curves, the reference line where it belongs). */
static int plot_command(FILE *g, const column_plot *cp)
{
    const nh_exp_panel *p = cp->p;
    const char *column = p->plot[cp->c];
    const nh_observer *path = nh_report_path_observer(p->observers, column), *band = nh_report_band_observer(p->observers, column);
    /* a marker every tenth of the curve */
    const long rows = (long)(p->T / (p->h * (double)p->every)) + 1, every_marker = rows / 10 > 1 ? rows / 10 : 1;
    fprintf(g, "set xrange [0:%.17g]\nplot ", p->T); /* the run's horizon, not the next tic after it */
    if ((path && plot_paths(g, cp, path)) || (band && plot_band(g, cp, band)))
        return 1;
    for (int k = 0; k < p->n_methods && !path && !band; ++k) {
        char data[NH_PATH_MAX];
        if (run_file(cp, k, cp->file, data))
            return 1;
        fputs(k ? ", " : "", g);
        nh_gp_string(g, data, "");
        fputs(" using 't':", g);
        nh_gp_string(g, column, "");
        fprintf(g, " with linespoints ls %d pi %ld notitle", k % NH_FIG_STYLES + 1, every_marker);
    }
    if (p->reference_column[0] && !strcmp(p->reference_column, column))
        fprintf(g, ", %.17g * x**%.17g with lines lc rgb '#777777' dt 2 lw 1.2 notitle", p->reference_a,
                p->reference_p);
    fputc('\n', g);
    return 0;
}

/* The y label of column c: its statistic, "|x|" for a signed quantity drawn as its magnitude. */
static void column_label(const column_plot *cp, char *label, size_t len)
{
    const nh_exp_panel *p = cp->p;
    const nh_observer *path = nh_report_path_observer(p->observers, p->plot[cp->c]), *band = nh_report_band_observer(p->observers, p->plot[cp->c]);
    const char *bar = cp->magnitude ? "|" : "";
    if (band && cp->magnitude)
        snprintf(label, len, "|%s|: |median| and |5–95 %% band|", band->symbol);
    else if (band)
        snprintf(label, len, "%s: median and 5–95 %% band", band->symbol);
    else if (path)
        snprintf(label, len, "%s%s%s (%ld sample paths)", bar, path->symbol, bar, p->paths);
    else
        nh_column_label(p->observers, p->plot[cp->c], label, len); /* known: the experiment's validation checked every column */
}

/* The plots' boxes, stacked, and where the key starts (pixels from the top). */
static nh_fig_box column_box(int c)
{
    const int top = NH_FIG_TITLE + NH_FIG_LETTER + c * (BOX_HEIGHT + NH_FIG_TICKS + NH_FIG_LETTER);
    return (nh_fig_box){NH_FIG_LEFT, NH_FIG_WIDTH - NH_FIG_RIGHT, top, top + BOX_HEIGHT};
}

static int key_top(const nh_exp_panel *p)
{
    return column_box(p->n_plot - 1).bottom + NH_FIG_TICKS + NH_FIG_LINE + 8;
}

typedef struct panel_plot {
    const char *out;
    const nh_exp_panel *panel;
    char figure[2][NH_PATH_MAX]; /* temporaries gnuplot writes; renamed onto out/PANEL.png and .svg */
} panel_plot;

/* The first pass: the range of every log axis with data (nh_ylo_C, nh_yhi_C), where its tics and a band's
 * lower edge come from. */
static int measure_ranges(FILE *g, const panel_plot *pp, const char *file, const int *has_data)
{
    const nh_exp_panel *p = pp->panel;
    fputs("nh_lo(a, b, floor) = a > 0 || b < 0 ? (abs(a) < abs(b) ? abs(a) : abs(b)) : floor\n"
          "nh_hi(a, b) = abs(a) > abs(b) ? abs(a) : abs(b)\nset datafile separator ','\n"
          "set datafile missing 'nan'\nset table '/dev/null'\nset logscale y\n", g);
    for (int c = 0; c < p->n_plot; ++c) {
        const int magnitude = nh_report_path_observer(p->observers, p->plot[c]) || nh_report_band_observer(p->observers, p->plot[c]);
        const column_plot cp = {pp->out, file, p, c, magnitude, 1};
        if (!p->logy || !has_data[c])
            continue;
        if (plot_command(g, &cp))
            return 1;
        fprintf(g, "nh_ylo_%d = GPVAL_Y_MIN\nnh_yhi_%d = GPVAL_Y_MAX\n", c, c);
    }
    fputs("unset table\nunset logscale y\n", g);
    return 0;
}

static int draw_columns(FILE *g, const panel_plot *pp, const char *file, const int *has_data, int height)
{
    const nh_exp_panel *p = pp->panel;
    for (int c = 0; c < p->n_plot; ++c) {
        const int magnitude = p->logy && (nh_report_path_observer(p->observers, p->plot[c]) || nh_report_band_observer(p->observers, p->plot[c]));
        const column_plot cp = {pp->out, file, p, c, magnitude, 0};
        char label[256], bottom[24], top[24];
        nh_fig_box_set(g, column_box(c), height, p->n_plot > 1 ? c : -1);
        nh_fig_linear_axis(g, 'x');
        nh_fig_axis_label(g, 'x', c == p->n_plot - 1 ? "t" : "", NH_FIG_WIDTH);
        column_label(&cp, label, sizeof label);
        nh_fig_axis_label(g, 'y', label, BOX_HEIGHT);
        if (!has_data[c]) {
            plot_no_data(g, p, c);
            continue;
        }
        snprintf(bottom, sizeof bottom, "nh_ylo_%d", c);
        snprintf(top, sizeof top, "nh_yhi_%d", c);
        if (p->logy)
            nh_fig_log_axis(g, 'y', bottom, top);
        else
            nh_fig_linear_axis(g, 'y');
        if (plot_command(g, &cp))
            return 1;
    }
    return 0;
}

static int script_body(FILE *g, const void *data)
{
    const panel_plot *pp = data;
    const nh_exp_panel *p = pp->panel;
    if (p->n_steps)
        return nh_work_precision_script(g, pp->out, p, pp->figure[0], pp->figure[1]);
    const char *file = p->smooth > 0 ? "smoothed.csv" : "timeseries.csv";
    int has_data[NH_EXP_MAX_PLOTS];
    for (int c = 0; c < p->n_plot; ++c)
        has_data[c] = column_has_data(&(column_plot){pp->out, file, p, c, 0, 0});
    if (measure_ranges(g, pp, file, has_data))
        return 1;
    const nh_fig_key key = {p->methods, p->n_methods, NULL};
    char reference[160];
    nh_fig_key with_reference = key;
    if (p->reference_column[0]) {
        snprintf(reference, sizeof reference, "%g t^%g", p->reference_a, p->reference_p);
        with_reference.reference = p->reference_label[0] ? p->reference_label : reference;
    }
    const int height = key_top(p) + nh_fig_key_height(&with_reference);
    char smoothing[96] = "";
    if (p->smooth > 0)
        snprintf(smoothing, sizeof smoothing, " (running means over %g time units)", p->smooth);
    for (int term = 0; term < 2; ++term) {
        nh_fig_terminal(g, term, pp->figure[term], NH_FIG_WIDTH, height);
        nh_fig_begin_multiplot(g, p->title[0] ? p->title : p->name, smoothing);
        if (draw_columns(g, pp, file, has_data, height))
            return 1;
        nh_fig_key_draw(g, &with_reference, key_top(p), height);
        fputs("unset multiplot\nunset output\n", g);
    }
    return 0;
}

/* One gnuplot script per panel: PNG and SVG. The figures appear only whole: gnuplot writes temporaries,
 * renamed after it succeeded. */
int nh_report_plot_panel(const char *out, const nh_exp_panel *p)
{
    static const char *const ext[2] = {"png", "svg"};
    panel_plot pp = {out, p, {"", ""}};
    char script[NH_PATH_MAX], final[NH_PATH_MAX];
    nh_error err = {0};
    int bad = nh_path_format(script, sizeof script, &err, "%s/%s/plot.gp", out, p->name);
    for (int i = 0; i < 2; ++i)
        bad = bad || nh_path_format(pp.figure[i], sizeof pp.figure[i], &err, "%s/.%s.%s.tmp.%ld", out, p->name,
                                    ext[i], (long)getpid());
    for (int i = 0; i < 2 && !bad; ++i) { /* gnuplot writes into files this process made, not through a link */
        FILE *own = nh_create_own_file(pp.figure[i]);
        bad = !own || fclose(own) != 0;
        if (bad)
            nh_fail(&err, NH_ERR_IO, "cannot write '%s': %s", pp.figure[i], strerror(errno));
    }
    bad = bad || (p->n_steps && nh_work_precision_write_csv(out, p, &err)) ||
          nh_write_file(script, script_body, &pp, &err) || run_gnuplot(script);
    if (bad && err.msg[0])
        fprintf(stderr, "nhens report: %s\n", err.msg);
    for (int i = 0; i < 2; ++i) {
        if (!bad && nh_path_format(final, sizeof final, &err, "%s/%s.%s", out, p->name, ext[i]))
            fprintf(stderr, "nhens report: %s\n", err.msg), bad = 1;
        if (!bad && rename(pp.figure[i], final) != 0) {
            fprintf(stderr, "nhens report: cannot write %s: %s\n", final, strerror(errno));
            bad = 1;
        }
        if (pp.figure[i][0])
            remove(pp.figure[i]);
    }
    return bad;
}
