/* In-memory runs (engine/job.c, engine/run_options.c, engine/tables.c): a job configured from the options of
 * `nhens run` refuses bad values with the program's messages and the program's own options; its tables hold
 * the values of the files nh_write_run writes (the %.17g text of the same doubles); an interrupted job keeps
 * a whole-block prefix; a second run is refused. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cr_expect(eq(long, nh_job_result(job)->trajectories_done, 0));
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
