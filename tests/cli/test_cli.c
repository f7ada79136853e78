/* The nhens program as a user runs it: bad input is refused with a message naming the value and
 * a non-zero exit, a good run writes whole files, a failed one writes none. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "helpers.h"
#include "run_nhens.h"
#include "scratch.h"
#include "nhens/core.h"
#include "nhens/stats.h"

/* summary.json of a run in dir, parsed (the caller deletes it). */
static cJSON *read_summary(const char *dir)
{
    char path[256];
    static char text[1 << 16];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    read_text_file(path, text, sizeof text);
    cJSON *summary = cJSON_Parse(text);
    cr_assert(summary != NULL, "%s is not JSON: %.200s", path, text);
    return summary;
}

/* the number at a path of object keys, e.g. number_at(summary, "failures", "count", NULL); NAN if absent */
static double number_at(const cJSON *root, ...)
{
    va_list keys;
    va_start(keys, root);
    for (const char *key; root && (key = va_arg(keys, const char *));)
        root = cJSON_GetObjectItemCaseSensitive(root, key);
    va_end(keys);
    return cJSON_IsNumber(root) ? root->valuedouble : NAN;
}

/* The bad-input cases live in one table, tests/cli/bad_inputs.tsv (test_bad_inputs.c); these two check
 * the messages of the unwritable folder and the unknown command through this file's helper as well. */
Test(cli, bad_input_is_refused_with_the_value_and_what_is_allowed)
{
    cr_assert(eq(int, nhens("run --system cvt --preset rotating --method lf --h 0.1 --T 1 --out /proc/self"), 1));
    cr_assert(strstr(err_text, "output directory '/proc/self' is not writable") != NULL, "%s", err_text);
    cr_assert(eq(int, nhens("frobnicate"), 2));
    cr_assert(strstr(err_text, "unknown command 'frobnicate'") != NULL);
}

Test(cli, good_run_writes_both_files)
{
    char dir[128], path[256];
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-good-%d", (int)getpid());
    char args[512];
    snprintf(args, sizeof args, "run --system quartic --method dla01 --h 0.1 --T 20 --energy 3.06 --ensemble 16 --out %s", dir);
    cr_assert(eq(int, nhens(args), 0), "stderr: %s", err_text);
    struct stat st;
    snprintf(path, sizeof path, "%s/timeseries.csv", dir);
    cr_assert(stat(path, &st) == 0 && st.st_size > 0);
    FILE *f = fopen(path, "r");
    char header[512];
    cr_assert(fgets(header, sizeof header, f) != NULL);
    fclose(f);
    cr_assert(strcmp(header, "t,n_live,dH_mean,dH_var,dH_absmax,rel_energy_absmax,constraint_max,constraint_rms,"
                             "dH_var_scaled\n") == 0,
              "header: %s", header);
    /* the summary is the run's: 16 trajectories, all done, none failed, at T = 20 in steps of 0.1; and the
     * time series has a row per output time t = 0, 0.1, ..., 20 */
    cJSON *summary = read_summary(dir);
    cr_assert(eq(dbl, number_at(summary, "ensemble", NULL), 16.0));
    cr_assert(eq(dbl, number_at(summary, "trajectories_done", NULL), 16.0));
    cr_assert(eq(dbl, number_at(summary, "failures", "count", NULL), 0.0));
    cr_assert(eq(dbl, number_at(summary, "T", NULL), 20.0));
    cr_assert(eq(dbl, number_at(summary, "h", NULL), 0.1));
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(summary, "complete")));
    cJSON_Delete(summary);
    snprintf(path, sizeof path, "%s/timeseries.csv", dir);
    f = fopen(path, "r");
    int rows = -1;   /* the header */
    double t = NAN;
    for (char line[1024]; fgets(line, sizeof line, f); ++rows)
        t = strtod(line, NULL);
    fclose(f);
    cr_assert(eq(int, rows, 201));
    cr_assert(epsilon_eq(dbl, t, 20.0, 1e-12), "last t = %.17g", t);
    remove_tree(dir);
}

