/* The shared JSON encoding of ensemble state (see state_json.h). */
#include "state_json.h"
#include "nhens/files.h"
#include "nhens/params.h"
#include "summary_internal.h"
#include "run_result.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(nh_accum) == 4 * sizeof(double), "accumulators are stored as 4 doubles each");

#define CHECKSUM_KEY "checksum"

void nh_state_scope_init(nh_state_scope *scope, const char *kind, const char *name, const nh_run_config *cfg,
                         const nh_run_result *res, long traj_first, long traj_end)
{
    if (strlen(name) > 200)
        snprintf(scope->what, sizeof scope->what, "%s '%.200s...'", kind, name);
    else
        snprintf(scope->what, sizeof scope->what, "%s '%s'", kind, name);
    scope->traj_first = traj_first;
    scope->traj_end = traj_end;
    scope->path_first = traj_first < res->n_paths ? traj_first : res->n_paths;
    scope->path_end = traj_end < res->n_paths ? traj_end : res->n_paths;
    scope->steps_per_trajectory = (double)lround(cfg->burn_in / cfg->h) + (double)res->n_steps;
    scope->event_count_max = (double)(traj_end - traj_first) * ((double)cfg->every + 1.0);
    scope->T = cfg->T;
}

int nh_state_refuse(nh_error *err, const nh_state_scope *scope, const char *field, long entry, const char *detail,
                    const char *value, const char *allowed)
{
    char where[48] = "";
    if (entry >= 0)
        snprintf(where, sizeof where, " entry %ld", entry);
    return nh_fail(err, NH_ERR_INPUT, "%s: field '%s'%s%s%s%s is %s; allowed: %s", scope->what, field, where,
                   detail ? " (" : "", detail ? detail : "", detail ? ")" : "", value, allowed);
}

/* How a refusal shows a JSON value: missing, a number, a string (cut short) or its kind. */
static const char *shown(const cJSON *item, char *buf, size_t len)
{
    if (!item)
        snprintf(buf, len, "missing");
    else if (cJSON_IsNumber(item))
        snprintf(buf, len, "%.17g", item->valuedouble);
    else if (cJSON_IsString(item))
        snprintf(buf, len, strlen(item->valuestring) > 40 ? "'%.40s...'" : "'%.40s'", item->valuestring);
    else
        snprintf(buf, len, "%s", cJSON_IsNull(item)   ? "null"
                                 : cJSON_IsBool(item) ? "true or false"
                                 : cJSON_IsArray(item) ? "a list"
                                                       : "an object");
    return buf;
}

static const char *shown_double(double x, char *buf, size_t len)
{
    snprintf(buf, len, "%.17g", x);
    return buf;
}

/* A JSON number that is a whole number in [0, max]. */
static int whole_in(const cJSON *item, double max)
{
    return cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble <= max &&
           item->valuedouble == floor(item->valuedouble);
}

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

int nh_state_get_doubles(const cJSON *obj, const char *key, const char *field, double *values, size_t count,
                         const nh_state_scope *scope, nh_error *err)
{
    if (!nh_json_get_doubles(obj, key, values, count))
        return NH_OK;
    char allowed[96], value[64];
    snprintf(allowed, sizeof allowed, "%zu values of 16 lower-case hex digits each", count);
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(item))
        snprintf(value, sizeof value, "%zu characters long or not hex", strlen(item->valuestring));
    return nh_state_refuse(err, scope, field, -1, NULL, cJSON_IsString(item) ? value : shown(item, value, sizeof value),
                           allowed);
}

