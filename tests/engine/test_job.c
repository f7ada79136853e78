/* In-memory runs (engine/job.c, engine/run_options.c, engine/tables.c): a job configured from the options of
 * `nhens run` refuses bad values with the program's messages and the program's own options; its tables hold
 * the values of the files nh_write_run writes (the %.17g text of the same doubles); an interrupted job keeps
 * a whole-block prefix; a second run is refused; the result's getters by name agree with summary.json and with
 * the columns by index. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nhens/job.h"
#include "scratch.h"

static nh_job *job_of(const nh_registry *reg, const char *line, nh_error *err)
{
    static char buf[1024];
    char *argv[64] = {"run"};
    int argc = 1;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && argc < 64; tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    return nh_job_create(reg, argc, argv, err);
}

static const char *const RUN = "--system quartic --method dla01 --h 0.1 --T 4 --energy 3.0 --ensemble 24 --paths 2";

Test(job, refuses_bad_values_with_the_programs_messages)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    const char *cases[][2] = {
        {"--system quartic --method dla01 --h 0.1 --T 4 --energy 3 --ensemble 2.7",
         "nhens run: --ensemble '2.7' must be a decimal integer in [1, 100000000]"},
        {"--system quartic --method dla01 --h 0.1 --T 4 --energy 3 --seed 18446744073709551624",
         "nhens run: --seed '18446744073709551624' must be a decimal integer in [0, 18446744073709551615]"},
        {"--system quartic --method dla01 --h 0.1 --T 4.05 --energy 3",
         "horizon T=4.05 is not a whole number of steps h=0.1"},
        {"--method dla01 --h 0.1 --T 4 --energy 3", "--system, --method, --h and --T are required"},
        {"--system quartic --method dla01 --h 0.1 --T 4 --energy 3 --out x",
         "--out is an option of the nhens program, not of a run in memory"},
        {"--system quartic --method dla01 --h 0.1 --T 4 --energy 3 --initial states.csv",
         "--initial is an option of the nhens program"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        err.msg[0] = '\0';
        cr_expect(job_of(reg, cases[i][0], &err) == NULL, "%s", cases[i][0]);
        cr_expect(strstr(err.msg, cases[i][1]) != NULL, "%s: got '%s'", cases[i][0], err.msg);
    }
    nh_registry_free(reg);
}

/* Data row `row` of the CSV file at path (row -1: its header) into line. */
static void csv_row(const char *path, long row, char *line, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "%s", path);
    for (long k = 0; k <= row + 1 && fgets(line, (int)len, f); ++k)
        ;
    fclose(f);
}

Test(job, tables_are_the_written_files_values)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    nh_job *job = job_of(reg, RUN, &err);
    cr_assert(job != NULL, "%s", err.msg);
    cr_assert(nh_job_result(job) == NULL);
    cr_assert(eq(int, nh_job_run(job, &err), 0), "%s", err.msg);
    cr_assert(nh_job_complete(job));
    cr_expect(nh_job_run(job, &err) != 0);  /* once */
    char dir[] = "/tmp/nhens-test-job-XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    cr_assert(eq(int, nh_job_write(job, dir, "nhens run (test)", &err), 0), "%s", err.msg);
    const nh_run_result *res = nh_job_result(job);
    const char *files[] = {"timeseries.csv", "quantiles.csv", "paths.csv"};
    for (int table = 0; table < 3; ++table) {
        const long rows = nh_run_table_rows(res, (nh_run_table)table);
        const int columns = nh_run_table_columns(res, (nh_run_table)table);
        cr_assert(rows == 41 && columns > 1, "%s: %ld rows, %d columns", files[table], rows, columns);
        double *values = malloc(sizeof(double) * (size_t)rows);
        char path[256], line[16384], name[96], text[64];
        snprintf(path, sizeof path, "%s/%s", dir, files[table]);
        csv_row(path, -1, line, sizeof line);  /* the header */
        for (int j = 0, at = 0; j < columns; ++j) {
            cr_assert(eq(int, nh_run_table_column_name(res, (nh_run_table)table, j, name, sizeof name), 0));
            cr_expect(strncmp(line + at, name, strlen(name)) == 0, "%s column %d: %s", files[table], j, name);
            at += (int)strlen(name) + 1;
        }
        cr_expect(nh_run_table_column_name(res, (nh_run_table)table, columns, name, sizeof name) != 0);
        csv_row(path, rows - 1, line, sizeof line);  /* the last row, column by column */
        char *field = line;
        for (int j = 0; j < columns; ++j) {
            nh_run_table_column_values(res, (nh_run_table)table, j, values);
            snprintf(text, sizeof text, "%.17g", values[rows - 1]);
            const size_t n = strcspn(field, ",\n");
            cr_expect(n == strlen(text) && strncmp(field, text, n) == 0, "%s column %d: %.*s vs %s", files[table], j,
                      (int)n, field, text);
            field += n + 1;
        }
        free(values);
    }
    remove_tree(dir);
    nh_job_free(job);
    nh_registry_free(reg);
}

