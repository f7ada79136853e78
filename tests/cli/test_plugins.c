/* Plugins through the nhens program (--plugin, engine/plugin.c): the example method and system run at
 * their order and pass `nhens check`; a plugin of another ABI or a system without V's Hessian is refused;
 * summary.json records the plugins and a command that reruns to the same bytes; report's cache follows the
 * plugins' bytes. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "run_nhens.h"
#include "scratch.h"
#include "sha256.h"
#include "nhens/plugin.h"

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
    /* an inner method with parameters, NAME/k=v, through nh_method_spec_parse_inner: DLA^{1/2} (order 2) gives
     * 4.016 between h = 0.05 and 0.025 */
    snprintf(args, sizeof args,
             "--plugin %s order --system cvt --param eps=0.1 --preset rotating --method suzuki5:inner=dla/alpha=0.5 "
             "--T 2 --h 0.1,0.05,0.025",
             NHENS_PLUGIN_PATH);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "%s", err_text);
    last = strstr(out, "0.025");
    cr_assert(last && sscanf(last, "%lf %ld %lf %lf", &h, &steps, &err, &order) == 4, "%s", out);
    cr_assert(fabs(order - 4.0) < 0.15, "observed order %g", order);
    snprintf(args, sizeof args, "--plugin %s order --system cvt --preset rotating --method suzuki5:inner=dla/alfa=0.5 "
             "--T 2 --h 0.1,0.05", NHENS_PLUGIN_PATH);
    refused(args, "suzuki5: inner method 'dla/alfa=0.5': ");
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
    char scratch[] = "/tmp/nhens-cli-contact.XXXXXX", command[512];
    cr_assert(mkdtemp(scratch) != NULL);
    snprintf(command, sizeof command, "%srun --system contact-eps --preset shell --ensemble 50 --method gonzalez "
             "--h 0.1 --T 100 --out %s/run", SYSTEM_PLUGIN, scratch);
    cr_assert(eq(int, nhens_output(command, out, sizeof out), 0), "%s", err_text);
    double dh, dh_rel, drift;
    const char *line = strstr(out, "max |dH| =");
    cr_assert(line && sscanf(line, "max |dH| = %lf, max |dH|/|H0| = %lf, max |A(q)v| = %lf", &dh, &dh_rel, &drift) == 3,
              "%s", out);
    cr_assert(dh < 1e-12 && drift < 1e-14, "dH %g, drift %g", dh, drift);
    cr_assert(strstr(out, "failed trajectories: 0") != NULL, "%s", out);
    /* the plugin's system is refused without the plugin, by name */
    refused("check --system contact-eps", "unknown system 'contact-eps'");
    remove_tree(scratch);
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

/* ---- provenance: summary.json's plugins and command, report's cache key ---------------------------------- */

/* The whole file at path (malloc'ed, NUL-terminated; *size its bytes), or NULL. */
static char *slurp(const char *path, size_t *size)
{
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0, used = 0, got;
    do {
        char *bigger = realloc(text, cap += 65536);
        if (!bigger)
            break;
        text = bigger;
        used += got = fread(text + used, 1, cap - used - 1, f);
    } while (got > 0);
    fclose(f);
    if (text)
        text[used] = '\0';
    *size = used;
    return text;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *ta = slurp(a, &na), *tb = slurp(b, &nb);
    const int same = ta && tb && na == nb && na > 0 && !memcmp(ta, tb, na);
    free(ta);
    free(tb);
    return same;
}

/* A scratch folder of this test process, made the working directory, holding a copy of the example system
 * plugin under `name` (criterion runs each test in its own process, so chdir stays in the test). */
static void enter_scratch_with_plugin(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/nhens-provenance-%d", (int)getpid());
    remove_tree(dir);
    cr_assert(eq(int, mkdir(dir, 0700), 0));
    cr_assert(eq(int, chdir(dir), 0));
    size_t size;
    char *bytes = slurp(NHENS_SYSTEM_PLUGIN_PATH, &size);
    FILE *f = fopen(name, "wb");
    cr_assert(bytes && f && fwrite(bytes, 1, size, f) == size);
    fclose(f);
    free(bytes);
}

/* summary.json names the plugin by its absolute path with the SHA-256 of its bytes, and its command, run by a
 * shell as recorded, writes the same bytes: the plugin's name holds a space and a quote, so the command must
 * quote it, and --plugin must come before the command word. */
