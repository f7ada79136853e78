/* The nhens program as a user runs it: bad input is refused with a message naming the value and
 * a non-zero exit, a good run writes whole files, a failed one writes none. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "helpers.h"
#include "scratch.h"
#include "nhens/method.h"
#include "nhens/plugin.h"

static char err_text[8192];

/* Run `nhens ARGS`: stdout into out (cut to size - 1, the rest read and dropped), stderr into err_text;
 * returns the exit code (-1 if it did not exit). */
static int nhens_output(const char *args, char *out, size_t size)
{
    char cmd[2048], errpath[256], rest[4096];
    snprintf(errpath, sizeof errpath, "/tmp/nhens-cli-%d.err", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", NHENS_CLI_PATH, args, errpath);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    while (fread(rest, 1, sizeof rest, p) > 0)
        ;
    int status = pclose(p);
    FILE *f = fopen(errpath, "r");
    n = f ? fread(err_text, 1, sizeof err_text - 1, f) : 0;
    err_text[n] = '\0';
    if (f)
        fclose(f);
    remove(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run `nhens ARGS`, return its exit code; stdout is dropped, stderr goes to err_text. */
static int nhens(const char *args)
{
    char out[1];
    return nhens_output(args, out, sizeof out);
}

static void refused(const char *args, const char *expect)
{
    int code = nhens(args);
    cr_assert(code == 2, "'%s' exited %d (stderr: %s)", args, code, err_text);
    cr_assert(strstr(err_text, expect) != NULL, "'%s': expected '%s' in: %s", args, expect, err_text);
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
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cr_assert(stat(path, &st) == 0 && st.st_size > 0);
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
     * README's numbers: C = (9.3 +- 1.5)e-9) print no caveat. An all-failed run prints no fit. */
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
    char args[512], dir[128];
    snprintf(dir, sizeof dir, "/tmp/nhens-cli-shell-%d", (int)getpid());
    snprintf(args, sizeof args, "run --system quartic --preset celledoni2019-fig2 --method dla01 --h 0.1 --T 2"
             " --ensemble 8 --out %s", dir);
    cr_assert(eq(int, nhens(args), 0), "stderr: %s", err_text);
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

Test(cli, list_shows_every_system_and_method)
{
    char buf[65536];
    cr_assert(eq(int, nhens_output("list", buf, sizeof buf), 0));
    const char *names[] = {"quartic", "cvt", "knife", "dla ", "dla01", "lf ", "dd ", "rk4", "alpha", "eps", "rotating"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        cr_assert(strstr(buf, names[i]) != NULL, "nhens list lacks %s", names[i]);
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

Test(cli, plugin_method_runs_at_its_order_and_counts_its_solves)
{
    /* examples/suzuki_plugin.c: Suzuki's 5-stage composition of newmark (order 2 -> 4); the observed order
     * between h = 0.05 and 0.025 on the rotating CVT is 4.02 (tolerance 0.15 as for the built-in orders) */
    char args[1024], out[8192];
    snprintf(args, sizeof args,
             "--plugin %s order --system cvt --param eps=0.1 --preset rotating --method suzuki5 --T 2 "
             "--h 0.1,0.05,0.025",
             NHENS_PLUGIN_PATH);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "%s", out);
    const char *last = strstr(out, "0.025");
    double h, err, order;
    long steps;
    cr_assert(last && sscanf(last, "%lf %ld %lf %lf", &h, &steps, &err, &order) == 4, "%s", out);
    cr_assert(fabs(order - 4.0) < 0.15, "observed order %g", order);
    snprintf(args, sizeof args, "--plugin %s", NHENS_CLI_PATH);
    cr_assert(eq(int, nhens(args), 2));
    cr_assert(strstr(err_text, "cannot load plugin") || strstr(err_text, "not an nhens plugin"), "%s", err_text);
    cr_assert(eq(int, nhens("--plugin nosuch.so list"), 2));
    cr_assert(strstr(err_text, "must be a path") != NULL, "%s", err_text);
}

#define SYSTEM_PLUGIN "--plugin " NHENS_SYSTEM_PLUGIN_PATH " "

Test(cli, plugin_system_passes_check_runs_at_order_and_keeps_its_invariants)
{
    /* examples/contact_plugin.c: the contact oscillator on R^{2k+1} with coupling 1/2 eps z^2 |x|^2 */
    char out[8192];
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "check --system contact-eps --param eps=2", out, sizeof out), 0),
              "%s%s", out, err_text);
    cr_assert(strstr(out, "all checks passed") && !strstr(out, "FAIL"), "%s", out);
    const int affine_row = strstr(out, "declared affine A: d(A u)/dq constant         0.000e+00") != NULL;
    cr_assert(affine_row, "the example declares A affine and the row checks it: %s", out);
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "check --system contact-eps --param k=3 --points 5", out, sizeof out),
                 0), "n = 7: %s%s", out, err_text);
    /* DLA^{0,1} is order 2 (docs/METHODS.md Sect. 2): observed 2.000 between h = 0.05 and 0.025; tolerance 0.15 as
     * for the built-in order tests */
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "order --system contact-eps --preset orbit --method dla01 --T 2 "
                                                 "--h 0.1,0.05,0.025", out, sizeof out), 0), "%s", err_text);
    const char *last = strstr(out, "0.025");
    double h, err, order;
    long steps;
    cr_assert(last && sscanf(last, "%lf %ld %lf %lf", &h, &steps, &err, &order) == 4, "%s", out);
    cr_assert(fabs(order - 2.0) < 0.15, "observed order %g", order);
    /* Gonzalez' discrete gradient on 50 states of H = 1 over 1000 steps keeps H and A v = 0 to round-off:
     * measured 4.9e-14 and 5.4e-16; the bounds allow 20x (Newton tolerance and accumulation) */
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "run --system contact-eps --preset shell --ensemble 50 --method "
                                                 "gonzalez --h 0.1 --T 100 --out /tmp/nhens-cli-contact", out,
                                   sizeof out), 0), "%s", err_text);
    double dh, dh_rel, drift;
    const char *line = strstr(out, "max |dH| =");
    cr_assert(line && sscanf(line, "max |dH| = %lf, max |dH|/|H0| = %lf, max |A(q)v| = %lf", &dh, &dh_rel, &drift) == 3,
              "%s", out);
    cr_assert(dh < 1e-12 && drift < 1e-14, "dH %g, drift %g", dh, drift);
    cr_assert(strstr(out, "failed trajectories: 0") != NULL, "%s", out);
    /* the plugin's system is refused without the plugin, by name */
    refused("check --system contact-eps", "unknown system 'contact-eps'");
    remove_tree("/tmp/nhens-cli-contact");
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