/* performance.peak_rss_kib is the run's own peak memory. This test holds 96 MiB when it starts nhens by
 * fork and exec: getrusage's ru_maxrss of the child would count them (the forked copy's resident pages
 * are recorded at exec), VmHWM does not. The run itself needs about 10 MiB (the bench's figure), so the
 * bound 64 MiB separates the two readings by far. */
Test(cli, summary_reports_the_runs_own_peak_memory)
{
    enum { HELD_MIB = 96 };
    char *held = malloc((size_t)HELD_MIB << 20), dir[128], path[256];
    cr_assert(held != NULL);
    memset(held, 1, (size_t)HELD_MIB << 20);
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-peak-%d", (int)getpid());
    char *argv[] = {"nhens", "run", "--system", "quartic", "--method", "dla01", "--h", "0.1", "--T", "10",
                    "--energy", "3.06", "--ensemble", "16", "--quiet", "--out", dir, NULL};
    child_options o = {0};
    cr_assert(eq(int, child_run(argv, &o), 0));
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = malloc(1 << 16);
    cr_assert(text != NULL);
    read_text_file(path, text, 1 << 16);
    cJSON *summary = cJSON_Parse(text);
    const cJSON *peak = cJSON_GetObjectItem(cJSON_GetObjectItem(summary, "performance"), "peak_rss_kib");
    cr_assert(cJSON_IsNumber(peak), "performance.peak_rss_kib is missing");
    cr_assert(peak->valuedouble >= 1024 && peak->valuedouble < 64 * 1024,
              "peak_rss_kib = %g KiB: not the run's own (about 10 MiB) while the parent holds %d MiB",
              peak->valuedouble, HELD_MIB);
    cr_assert(eq(int, held[12345], 1));
    cJSON_Delete(summary);
    free(text);
    free(held);
    remove_tree(dir);
}

Test(cli, variance_law_errors_are_given_only_where_the_jackknife_has_them)
{
    /* Up to 152 trajectories the jackknife's groups are trajectories (i mod 20). 2 trajectories: leaving one
     * out leaves one, which has no variance, so no standard errors; 3 give errors with 2 degrees of freedom;
     * 16 give 16 groups and 15 degrees of freedom (before: 2 groups of blocks of 8 and one degree of
     * freedom, and no errors at all below 10 trajectories). */
    char dir[128], args[512], out[4096], expect[96];
    const int sizes[] = {2, 3, 16}, dof[] = {0, 2, 15};
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-jack-%d", (int)getpid());
    for (int i = 0; i < 3; ++i) {
        const int n = sizes[i];
        snprintf(args, sizeof args,
                 "run --system quartic --method dla01 --h 0.1 --T 20 --energy 3.06 --ensemble %d --quiet --out %s", n,
                 dir);
        cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "stderr: %s", err_text);
        const char *law = strstr(out, "variance law");
        cr_assert(law != NULL, "%s", out);
        cr_expect(strstr(law, "nan") == NULL, "%d trajectories: %s", n, law);
        const int has_errors = strstr(law, "+-") != NULL, says_none = strstr(law, "no standard errors") != NULL;
        cr_expect(dof[i] == 0 ? !has_errors && says_none : has_errors && !says_none, "%d trajectories: %s", n, law);
        snprintf(expect, sizeof expect, "jackknife over %d groups: %d degrees of freedom", n, dof[i]);
        cr_expect(dof[i] == 0 || strstr(law, expect) != NULL, "%d trajectories, expected '%s': %s", n, expect, law);
    }
    remove_tree(dir);
}