Test(job, interrupted_keeps_a_prefix_of_whole_blocks)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    nh_job *job = job_of(reg, RUN, &err);
    cr_assert(job != NULL, "%s", err.msg);
    nh_job_interrupt(job);  /* before it starts: no block is handed out */
    cr_assert(eq(int, nh_job_run(job, &err), 0), "%s", err.msg);
    cr_expect(eq(int, nh_job_complete(job), 0));
    double done_scalar;
    cr_expect(eq(int, nh_run_scalar(nh_job_result(job), "trajectories_done", &done_scalar, &err), NH_OK));
    cr_expect(eq(dbl, done_scalar, 0.0));
    long done, total;
    nh_job_progress(job, &done, &total);
    cr_expect(eq(long, done, 0));
    cr_expect(eq(long, total, 24));
    char *summary = nh_job_summary(job, "x");
    cr_assert(summary != NULL);
    cr_expect(strstr(summary, "\"complete\":\tfalse") != NULL, "%s", summary);
    nh_job_text_free(summary);
    nh_job_free(job);
    nh_registry_free(reg);
}

/* The member of summary.json at a dotted path ("variance_fit.C_stderr"), or NULL. */
static const cJSON *summary_member(const cJSON *root, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *at = root;
    for (char *save = NULL, *key = strtok_r(buf, ".", &save); key && at; key = strtok_r(NULL, ".", &save))
        at = cJSON_GetObjectItemCaseSensitive(at, key);
    return at;
}

/* The result's getters: every scalar that summary.json records has summary.json's value (the same double up to
 * cJSON's printing, or nan where the file says null), the fixed ones and an extremes entry per recorded observer; every column read by
 * its name is the column read by its index, the per-trajectory table's too; a misspelt name is refused with the
 * closest one. */
