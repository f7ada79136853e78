/* The shared JSON encoding of ensemble state (see state_json.h). */
#include "state_json.h"
#include "nhens/files.h"
#include "nhens/options.h"
#include "summary_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(nh_accum) == 4 * sizeof(double), "accumulators are stored as 4 doubles each");

void nh_json_put_long(cJSON *obj, const char *key, long value)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", value);
    cJSON_AddStringToObject(obj, key, text);
}

int nh_json_get_long(const cJSON *obj, const char *key, long min, long max, long *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return !cJSON_IsString(item) || nh_parse_long_in(item->valuestring, min, max, out);
}

/* 16 lower-case hex digits per double (a table, not snprintf: partial results hold millions). */
static void hex_doubles(char *out, const double *values, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        for (int d = 15; d >= 0; --d, bits >>= 4)
            out[16 * i + (size_t)d] = digits[bits & 15];
    }
    out[16 * n] = '\0';
}

static int unhex_doubles(const char *text, double *values, size_t n)
{
    if (strlen(text) != 16 * n)
        return 1;
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits = 0;
        for (int d = 0; d < 16; ++d) {
            const char c = text[16 * i + (size_t)d];
            const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (v < 0)
                return 1;
            bits = bits << 4 | (uint64_t)v;
        }
        memcpy(&values[i], &bits, sizeof bits);
    }
    return 0;
}

int nh_json_add_doubles(cJSON *obj, const char *key, const double *values, size_t count)
{
    char *text = malloc(16 * count + 1);
    if (!text)
        return 1;
    text[0] = '\0';
    hex_doubles(text, values, count);
    int bad = cJSON_AddStringToObject(obj, key, text) == NULL;
    free(text);
    return bad;
}

int nh_json_get_doubles(const cJSON *obj, const char *key, double *values, size_t count)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(obj, key);
    return !cJSON_IsString(text) || unhex_doubles(text->valuestring, values, count);
}

int nh_json_add_failures(cJSON *obj, const char *key, const nh_failure *failures, int n)
{
    cJSON *list = cJSON_AddArrayToObject(obj, key);
    for (int i = 0; list && i < n; ++i) {
        cJSON *f = cJSON_CreateObject();
        char t[17];
        hex_doubles(t, &failures[i].time, 1);
        nh_json_put_long(f, "trajectory", failures[i].trajectory);
        cJSON_AddStringToObject(f, "time_bits", t);
        cJSON_AddNumberToObject(f, "status", failures[i].status);
        cJSON_AddItemToArray(list, f);
    }
    return list == NULL;
}

int nh_json_get_failures(const cJSON *obj, const char *key, nh_failure *failures, int *n)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > NH_MAX_REPORTED_FAILURES)
        return 1;
    *n = 0;
    for (const cJSON *f = list->child; f; f = f->next) {
        nh_failure *out = &failures[(*n)++];
        const cJSON *time = cJSON_GetObjectItemCaseSensitive(f, "time_bits");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(f, "status");
        if (nh_json_get_long(f, "trajectory", 0, LONG_MAX, &out->trajectory) || !cJSON_IsString(time) ||
            unhex_doubles(time->valuestring, &out->time, 1) || !cJSON_IsNumber(status) ||
            !(status->valuedouble >= 0 && status->valuedouble < 8))
            return 1;
        out->status = (int)status->valuedouble;
    }
    return 0;
}

cJSON *nh_json_configuration(const nh_run_config *cfg)
{
    cJSON *c = cJSON_CreateObject();
    nh_add_configuration(c, cfg);
    cJSON_DeleteItemFromObject(c, "threads");
    return c;
}

/* The sketches' non-zero counts as one string "FLAT:COUNT,..." in hex, FLAT = cell * NH_SKETCH_BINS + bin. */
static int add_sketches(cJSON *root, const nh_run_result *res)
{
    const size_t cells = (size_t)(res->sketch_layout.rows * res->sketch_layout.n);
    size_t used = 0, cap = 64;
    char *text = malloc(cap);
    if (!text)
        return 1;
    text[0] = '\0';
    for (size_t c = 0; c < cells; ++c)
        for (int b = 0; b < NH_SKETCH_BINS; ++b) {
            if (!res->sketch[c].count[b])
                continue;
            if (cap - used < 40) {
                char *bigger = realloc(text, cap *= 2);
                if (!bigger)
                    return free(text), 1;
                text = bigger;
            }
            used += (size_t)snprintf(text + used, cap - used, "%zx:%x,", c * NH_SKETCH_BINS + (size_t)b,
                                     res->sketch[c].count[b]);
        }
    int bad = cJSON_AddStringToObject(root, "sketches", text) == NULL;
    free(text);
    return bad;
}