Test(cli, the_variance_law_says_when_the_data_do_not_support_it)
{
    /* A near-integrable run (the harmonically driven CVT: no chaos, no random walk of dH) fits a C within its
     * error of 0, and the summary says so; the default study's 200 chaotic trajectories over T = 1000 (the
     * README's sample output: C = (9.3 +- 1.5)e-9) print no caveat. An all-failed run prints no fit. */
    char dir[128], args[600], out[8192];
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-law-%d", (int)getpid());
    snprintf(args, sizeof args, "run --system hcvt --energy 1 --method dla01 --h 0.1 --T 1000 --ensemble 16 --quiet "
             "--out %s", dir);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "stderr: %s", err_text);
    cr_expect(strstr(out, "caveat: C is within its 95 % interval of 0") != NULL, "%s", out);
    snprintf(args, sizeof args, "run --system quartic --preset celledoni2019-fig2 --method dla01 --h 0.1 --T 1000 "
             "--quiet --out %s", dir);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "stderr: %s", err_text);
    cr_expect(strstr(out, "variance law") != NULL && strstr(out, "caveat:") == NULL, "%s", out);
    snprintf(args, sizeof args, "run --system cvt --preset gearbox --method newmark:alpha=1 --h 2 --T 4000 "
             "--ensemble 16 --fit-start 0.5 --quiet --out %s", dir);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 3), "every trajectory fails: exit 3; stderr: %s", err_text);
    cr_expect(strstr(out, "failed trajectories: 16") != NULL && strstr(out, "variance law on t in [2000, 4000]: no fit") != NULL,
              "%s", out);
    remove_tree(dir);
}

Test(cli, shell_preset_runs_the_papers_ensemble)
{
    /* without --ensemble, the shell preset's own ensemble size and energy (Celledoni et al. 2019, Fig. 2:
     * 200 states of the n = 3 quartic on H = 3.06, as the registry holds them), every trajectory done */
    const nh_system_type *quartic = nh_registry_find_system(test_registry(), "quartic");
    const nh_preset *paper = nh_system_find_preset(quartic, "celledoni2019-fig2");
    cr_assert(paper != NULL && nh_preset_is_shell(paper));
    char args[512], dir[128];
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-shell-%d", (int)getpid());
    snprintf(args, sizeof args, "run --system quartic --preset celledoni2019-fig2 --method dla01 --h 0.1 --T 2"
             " --quiet --out %s", dir);
    cr_assert(eq(int, nhens(args), 0), "stderr: %s", err_text);
    cJSON *summary = read_summary(dir);
    cr_assert(eq(dbl, number_at(summary, "ensemble", NULL), (double)paper->shell_ensemble));
    cr_assert(eq(dbl, number_at(summary, "trajectories_done", NULL), (double)paper->shell_ensemble));
    cr_assert(eq(dbl, number_at(summary, "initial", "energy", NULL), paper->shell_energy));
    cr_assert(eq(dbl, number_at(summary, "system", "params", "n", NULL), 3.0), "the preset sets n=3");
    cr_assert(eq(dbl, number_at(summary, "failures", "count", NULL), 0.0));
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(summary, "complete")));
    /* dla01 keeps A v = 0 to round-off (measured 9e-16 on this run) */
    cr_assert(number_at(summary, "extremes", "constraint_max", NULL) < 1e-13, "constraint_max %g",
              number_at(summary, "extremes", "constraint_max", NULL));
    cJSON_Delete(summary);
    remove_tree(dir);
}

Test(cli, unwritable_output_leaves_no_files)
{
    /* the output "directory" is an existing regular file: refused before anything is written */
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-cli-file-%d", (int)getpid());
    FILE *f = fopen(path, "w");
    fclose(f);
    char args[512];
    snprintf(args, sizeof args, "run --system cvt --method lf --h 0.1 --T 1 --energy 2 --out %s/sub", path);
    cr_assert(eq(int, nhens(args), 1));
    cr_assert(strstr(err_text, "cannot create directory") != NULL, "stderr: %s", err_text);
    remove(path);
}