/* Failure record f: 0, or the refusal naming what is wrong. */
static int read_failure(const cJSON *f, nh_failure *out, long lowest, long end, const char *field, long entry,
                        const nh_state_scope *scope, nh_error *err)
{
    const cJSON *time = cJSON_GetObjectItemCaseSensitive(f, "time_bits");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(f, "status");
    char value[64], allowed[96];
    if (!cJSON_IsObject(f) || nh_json_get_long(f, "trajectory", 0, LONG_MAX, &out->trajectory) ||
        !cJSON_IsString(time) || unhex_doubles(time->valuestring, &out->time, 1))
        return nh_state_refuse(err, scope, field, entry, NULL, "not a failure record",
                               "{\"trajectory\": a decimal string, \"time_bits\": 16 hex digits, \"status\": 0 to 7}");
    if (out->trajectory < lowest || out->trajectory >= end) {
        snprintf(value, sizeof value, "trajectory %ld", out->trajectory);
        snprintf(allowed, sizeof allowed, "trajectories %ld to %ld, increasing", lowest, end - 1);
        return nh_state_refuse(err, scope, field, entry, NULL, value, allowed);
    }
    if (!(out->time >= 0 && out->time <= scope->T * (1 + 1e-9))) {
        snprintf(value, sizeof value, "a failure at t = %.17g", out->time);
        snprintf(allowed, sizeof allowed, "a time from 0 to T = %g", scope->T);
        return nh_state_refuse(err, scope, field, entry, NULL, value, allowed);
    }
    if (!whole_in(status, 7))
        return nh_state_refuse(err, scope, field, entry, "status", shown(status, value, sizeof value),
                               "a whole number from 0 to 7");
    out->status = (int)status->valuedouble;
    return NH_OK;
}

int nh_json_get_failures(const cJSON *obj, const char *key, const char *field, nh_failure *failures, int *n,
                         long first, long end, const nh_state_scope *scope, nh_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, key);
    char value[64], allowed[64];
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > NH_MAX_REPORTED_FAILURES) {
        if (cJSON_IsArray(list))
            snprintf(value, sizeof value, "%d records long", cJSON_GetArraySize(list));
        snprintf(allowed, sizeof allowed, "a list of at most %d failure records", NH_MAX_REPORTED_FAILURES);
        return nh_state_refuse(err, scope, field, -1, NULL, cJSON_IsArray(list) ? value : shown(list, value, sizeof value),
                               allowed);
    }
    *n = 0;
    for (const cJSON *f = list->child; f; f = f->next, ++*n) {
        const long lowest = *n ? failures[*n - 1].trajectory + 1 : first;
        if (read_failure(f, &failures[*n], lowest, end, field, *n, scope, err))
            return NH_ERR_INPUT;
    }
    return NH_OK;
}

/* The largest |value| a statistic may hold: the squared differences of merges stay finite for any count. */
#define STATE_MAX_MAGNITUDE 1e100

/* The first of a's four values outside its domain (0 count, 1 mean, 2 m2, 3 absmax) and what is
 * allowed, or -1. */
static int accum_fault(const nh_accum *a, double max_count, const char **allowed)
{
    if (!(a->count >= 0 && a->count <= max_count && a->count == floor(a->count)))
        return *allowed = "a whole count from 0 to the trajectories (an event observer's: crossings) the file holds", 0;
    if (a->count == 0) {
        *allowed = "0 where the count is 0";
        return a->mean != 0 ? 1 : a->m2 != 0 ? 2 : a->absmax != 0 ? 3 : -1;
    }
    if (!isfinite(a->mean))
        return *allowed = "finite", 1;
    if (!(a->m2 >= 0 && isfinite(a->m2)))
        return *allowed = "finite and >= 0 (a sum of squared deviations)", 2;
    if (!(isfinite(a->absmax) && a->absmax >= fabs(a->mean) * (1 - 1e-6) && a->absmax <= STATE_MAX_MAGNITUDE))
        return *allowed = "finite, >= |mean| (the largest |value|) and <= 1e100 (merged squares stay finite)", 3;
    if (!(a->m2 <= a->count * 4 * a->absmax * a->absmax * (1 + 1e-6)))
        return *allowed = "at most count (2 absmax)^2 (every deviation is at most 2 absmax)", 2;
    return -1;
}

