/* The house style of report figures (see figure.h). */
#include "figure.h"

#include "experiment.h"

#include <stdlib.h>
#include <string.h>

/* Okabe-Ito colours (colour-blind safe; its yellow left out: too faint on white). Method k has colour k mod 7,
 * dash pattern k mod 4 (solid, dashed, dash-dot, dotted) and a marker that differs within each group of seven
 * (filled shapes, then open ones, then filled ones in another order): every one of the 20 styles differs from
 * every other in colour or dash (7 and 4 are coprime) and in colour or marker, in print and in grey. */
static const char *const PALETTE[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000", "#E69F00", "#56B4E9"};
enum { N_COLOURS = 7, CHAR_PIXELS = 7, KEY_CHAR_PIXELS = 8 };
static const int DASHES[] = {1, 2, 4, 3};
static const int FILLED[] = {7, 5, 9, 11, 13, 15, 3}, OPEN[] = {6, 4, 8, 10, 12, 14, 1};

const char *nh_fig_colour(int k)
{
    return PALETTE[k % N_COLOURS];
}

void nh_gp_line_styles(FILE *g)
{
    for (int i = 0; i < NH_FIG_STYLES; ++i) {
        const int colour = i % N_COLOURS, group = i / N_COLOURS;
        const int marker = group == 1 ? OPEN[colour] : FILLED[(colour + 3 * group) % N_COLOURS];
        fprintf(g, "set style line %d lc rgb '%s' dt %d lw 1.5 pt %d ps 0.8\n", i + 1, PALETTE[colour], DASHES[i % 4],
                marker);
    }
}

void nh_fig_terminal(FILE *g, int svg, const char *path, int width, int height)
{
    /* the same text size in both: cairo's points are 4/3 of the SVG's pixels */
    fprintf(g, "set encoding utf8\nset terminal %s size %d,%d font 'Arial,%s'\nset output ", svg ? "svg" : "pngcairo",
            width, height, svg ? "13" : "10");
    nh_gp_string(g, path, "");
    /* what the key of the previous terminal's figure changed, undone */
    fputs("\nset datafile separator ','\nset datafile missing 'nan'\nset grid lc rgb '#dddddd'\n"
          "set border lw 1\nset tics scale 0.8\nunset key\nset autoscale xy\nunset label\nunset object\n", g);
    nh_gp_line_styles(g);
}

void nh_fig_begin_multiplot(FILE *g, const char *title, const char *suffix)
{
    fputs("set multiplot title ", g);
    nh_gp_string(g, title, suffix);
    fputs(" noenhanced\n", g);
}

void nh_fig_box_set(FILE *g, nh_fig_box box, int height, int letter)
{
    fprintf(g, "set lmargin at screen %.5f\nset rmargin at screen %.5f\nset tmargin at screen %.5f\n"
               "set bmargin at screen %.5f\n", (double)box.left / NH_FIG_WIDTH, (double)box.right / NH_FIG_WIDTH,
            1.0 - (double)box.top / height, 1.0 - (double)box.bottom / height);
    if (letter >= 0)
        fprintf(g, "set label 90 '(%c)' at screen %.5f, graph 1 offset 0, char 1.1 left\n", 'a' + letter % 26,
                (double)(box.left - 56) / NH_FIG_WIDTH);
    else
        fputs("unset label 90\n", g);
}

/* Characters (not bytes: UTF-8 continuation bytes do not count) of text[0, n). */
static int characters(const char *text, size_t n)
{
    int count = 0;
    for (size_t i = 0; i < n; ++i)
        count += ((unsigned char)text[i] & 0xC0) != 0x80;
    return count;
}

/* Where the first line of text (bytes [0, len)) ends when it is cut into `lines` lines of about equal length,
 * none longer than fit characters where the words allow: at the space nearest that length. */
static size_t line_end(const char *text, size_t len, int lines, int fit)
{
    const int total = characters(text, len), target = (total + lines - 1) / lines;
    size_t best = 0;
    int best_distance = 1 << 30;
    for (size_t i = 1; i < len; ++i)
        if (text[i] == ' ' && characters(text, i) <= fit) {
            const int distance = abs(characters(text, i) - target);
            if (distance < best_distance)
                best = i, best_distance = distance;
        }
    return best ? best : strcspn(text, " ");
}

int nh_fig_axis_label(FILE *g, char axis, const char *text, int pixels)
{
    const int fit = pixels / CHAR_PIXELS > 8 ? pixels / CHAR_PIXELS : 8;
    int lines = 0;
    fprintf(g, "set %clabel ", axis);
    while (*text) {
        const size_t len = strlen(text);
        const int chars = characters(text, len);
        const size_t end = chars > fit ? line_end(text, len, (chars + fit - 1) / fit, fit) : len;
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(end < sizeof line ? end : sizeof line - 1), text);
        fputs(lines++ ? ".\"\\n\"." : "", g);
        nh_gp_string(g, line, "");
        text += end;
        text += strspn(text, " ");
    }
    if (!lines)
        fputs("''", g);
    fputs(" noenhanced\n", g);
    return lines ? lines : 1;
}