static void add_counts(cJSON *root, const nh_run_result *res)
{
    nh_json_put_long(root, "next_block", res->next_block);
    nh_json_put_long(root, "trajectories_done", res->trajectories_done);
    nh_json_put_long(root, "completed_steps", res->completed_steps);
    nh_json_put_long(root, "failed", res->failed);
    nh_json_put_long(root, "solves", res->solver.solves);
    nh_json_put_long(root, "iterations", res->solver.iterations);
    nh_json_put_long(root, "solver_failures", res->solver.failures);
    cJSON_AddNumberToObject(root, "method_seconds", res->method_seconds);
    cJSON_AddNumberToObject(root, "reference_seconds", res->reference_seconds);
    cJSON *by = cJSON_AddArrayToObject(root, "failures_by_status");
    for (int s = 0; s < 8; ++s)
        cJSON_AddItemToArray(by, cJSON_CreateNumber((double)res->failures_by_status[s]));
}

static long paths_end(const nh_run_result *res)
{
    return res->trajectories_done < res->n_paths ? res->trajectories_done : res->n_paths;
}

cJSON *nh_state_create(const char *format, int version, const nh_run_config *cfg, const nh_run_result *res,
                       long path_first, int n_args, char *const *args)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "version", version);
    cJSON_AddStringToObject(root, "nhens_version", NH_VERSION);
    cJSON *a = cJSON_AddArrayToObject(root, "args");
    for (int i = 0; i < n_args; ++i)
        cJSON_AddItemToArray(a, cJSON_CreateString(args[i]));
    cJSON_AddItemToObject(root, "configuration", nh_json_configuration(cfg));
    nh_json_put_long(root, "n_out", res->n_out);
    cJSON_AddNumberToObject(root, "observers", nh_observer_count());
    add_counts(root, res);
    cJSON_AddNumberToObject(root, "wall_seconds", res->wall_seconds);
    const size_t row = (size_t)res->n_out * (size_t)nh_observer_count();
    const long first = path_first < paths_end(res) ? path_first : paths_end(res);
    nh_json_put_long(root, "paths_first", first);
    cJSON *live = cJSON_AddArrayToObject(root, "live");
    for (long k = 0; live && k < res->n_out; ++k)
        cJSON_AddItemToArray(live, cJSON_CreateNumber((double)res->live[k]));
    if (!live || add_sketches(root, res) ||
        nh_json_add_doubles(root, "paths", res->paths + (size_t)first * row, (size_t)(paths_end(res) - first) * row)) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

cJSON *nh_state_parse(const char *text, const char *name, const char *format, int version, char **args, int *n_args,
                      nh_error *err)
{
    cJSON *root = cJSON_Parse(text);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "args");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, format) || !cJSON_IsNumber(ver) ||
        ver->valuedouble != version || !cJSON_IsArray(list) || cJSON_GetArraySize(list) > NH_STATE_MAX_ARGS) {
        cJSON_Delete(root);
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not an nhens %s of version %d", name, format + 6, version), NULL;
    }
    *n_args = 0;
    for (const cJSON *a = list->child; a; a = a->next) {
        if (!cJSON_IsString(a)) {
            cJSON_Delete(root);
            return nh_fail(err, NH_ERR_INPUT, "'%s': an argument is not a string", name), NULL;
        }
        args[(*n_args)++] = a->valuestring;
    }
    return root;
}