Test(cli, order_study_prints_errors_and_orders)
{
    char buf[4096];
    cr_assert(eq(int, nhens_output("order --system cvt --param eps=0.1 --preset rotating --method dla01 --T 2"
                                   " --h 0.1,0.05 --solver newton", buf, sizeof buf), 0));
    /* docs/METHODS.md Sect. 8: DLA^{0,1} errors 9.42e-03 and 2.32e-03, order 2.02 */
    cr_assert(strstr(buf, "9.41") != NULL && strstr(buf, "2.32") != NULL && strstr(buf, "2.01") != NULL, "%s", buf);

    cr_assert(eq(int, nhens("order --system cvt --method dla01 --T 2 --h 0.3 --preset rotating"), 2));
    cr_assert(strstr(err_text, "--h needs at least two") != NULL || strstr(err_text, "does not divide") != NULL, "%s", err_text);
    cr_assert(eq(int, nhens("order --system cvt --method dla01 --T 2 --h 0.3,0.1 --preset rotating"), 2));
    cr_assert(strstr(err_text, "step size '0.3' does not divide T") != NULL, "%s", err_text);
}

Test(cli, audit_prints_a_row_per_method)
{
    char buf[16384];
    cr_assert(eq(int, nhens_output("audit --system cvt --param eps=0.1 --preset rotating --T-long 10", buf, sizeof buf), 0));
    /* every registered method has a row, and the DLA^{1/2} row carries its docs/METHODS.md error 7.34e-3 */
    for (int i = 0; i < nh_registry_method_count(test_registry()); ++i)
        cr_assert(strstr(buf, nh_registry_method_at(test_registry(), i)->name) != NULL, "no row for %s:\n%s", nh_registry_method_at(test_registry(), i)->name, buf);
    cr_assert(strstr(buf, "7.345e-03") != NULL, "%s", buf);
}

/* The line of text that starts with `prefix`, cut at its newline into line (empty if there is none). */
static const char *line_starting(const char *text, const char *prefix, char *line, size_t len)
{
    line[0] = '\0';
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            const size_t n = strcspn(p, "\n");
            snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), p);
            return p;
        }
    return NULL;
}

/* The block of `nhens list` that a "  NAME ..." line opens, up to the next such line (or a blank line). */
static void list_block(const char *text, const char *name, char *block, size_t len)
{
    char prefix[64], line[1024];
    snprintf(prefix, sizeof prefix, "  %s ", name);
    const char *start = line_starting(text, prefix, line, sizeof line);
    cr_assert(start != NULL, "nhens list has no line for %s", name);
    const char *end = start + strlen(prefix);
    while ((end = strchr(end, '\n')) && end[1] == ' ' && end[2] == ' ' && end[3] == ' ')
        ++end;
    const size_t n = end ? (size_t)(end - start) : strlen(start);
    snprintf(block, len, "%.*s", (int)(n < len ? n : len - 1), start);
}

/* `nhens list --names KIND`, one name a line, is `names` joined by newlines */
static void assert_names(const char *kind, const char *names)
{
    char args[64], out[4096];
    snprintf(args, sizeof args, "list --names %s", kind);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "%s", err_text);
    cr_assert(eq(str, out, (char *)names), "nhens %s", args);
}

