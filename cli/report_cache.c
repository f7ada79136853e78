/* What `nhens report` reads back from its output folder: the results of finished runs it reuses. They are
 * input like any file a user hands nhens: a run is reused only when its folder is a real folder and every
 * file the report reads is a whole regular file of the shape this configuration writes; anything else is
 * refused as cache (with a note on stderr) and the run is done again. Nothing here blocks on a FIFO or
 * follows a symbolic link out of the output folder. */
#include "cli.h"
#include "experiment.h"

#include "nhens/output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SUMMARY_MAX_BYTES = 16 << 20, CSV_MAX_BYTES = 1 << 30, HASH_MAX_BYTES = 64 };
/* what nh_write_smoothed reads back: a header below 2048 bytes, lines below 4096, at most 64 columns */
enum { CSV_MAX_HEADER = 2047, CSV_MAX_LINE = 4095, CSV_MAX_COLUMNS = 64 };

int nh_report_settle_folder(const char *path, nh_error *err)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nhens report: '%s' is %s, not a folder: removed, its runs are done again\n", path,
                S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
        if (unlink(path) != 0)
            return nh_fail(err, NH_ERR_IO, "cannot remove '%s' (not a folder): %s", path, strerror(errno));
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return nh_fail(err, NH_ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return nh_fail(err, NH_ERR_IO, "'%s' is not a folder", path);
    return NH_OK;
}

int nh_report_clear_strays(const char *dir, nh_error *err)
{
    for (int i = 0; nh_output_set_names[i]; ++i) {
        char path[NH_PATH_MAX];
        struct stat st;
        if (nh_path_format(path, sizeof path, err, "%s/%s", dir, nh_output_set_names[i]))
            return NH_ERR_INPUT;
        if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
            continue;
        fprintf(stderr, "nhens report: '%s' is %s, not a file of results: removed\n", path,
                S_ISDIR(st.st_mode) ? "a folder" : S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
        if ((S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path)) != 0)
            return nh_fail(err, NH_ERR_IO, "cannot remove '%s' (remove it by hand): %s", path, strerror(errno));
    }
    return NH_OK;
}

/* DIR/NAME whole, if it is a regular file (not a link, FIFO or folder) of at most max bytes; NULL (why
 * filled) otherwise. */
static char *read_cached(const char *dir, const char *name, size_t max, size_t *size, char *why, size_t len)
{
    char path[NH_PATH_MAX];
    struct stat st;
    nh_error err;
    if (nh_path_format(path, sizeof path, &err, "%s/%s", dir, name))
        return snprintf(why, len, "%s", err.msg), NULL;
    if (lstat(path, &st) != 0)
        return snprintf(why, len, "%s is missing", name), NULL;
    if (!S_ISREG(st.st_mode))
        return snprintf(why, len, "%s is not a regular file", name), NULL;
    char *text = nh_read_file(path, max, size, &err);
    if (!text)
        snprintf(why, len, "%s: %.400s", name, err.msg);
    else if (*size == 0 || strlen(text) != *size) {
        snprintf(why, len, "%s is %s", name, *size ? "not text (it holds a NUL byte)" : "empty");
        free(text);
        text = NULL;
    }
    return text;
}

cJSON *nh_report_load_summary(const char *dir)
{
    size_t size;
    char why[512];
    char *text = read_cached(dir, "summary.json", SUMMARY_MAX_BYTES, &size, why, sizeof why);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (j && !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        j = NULL;
    }
    return j;
}

/* The first member of `want` that `have` does not hold alike, as a dotted name in field (1), else 0. Inside
 * an object of `want` the members must agree both ways: a member only `have` records (a perturbation, a
 * parameter) differs too. At the top level only want's members count, except threads, which do not change
 * the results. */