int nh_state_check_configuration(const cJSON *root, const nh_run_config *cfg, const nh_run_result *res,
                                 const char *what, nh_error *err)
{
    cJSON *expected = nh_json_configuration(cfg);
    const cJSON *stored = cJSON_GetObjectItemCaseSensitive(root, "configuration");
    const int same = cJSON_Compare(expected, stored, 1);
    cJSON_Delete(expected);
    if (!same)
        return nh_fail(err, NH_ERR_INPUT, "the %s was written by a run of another configuration "
                                          "(system, method, h, T, ensemble, seed or initial states differ)", what);
    long n_out;
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(root, "observers");
    const long observers = cJSON_IsNumber(obs) ? (long)obs->valuedouble : -1;
    if (nh_json_get_long(root, "n_out", 1, LONG_MAX, &n_out) || n_out != res->n_out ||
        observers != nh_observer_count())
        return nh_fail(err, NH_ERR_INPUT, "the %s's output times or observers do not match this nhens "
                                          "(%ld output times, %d observers)", what, res->n_out, nh_observer_count());
    return NH_OK;
}

/* add_sketches' string added into res->sketch: entries in increasing FLAT order, each count at most
 * `trajectories` (anything else is a damaged file). */
static int add_sketches_from(const cJSON *root, nh_run_result *res, long trajectories)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, "sketches");
    const size_t flat_end = (size_t)(res->sketch_layout.rows * res->sketch_layout.n) * NH_SKETCH_BINS;
    if (!cJSON_IsString(text))
        return 1;
    const char *p = text->valuestring;
    size_t next = 0;
    while (*p) {
        char *end;
        const unsigned long long flat = strtoull(p, &end, 16);
        if (end == p || *end != ':' || flat < next || flat >= flat_end)
            return 1;
        p = end + 1;
        const unsigned long count = strtoul(p, &end, 16);
        if (end == p || *end != ',' || count == 0 || count > (unsigned long)trajectories)
            return 1;
        p = end + 1;
        res->sketch[flat / NH_SKETCH_BINS].count[flat % NH_SKETCH_BINS] += (unsigned)count;
        next = (size_t)flat + 1;
    }
    return 0;
}

/* A timing (thread-seconds): not part of the results, so a missing or bad one counts as 0. */
static double json_seconds(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e12 ? v->valuedouble : 0.0;
}

static int add_counts_from(const cJSON *root, nh_run_result *res, long trajectories)
{
    long v[5];
    const char *keys[5] = {"completed_steps", "failed", "solves", "iterations", "solver_failures"};
    for (int i = 0; i < 5; ++i)
        if (nh_json_get_long(root, keys[i], 0, i == 1 ? trajectories : LONG_MAX / 4, &v[i]))
            return 1;
    res->completed_steps += v[0];
    res->failed += v[1];
    res->solver.solves += v[2];
    res->solver.iterations += v[3];
    res->solver.failures += v[4];
    res->method_seconds += json_seconds(root, "method_seconds");
    res->reference_seconds += json_seconds(root, "reference_seconds");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(root, "failures_by_status");
    if (!cJSON_IsArray(by) || cJSON_GetArraySize(by) != 8)
        return 1;
    int s = 0;
    for (const cJSON *c = by->child; c; c = c->next, ++s) {
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0 && c->valuedouble <= (double)trajectories))
            return 1;
        res->failures_by_status[s] += (long)c->valuedouble;
    }
    return 0;
}

int nh_state_add(const cJSON *root, nh_run_result *res, long trajectories, long path_first, long path_end)
{
    const cJSON *live = cJSON_GetObjectItemCaseSensitive(root, "live");
    const size_t row = (size_t)res->n_out * (size_t)nh_observer_count();
    long stored_first;
    if (path_end > res->n_paths)
        path_end = res->n_paths;
    if (path_first > path_end)
        path_first = path_end;
    if (add_counts_from(root, res, trajectories) || add_sketches_from(root, res, trajectories) ||
        nh_json_get_long(root, "paths_first", 0, LONG_MAX, &stored_first) || stored_first != path_first ||
        nh_json_get_doubles(root, "paths", res->paths + (size_t)path_first * row, (size_t)(path_end - path_first) * row) ||
        !cJSON_IsArray(live) || cJSON_GetArraySize(live) != res->n_out)
        return 1;
    long k = 0;
    for (const cJSON *c = live->child; c; c = c->next, ++k) {
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0 && c->valuedouble <= (double)trajectories))
            return 1;
        res->live[k] += (long)c->valuedouble;
    }
    return 0;
}

static int text_body(FILE *f, const void *data)
{
    return fputs(data, f) < 0;
}

int nh_state_write(const char *path, const char *text, nh_error *err)
{
    return nh_write_file(path, text_body, text, err);
}