Test(cli, summary_records_plugin_provenance_and_its_command_reruns_to_the_same_bytes)
{
    char dir[256], args[1024], out[8192], real[4096], sha[NH_SHA256_HEX];
    enter_scratch_with_plugin(dir, sizeof dir, "my plugin's.so");
    snprintf(args, sizeof args, "--plugin \"./my plugin's.so\" run --system contact-eps --preset shell --ensemble 16 "
             "--method gonzalez --h 0.1 --T 5 --paths 2 --threads 2 --out first --quiet");
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "%s", err_text);
    size_t size;
    char *summary = slurp("first/summary.json", &size);
    cJSON *s = cJSON_Parse(summary);
    free(summary);
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(s, "plugins");
    cr_assert(eq(int, cJSON_GetArraySize(plugins), 1));
    const cJSON *p = cJSON_GetArrayItem(plugins, 0);
    cr_assert(realpath("my plugin's.so", real) != NULL);
    cr_assert(eq(int, nh_sha256_file(real, sha), 0));
    cr_assert(eq(str, cJSON_GetObjectItemCaseSensitive(p, "path")->valuestring, real));
    cr_assert(eq(str, cJSON_GetObjectItemCaseSensitive(p, "sha256")->valuestring, sha));
    cr_assert(eq(str, cJSON_GetObjectItemCaseSensitive(p, "name")->valuestring, "contact-eps"));
    const char *command = cJSON_GetObjectItemCaseSensitive(s, "command")->valuestring;
    const char *quoted = "nhens --plugin './my plugin'\\''s.so' run --system contact-eps --preset shell";
    cr_assert(strncmp(command, quoted, strlen(quoted)) == 0, "%s", command);
    /* the recorded command, with --out renamed, run by the shell */
    char rerun[2048];
    const char *out_option = strstr(command, "--out first");
    cr_assert(out_option != NULL, "%s", command);
    snprintf(rerun, sizeof rerun, "%s%.*s--out again%s >/dev/null", NHENS_CLI_PATH, (int)(out_option - command - 5),
             command + 5, out_option + strlen("--out first"));
    cr_assert(eq(int, system(rerun), 0), "%s", rerun);
    cJSON_Delete(s);
    const char *files[] = {"timeseries.csv", "quantiles.csv", "paths.csv"};
    for (int i = 0; i < 3; ++i) {
        char a[64], b[64];
        snprintf(a, sizeof a, "first/%s", files[i]);
        snprintf(b, sizeof b, "again/%s", files[i]);
        cr_assert(same_bytes(a, b), "%s differs after re-running the recorded command", files[i]);
    }
    remove_tree(dir);
}

/* report reuses a run only when the same plugin bytes and the same nhens computed it, and says why it does not:
 * the copy of the plugin grows by one byte (a rebuild: another SHA-256), then summary.json claims another
 * nhens version. */
