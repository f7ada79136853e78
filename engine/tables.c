/* The columns of a run's CSV tables (include/nhens/output.h): which column holds what, its name and its
 * values. output.c writes the files from these columns; nhens/job.h hands them to Python in memory. */
#include "tables_internal.h"
#include "run_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What column j of a table is: the output time, the live count, statistic `column` of observer `observer`, the
 * fitted variance scaled, the value of observer `observer` on sample path `path`, or quantile `level` of the
 * sketch layout's observer `sketch`. */
typedef enum column_kind {
    COLUMN_TIME, COLUMN_LIVE, COLUMN_STAT, COLUMN_SCALED, COLUMN_PATH, COLUMN_QUANTILE, COLUMN_TRAJECTORY
} column_kind;
typedef struct column_ref {
    column_kind kind;
    int observer, column, sketch, level;
    long path;
} column_ref;

static int recorded(const nh_run_result *res, int observer)
{
    return (res->observer_mask & (1u << observer)) != 0;
}

/* Column j of the time series: t, n_live, every recorded observer's columns, the scaled fitted variance. */
static int timeseries_column(const nh_run_result *res, int j, column_ref *ref)
{
    if (j < 2)
        return *ref = (column_ref){.kind = j == 0 ? COLUMN_TIME : COLUMN_LIVE}, j >= 0;
    int at = 2;
    for (int i = 0; i < res->n_observers; ++i)
        if (recorded(res, i)) {
            const int n = nh_observer_at(res->observers, i)->n_columns;
            if (j < at + n)
                return *ref = (column_ref){.kind = COLUMN_STAT, .observer = i, .column = j - at}, 1;
            at += n;
        }
    return *ref = (column_ref){.kind = COLUMN_SCALED, .observer = nh_observer_fitted()}, j == at;
}

/* Column j of the sample paths: t, then per path the recorded observers that are not event observers. */
static int paths_column(const nh_run_result *res, int j, column_ref *ref)
{
    if (res->n_paths == 0 || j < 0)
        return 0;
    if (j == 0)
        return *ref = (column_ref){.kind = COLUMN_TIME}, 1;
    int per_path = 0, in_path[NH_MAX_OBSERVERS];
    for (int o = 0; o < res->n_observers; ++o)
        if (recorded(res, o) && !nh_observer_at(res->observers, o)->event)
            in_path[per_path++] = o;
    const long path = (j - 1) / per_path;
    *ref = (column_ref){.kind = COLUMN_PATH, .observer = in_path[(j - 1) % per_path], .path = path};
    return path < res->n_paths;
}

/* Column j of the quantiles: t, then the levels of every sketched observer. */
static int quantiles_column(const nh_run_result *res, int j, column_ref *ref)
{
    if (j == 0)
        return *ref = (column_ref){.kind = COLUMN_TIME}, 1;
    const int k = j - 1;
    *ref = (column_ref){.kind = COLUMN_QUANTILE, .sketch = k / NH_QUANTILE_LEVELS, .level = k % NH_QUANTILE_LEVELS};
    return k >= 0 && ref->sketch < res->sketch_layout.n;
}

/* Column j of the trajectory rows: the fixed columns, then the reductions. */
static int trajectories_column(const nh_run_result *res, int j, column_ref *ref)
{
    *ref = (column_ref){.kind = COLUMN_TRAJECTORY, .column = j};
    return res->n_reductions > 0 && j >= 0 && j < nh_run_trajectory_width(res);
}

static int resolve(const nh_run_result *res, nh_run_table table, int j, column_ref *ref)
{
    switch (table) {
    case NH_RUN_TABLE_TIMESERIES: return timeseries_column(res, j, ref);
    case NH_RUN_TABLE_QUANTILES: return quantiles_column(res, j, ref);
    case NH_RUN_TABLE_PATHS: return paths_column(res, j, ref);
    case NH_RUN_TABLE_TRAJECTORIES: return trajectories_column(res, j, ref);
    }
    return 0;
}

int nh_run_table_columns(const nh_run_result *res, nh_run_table table)
{
    column_ref ref;
    int n = 0;
    while (resolve(res, table, n, &ref))
        ++n;
    return n;
}

long nh_run_table_rows(const nh_run_result *res, nh_run_table table)
{
    if (table == NH_RUN_TABLE_QUANTILES)
        return res->sketch_layout.rows;
    if (table == NH_RUN_TABLE_TRAJECTORIES)
        return res->n_reductions > 0 ? res->trajectories_done - res->rows_first : 0;
    return table == NH_RUN_TABLE_PATHS && res->n_paths == 0 ? 0 : res->n_out;
}

int nh_run_table_column_name(const nh_run_result *res, nh_run_table table, int column, char *buf, size_t len)
{
    column_ref r;
    if (!resolve(res, table, column, &r))
        return NH_ERR_INPUT;
    static const char *const fixed[NH_TRAJECTORY_FIXED_COLUMNS] = {"trajectory", "failed", "failure_time",
                                                                    "failure_status"};
    const nh_observer *o = nh_observer_at(res->observers, r.kind == COLUMN_QUANTILE ? res->sketch_layout.observer[r.sketch] : r.observer);
    switch (r.kind) {
    case COLUMN_TIME: snprintf(buf, len, "t"); break;
    case COLUMN_LIVE: snprintf(buf, len, "n_live"); break;
    case COLUMN_STAT: snprintf(buf, len, "%s", o->columns[r.column].name); break;
    case COLUMN_SCALED: snprintf(buf, len, "%s_var_scaled", o->name); break;
    case COLUMN_PATH: snprintf(buf, len, "%s_%ld", o->name, r.path); break;
    case COLUMN_QUANTILE: snprintf(buf, len, "%s_%s", o->quantile_prefix, nh_quantile_suffixes[r.level]); break;
    case COLUMN_TRAJECTORY:
        snprintf(buf, len, "%s", r.column < NH_TRAJECTORY_FIXED_COLUMNS ? fixed[r.column]
                                 : res->reductions[r.column - NH_TRAJECTORY_FIXED_COLUMNS].name);
        break;
    }
    return NH_OK;
}

