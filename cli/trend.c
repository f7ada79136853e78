/* Trend metrics of claims: `FUNC(COLUMN[,FROM[,TO]])` reads the column COLUMN of a run's timeseries.csv
 * against t and measures how it grows, with a standard error. This module owns their syntax and their
 * arithmetic:
 *   slope(C, FROM, TO)   least-squares slope of C against t over [FROM T, TO T] (default [0.1, 1], after the
 *                        start-up, as the variance fit);
 *   growth(C)            mean of C over the last tenth of the run divided by its mean over the first (t > 0);
 *   loglog(C, FROM, TO)  least-squares slope p of ln|C| against ln t over [FROM T, TO T] (default [0.1, 1]):
 *                        about 0 for a bounded error, 1 for a linear drift, growing with t for exponential
 *                        growth (e^{lt} has p = l t);
 * T is the last output time with a live trajectory; non-finite samples (nan rows of event columns, failed runs) are skipped. The
 * standard error is a delete-one-block jackknife over NH_TREND_BLOCKS contiguous blocks (in time) of the
 * points the metric uses: neighbouring output times are correlated, blocks of them much less so (Kuensch
 * 1989). A single trajectory has no other source of error; an ensemble's column is already a statistic
 * over trajectories (timeseries.csv keeps no per-group series), so its error comes from the blocks too. */
#include "experiment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nhens/params.h"
#include "nhens/stats.h"

enum { NH_TREND_BLOCKS = 20, NH_TREND_MIN_POINTS = 6 };

typedef enum trend_kind { TREND_SLOPE, TREND_GROWTH, TREND_LOGLOG } trend_kind;

typedef struct trend_spec {
    trend_kind kind;
    char column[64];
    double from, to;        /* window as fractions of T (slope, loglog) */
} trend_spec;

typedef struct series {
    double *t, *y;
    long n;
    double T;               /* growth: the run's last output time (which tenth a point is in) */
} series;

static int parse_fractions(char *args, trend_spec *s, nh_error *err)
{
    char *comma = strchr(args, ',');
    if (comma)
        *comma = '\0';
    if (nh_parse_double(args, &s->from) || (comma && nh_parse_double(comma + 1, &s->to)))
        return nh_fail(err, NH_ERR_INPUT, "a window of a trend metric is FROM[,TO], fractions of T");
    if (!(s->from >= 0 && s->from < s->to && s->to <= 1))
        return nh_fail(err, NH_ERR_INPUT, "a trend window needs 0 <= FROM < TO <= 1 (got %g, %g)", s->from, s->to);
    return NH_OK;
}

static int trend_parse(const char *metric, trend_spec *s, nh_error *err)
{
    static const char *const names[] = {"slope", "growth", "loglog"};
    char buf[64];
    const char *open = strchr(metric, '(');
    const size_t len = strlen(metric);
    if (!open || len >= sizeof buf || metric[len - 1] != ')')
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not FUNC(COLUMN[,FROM[,TO]])", metric);
    memcpy(buf, metric, len - 1);
    buf[len - 1] = '\0';
    buf[open - metric] = '\0';
    char *column = buf + (open - metric) + 1, *args = strchr(column, ',');
    *s = (trend_spec){.kind = TREND_SLOPE, .from = 0.1, .to = 1.0};
    int found = 0;
    for (int k = 0; k < 3 && !found; ++k)
        if (!strcmp(buf, names[k]))
            s->kind = (trend_kind)k, found = 1;
    if (!found)
        return nh_fail(err, NH_ERR_INPUT, "unknown trend '%s' (slope, growth or loglog)", buf);
    if (args)
        *args++ = '\0';
    char label[128];
    if (nh_column_label(nh_observer_table_builtin(), column, label, sizeof label) < 0 || strlen(column) >= sizeof s->column)
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not a timeseries.csv column", column);
    strcpy(s->column, column);
    if (args && s->kind == TREND_GROWTH)
        return nh_fail(err, NH_ERR_INPUT, "growth(COLUMN) takes no window (it compares the first and last tenths)");
    return args ? parse_fractions(args, s, err) : NH_OK;
}

int nh_trend_metric_check(const char *metric, nh_error *err)
{
    trend_spec s;
    return trend_parse(metric, &s, err);
}

/* Index of `column` in the comma-separated header line, or -1. */
static int column_index(char *header, const char *column)
{
    header[strcspn(header, "\r\n")] = '\0';
    int i = 0;
    for (char *tok = strtok(header, ","); tok; tok = strtok(NULL, ","), ++i)
        if (!strcmp(tok, column))
            return i;
    return -1;
}

static int series_push(series *s, long *cap, double t, double y)
{
    if (s->n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        double *nt = realloc(s->t, (size_t)*cap * sizeof *nt);
        if (nt)
            s->t = nt;
        double *ny = nt ? realloc(s->y, (size_t)*cap * sizeof *ny) : NULL;
        if (!ny)
            return 1;
        s->y = ny;
    }
    s->t[s->n] = t;
    s->y[s->n++] = y;
    return 0;
}

/* Field `col` (0-based) of a CSV line, or NAN. */
static double csv_field(const char *line, int col)
{
    const char *p = line;
    for (int i = 0; i < col && p; ++i)
        if ((p = strchr(p, ',')))
            ++p;
    return p ? strtod(p, NULL) : NAN;
}