void nh_fig_linear_axis(FILE *g, char axis)
{
    fprintf(g, "unset logscale %c\nset %ctics autofreq\nset m%ctics default\nset format %c '%%h'\n", axis, axis, axis,
            axis);
}

/* decades labelled 10^k; over more than 8 decades every s-th, s = ceil(decades / 8) */
void nh_fig_log_axis(FILE *g, char axis, const char *lo, const char *hi)
{
    fprintf(g, "set logscale %c\nset format %c '10^{%%L}'\nnh_step = ceil(log10(%s / %s) / 8.0)\n"
               "nh_step = nh_step < 1 ? 1 : nh_step\nset %ctics 10**nh_step\nset m%ctics (nh_step == 1 ? 10 : nh_step)\n",
            axis, axis, hi, lo, axis, axis);
}

/* Characters of one key entry: its title, the line sample and the gap to the next column. */
static int key_columns(const nh_fig_key *key, int *entries)
{
    size_t longest = key->reference ? strlen(key->reference) : 0;
    for (int k = 0; k < key->n_methods; ++k)
        longest = strlen(key->methods[k]) > longest ? strlen(key->methods[k]) : longest;
    *entries = key->n_methods + (key->reference != NULL);
    const int columns = (NH_FIG_WIDTH - 40) / (((int)longest + 10) * KEY_CHAR_PIXELS);
    return columns < 1 ? 1 : columns;
}

static int key_rows(const nh_fig_key *key)
{
    int entries;
    const int columns = key_columns(key, &entries);
    return (entries + columns - 1) / columns;
}

int nh_fig_key_height(const nh_fig_key *key)
{
    return key_rows(key) * NH_FIG_LINE + 16;
}

void nh_fig_key_draw(FILE *g, const nh_fig_key *key, int top, int height)
{
    fprintf(g, "unset label\nunset object\nunset arrow\nunset border\nunset tics\nunset grid\nunset xlabel\n"
               "unset ylabel\nunset logscale\nset xrange [0:1]\nset yrange [0:1]\nset lmargin at screen 0.02\n"
               "set rmargin at screen 0.98\nset tmargin at screen %.5f\nset bmargin at screen 0\n"
               "set key at screen 0.5, screen %.5f center top horizontal maxrows %d samplen 3 spacing 1.05 Left "
               "reverse noenhanced width 1 nobox\nplot ",
            1.0 - (double)top / height, 1.0 - (double)top / height, key_rows(key));
    for (int k = 0; k < key->n_methods; ++k) {
        fprintf(g, "%sNaN with linespoints ls %d title ", k ? ", " : "", k % NH_FIG_STYLES + 1);
        nh_gp_string(g, key->methods[k], "");
    }
    if (key->reference) {
        fputs(", NaN with lines lc rgb '#777777' dt 2 lw 1.2 title ", g);
        nh_gp_string(g, key->reference, "");
    }
    fputc('\n', g);
}

void nh_fig_slope_triangles(FILE *g, const int *orders, int n, int sign, int first)
{
    if (n > 4)
        n = 4;
    if (n < 1)
        return;
    double inverse_sum = 0;
    for (int i = 0; i < n; ++i)
        inverse_sum += 1.0 / orders[i];
    /* heights in decades of y: 55 % of the free strip, less where the triangles would not fit 60 % of x */
    fprintf(g, "nh_dx = log10(nh_xhi / nh_xlo)\nnh_sd = log10(nh_ylo / nh_ylox)\nnh_th = 0.55 * nh_sd\n"
               "nh_th = nh_th * %.6f > 0.6 * nh_dx ? 0.6 * nh_dx / %.6f : nh_th\nnh_yb = nh_ylox * 10**(0.3 * nh_sd)\n"
               "nh_x = log10(nh_xlo) + 0.05 * nh_dx\n", inverse_sum, inverse_sum);
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        fprintf(g, "nh_w = nh_th / %d\n", orders[i]);
        if (sign < 0)
            fprintf(g, "set object %d polygon from first 10**nh_x, nh_yb * 10**nh_th to first 10**nh_x, nh_yb to "
                       "first 10**(nh_x + nh_w), nh_yb to first 10**nh_x, nh_yb * 10**nh_th\n", id);
        else
            fprintf(g, "set object %d polygon from first 10**nh_x, nh_yb to first 10**(nh_x + nh_w), nh_yb to "
                       "first 10**(nh_x + nh_w), nh_yb * 10**nh_th to first 10**nh_x, nh_yb\n", id);
        fprintf(g, "set object %d fillstyle empty border lc rgb '#444444' lw 1 front\n"
                   "set label %d '1' at first 10**(nh_x + nh_w / 2), nh_yb offset 0, -0.7 center front\n"
                   "set label %d '%d' at first 10**(nh_x + %s), nh_yb * 10**(nh_th / 2) offset %s, 0 %s front\n"
                   "nh_x = nh_x + nh_w + 0.07 * nh_dx\n",
                id, id, id + 10, orders[i], sign < 0 ? "0" : "nh_w", sign < 0 ? "-0.6" : "0.6", sign < 0 ? "right" : "left");
    }
}
