/* Checkpoint files of ensemble runs (see include/nhens/checkpoint.h). JSON through cJSON; doubles are
 * stored as the 16 hex digits of their IEEE-754 bits (exact), counters as decimal strings (exact beyond
 * 2^53). */
#include "nhens/checkpoint.h"
#include "nhens/files.h"
#include "nhens/options.h"
#include "summary_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "nhens-checkpoint"
#define NH_CHECKPOINT_MAX_BYTES ((size_t)1 << 31)

_Static_assert(sizeof(nh_accum) == 4 * sizeof(double), "accumulators are stored as 4 doubles each");

struct nh_checkpoint {
    cJSON *root;
    char *args[NH_CHECKPOINT_MAX_ARGS];
    int n_args;
};

/* ---- writing ---- */

static void put_long(cJSON *obj, const char *key, long value)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", value);
    cJSON_AddStringToObject(obj, key, text);
}

static void hex_doubles(char *out, const double *values, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        snprintf(out + 16 * i, 17, "%016" PRIx64, bits);
    }
}

/* The configuration as stored and compared: summary.json's, without the thread count. */
static cJSON *configuration(const nh_run_config *cfg)
{
    cJSON *c = cJSON_CreateObject();
    nh_add_configuration(c, cfg);
    cJSON_DeleteItemFromObject(c, "threads");
    return c;
}

/* Sample paths of the merged prefix only: the others are being written by the workers (and are not results). */
static long done_paths(const nh_run_result *res)
{
    return res->trajectories_done < res->n_paths ? res->trajectories_done : res->n_paths;
}

/* key: `count` doubles as one string of 16 hex digits each */
static int add_doubles(cJSON *root, const char *key, const double *values, size_t count)
{
    char *text = malloc(16 * count + 1);
    if (!text)
        return 1;
    text[0] = '\0';
    hex_doubles(text, values, count);
    int bad = cJSON_AddStringToObject(root, key, text) == NULL;
    free(text);
    return bad;
}