Test(cli, report_cache_recomputes_after_a_plugin_rebuild_and_says_why)
{
    char dir[256];
    enter_scratch_with_plugin(dir, sizeof dir, "my.so");
    FILE *f = fopen("exp.ini", "w");
    fputs("[experiment]\nplugin = my.so\ntitle = provenance\nsystem = contact-eps\npreset = shell\nh = 0.1\nT = 2\n"
          "ensemble = 8\nmethods = dla01\nplot = dH_absmax\n\n[panel a]\ntitle = a\n", f);
    fclose(f);
    const char *report = "report exp.ini --allow-plugins --out rep --quiet --threads 2";
    cr_assert(eq(int, nhens(report), 0), "%s", err_text);
    cr_assert(strstr(err_text, "dla01: running\n") != NULL, "%s", err_text);
    cr_assert(eq(int, nhens(report), 0), "%s", err_text);
    cr_assert(strstr(err_text, "dla01: reused") != NULL, "the same plugin: %s", err_text);
    f = fopen("my.so", "ab");
    fputc(0, f);
    fclose(f);
    cr_assert(eq(int, nhens(report), 0), "%s", err_text);
    cr_assert(strstr(err_text, "running (the results there are not reused: plugin contact-eps changed (") != NULL,
              "%s", err_text);
    cr_assert(eq(int, nhens(report), 0), "%s", err_text);
    cr_assert(strstr(err_text, "dla01: reused") != NULL, "recomputed with the rebuilt plugin: %s", err_text);
    size_t size;
    char *summary = slurp("rep/a/01-dla01/summary.json", &size);
    cJSON *s = cJSON_Parse(summary);
    free(summary);
    cJSON_ReplaceItemInObjectCaseSensitive(s, "nhens_version", cJSON_CreateString("0.0.1"));
    char *text = cJSON_Print(s);
    f = fopen("rep/a/01-dla01/summary.json", "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(s);
    cr_assert(eq(int, nhens(report), 0), "%s", err_text);
    cr_assert(strstr(err_text, "not reused: nhens 0.0.1 computed them, and this is nhens " NH_VERSION) != NULL, "%s",
              err_text);
    remove_tree(dir);
}

#define OBSERVER_PLUGIN "--plugin " NHENS_OBSERVER_PLUGIN_PATH " "

/* The first line of `file` holds `column` as a whole field. */
static int has_column(const char *file, const char *column)
{
    size_t size;
    char *text = slurp(file, &size), pattern[128];
    cr_assert(text != NULL, "%s", file);
    *strchr(text, '\n') = '\0';
    snprintf(pattern, sizeof pattern, ",%s,", column);
    char *line = malloc(strlen(text) + 3);
    sprintf(line, ",%s,", text);
    const int found = strstr(line, pattern) != NULL;
    free(line);
    free(text);
    return found;
}

/* examples/momentum_observer.c: p = M(q) v (3 components, systems of n = 3) and T / H(0) in nhens list, the time
 * series, the quantiles, the sample paths, the trajectory rows and a report's figure; --observe p selects its
 * components; on the knife edge (unit mass) p_3 = v_3, so the final v_3 is p_3's value at T. */
Test(cli, observer_plugin_gets_statistics_quantiles_paths_reductions_and_figures)
{
    char dir[256], out[16384];
    snprintf(dir, sizeof dir, "/tmp/nhens-observer-%d", (int)getpid());
    remove_tree(dir);
    cr_assert(eq(int, mkdir(dir, 0700), 0));
    cr_assert(eq(int, chdir(dir), 0));
    cr_assert(eq(int, nhens_output(OBSERVER_PLUGIN "list", out, sizeof out), 0), "%s", err_text);
    cr_assert(strstr(out, "(plugin observer, 3 values)") && strstr(out, "p_3_absmax"), "%s", out);
    const char *run = OBSERVER_PLUGIN "run --system knife --preset modin2020-fig4 --perturb 0.05 --ensemble 24 "
                      "--method dla01 --h 0.05 --T 5 --every 10 --paths 2 --quiet --out r "
                      "--reduce 'final,max:|p|,first:kinetic_share<0.5,min:p_3'";
    cr_assert(eq(int, nhens(run), 0), "%s", err_text);
    cr_assert(has_column("r/timeseries.csv", "p_1_mean") && has_column("r/timeseries.csv", "kinetic_share_var"));
    cr_assert(has_column("r/quantiles.csv", "p_2_q50") && has_column("r/paths.csv", "p_3_1"));
    cr_assert(has_column("r/trajectories.csv", "max:|p_2|") && has_column("r/trajectories.csv", "min:p_3") &&
              has_column("r/trajectories.csv", "first:kinetic_share<0.5"));
    /* |min over the rows of p_3| <= max |p_3| over the rows, trajectory by trajectory (columns 10 = v_3, 13, 15) */
    size_t size;
    char *rows = slurp("r/trajectories.csv", &size), *line = strchr(rows, '\n') + 1;
    int checked = 0;
    for (; *line; line = strchr(line, '\n') + 1, ++checked) {
        double f[16];
        cr_assert(eq(int, sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &f[0], &f[1], &f[2],
                                 &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11], &f[12], &f[13], &f[14]),
                     15), "%s", line);
        cr_assert(fabs(f[14]) <= f[12] && f[14] <= f[9], "min p_3 %g, max |p_3| %g, final v_3 %g", f[14], f[12], f[9]);
    }
    free(rows);
    cr_assert(eq(int, checked, 24));
    cr_assert(eq(int, nhens(OBSERVER_PLUGIN "run --system knife --preset modin2020-fig4 --method dla01 --h 0.05 --T 1 "
                            "--observe p --quiet --out s"), 0), "%s", err_text);
    cr_assert(has_column("s/timeseries.csv", "p_2_var") && !has_column("s/timeseries.csv", "kinetic_share_mean") &&
              !has_column("s/timeseries.csv", "constraint_max"), "only p and the fitted dH");
    /* p needs n = 3: the quartic (n = 7) does not record it, and a reduction of it says so */
    cr_assert(eq(int, nhens(OBSERVER_PLUGIN "run --system quartic --energy 3 --method dla01 --h 0.1 --T 1 --quiet "
                            "--out q --reduce max:p_1"), 2));
    cr_assert(strstr(err_text, "observer 'p_1' is not recorded in this run") != NULL, "%s", err_text);
    FILE *f = fopen("exp.ini", "w");
    fprintf(f, "[experiment]\nplugin = %s\ntitle = momentum\nsystem = knife\npreset = modin2020-fig4\nperturb = 0.05\n"
            "h = 0.05\nT = 5\nensemble = 16\nmethods = dla01\npaths = 2\n\n[panel a]\ntitle = a\n"
            "plot = p_1_mean; p_2_band; p_3_path\n", NHENS_OBSERVER_PLUGIN_PATH);
    fclose(f);
    cr_assert(eq(int, nhens("report exp.ini --allow-plugins --out rep --quiet --threads 2"), 0), "%s", err_text);
    struct stat st;
    cr_assert(stat("rep/a.png", &st) == 0 && st.st_size > 1000, "the panel's figure");
    cr_assert(has_column("rep/a/01-dla01/quantiles.csv", "p_2_q95"), "the band's data");
    cr_assert(eq(int, nhens("report exp.ini --out rep2 --quiet"), 2), "plugins need --allow-plugins");
    remove_tree(dir);
}