int nh_state_check_accums(const nh_accum *acc, size_t n, const nh_observer_table *table, const char *field,
                          const nh_state_scope *scope, nh_error *err)
{
    const int observers = table ? nh_observer_count(table) : 0;
    static const char *const parts[4] = {"count", "mean", "m2", "absmax"};
    const double trajectories = (double)(scope->traj_end - scope->traj_first);
    for (size_t i = 0; i < n; ++i) {
        const int obs = observers > 0 ? (int)(i % (size_t)observers) : nh_observer_fitted();
        const char *allowed;
        const int part = accum_fault(&acc[i], obs == nh_observer_event() ? scope->event_count_max : trajectories,
                                     &allowed);
        if (part < 0)
            continue;
        char detail[160], value[64];
        const double *v = (const double *)&acc[i];
        if (observers > 0)
            snprintf(detail, sizeof detail, "the %s of output %zu, observer %s", parts[part], i / (size_t)observers,
                     nh_observer_at(table, obs)->name);
        else
            snprintf(detail, sizeof detail, "the %s of output %zu of fit group %zu", parts[part],
                     i % (n / NH_FIT_GROUPS), i / (n / NH_FIT_GROUPS));
        return nh_state_refuse(err, scope, field, 4 * (long)i + part, detail, shown_double(v[part], value, sizeof value),
                               allowed);
    }
    return NH_OK;
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
    cJSON_AddNumberToObject(root, "observers", res->n_observers);
    add_counts(root, res);
    cJSON_AddNumberToObject(root, "wall_seconds", res->wall_seconds);
    const size_t row = (size_t)res->n_out * (size_t)res->n_observers;
    const long first = path_first < paths_end(res) ? path_first : paths_end(res);
    nh_json_put_long(root, "paths_first", first);
    cJSON *live = cJSON_AddArrayToObject(root, "live");
    for (long k = 0; live && k < res->n_out; ++k)
        cJSON_AddItemToArray(live, cJSON_CreateNumber((double)res->live[k]));
    const size_t width = (size_t)nh_run_trajectory_width(res);
    const long rows = res->trajectory_rows ? res->trajectories_done - res->rows_first : 0;
    if (!live || add_sketches(root, res) ||
        nh_json_add_doubles(root, "paths", res->paths + (size_t)first * row, (size_t)(paths_end(res) - first) * row) ||
        (rows > 0 && nh_json_add_doubles(root, "trajectory_rows", res->trajectory_rows, (size_t)rows * width))) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

uint64_t nh_state_hash(const char *text)
{
    uint64_t hash = 0xcbf29ce484222325u;
    for (const unsigned char *c = (const unsigned char *)text; *c; ++c)
        hash = (hash ^ *c) * 0x100000001b3u;
    return hash;
}

/* The checksum joins as the last member: the text is the unformatted document without it, its closing
 * brace replaced by ,"checksum":"HEX"} (what cJSON_PrintUnformatted gives with the member added). */
char *nh_state_print(const cJSON *root)
{
    char *body = cJSON_PrintUnformatted(root);
    if (!body)
        return NULL;
    const size_t len = strlen(body);
    char *text = len >= 2 ? malloc(len + sizeof ",\"" CHECKSUM_KEY "\":\"\"}" + 16) : NULL;
    if (text)
        sprintf(text, "%.*s,\"" CHECKSUM_KEY "\":\"%016" PRIx64 "\"}", (int)(len - 1), body, nh_state_hash(body));
    cJSON_free(body);
    return text;
}

/* 0 when root's checksum member matches the rest of the document. */
static int check_checksum(cJSON *root, const char *what, nh_error *err)
{
    cJSON *sum = cJSON_DetachItemFromObjectCaseSensitive(root, CHECKSUM_KEY);
    char *body = cJSON_IsString(sum) ? cJSON_PrintUnformatted(root) : NULL;
    char expected[17] = "";
    if (body)
        snprintf(expected, sizeof expected, "%016" PRIx64, nh_state_hash(body));
    const int missing = !cJSON_IsString(sum), same = body && !strcmp(expected, sum->valuestring);
    cJSON_free(body);
    cJSON_Delete(sum);
    if (missing)
        return nh_fail(err, NH_ERR_INPUT, "%s: field '" CHECKSUM_KEY "' is missing; allowed: 16 hex digits (nhens "
                       "writes it)", what);
    if (!same)
        return nh_fail(err, NH_ERR_INPUT, "%s: checksum mismatch: the file was changed after nhens wrote it", what);
    return NH_OK;
}

cJSON *nh_state_parse(const char *text, const char *name, const char *kind, const char *format, int version,
                      char **args, int *n_args, nh_error *err)
{
    cJSON *root = cJSON_Parse(text);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, format) || !cJSON_IsNumber(ver) ||
        ver->valuedouble != version) {
        cJSON_Delete(root);
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not an nhens %s of version %d", name, format + 6, version), NULL;
    }
    nh_state_scope scope = {0};
    snprintf(scope.what, sizeof scope.what, strlen(name) > 200 ? "%s '%.200s...'" : "%s '%s'", kind, name);
    if (check_checksum(root, scope.what, err)) {
        cJSON_Delete(root);
        return NULL;
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "args");
    const cJSON *made_by = cJSON_GetObjectItemCaseSensitive(root, "nhens_version");
    char value[64], allowed[64];
    snprintf(allowed, sizeof allowed, "a list of at most %d strings", NH_STATE_MAX_ARGS);
    int bad = !cJSON_IsArray(list) || cJSON_GetArraySize(list) > NH_STATE_MAX_ARGS
                  ? nh_state_refuse(err, &scope, "args", -1, NULL, shown(list, value, sizeof value), allowed)
              : !cJSON_IsString(made_by)
                  ? nh_state_refuse(err, &scope, "nhens_version", -1, NULL, shown(made_by, value, sizeof value), "a string")
                  : 0;
    *n_args = 0;
    for (const cJSON *a = bad ? NULL : list->child; a && !bad; a = a->next) {
        if (!cJSON_IsString(a))
            bad = nh_state_refuse(err, &scope, "args", *n_args, NULL, shown(a, value, sizeof value), "a string");
        else
            args[(*n_args)++] = a->valuestring;
    }
    if (bad)
        cJSON_Delete(root);
    return bad ? NULL : root;
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
    if (nh_json_get_long(root, "n_out", 1, LONG_MAX, &n_out) || n_out != res->n_out ||
        !whole_in(obs, NH_MAX_OBSERVERS) || (int)obs->valuedouble != res->n_observers)
        return nh_fail(err, NH_ERR_INPUT, "the %s's output times or observers do not match this nhens "
                                          "(%ld output times, %d observers)", what, res->n_out, res->n_observers);
    return NH_OK;
}