Test(cli, list_shows_every_system_and_method)
{
    /* every system, method and observer of the registry, each with what the registry says of it: a system's
     * summary, parameters and presets; a method's order at its defaults, summary and parameters; an observer's
     * columns. And `list --names` gives the registry's names in its order. */
    static char buf[1 << 16], block[8192], names[4][2048];
    cr_assert(eq(int, nhens_output("list", buf, sizeof buf), 0), "%s", err_text);
    const nh_registry *reg = test_registry();
    memset(names, 0, sizeof names);
    for (int i = 0; i < nh_registry_system_count(reg); ++i) {
        const nh_system_type *t = nh_registry_system_at(reg, i);
        list_block(buf, t->name, block, sizeof block);
        cr_assert(strstr(block, t->summary) != NULL, "%s: no summary in\n%s", t->name, block);
        for (int k = 0; k < t->n_params; ++k) {
            char param[64];
            snprintf(param, sizeof param, "      %s ", t->params[k].name);
            cr_assert(strstr(block, param) && strstr(block, t->params[k].help), "%s: no parameter %s in\n%s", t->name,
                      t->params[k].name, block);
        }
        for (int k = 0; k < t->n_presets; ++k) {
            const nh_preset *p = &t->presets[k];
            char preset[96];
            snprintf(preset, sizeof preset, "%s %s ", nh_preset_is_shell(p) ? "shell " : "preset", p->name);
            cr_assert(strstr(block, preset) && strstr(block, p->description), "%s: no preset %s in\n%s", t->name,
                      p->name, block);
            strcat(strcat(names[2], p->name), "\n");
        }
        strcat(strcat(names[0], t->name), "\n");
    }
    for (int i = 0; i < nh_registry_method_count(reg); ++i) {
        const nh_method_type *t = nh_registry_method_at(reg, i);
        nh_method_spec m;
        make_method(&m, t->name);
        char order[32];
        snprintf(order, sizeof order, " order %d ", nh_method_spec_order(&m));
        list_block(buf, t->name, block, sizeof block);
        cr_assert(strstr(block, order) && strstr(block, t->summary), "%s: not%s with its summary in\n%s", t->name, order,
                  block);
        for (int k = 0; k < t->n_params; ++k)
            cr_assert(strstr(block, t->params[k].name) && strstr(block, t->params[k].help), "%s: no parameter %s in\n%s",
                      t->name, t->params[k].name, block);
        strcat(strcat(names[1], t->name), "\n");
    }
    for (int i = 0; i < nh_observer_count(nh_observer_table_builtin()); ++i) {
        const nh_observer *o = nh_observer_at(nh_observer_table_builtin(), i);
        char line[2048];
        char prefix[64];
        snprintf(prefix, sizeof prefix, "  %s ", o->name);
        cr_assert(line_starting(buf, prefix, line, sizeof line) != NULL, "no observer %s", o->name);
        for (int c = 0; c < o->n_columns; ++c)
            cr_assert(strstr(line, o->columns[c].name) != NULL, "observer %s: no column %s in %s", o->name,
                      o->columns[c].name, line);
        strcat(strcat(names[3], o->name), "\n");
    }
    assert_names("systems", names[0]);
    assert_names("methods", names[1]);
    assert_names("presets", names[2]);
    assert_names("observers", names[3]);
}

Test(cli, report_refuses_a_bad_experiment_file_with_its_line)
{
    char path[128], args[256];
    snprintf(path, sizeof path, "/tmp/nhens-cli-exp-%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    fputs("[experiment]\nsystem = cvt\nh = fast\n", f);
    fclose(f);
    snprintf(args, sizeof args, "report %s --out /tmp/nhens-cli-exp-out", path);
    cr_assert(eq(int, nhens(args), 2));
    cr_assert(strstr(err_text, ":3:") != NULL && strstr(err_text, "'fast' is not a finite number") != NULL, "%s", err_text);
    snprintf(args, sizeof args, "report %s --scale 2", path);
    cr_assert(eq(int, nhens(args), 2));
    cr_assert(strstr(err_text, "--scale '2' must be a finite number in [1e-06, 1]") != NULL, "%s", err_text);
    remove(path);
    remove_tree("/tmp/nhens-cli-exp-out");
}

Test(cli, smooth_writes_a_running_mean)
{
    /* --smooth W: smoothed.csv has the same header, and a constant column stays constant (n_live = 1);
     * with W = 1 and output every 0.1 the window holds 11 rows in the interior */
    char args[512], path[256];
    snprintf(args, sizeof args, "run --system cvt --preset rotating --method lf --h 0.1 --T 5 --smooth 1 --out "
             "/tmp/nhens-cli-smooth-%d", (int)getpid());
    cr_assert(eq(int, nhens(args), 0), "%s", err_text);
    snprintf(path, sizeof path, "/tmp/nhens-cli-smooth-%d/smoothed.csv", (int)getpid());
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL);
    char line[4096];
    cr_assert(fgets(line, sizeof line, f) != NULL);
    cr_assert(strncmp(line, "t,n_live,dH_mean", 16) == 0, "%s", line);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        double t, live;
        cr_assert(eq(int, sscanf(line, "%lf,%lf", &t, &live), 2));
        cr_assert(eq(dbl, live, 1.0));
        ++rows;
    }
    fclose(f);
    cr_assert(eq(int, rows, 51));
    snprintf(path, sizeof path, "/tmp/nhens-cli-smooth-%d", (int)getpid());
    remove_tree(path);
    refused("run --system cvt --preset rotating --method lf --h 0.1 --T 5 --smooth -1", "--smooth '-1' must be a finite number in [0, 1e+12]");
}