static int add_accumulators(cJSON *root, const char *key, const nh_accum *acc, size_t count)
{
    return add_doubles(root, key, (const double *)acc, 4 * count);
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

static int add_statistics(cJSON *root, const nh_run_result *res)
{
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    cJSON *live = cJSON_AddArrayToObject(root, "live");
    if (!live || add_accumulators(root, "accumulators", res->acc, cells) ||
        add_accumulators(root, "groups", res->groups, (size_t)res->n_out * NH_FIT_GROUPS) ||
        add_doubles(root, "paths", res->paths, (size_t)done_paths(res) * cells) || add_sketches(root, res))
        return 1;
    for (long k = 0; k < res->n_out; ++k)
        cJSON_AddItemToArray(live, cJSON_CreateNumber((double)res->live[k]));
    return 0;
}

static void add_counts(cJSON *root, const nh_run_result *res)
{
    put_long(root, "next_block", res->next_block);
    put_long(root, "trajectories_done", res->trajectories_done);
    put_long(root, "completed_steps", res->completed_steps);
    put_long(root, "failed", res->failed);
    put_long(root, "solves", res->solver.solves);
    put_long(root, "iterations", res->solver.iterations);
    put_long(root, "solver_failures", res->solver.failures);
    cJSON *by = cJSON_AddArrayToObject(root, "failures_by_status");
    for (int s = 0; s < 8; ++s)
        cJSON_AddItemToArray(by, cJSON_CreateNumber((double)res->failures_by_status[s]));
    cJSON *first = cJSON_AddArrayToObject(root, "first_failures");
    for (int i = 0; i < res->n_reported; ++i) {
        cJSON *f = cJSON_CreateObject();
        char t[17];
        hex_doubles(t, &res->first_failures[i].time, 1);
        put_long(f, "trajectory", res->first_failures[i].trajectory);
        cJSON_AddStringToObject(f, "time_bits", t);
        cJSON_AddNumberToObject(f, "status", res->first_failures[i].status);
        cJSON_AddItemToArray(first, f);
    }
}

static int text_body(FILE *f, const void *data)
{
    return fputs(data, f) < 0;
}

int nh_checkpoint_save(const char *path, const nh_run_config *cfg, const nh_run_result *res, int n_args,
                       char *const *args, nh_error *err)
{
    if (n_args < 0 || n_args > NH_CHECKPOINT_MAX_ARGS)
        return nh_fail(err, NH_ERR_INPUT, "a checkpoint holds at most %d arguments (got %d)", NH_CHECKPOINT_MAX_ARGS,
                       n_args);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", FORMAT_NAME);
    cJSON_AddNumberToObject(root, "version", NH_CHECKPOINT_VERSION);
    cJSON_AddStringToObject(root, "nhens_version", NH_VERSION);
    cJSON *a = cJSON_AddArrayToObject(root, "args");
    for (int i = 0; i < n_args; ++i)
        cJSON_AddItemToArray(a, cJSON_CreateString(args[i]));
    cJSON_AddItemToObject(root, "configuration", configuration(cfg));
    put_long(root, "n_out", res->n_out);
    cJSON_AddNumberToObject(root, "observers", nh_observer_count());
    add_counts(root, res);
    char *text = add_statistics(root, res) ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory writing checkpoint '%s'", path);
    int rc = nh_write_file(path, text_body, text, err);
    free(text);
    return rc;
}

/* ---- reading ---- */

static int get_long(const cJSON *obj, const char *key, long min, long max, long *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return !cJSON_IsString(item) || nh_parse_long_in(item->valuestring, min, max, out);
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

nh_checkpoint *nh_checkpoint_load(const char *path, nh_error *err)
{
    size_t size;
    char *text = nh_read_file(path, NH_CHECKPOINT_MAX_BYTES, &size, err);
    if (!text)
        return NULL;
    nh_checkpoint *ck = calloc(1, sizeof *ck);
    if (ck)
        ck->root = cJSON_Parse(text);
    free(text);
    const cJSON *format = ck ? cJSON_GetObjectItemCaseSensitive(ck->root, "format") : NULL;
    const cJSON *version = ck ? cJSON_GetObjectItemCaseSensitive(ck->root, "version") : NULL;
    const cJSON *args = ck ? cJSON_GetObjectItemCaseSensitive(ck->root, "args") : NULL;
    if (!cJSON_IsString(format) || strcmp(format->valuestring, FORMAT_NAME) || !cJSON_IsNumber(version) ||
        version->valuedouble != NH_CHECKPOINT_VERSION || !cJSON_IsArray(args) ||
        cJSON_GetArraySize(args) > NH_CHECKPOINT_MAX_ARGS) {
        nh_checkpoint_free(ck);
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not an nhens checkpoint of version %d", path,
                       NH_CHECKPOINT_VERSION), NULL;
    }
    for (const cJSON *a = args->child; a; a = a->next) {
        if (!cJSON_IsString(a)) {
            nh_checkpoint_free(ck);
            return nh_fail(err, NH_ERR_INPUT, "checkpoint '%s': an argument is not a string", path), NULL;
        }
        ck->args[ck->n_args++] = a->valuestring;
    }
    return ck;
}

int nh_checkpoint_args(const nh_checkpoint *ck, char ***args)
{
    *args = (char **)ck->args;
    return ck->n_args;
}

static int restore_counts(const cJSON *root, nh_run_result *res, long n_blocks, long ensemble)
{
    long v[7];
    const char *keys[7] = {"next_block", "trajectories_done", "completed_steps", "failed", "solves", "iterations",
                           "solver_failures"};
    for (int i = 0; i < 7; ++i)
        if (get_long(root, keys[i], 0, i == 0 ? n_blocks : LONG_MAX, &v[i]))
            return 1;
    res->next_block = v[0];
    res->trajectories_done = v[1];
    res->completed_steps = v[2];
    res->failed = v[3];
    res->solver = (nh_solver_stats){v[4], v[5], v[6]};
    const long done = v[0] * NH_BLOCK_SIZE < ensemble ? v[0] * NH_BLOCK_SIZE : ensemble;
    if (v[1] != done)
        return 1;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(root, "failures_by_status");
    if (!cJSON_IsArray(by) || cJSON_GetArraySize(by) != 8)
        return 1;
    int s = 0;
    for (const cJSON *c = by->child; c; c = c->next, ++s) {
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0 && c->valuedouble <= 9e15))
            return 1;
        res->failures_by_status[s] = (long)c->valuedouble;
    }
    return 0;
}