/* add_sketches' string added into res->sketch: entries in increasing FLAT order, each count at most the
 * trajectories, each cell's total into totals (rows x n of them). */
static int add_sketches_from(const cJSON *root, nh_run_result *res, unsigned long *totals, const nh_state_scope *scope,
                             nh_error *err)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, "sketches");
    const size_t flat_end = (size_t)(res->sketch_layout.rows * res->sketch_layout.n) * NH_SKETCH_BINS;
    const long trajectories = scope->traj_end - scope->traj_first;
    char value[64];
    if (!cJSON_IsString(text))
        return nh_state_refuse(err, scope, "sketches", -1, NULL, shown(text, value, sizeof value),
                               "a string of FLAT:COUNT, entries in hex");
    const char *p = text->valuestring;
    size_t next = 0;
    for (long entry = 0; *p; ++entry) {
        char *end;
        const unsigned long long flat = strtoull(p, &end, 16);
        if (end == p || *end != ':' || flat < next || flat >= flat_end || *p == '-' || *p == '+' || *p == ' ')
            return nh_state_refuse(err, scope, "sketches", entry, "its cell and bin", "out of order or range",
                                   "hex FLAT:COUNT, entries with FLAT increasing below the sketch cells' bins");
        p = end + 1;
        const unsigned long count = strtoul(p, &end, 16);
        if (end == p || *end != ',' || count == 0 || count > (unsigned long)trajectories || *p == '-' || *p == '+' ||
            *p == ' ')
            return nh_state_refuse(err, scope, "sketches", entry, "its count", "out of range",
                                   "a hex count from 1 to the trajectories, then a comma");
        p = end + 1;
        res->sketch[flat / NH_SKETCH_BINS].count[flat % NH_SKETCH_BINS] += (unsigned)count;
        totals[flat / NH_SKETCH_BINS] += count;
        next = (size_t)flat + 1;
    }
    return NH_OK;
}

typedef struct state_counts {
    long failed, solves, iterations, solver_failures, completed_steps, by_status[8];
    double method_seconds, reference_seconds, wall_seconds;
} state_counts;