Test(cli, observers_are_selected_by_name)
{
    /* --observe constraint on the CVT (which has driver, passenger and latitude observers too): only the
     * fitted dH and the constraint are recorded, in the table's order */
    cr_assert(eq(int, nhens("run --system cvt --preset rotating --method lf --h 0.1 --T 1 --observe constraint "
                            "--out /tmp/nhens-cli-observe"), 0), "%s", err_text);
    FILE *f = fopen("/tmp/nhens-cli-observe/timeseries.csv", "r");
    char header[512];
    cr_assert(f && fgets(header, sizeof header, f));
    fclose(f);
    cr_assert(eq(str, header, "t,n_live,dH_mean,dH_var,dH_absmax,constraint_max,constraint_rms,dH_var_scaled\n"));
    refused("run --system cvt --preset rotating --method lf --h 0.1 --T 1 --observe constraint,nope",
            "unknown observer 'nope'; known observers: all, dH, rel_energy, constraint");
    remove_tree("/tmp/nhens-cli-observe");
}

/* Entries of `dir` other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        count += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return count;
}

Test(cli, hostile_experiment_files_execute_nothing_and_write_nothing_outside_out)
{
    /* tests/cli/hostile/: shell and gnuplot code in panel names, columns, methods and titles, panels that
     * climb out of --out, and lists or names the parser cannot hold. Files named NN_* must be refused
     * (exit 2, the file and line named) before anything is written; ok_* files run (their titles are
     * quoted, never interpreted). In every case the marker file the payloads touch must not exist and
     * the scratch folder holds at most --out. */
    const char *marker = "/tmp/nhens-pwned";
    DIR *d = opendir(NHENS_HOSTILE_DIR);
    cr_assert(d != NULL);
    int refused_files = 0, accepted_files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".ini"))
            continue;
        char scratch[128], args[1024], expect[512];
        snprintf(scratch, sizeof scratch, "/tmp/nhens-hostile-%d", (int)getpid());
        remove_tree(scratch);
        cr_assert(eq(int, mkdir(scratch, 0755), 0), "%s", scratch);
        remove(marker);
        snprintf(args, sizeof args, "report %s/%s --out %s/out --scale 1", NHENS_HOSTILE_DIR, e->d_name, scratch);
        int code = nhens(args);
        int ok = strncmp(e->d_name, "ok_", 3) == 0;
        if (ok) {
            cr_assert(eq(int, code, 0), "%s: exit %d: %s", e->d_name, code, err_text);
            ++accepted_files;
        } else {
            snprintf(expect, sizeof expect, "%s/%s:", NHENS_HOSTILE_DIR, e->d_name);
            cr_assert(eq(int, code, 2), "%s: exit %d: %s", e->d_name, code, err_text);
            cr_assert(strstr(err_text, expect) != NULL, "%s: no file:line in %s", e->d_name, err_text);
            cr_assert(eq(int, entries(scratch), 0), "%s: wrote before refusing", e->d_name);
            ++refused_files;
        }
        cr_assert(access(marker, F_OK) != 0, "%s executed its payload", e->d_name);
        cr_assert(entries(scratch) <= 1, "%s wrote outside --out", e->d_name);
        remove_tree(scratch);
    }
    closedir(d);
    cr_assert(refused_files >= 19 && accepted_files >= 2, "%d refused, %d accepted", refused_files, accepted_files);
}