static int restore_failures(const cJSON *root, nh_run_result *res)
{
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(root, "first_failures");
    if (!cJSON_IsArray(first) || cJSON_GetArraySize(first) > NH_MAX_REPORTED_FAILURES)
        return 1;
    res->n_reported = 0;
    for (const cJSON *f = first->child; f; f = f->next) {
        nh_failure *out = &res->first_failures[res->n_reported++];
        const cJSON *time = cJSON_GetObjectItemCaseSensitive(f, "time_bits");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(f, "status");
        if (get_long(f, "trajectory", 0, LONG_MAX, &out->trajectory) || !cJSON_IsString(time) ||
            unhex_doubles(time->valuestring, &out->time, 1) || !cJSON_IsNumber(status) ||
            !(status->valuedouble >= 0 && status->valuedouble < 8))
            return 1;
        out->status = (int)status->valuedouble;
    }
    return 0;
}

static int restore_doubles(const cJSON *root, const char *key, double *values, size_t count)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, key);
    return !cJSON_IsString(text) || unhex_doubles(text->valuestring, values, count);
}

static int restore_accumulators(const cJSON *root, const char *key, nh_accum *acc, size_t count)
{
    return restore_doubles(root, key, (double *)acc, 4 * count);
}

/* add_sketches' string back into res->sketch: entries in increasing FLAT order, each count at most the
 * trajectories done (anything else is a damaged checkpoint). */
static int restore_sketches(const cJSON *root, nh_run_result *res)
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
        if (end == p || *end != ',' || count == 0 || count > (unsigned long)res->trajectories_done)
            return 1;
        p = end + 1;
        res->sketch[flat / NH_SKETCH_BINS].count[flat % NH_SKETCH_BINS] = (unsigned)count;
        next = (size_t)flat + 1;
    }
    return 0;
}

static int restore_statistics(const cJSON *root, nh_run_result *res)
{
    const cJSON *live = cJSON_GetObjectItemCaseSensitive(root, "live");
    const size_t cells = (size_t)res->n_out * (size_t)nh_observer_count();
    if (restore_accumulators(root, "accumulators", res->acc, cells) ||
        restore_accumulators(root, "groups", res->groups, (size_t)res->n_out * NH_FIT_GROUPS) ||
        restore_doubles(root, "paths", res->paths, (size_t)done_paths(res) * cells) || restore_sketches(root, res) ||
        !cJSON_IsArray(live) || cJSON_GetArraySize(live) != res->n_out)
        return 1;
    long k = 0;
    for (const cJSON *c = live->child; c; c = c->next, ++k) {
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0 && c->valuedouble <= (double)res->trajectories_done))
            return 1;
        res->live[k] = (long)c->valuedouble;
    }
    return 0;
}

int nh_checkpoint_restore(const nh_checkpoint *ck, const nh_run_config *cfg, nh_run_result *res, nh_error *err)
{
    cJSON *expected = configuration(cfg);
    const cJSON *stored = cJSON_GetObjectItemCaseSensitive(ck->root, "configuration");
    const int same = cJSON_Compare(expected, stored, 1);
    cJSON_Delete(expected);
    if (!same)
        return nh_fail(err, NH_ERR_INPUT, "the checkpoint was written by a run of another configuration "
                                          "(system, method, h, T, ensemble, seed or initial states differ)");
    long n_out, observers;
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(ck->root, "observers");
    observers = cJSON_IsNumber(obs) ? (long)obs->valuedouble : -1;
    if (get_long(ck->root, "n_out", 1, LONG_MAX, &n_out) || n_out != res->n_out ||
        observers != nh_observer_count())
        return nh_fail(err, NH_ERR_INPUT, "the checkpoint's output times or observers do not match this nhens "
                                          "(%ld output times, %d observers)", res->n_out, nh_observer_count());
    if (restore_counts(ck->root, res, nh_run_block_count(cfg), cfg->ensemble) || restore_failures(ck->root, res) ||
        restore_statistics(ck->root, res))
        return nh_fail(err, NH_ERR_INPUT, "the checkpoint's statistics are damaged (a count, a failure record "
                                          "or an accumulator is missing or out of range)");
    return NH_OK;
}

void nh_checkpoint_free(nh_checkpoint *ck)
{
    if (!ck)
        return;
    cJSON_Delete(ck->root);
    free(ck);
}