Test(job, getters_by_name_are_the_summary_and_the_columns)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    nh_job *job = job_of(reg, "--system quartic --method dla --h 0.1 --T 4 --energy 3.0 --ensemble 24 --paths 2 "
                              "--reduce final,max:dH", &err);
    cr_assert(job != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_job_run(job, &err), 0), "%s", err.msg);
    const nh_run_result *res = nh_job_result(job);
    char *text = nh_job_summary(job, "nhens run (test)");
    cJSON *summary = cJSON_Parse(text);
    cr_assert(summary != NULL);
    const int n = nh_run_scalar_count(res);
    int in_summary = 0;
    char name[128];
    double value;
    for (int i = 0; i < n; ++i) {
        cr_assert(eq(int, nh_run_scalar_name(res, i, name, sizeof name), NH_OK));
        cr_assert(eq(int, nh_run_scalar(res, name, &value, &err), NH_OK), "%s", err.msg);
        const cJSON *m = summary_member(summary, name);
        if (!m) {   /* the three that summary.json does not record */
            const int extra = !strcmp(name, "steps_per_trajectory") || !strcmp(name, "output_rows") ||
                              !strcmp(name, "performance.solver_failures");
            cr_expect(extra, "%s is not in summary.json", name);
            continue;
        }
        ++in_summary;
        if (cJSON_IsBool(m))
            cr_expect(eq(dbl, value, cJSON_IsTrue(m) ? 1.0 : 0.0), "%s", name);
        else if (cJSON_IsNull(m))
            cr_expect(isnan(value), "%s: %g where summary.json has null", name, value);
        else   /* cJSON prints 15 digits when they read back within DBL_EPSILON of the double (relative), else 17 */
            cr_expect(cJSON_IsNumber(m) && fabs(value - m->valuedouble) <= DBL_EPSILON * fabs(value),
                      "%s: %.17g, summary.json %.17g", name, value, m->valuedouble);
    }
    /* 30 of the 33 fixed names, and the extremes of the quartic's recorded observers (dH among them) */
    cr_expect(eq(int, in_summary, n - 3), "%d of %d scalars found in summary.json", in_summary, n);
    cr_expect(n >= 33 + 3, "%d scalars", n);
    cr_expect(eq(int, nh_run_scalar(res, "extremes.dH_absmax", &value, &err), NH_OK), "%s", err.msg);
    cr_expect(eq(int, nh_run_scalar(res, "ensemble", &value, &err), NH_OK));
    cr_expect(eq(dbl, value, 24.0));
    cr_expect(eq(int, nh_run_scalar(res, "steps_per_trajectory", &value, &err), NH_OK));
    cr_expect(eq(dbl, value, 40.0));   /* T / h */
    cr_expect(eq(int, nh_run_scalar(res, "variance_fit.C_sterr", &value, &err), NH_ERR_INPUT));
    cr_expect(strstr(err.msg, "'variance_fit.C_sterr'") && strstr(err.msg, "did you mean 'variance_fit.C_stderr'"),
              "%s", err.msg);
    cJSON_Delete(summary);
    nh_job_text_free(text);

    int columns = 0;
    for (int table = NH_RUN_TABLE_TIMESERIES; table <= NH_RUN_TABLE_TRAJECTORIES; ++table) {
        const long rows = nh_run_table_rows(res, (nh_run_table)table);
        double *by_index = malloc(sizeof(double) * (size_t)rows), *by_name = malloc(sizeof(double) * (size_t)rows);
        for (int j = 0; j < nh_run_table_columns(res, (nh_run_table)table); ++j, ++columns) {
            cr_assert(eq(int, nh_run_table_column_name(res, (nh_run_table)table, j, name, sizeof name), NH_OK));
            cr_assert(eq(int, nh_run_table_column_index(res, (nh_run_table)table, name), j), "%s", name);
            cr_assert(eq(int, nh_run_table_column_values(res, (nh_run_table)table, j, by_index), NH_OK));
            cr_assert(eq(int, nh_run_table_values(res, (nh_run_table)table, name, by_name, &err), NH_OK), "%s", err.msg);
            cr_assert(memcmp(by_index, by_name, sizeof(double) * (size_t)rows) == 0, "%s", name);
        }
        free(by_index);
        free(by_name);
    }
    cr_expect(columns > 20, "%d columns", columns);
    cr_expect(eq(int, nh_run_table_rows(res, NH_RUN_TABLE_TRAJECTORIES), 24L));
    cr_expect(nh_run_table_column_index(res, NH_RUN_TABLE_TRAJECTORIES, "max:dH") > 3, "a reduction by its name");
    cr_expect(eq(int, nh_run_table_column_index(res, NH_RUN_TABLE_TIMESERIES, "dH_vra"), -1));
    double dummy[1];
    cr_expect(eq(int, nh_run_table_values(res, NH_RUN_TABLE_TIMESERIES, "dH_vra", dummy, &err), NH_ERR_INPUT));
    cr_expect(strstr(err.msg, "timeseries table has no column 'dH_vra'") && strstr(err.msg, "'dH_var'"), "%s", err.msg);
    nh_job_free(job);
    nh_registry_free(reg);
}