Test(cli, check_passes_on_a_builtin_system_and_every_command_has_help)
{
    static char out[16384], usage[8192], again[8192], names[1024];
    cr_assert(eq(int, nhens_output("check --system sleigh --points 5", out, sizeof out), 0), "%s", err_text);
    cr_assert(strstr(out, "all checks passed") && !strstr(out, "FAIL"), "%s", out);
    /* every command the program lists (list --names commands) is on the --help page and has a usage of its
     * own, the same through `help COMMAND` and `COMMAND --help` */
    char help[4096];
    cr_assert(eq(int, nhens_output("--help", help, sizeof help), 0), "%s", err_text);
    cr_assert(eq(int, nhens_output("list --names commands", names, sizeof names), 0), "%s", err_text);
    int commands = 0;
    for (char *save = NULL, *name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save), ++commands) {
        char args[64], line[256], prefix[64];
        snprintf(prefix, sizeof prefix, "  %s ", name);
        cr_assert(line_starting(help, prefix, line, sizeof line) != NULL, "--help lacks %s:\n%s", name, help);
        snprintf(args, sizeof args, "help %s", name);
        cr_assert(eq(int, nhens_output(args, usage, sizeof usage), 0), "nhens %s: %s", args, err_text);
        snprintf(prefix, sizeof prefix, "usage: nhens %s", name);
        cr_assert(strncmp(usage, prefix, strlen(prefix)) == 0, "nhens %s:\n%s", args, usage);
        snprintf(args, sizeof args, "%s --help", name);
        cr_assert(eq(int, nhens_output(args, again, sizeof again), 0), "nhens %s: %s", args, err_text);
        cr_assert(eq(str, again, usage), "nhens %s", args);
    }
    cr_assert(commands >= 7, "list --names commands gave %d", commands);
    char version[256], expect[128];
    cr_assert(eq(int, nhens_output("--version", version, sizeof version), 0));
    snprintf(expect, sizeof expect, "nhens %s (library %s, ABI %d)\n", NH_VERSION, nh_version(), NH_ABI_VERSION);
    cr_assert(eq(str, version, expect));
}

Test(cli, progress_goes_to_a_log_unless_quiet)
{
    /* stderr is a file here, not a terminal: a line at the first merged block and one at the end */
    cr_assert(eq(int, nhens("run --system cvt --preset rotating --method lf --h 0.1 --T 1 --out /tmp/nhens-cli-progress"), 0));
    cr_assert(strstr(err_text, "trajectories 1/1, ") && strstr(err_text, "s left\n"), "%s", err_text);
    cr_assert(eq(int, nhens("run --system cvt --energy 2 --ensemble 16 --method lf --h 0.1 --T 1 --quiet "
                            "--out /tmp/nhens-cli-progress"), 0));
    cr_assert(strstr(err_text, "trajectories") == NULL, "--quiet: %s", err_text);
    remove_tree("/tmp/nhens-cli-progress");
}

/* column `name` of a CSV file's last row */
static double last_row_value(const char *path, const char *name)
{
    static char text[1 << 20];
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "%s", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    char *header_end = strchr(text, '\n');
    *header_end = '\0';
    int column = -1, c = 0;
    for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ++c)
        if (!strcmp(tok, name))
            column = c;
    cr_assert(column >= 0, "no column %s in %s", name, path);
    char *last = header_end + 1;
    for (char *p = last; *p; ++p)
        if (p[0] == '\n' && p[1])
            last = p + 1;
    c = 0;
    for (char *save = NULL, *tok = strtok_r(last, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save), ++c)
        if (c == column)
            return strtod(tok, NULL);
    return NAN;
}