Test(cli, plugin_of_another_abi_is_refused_with_both_versions)
{
    char args[512];
    snprintf(args, sizeof args, "--plugin %s list", NHENS_WRONG_ABI_PLUGIN_PATH);
    int abi = NH_PLUGIN_ABI_VERSION;
    char expect[128];
    snprintf(expect, sizeof expect, "was built for nhens plugin ABI %d, and this nhens has ABI %d", abi + 1, abi);
    refused(args, expect);
}

/* A plugin system without V's Hessian (which dla's, dd's and newmark's Newton matrices call) is refused
 * at load, naming the system and the callback, before `run --method dla` could call the missing callback. */
Test(cli, plugin_system_without_a_hessian_is_refused_by_name)
{
    char args[512];
    snprintf(args, sizeof args, "--plugin %s run --system plane-without-hessian --method dla --energy 1 --h 0.1 --T 1 "
             "--out /tmp/nhens-no-hessian",
             NHENS_NO_HESSIAN_PLUGIN_PATH);
    refused(args, "system 'plane-without-hessian' is incomplete: it has no potential_hessian;");
}

Test(cli, check_passes_on_a_builtin_system_and_every_command_has_help)
{
    cr_assert(eq(int, nhens("check --system sleigh --points 5"), 0), "%s", err_text);
    const char *commands[] = {"list", "run", "order", "audit", "report", "check"};
    for (int i = 0; i < 6; ++i) {
        char args[64];
        snprintf(args, sizeof args, "help %s", commands[i]);
        cr_assert(eq(int, nhens(args), 0), "nhens %s", args);
        snprintf(args, sizeof args, "%s --help", commands[i]);
        cr_assert(eq(int, nhens(args), 0), "nhens %s", args);
    }
    cr_assert(eq(int, nhens("--version"), 0));
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
