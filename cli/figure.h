/* The house style of every figure `nhens report` draws (cli/figure.c), shared by the time-series figures
 * (cli/report_figure.c) and the work-precision figures (cli/work_precision.c); gnuplot scripts, PNG and SVG.
 *
 * A figure is W = NH_FIG_WIDTH pixels wide: its title on top, its plots in boxes placed in pixels (no
 * margin left to gnuplot's guesses, so nothing is clipped), lettered (a), (b), ... when there are several,
 * and one key for the whole figure in a strip below them. Every log axis has its major tics at powers of
 * ten labelled 10^k (every 10^s-th decade when the range spans many); every linear axis labels its tics
 * with %h (k×10^m). Methods keep one style each in every figure: Okabe-Ito colour (colour-blind safe),
 * dash pattern and marker, 20 distinct styles (figure.c). */
#ifndef NHENS_FIGURE_H
#define NHENS_FIGURE_H

#include <stdio.h>

enum {
    NH_FIG_WIDTH = 900,
    NH_FIG_TITLE = 44,        /* pixels above the first box: the figure's title */
    NH_FIG_LETTER = 24,       /* pixels above a box: its letter */
    NH_FIG_TICKS = 26,        /* pixels below a box: tic labels */
    NH_FIG_LINE = 17,         /* pixels of one line of text (labels, key rows) */
    NH_FIG_LEFT = 112,        /* pixels left of a box: tic labels and a y label of two lines */
    NH_FIG_RIGHT = 30,
    NH_FIG_STYLES = 20        /* distinct method styles (ls 1 to 20) */
};

/* A plot's box, in pixels from the figure's left and top edges. */
typedef struct nh_fig_box {
    int left, right, top, bottom;
} nh_fig_box;

/* What the key lists: every method of the panel, then an optional reference line. */
typedef struct nh_fig_key {
    const char (*methods)[128];
    int n_methods;
    const char *reference;    /* NULL: none */
} nh_fig_key;

/* The terminal (PNG with cairo, or SVG) at width x height, the output file, the CSV conventions and the
 * methods' line styles. */
void nh_fig_terminal(FILE *g, int svg, const char *path, int width, int height);
/* The figure's title (multiplot), not interpreted (gnuplot's enhanced text is off for it). */
void nh_fig_begin_multiplot(FILE *g, const char *title, const char *suffix);
/* The next plot's box; its letter (a), (b), ... above its top-left corner when letter >= 0. */
void nh_fig_box_set(FILE *g, nh_fig_box box, int height, int letter);
/* An axis label (axis 'x' or 'y'), broken into lines that fit `pixels` (the box's side); how many lines. */
int nh_fig_axis_label(FILE *g, char axis, const char *text, int pixels);
/* Tics of a linear axis (%h labels), and of a log axis whose range is [lo, hi] (gnuplot variables from a
 * first pass, or numbers): decades labelled 10^k. */
void nh_fig_linear_axis(FILE *g, char axis);
void nh_fig_log_axis(FILE *g, char axis, const char *lo, const char *hi);
/* The key strip's height in pixels for `key` across the figure's width, and the key itself, drawn as the
 * multiplot's last (empty) plot with its top edge `top` pixels below the figure's top. */
int nh_fig_key_height(const nh_fig_key *key);
void nh_fig_key_draw(FILE *g, const nh_fig_key *key, int top, int height);
/* A reference slope triangle per order (orders[i] > 0, at most 4 drawn) in the strip [ylo_ext, ylo] below
 * every point of a log-log plot whose ranges are [xlo, xhi] x [ylo_ext, yhi] (gnuplot variables): legs
 * labelled 1 and the order, the hypotenuse falling (sign < 0: error against cost) or rising (sign > 0:
 * error against step size) with that slope. `first` numbers the objects and labels. */
void nh_fig_slope_triangles(FILE *g, const int *orders, int n, int sign, int first);
/* The styles of line ls k: its colour (for fills). */
const char *nh_fig_colour(int k);

#endif