/* A timing (thread-seconds, or wall seconds): finite and >= 0. */
static int read_seconds(const cJSON *root, const char *key, double *out, const nh_state_scope *scope, nh_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    char value[64];
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return nh_state_refuse(err, scope, key, -1, NULL, shown(v, value, sizeof value), "finite seconds >= 0");
    *out = v->valuedouble;
    return NH_OK;
}

/* The failure counts: failures_by_status whole, summing to failed. */
static int read_failure_counts(const cJSON *root, state_counts *c, const nh_state_scope *scope, nh_error *err)
{
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(root, "failures_by_status");
    char value[64], allowed[96];
    if (!cJSON_IsArray(by) || cJSON_GetArraySize(by) != 8)
        return nh_state_refuse(err, scope, "failures_by_status", -1, NULL, shown(by, value, sizeof value),
                               "a list of 8 counts");
    long sum = 0, s = 0;
    for (const cJSON *item = by->child; item; item = item->next, ++s) {
        snprintf(allowed, sizeof allowed, "a whole number from 0 to %ld (the failed trajectories)", c->failed);
        if (!whole_in(item, (double)c->failed))
            return nh_state_refuse(err, scope, "failures_by_status", s, NULL, shown(item, value, sizeof value), allowed);
        c->by_status[s] = (long)item->valuedouble;
        sum += c->by_status[s];
    }
    if (sum != c->failed) {
        snprintf(value, sizeof value, "%ld failures in all", sum);
        snprintf(allowed, sizeof allowed, "%ld, the field 'failed'", c->failed);
        return nh_state_refuse(err, scope, "failures_by_status", -1, NULL, value, allowed);
    }
    return NH_OK;
}

static int read_counts(const cJSON *root, state_counts *c, const nh_state_scope *scope, nh_error *err)
{
    const long trajectories = scope->traj_end - scope->traj_first;
    const char *keys[5] = {"failed", "solves", "iterations", "solver_failures", "completed_steps"};
    long *fields[5] = {&c->failed, &c->solves, &c->iterations, &c->solver_failures, &c->completed_steps};
    char value[64], allowed[128];
    for (int i = 0; i < 5; ++i) {
        const long max = i == 0 ? trajectories : i == 3 ? c->solves : LONG_MAX / 4;
        if (nh_json_get_long(root, keys[i], 0, max, fields[i])) {
            snprintf(allowed, sizeof allowed, "a whole number from 0 to %ld%s as a decimal string", max,
                     i == 0 ? " (the trajectories)" : i == 3 ? " (the solves)" : "");
            return nh_state_refuse(err, scope, keys[i], -1, NULL,
                                   shown(cJSON_GetObjectItemCaseSensitive(root, keys[i]), value, sizeof value), allowed);
        }
    }
    const double least = (double)(trajectories - c->failed) * scope->steps_per_trajectory;
    const double most = (double)trajectories * scope->steps_per_trajectory;
    if (!((double)c->completed_steps >= least && (double)c->completed_steps <= most)) {
        snprintf(value, sizeof value, "%ld", c->completed_steps);
        snprintf(allowed, sizeof allowed, "%.0f to %.0f (%.0f steps for each trajectory that did not fail)", least, most,
                 scope->steps_per_trajectory);
        return nh_state_refuse(err, scope, "completed_steps", -1, NULL, value, allowed);
    }
    return read_failure_counts(root, c, scope, err) ||
           read_seconds(root, "method_seconds", &c->method_seconds, scope, err) ||
           read_seconds(root, "reference_seconds", &c->reference_seconds, scope, err) ||
           read_seconds(root, "wall_seconds", &c->wall_seconds, scope, err);
}