int nh_csv_column_has_finite(const char *path, const char *column)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int col = f && getline(&line, &cap, f) > 0 ? column_index(line, column) : -1, found = 0;
    while (col >= 0 && !found && getline(&line, &cap, f) > 0)
        found = isfinite(csv_field(line, col));
    free(line);
    if (f)
        fclose(f);
    return col < 0 ? -1 : found;
}

/* t and the column's value of every row of DIR/timeseries.csv with a live trajectory (n_live > 0: a row after
 * every trajectory failed holds no data); 1 if unreadable. */
static int series_read(const char *dir, const char *column, series *s)
{
    char path[NH_PATH_MAX], line[8192], copy[8192];
    *s = (series){0};
    FILE *f = nh_path_format(path, sizeof path, NULL, "%s/timeseries.csv", dir) ? NULL : nh_open_regular(path, NULL);
    int col = -1, live = -1;
    if (f && fgets(line, sizeof line, f)) {
        strcpy(copy, line);
        col = column_index(line, column);
        live = column_index(copy, "n_live");
    }
    int bad = col < 0;
    long cap = 0;
    while (!bad && fgets(line, sizeof line, f))
        if (live < 0 || csv_field(line, live) > 0)
            bad = series_push(s, &cap, strtod(line, NULL), csv_field(line, col));
    if (f)
        fclose(f);
    s->T = s->n ? s->t[s->n - 1] : NAN;
    return bad || s->n == 0;
}

/* The points a metric uses, in time order: finite, t > 0, in its window (growth: in the first or last
 * tenth), |y| > 0 for loglog; logs taken for loglog. */
static void series_select(const trend_spec *spec, series *s)
{
    long m = 0;
    for (long i = 0; i < s->n; ++i) {
        const double t = s->t[i], y = s->y[i];
        int keep = isfinite(y) && t > 0;
        if (spec->kind == TREND_GROWTH)
            keep = keep && (t <= 0.1 * s->T || t >= 0.9 * s->T);
        else
            keep = keep && t >= spec->from * s->T && t <= spec->to * s->T;
        if (spec->kind == TREND_LOGLOG)
            keep = keep && y != 0;
        if (keep) {
            s->t[m] = spec->kind == TREND_LOGLOG ? log(t) : t;
            s->y[m++] = spec->kind == TREND_LOGLOG ? log(fabs(y)) : y;
        }
    }
    s->n = m;
}

/* Least-squares slope of y against t over the points outside [skip_lo, skip_hi). */
static double ls_slope(const series *s, long skip_lo, long skip_hi)
{
    double n = 0, mt = 0, my = 0, stt = 0, sty = 0;
    for (long i = 0; i < s->n; ++i)
        if (i < skip_lo || i >= skip_hi) {
            n += 1;
            mt += s->t[i];
            my += s->y[i];
        }
    mt /= n;
    my /= n;
    for (long i = 0; i < s->n; ++i)
        if (i < skip_lo || i >= skip_hi) {
            stt += (s->t[i] - mt) * (s->t[i] - mt);
            sty += (s->t[i] - mt) * (s->y[i] - my);
        }
    return stt > 0 ? sty / stt : NAN;
}

/* Mean over the last tenth / mean over the first, over the points outside [skip_lo, skip_hi). */
static double tenths_ratio(const series *s, long skip_lo, long skip_hi)
{
    double first = 0, last = 0, n_first = 0, n_last = 0;
    for (long i = 0; i < s->n; ++i)
        if (i < skip_lo || i >= skip_hi) {
            const int early = s->t[i] <= 0.1 * s->T;
            first += early ? s->y[i] : 0;
            n_first += early;
            last += early ? 0 : s->y[i];
            n_last += !early;
        }
    return n_first > 0 && n_last > 0 ? (last / n_last) / (first / n_first) : NAN;
}

static double statistic(const trend_spec *spec, const series *s, long skip_lo, long skip_hi)
{
    return spec->kind == TREND_GROWTH ? tenths_ratio(s, skip_lo, skip_hi) : ls_slope(s, skip_lo, skip_hi);
}

/* The statistic and its delete-one-block jackknife error, se^2 = (G - 1)/G sum (theta_g - mean)^2. */
static double jackknife(const trend_spec *spec, const series *s, double *stderr_out)
{
    const long G = s->n / 2 < NH_TREND_BLOCKS ? s->n / 2 : NH_TREND_BLOCKS;
    const double theta = statistic(spec, s, 0, 0);
    double parts[NH_TREND_BLOCKS], mean = 0, ss = 0;
    *stderr_out = NAN;
    if (s->n < NH_TREND_MIN_POINTS || !isfinite(theta))
        return s->n < NH_TREND_MIN_POINTS ? NAN : theta;
    for (long g = 0; g < G; ++g) {
        parts[g] = statistic(spec, s, g * s->n / G, (g + 1) * s->n / G);
        mean += parts[g] / (double)G;
    }
    for (long g = 0; g < G; ++g)
        ss += (parts[g] - mean) * (parts[g] - mean);
    *stderr_out = sqrt((double)(G - 1) / (double)G * ss);
    return theta;
}

double nh_trend_metric_value(const char *dir, const char *metric, double *stderr_out)
{
    trend_spec spec;
    series s;
    nh_error err;
    *stderr_out = NAN;
    if (trend_parse(metric, &spec, &err))
        return NAN;
    double v = NAN;
    if (!series_read(dir, spec.column, &s)) {
        series_select(&spec, &s);
        v = jackknife(&spec, &s, stderr_out);
    }
    free(s.t);
    free(s.y);
    return v;
}