static int first_difference(const cJSON *want, const cJSON *have, int top, char *field, size_t len)
{
    const size_t used = strlen(field);
    const cJSON *m;
    cJSON_ArrayForEach(m, want)
    {
        if (top && !strcmp(m->string, "threads"))
            continue;
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(have, m->string);
        snprintf(field + used, len - used, "%s%s", used ? "." : "", m->string);
        if (!other || cJSON_IsObject(m) != cJSON_IsObject(other) ||
            (cJSON_IsObject(m) ? first_difference(m, other, 0, field, len) : !cJSON_Compare(m, other, 1)))
            return 1;
    }
    const cJSON *extra = top ? NULL : have;
    cJSON_ArrayForEach(m, extra)
    {
        snprintf(field + used, len - used, "%s%s", used ? "." : "", m->string);
        if (!cJSON_GetObjectItemCaseSensitive(want, m->string))
            return 1;
    }
    field[used] = '\0';
    return 0;
}

/* The summary is this run's, complete: its command and every field of the configuration it records. */
static int summary_matches(const cJSON *s, const nh_run_config *cfg, const char *command, char *why, size_t len)
{
    char field[256] = "";
    char *text = nh_configuration_json(cfg);
    cJSON *want = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!want)
        snprintf(field, sizeof field, "(out of memory)");
    else if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "command")) ||
             strcmp(cJSON_GetObjectItemCaseSensitive(s, "command")->valuestring, command))
        snprintf(field, sizeof field, "command");
    else if (!first_difference(want, s, 1, field, sizeof field) &&
             !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "complete")))
        snprintf(field, sizeof field, "complete");
    cJSON_Delete(want);
    if (field[0])
        snprintf(why, len, "summary.json's \"%s\" is not this run's", field);
    return field[0] == '\0';
}

/* One CSV line of numbers (nan allowed) with `columns` fields. */
static int numeric_row(const char *line, size_t length, int columns)
{
    int fields = 0;
    for (const char *c = line; c < line + length; ++fields) {
        char *end;
        strtod(c, &end);
        if (end == c || (end < line + length && *end != ','))
            return 0;
        c = end + (end < line + length);
        if (end < line + length && c == line + length) /* a trailing comma */
            return 0;
    }
    return fields == columns;
}

/* A CSV file nhens wrote: a header "t,..." of at most CSV_MAX_COLUMNS names, then rows of as many numbers,
 * every line ended by a newline and short enough to be read back whole; *rows counts the data rows. */
static int csv_shape(const char *text, long *rows)
{
    const char *newline = strchr(text, '\n');
    if (strncmp(text, "t,", 2) || !newline || newline - text > CSV_MAX_HEADER)
        return 0;
    int columns = 1;
    for (const char *c = text; c < newline; ++c)
        columns += *c == ',';
    if (columns > CSV_MAX_COLUMNS)
        return 0;
    *rows = 0;
    for (const char *line = newline + 1; *line; line = newline + 1, ++*rows) {
        if (!(newline = strchr(line, '\n')) || newline - line > CSV_MAX_LINE ||
            !numeric_row(line, (size_t)(newline - line), columns))
            return 0;
    }
    return *rows > 0;
}

/* DIR/NAME is a CSV file of nhens's shape; with rows_min > 0 its data rows are in [rows_min, rows_min + 1]
 * (the rows of every `every` steps, and the final time where `every` does not divide the steps). */
static int csv_valid(const char *dir, const char *name, long rows_min, char *why, size_t len)
{
    size_t size;
    long rows = 0;
    char *text = read_cached(dir, name, CSV_MAX_BYTES, &size, why, len);
    if (!text)
        return 0;
    int ok = csv_shape(text, &rows);
    free(text);
    if (!ok)
        snprintf(why, len, "%s is not a whole table of numbers under its header", name);
    else if (rows_min > 0 && (rows < rows_min || rows > rows_min + 1))
        snprintf(why, len, "%s has %ld rows; this run writes %ld", name, rows, rows_min);
    return ok && why[0] == '\0';
}