/* The live counts: whole, between the trajectories less the failed ones and the trajectories, never rising. */
static int read_live(const cJSON *root, long n_out, long failed, long *live, const nh_state_scope *scope, nh_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "live");
    const long trajectories = scope->traj_end - scope->traj_first;
    char value[64], allowed[160];
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != n_out) {
        snprintf(allowed, sizeof allowed, "a list of %ld counts (one per output time)", n_out);
        if (cJSON_IsArray(list))
            snprintf(value, sizeof value, "a list of %d", cJSON_GetArraySize(list));
        return nh_state_refuse(err, scope, "live", -1, NULL, cJSON_IsArray(list) ? value : shown(list, value, sizeof value),
                               allowed);
    }
    long k = 0;
    for (const cJSON *c = list->child; c; c = c->next, ++k) {
        const long most = k ? live[k - 1] : trajectories;
        if (!whole_in(c, (double)most) || c->valuedouble < (double)(trajectories - failed)) {
            snprintf(allowed, sizeof allowed, "a whole number from %ld (%ld trajectories, %ld failed) to %ld%s",
                     trajectories - failed, trajectories, failed, most, k ? " (the count before it)" : "");
            return nh_state_refuse(err, scope, "live", k, NULL, shown(c, value, sizeof value), allowed);
        }
        live[k] = (long)c->valuedouble;
    }
    return NH_OK;
}

/* Each sketched observer counts every trajectory live at its output time (their values are finite). */
static int check_sketch_totals(const nh_run_result *res, const unsigned long *totals, const long *live,
                               const nh_state_scope *scope, nh_error *err)
{
    const nh_sketch_layout *sl = &res->sketch_layout;
    for (long row = 0; row < sl->rows; ++row)
        for (int j = 0; j < sl->n; ++j) {
            const long k = row * sl->stride;
            if (totals[row * sl->n + j] == (unsigned long)live[k])
                continue;
            char detail[96], value[64], allowed[64];
            snprintf(detail, sizeof detail, "the sketch of observer %s at output %ld", nh_observer_at(res->observers, sl->observer[j])->name, k);
            snprintf(value, sizeof value, "%lu values", totals[row * sl->n + j]);
            snprintf(allowed, sizeof allowed, "%ld, the live count of output %ld", live[k], k);
            return nh_state_refuse(err, scope, "sketches", -1, detail, value, allowed);
        }
    return NH_OK;
}

/* The sample paths: finite values or NaN (not observed, or after a failure). */
static int read_paths(const cJSON *root, nh_run_result *res, const nh_state_scope *scope, nh_error *err)
{
    const size_t row = (size_t)res->n_out * (size_t)res->n_observers;
    long first;
    char value[64], allowed[64];
    if (nh_json_get_long(root, "paths_first", 0, LONG_MAX, &first) || first != scope->path_first) {
        snprintf(allowed, sizeof allowed, "'%ld' (the first trajectory it holds)", scope->path_first);
        return nh_state_refuse(err, scope, "paths_first", -1, NULL,
                               shown(cJSON_GetObjectItemCaseSensitive(root, "paths_first"), value, sizeof value), allowed);
    }
    double *paths = res->paths + (size_t)scope->path_first * row;
    const size_t n = (size_t)(scope->path_end - scope->path_first) * row;
    if (nh_state_get_doubles(root, "paths", "paths", paths, n, scope, err))
        return NH_ERR_INPUT;
    for (size_t i = 0; i < n; ++i)
        if (isinf(paths[i]))
            return nh_state_refuse(err, scope, "paths", (long)i, NULL, shown_double(paths[i], value, sizeof value),
                                   "finite, or nan where nothing was observed");
    return NH_OK;
}

/* What is wrong with the fixed columns of the row of trajectory `index` (its entry in *at), or NULL. */
static const char *fixed_columns_fault(const double *row, long index, double T, int *at)
{
    const int failed = row[1] == 1.0;
    if (row[0] != (double)index)
        return *at = 0, "the index of its trajectory (rows in trajectory order)";
    if (!failed && row[1] != 0.0)
        return *at = 1, "0 or 1 (whether it failed)";
    if (failed ? !(row[2] >= 0 && row[2] <= T) : !isnan(row[2]))
        return *at = 2, failed ? "a failure time in [0, T]" : "nan (no failure time without a failure)";
    if (failed ? !(row[3] >= 1 && row[3] <= 7 && row[3] == floor(row[3])) : row[3] != 0.0)
        return *at = 3, failed ? "a failure status 1 to 7" : "0 (no failure status without a failure)";
    return NULL;
}

/* Row i of the trajectory rows a state holds (trajectory traj_first + i): its fixed columns, and reductions
 * finite or nan (a first time nan or in [0, T]); refused with the entry and what is allowed. */