Test(cli, sample_paths_are_the_trajectories_themselves)
{
    /* trajectory 0 of an ensemble is the same trajectory as the ensemble of one (same PCG stream (seed, 0)),
     * so its path equals that run's mean; and paths do not depend on the thread count */
    cr_assert(eq(int, nhens("run --system quartic --energy 1 --method dla --h 0.05 --T 5 --ensemble 16 --paths 2 "
                            "--threads 3 --quiet --out /tmp/nhens-cli-paths16"), 0), "%s", err_text);
    cr_assert(eq(int, nhens("run --system quartic --energy 1 --method dla --h 0.05 --T 5 --ensemble 1 --quiet "
                            "--out /tmp/nhens-cli-paths1"), 0), "%s", err_text);
    const double path = last_row_value("/tmp/nhens-cli-paths16/paths.csv", "dH_0");
    const double alone = last_row_value("/tmp/nhens-cli-paths1/timeseries.csv", "dH_mean");
    cr_assert(path == alone && path != 0, "path %.17g, alone %.17g: the same trajectory, bit for bit", path, alone);
    cr_assert(eq(int, nhens("run --system quartic --energy 1 --method dla --h 0.05 --T 5 --ensemble 16 --paths 2 "
                            "--threads 1 --quiet --out /tmp/nhens-cli-paths16b"), 0));
    cr_assert(eq(int, system("cmp -s /tmp/nhens-cli-paths16/paths.csv /tmp/nhens-cli-paths16b/paths.csv"), 0),
              "paths.csv differs between 1 and 3 threads");
    refused("run --system quartic --energy 1 --method dla --h 0.05 --T 5 --ensemble 2 --paths 3 --out /tmp/x",
            "sample paths=3 must be in [0, 64] and at most the ensemble size 2");
    remove_tree("/tmp/nhens-cli-paths16");
    remove_tree("/tmp/nhens-cli-paths16b");
    remove_tree("/tmp/nhens-cli-paths1");
}

Test(cli, kinsol_and_newton_agree_on_a_long_dd_run)
{
    /* dd on the oscillating CVT at eps = 0.5 over 30 000 steps: a residual scale without the discrete
     * gradient's rounding floor (eps |V| h / |D|) makes KINSOL refuse a step near t = 362.1 that Newton
     * accepts. Both finish and agree to 3e-12 on every observed quantity (measured); 1e-10 leaves
     * room for other compilers' rounding and is still 1e6 below the errors themselves. */
    const char *cols[] = {"dH_mean", "driver_dE_mean", "passenger_dE_mean", "constraint_max"};
    char args[512];
    for (int i = 0; i < 2; ++i) {
        snprintf(args, sizeof args, "run --system cvt --param eps=0.5 --preset oscillating --method dd --h 0.1 "
                 "--T 3000 --quiet --solver %s --out /tmp/nhens-cli-dd-%s", i ? "newton" : "kinsol", i ? "newton" : "kinsol");
        cr_assert(eq(int, nhens(args), 0), "%s: %s", args, err_text);
    }
    for (int c = 0; c < 4; ++c) {
        const double k = last_row_value("/tmp/nhens-cli-dd-kinsol/timeseries.csv", cols[c]);
        const double n = last_row_value("/tmp/nhens-cli-dd-newton/timeseries.csv", cols[c]);
        cr_assert(fabs(k - n) < 1e-10, "%s: kinsol %.17g, newton %.17g", cols[c], k, n);
    }
    remove_tree("/tmp/nhens-cli-dd-kinsol");
    remove_tree("/tmp/nhens-cli-dd-newton");
}