/* The plugin of summary.json's "plugins" named `name`, or NULL. */
static const cJSON *recorded_plugin(const cJSON *plugins, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, plugins)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
            return p;
    }
    return NULL;
}

/* The nhens version and the plugins that computed the results in summary s are this process's: else why says
 * what changed (the version, a plugin rebuilt, loaded only then or only now). */
static int provenance_matches(const cJSON *s, const nh_registry *reg, char *why, size_t len)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(s, "nhens_version");
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(s, "plugins");
    if (!cJSON_IsString(version) || strcmp(version->valuestring, NH_VERSION))
        return snprintf(why, len, "nhens %.40s computed them, and this is nhens %s",
                        cJSON_IsString(version) ? version->valuestring : "(unknown)", NH_VERSION), 0;
    const int loaded = reg ? nh_registry_plugin_count(reg) : 0;
    for (int i = 0; i < loaded; ++i) {
        const nh_plugin_info *p = nh_registry_plugin_at(reg, i);
        const cJSON *then = recorded_plugin(plugins, p->name);
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(then, "sha256");
        if (!then)
            return snprintf(why, len, "plugin %s (%.300s) was not loaded when they were computed", p->name, p->path), 0;
        if (!cJSON_IsString(sha) || strcmp(sha->valuestring, p->sha256))
            return snprintf(why, len, "plugin %s changed (%.300s: SHA-256 %.12s... then, %.12s... now)", p->name,
                            p->path, cJSON_IsString(sha) ? sha->valuestring : "(none)", p->sha256), 0;
    }
    if (cJSON_GetArraySize(plugins) > loaded) /* every loaded one is recorded: one more was loaded then */
        return snprintf(why, len, "%d plugin%s loaded when they were computed, %d now", cJSON_GetArraySize(plugins),
                        cJSON_GetArraySize(plugins) == 1 ? " was" : "s were", loaded), 0;
    return 1;
}

/* DIR/config.hash holds `hash`: this configuration's results were committed there whole. Where it does not,
 * and summary.json says that another nhens or other plugins computed them, why says so. */
static int hash_matches(const char *dir, const nh_registry *reg, uint64_t hash, char *why, size_t len)
{
    char path[NH_PATH_MAX], expected[32];
    size_t size;
    if (nh_path_format(path, sizeof path, NULL, "%s/config.hash", dir) || access(path, F_OK) != 0)
        return 0; /* never run here: nothing to say */
    cJSON *s = nh_report_load_summary(dir);
    const int same_provenance = !s || provenance_matches(s, reg, why, len);
    cJSON_Delete(s);
    if (!same_provenance)
        return 0;
    char *text = read_cached(dir, "config.hash", HASH_MAX_BYTES, &size, why, len);
    snprintf(expected, sizeof expected, "%016llx\n", (unsigned long long)hash);
    const int ok = text && !strcmp(text, expected);
    free(text);
    return ok;
}

int nh_report_cache_valid(const nh_run_config *cfg, const char *command, const char *dir, uint64_t hash, char *why,
                          size_t len)
{
    why[0] = '\0';
    if (!hash_matches(dir, cfg->method.registry, hash, why, len))
        return 0;
    cJSON *s = nh_report_load_summary(dir);
    int ok = s && summary_matches(s, cfg, command, why, len);
    cJSON_Delete(s);
    if (!s) {
        char detail[400] = "";
        size_t size;
        char *text = read_cached(dir, "summary.json", SUMMARY_MAX_BYTES, &size, detail, sizeof detail);
        snprintf(why, len, "%s", text ? "summary.json is not a JSON object" : detail);
        free(text);
    }
    const double steps = floor(cfg->T / cfg->h + 1e-9);
    const long rows = (long)(steps / (double)cfg->every) + 1;
    ok = ok && csv_valid(dir, "timeseries.csv", rows, why, len) && csv_valid(dir, "quantiles.csv", 0, why, len);
    return ok && (cfg->paths < 1 || csv_valid(dir, "paths.csv", 0, why, len));
}