static int check_trajectory_row(const nh_run_result *res, const double *row, long i, const nh_state_scope *scope,
                                nh_error *err)
{
    const int width = nh_run_trajectory_width(res);
    int at = 0;
    const char *why = fixed_columns_fault(row, scope->traj_first + i, scope->T, &at);
    for (int j = NH_TRAJECTORY_FIXED_COLUMNS; !why && j < width; ++j) {
        const nh_reduction *r = &res->reductions[j - NH_TRAJECTORY_FIXED_COLUMNS];
        if (r->kind == NH_REDUCE_FIRST ? !isnan(row[j]) && !(row[j] >= 0 && row[j] <= scope->T) : isinf(row[j]))
            why = r->kind == NH_REDUCE_FIRST ? "nan or a time in [0, T]" : "finite, or nan", at = j;
    }
    char value[64];
    return why ? nh_state_refuse(err, scope, "trajectory_rows", i * width + at, NULL,
                                 shown_double(row[at], value, sizeof value), why)
               : NH_OK;
}

/* The trajectory rows of the state's trajectories (runs with reductions), into res at their trajectories;
 * their failed flags add up to the state's failed trajectories. */
static int read_trajectory_rows(const cJSON *root, nh_run_result *res, long failed, const nh_state_scope *scope,
                                nh_error *err)
{
    if (!res->trajectory_rows)
        return NH_OK;
    const int width = nh_run_trajectory_width(res);
    const long rows = scope->traj_end - scope->traj_first;
    double *first = res->trajectory_rows + (scope->traj_first - res->rows_first) * width;
    if (rows > 0 && nh_state_get_doubles(root, "trajectory_rows", "trajectory_rows", first, (size_t)rows * (size_t)width,
                                         scope, err))
        return NH_ERR_INPUT;
    long flagged = 0;
    for (long i = 0; i < rows; ++i) {
        if (check_trajectory_row(res, first + i * width, i, scope, err))
            return NH_ERR_INPUT;
        flagged += first[i * width + 1] == 1.0;
    }
    char value[64], allowed[64];
    snprintf(value, sizeof value, "%ld failed rows", flagged);
    snprintf(allowed, sizeof allowed, "%ld (the field 'failed')", failed);
    return flagged == failed ? NH_OK : nh_state_refuse(err, scope, "trajectory_rows", -1, "the failed flags", value, allowed);
}

static void add_counts_into(nh_run_result *res, const state_counts *c, const long *live)
{
    res->completed_steps += c->completed_steps;
    res->failed += c->failed;
    res->solver.solves += c->solves;
    res->solver.iterations += c->iterations;
    res->solver.failures += c->solver_failures;
    res->method_seconds += c->method_seconds;
    res->reference_seconds += c->reference_seconds;
    for (int s = 0; s < 8; ++s)
        res->failures_by_status[s] += c->by_status[s];
    for (long k = 0; k < res->n_out; ++k)
        res->live[k] += live[k];
}

int nh_state_add(const cJSON *root, nh_run_result *res, const nh_state_scope *scope, long *live, nh_error *err)
{
    state_counts counts = {0};
    const size_t cells = (size_t)(res->sketch_layout.rows * res->sketch_layout.n);
    long *own = live ? live : malloc((size_t)res->n_out * sizeof *own);
    unsigned long *totals = calloc(cells ? cells : 1, sizeof *totals);
    int rc = !own || !totals ? nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", scope->what) : NH_OK;
    if (!rc)
        rc = read_counts(root, &counts, scope, err) || read_live(root, res->n_out, counts.failed, own, scope, err) ||
             add_sketches_from(root, res, totals, scope, err) || check_sketch_totals(res, totals, own, scope, err) ||
             read_paths(root, res, scope, err) || read_trajectory_rows(root, res, counts.failed, scope, err);
    if (!rc)
        add_counts_into(res, &counts, own);
    if (own != live)
        free(own);
    free(totals);
    return rc ? (rc == NH_ERR_NOMEM ? NH_ERR_NOMEM : NH_ERR_INPUT) : NH_OK;
}

static int text_body(FILE *f, const void *data)
{
    return fputs(data, f) < 0;
}

int nh_state_write(const char *path, const char *text, nh_error *err)
{
    return nh_write_file(path, text_body, text, err);
}