/* A column's statistic; NAN where it has no data (nothing accumulated; a variance needs two values). */
static double statistic(const nh_accum *a, nh_stat_kind kind)
{
    if (a->count == 0 && kind != NH_STAT_COUNT)
        return NAN;
    switch (kind) {
    case NH_STAT_MEAN: return a->mean;
    case NH_STAT_VARIANCE: return nh_accum_variance(a);
    case NH_STAT_ABSMAX: return a->absmax;
    case NH_STAT_RMS: return nh_accum_rms(a);
    case NH_STAT_COUNT: return a->count;
    }
    return NAN;
}

/* The value of column r at table row `row` (output index row * stride). */
static double value_at(const nh_run_result *res, const column_ref *r, long row, long stride)
{
    switch (r->kind) {
    case COLUMN_TIME: return res->time[row * stride];
    case COLUMN_LIVE: return (double)res->live[row];
    case COLUMN_STAT:
        return statistic(nh_run_accum(res, row, r->observer), nh_observer_at(res->observers, r->observer)->columns[r->column].kind);
    case COLUMN_SCALED: return nh_accum_variance(nh_run_accum(res, row, r->observer)) / res->variance_scale;
    case COLUMN_PATH: return nh_run_path(res, r->path, row, r->observer);
    case COLUMN_QUANTILE: return nh_sketch_quantile(nh_run_sketch(res, row, r->sketch), nh_quantile_levels[r->level]);
    case COLUMN_TRAJECTORY: return nh_run_trajectory_row(res, res->rows_first + row)[r->column];
    }
    return NAN;
}

static long stride_of(const nh_run_result *res, nh_run_table table)
{
    return table == NH_RUN_TABLE_QUANTILES ? res->sketch_layout.stride : 1;
}

int nh_run_table_column_values(const nh_run_result *res, nh_run_table table, int column, double *values)
{
    column_ref r;
    if (!resolve(res, table, column, &r))
        return NH_ERR_INPUT;
    const long rows = nh_run_table_rows(res, table), stride = stride_of(res, table);
    for (long k = 0; k < rows; ++k)
        values[k] = value_at(res, &r, k, stride);
    return NH_OK;
}

static const char *table_name(nh_run_table table)
{
    switch (table) {
    case NH_RUN_TABLE_TIMESERIES: return "timeseries";
    case NH_RUN_TABLE_QUANTILES: return "quantiles";
    case NH_RUN_TABLE_PATHS: return "paths";
    case NH_RUN_TABLE_TRAJECTORIES: return "trajectories";
    }
    return "?";
}

int nh_run_table_column_index(const nh_run_result *res, nh_run_table table, const char *name)
{
    const int n = name ? nh_run_table_columns(res, table) : 0;
    char buf[96];
    for (int j = 0; j < n; ++j)
        if (nh_run_table_column_name(res, table, j, buf, sizeof buf) == NH_OK && strcmp(buf, name) == 0)
            return j;
    return -1;
}

/* The closest column name to `name` (" (did you mean 'X'?)" or "") into hint. */
static void column_hint(const nh_run_result *res, nh_run_table table, const char *name, char *hint, size_t len)
{
    hint[0] = '\0';
    const int n = nh_run_table_columns(res, table);
    char (*names)[96] = n > 0 ? malloc(sizeof *names * (size_t)n) : NULL;
    const char **list = n > 0 ? malloc(sizeof *list * (size_t)n) : NULL;
    if (names && list) {
        for (int j = 0; j < n; ++j) {
            nh_run_table_column_name(res, table, j, names[j], sizeof names[j]);
            list[j] = names[j];
        }
        nh_did_you_mean(name, list, n, hint, len);
    }
    free(names);
    free(list);
}

int nh_run_table_values(const nh_run_result *res, nh_run_table table, const char *column, double *values,
                        nh_error *err)
{
    const int j = nh_run_table_column_index(res, table, column);
    if (j >= 0)
        return nh_run_table_column_values(res, table, j, values);
    char hint[128];
    column_hint(res, table, column ? column : "", hint, sizeof hint);
    if (nh_run_table_columns(res, table) == 0)
        snprintf(hint, sizeof hint, " (the run's %s table is empty)", table_name(table));
    return nh_fail(err, NH_ERR_INPUT, "the %s table has no column '%.100s'%s", table_name(table),
                   column ? column : "(null)", hint);
}

int nh_run_table_print(FILE *f, const nh_run_result *res, nh_run_table table)
{
    const int n = nh_run_table_columns(res, table);
    const long rows = nh_run_table_rows(res, table), stride = stride_of(res, table);
    column_ref *refs = malloc(sizeof *refs * (size_t)(n > 0 ? n : 1));
    if (!refs)
        return 1;
    char name[96];
    for (int j = 0; j < n; ++j) {
        resolve(res, table, j, &refs[j]);
        nh_run_table_column_name(res, table, j, name, sizeof name);
        fprintf(f, "%s%s", j ? "," : "", name);
    }
    fputc('\n', f);
    for (long k = 0; k < rows; ++k) {
        for (int j = 0; j < n; ++j)
            fprintf(f, j ? ",%.17g" : "%.17g", value_at(res, &refs[j], k, stride));
        fputc('\n', f);
    }
    free(refs);
    return 0;
}
