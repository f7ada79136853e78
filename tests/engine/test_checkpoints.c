/* Checkpoints, shards and partial results: a resumed or merged run is bitwise the whole run, and a
 * damaged, foreign or out-of-domain checkpoint or part is refused naming what is wrong. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "ensemble_fixtures.h"
#include "reseal.h"
#include "nhens/checkpoint.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/partial.h"
#include "run_result.h"

typedef void (*shard_config_fn)(nh_system *s, nh_run_config *cfg, long shard, long shards);

static void sized_shard_config(nh_system *s, nh_run_config *cfg, long ensemble, long shard, long shards)
{
    make_system(s, "quartic", "n=2", NULL);
    *cfg = (nh_run_config){.system = s, .h = 0.1, .T = 6, .every = 3, .ensemble = ensemble, .seed = 77, .threads = 2,
                           .energy = 3.2575, .fit_window_start = 0.5, .paths = 3, .shard = shard, .shards = shards,
                           .reduce = "final,max:dH,min:constraint,first:|dH|>1e-4"}; /* trajectory rows carried too */
    make_method(&cfg->method, "dla01");
}

static void shard_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    sized_shard_config(s, cfg, 2101, shard, shards);
}

/* 45 trajectories: 6 blocks in 6 chunks, so the fit groups are trajectories */
static void small_shard_config(nh_system *s, nh_run_config *cfg, long shard, long shards)
{
    sized_shard_config(s, cfg, 45, shard, shards);
}

/* Shard i of k computed, written as text and merged into whole (in order). */
static void merge_shard_of(shard_config_fn config, nh_run_result *whole, long i, long k)
{
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part;
    nh_error err;
    config(&s, &cfg, i, k);
    config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    cr_assert(text != NULL, "%s", err.msg);
    nh_partial *p = nh_partial_parse(text, "test", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, whole, &err), NH_OK), "shard %ld of %ld: %s", i, k, err.msg);
    nh_partial_free(p);
    free(text);
    nh_run_result_clear(&part);
}

static void assert_same_statistics(const nh_run_result *a, const nh_run_result *b)
{
    const size_t cells = (size_t)a->n_out * (size_t)nh_observer_count(nh_observer_table_builtin());
    cr_assert(eq(int, memcmp(a->acc, b->acc, cells * sizeof *a->acc), 0), "accumulators differ bitwise");
    cr_assert(eq(int, memcmp(a->groups, b->groups, (size_t)a->n_out * NH_FIT_GROUPS * sizeof *a->groups), 0));
    cr_assert(eq(int, memcmp(a->live, b->live, (size_t)a->n_out * sizeof *a->live), 0));
    const size_t sketches = (size_t)(a->sketch_layout.rows * a->sketch_layout.n);
    cr_assert(eq(int, memcmp(a->sketch, b->sketch, sketches * sizeof *a->sketch), 0));
    cr_assert(eq(int, memcmp(a->paths, b->paths, (size_t)a->n_paths * cells * sizeof *a->paths), 0));
    const long rows = a->trajectories_done - a->rows_first;
    cr_assert(eq(int, a->n_reductions, b->n_reductions));
    cr_assert(a->n_reductions == 0 || (a->trajectory_rows && b->trajectory_rows), "trajectory rows kept");
    cr_assert(eq(int, a->n_reductions ? memcmp(a->trajectory_rows, b->trajectory_rows,
                                               (size_t)rows * (size_t)nh_run_trajectory_width(a) * sizeof(double))
                                      : 0, 0), "trajectory rows differ bitwise");
    cr_assert(eq(long, a->completed_steps, b->completed_steps));
    cr_assert(eq(long, a->failed, b->failed));
    cr_assert(eq(long, a->trajectories_done, b->trajectories_done));
    cr_assert(eq(int, a->complete, b->complete));
    cr_assert(a->fit.C == b->fit.C || (isnan(a->fit.C) && isnan(b->fit.C)), "C %g vs %g", a->fit.C, b->fit.C);
    cr_assert(a->fit.C_err == b->fit.C_err || (isnan(a->fit.C_err) && isnan(b->fit.C_err)));
    cr_assert(eq(int, a->fit.groups, b->fit.groups));
}

/* The whole run of config against its shards merged, for each shard count. */
static void check_shards_merge_bitwise(shard_config_fn config, const long *shard_counts, int n_counts)
{
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole;
    nh_error err;
    config(&s, &cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    for (int t = 0; t < n_counts; ++t) {
        nh_run_result merged;
        cr_assert(eq(int, nh_run_result_init(&cfg, &merged, &err), NH_OK), "%s", err.msg);
        for (long i = 0; i < shard_counts[t]; ++i)
            merge_shard_of(config, &merged, i, shard_counts[t]);
        nh_run_result_finish(&cfg, &merged);
        assert_same_statistics(&whole, &merged);
        nh_run_result_clear(&merged);
    }
    nh_run_result_clear(&whole);
}

typedef struct checkpoint_target {
    const char *path;
    const nh_run_config *cfg;
} checkpoint_target;

/* The merged-prefix hook: a checkpoint after the third chunk. */
static void checkpoint_at_third_chunk(const nh_run_result *partial, long next_block, void *ctx)
{
    const checkpoint_target *target = ctx;
    nh_error err;
    if (next_block == 3)
        cr_assert(eq(int, nh_checkpoint_save(target->path, target->cfg, partial, 0, NULL, &err), NH_OK), "%s",
                  err.msg);
}

Test(shards, a_small_run_resumed_from_a_checkpoint_is_bitwise_the_whole_run)
{
    /* 45 trajectories (fit groups by trajectory): checkpointed after 3 of 6 chunks, restored and continued,
     * the groups, fit and errors are those of the uninterrupted run */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-small-ck-%d.json", (int)getpid());
    small_shard_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cfg.merged = NULL;
    nh_checkpoint *ck = nh_checkpoint_load(path, &err);
    cr_assert(ck != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, resumed.next_block, 3L));
    cr_assert(eq(int, nh_run_ensemble_continue(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    assert_same_statistics(&whole, &resumed);
    nh_checkpoint_free(ck);
    remove(path);
    nh_run_result_clear(&whole);
    nh_run_result_clear(&resumed);
}

Test(shards, a_checkpoint_of_failed_trajectories_restores_its_failure_records)
{
    /* every trajectory fails: the failure counts, records and live counts pass the checks they must */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-failed-ck-%d.json", (int)getpid());
    all_fail_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, whole.failed, 24L));
    cfg.merged = NULL;
    nh_checkpoint *ck = nh_checkpoint_load(path, &err);
    cr_assert(ck != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, resumed.n_reported, NH_MAX_REPORTED_FAILURES));
    cr_assert(eq(int, memcmp(resumed.first_failures, whole.first_failures, sizeof whole.first_failures), 0));
    nh_checkpoint_free(ck);
    remove(path);
    nh_run_result_clear(&whole);
    nh_run_result_clear(&resumed);
}

/* A method whose step fails with an error of its own (a negative status), as a plugin's may. */
static int erring_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)st, (void)h, (void)q, (void)v, (void)carried;
    return NH_ERR_NOMEM;
}

static const nh_method_type ERRING = {
    .name = "erring", .summary = "fails every step with an error", .reference = "test", .fixed_order = 1,
    .step = erring_step,
};

Test(shards, a_step_that_returns_an_error_is_a_counted_failure_and_its_checkpoint_restores)
{
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-erring-ck-%d.json", (int)getpid());
    all_fail_config(&s, &cfg, 0, 0);
    nh_method_spec_defaults(&cfg.method, &ERRING, NULL);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(long, whole.failed, 24L));
    cr_assert(eq(long, whole.failures_by_status[NH_STEP_ERROR], 24L), "every failure counted as the step's error");
    cr_assert(eq(long, whole.failures_by_status[NH_OK], 0L), "no failure counted as ok");
    for (int i = 0; i < whole.n_reported; ++i)
        cr_assert(eq(int, whole.first_failures[i].status, NH_STEP_ERROR));
    cfg.merged = NULL;
    nh_checkpoint *ck = nh_checkpoint_load(path, &err);
    cr_assert(ck != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_OK), "the checkpoint of a run whose "
              "steps returned errors restores: %s", err.msg);
    nh_checkpoint_free(ck);
    remove(path);
    nh_run_result_clear(&whole);
    nh_run_result_clear(&resumed);
}

Test(shards, parts_without_a_live_trajectory_merge_bitwise)
{
    /* every trajectory of the push fails: 3 chunks, 1 to 3 shards, each part ending with none live */
    const long counts[] = {1, 2, 3};
    check_shards_merge_bitwise(all_fail_config, counts, 3);
}

Test(shards, a_small_run_grouped_by_trajectory_merges_bitwise)
{
    /* 45 trajectories: the fit groups are trajectories (i mod 20: 20 groups, 19 degrees of freedom) and each
     * partial result carries its chunks' trajectory_fits; 1, 2, 5 and 6 shards (5 and 6 leave shards of one chunk) */
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole;
    nh_error err;
    small_shard_config(&s, &cfg, 0, 0);
    cr_assert(nh_run_fit_groups_by_trajectory(&cfg));
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, whole.fit.groups, NH_FIT_GROUPS));
    cr_assert(eq(int, whole.fit.dof, NH_FIT_GROUPS - 1));
    cr_assert(isfinite(whole.fit.C_err) && whole.fit.C_err > 0);
    nh_run_result_clear(&whole);
    const long counts[] = {1, 2, 5, 6};
    check_shards_merge_bitwise(small_shard_config, counts, 4);
    /* a part without its trajectory_fits is refused as damaged */
    small_shard_config(&s, &cfg, 0, 2);
    nh_run_config whole_cfg;
    small_shard_config(&s, &whole_cfg, 0, 0);
    nh_run_result part;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    char *trajectory_fits = strstr(text, "\"trajectory_fits\"");
    cr_assert(trajectory_fits != NULL, "a small run's part holds trajectory_fits");
    trajectory_fits[5] = 'z';
    cr_assert(nh_partial_parse(text, "no trajectory_fits", &err) == NULL, "an edit without its checksum is refused");
    cr_assert(strstr(err.msg, "checksum mismatch") != NULL, "%s", err.msg);
    char *sealed = reseal_text(text);
    nh_partial *p = nh_partial_parse(sealed, "no trajectory_fits", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "partial result 'no trajectory_fits': field 'chunk_stats[0].trajectory_fits' is missing") != NULL, "%s",
              err.msg);
    nh_partial_free(p);
    free(sealed);
    free(text);
    nh_run_result_clear(&whole);
    nh_run_result_clear(&part);
}

Test(shards, merged_partial_results_are_the_whole_run_bitwise)
{
    /* 2101 trajectories = 263 blocks in 256 chunks: some chunks hold two blocks, so the two-level merge
     * order is exercised; 1, 2 and 5 shards (5 does not divide 256) */
    nh_system s;
    nh_run_config cfg;
    shard_config(&s, &cfg, 0, 0);
    cr_assert(eq(long, nh_run_chunk_count(&cfg), NH_MERGE_CHUNKS));
    cr_assert(eq(int, nh_run_fit_groups_by_trajectory(&cfg), 0));
    const long shard_counts[] = {1, 2, 5};
    check_shards_merge_bitwise(shard_config, shard_counts, 3);
}

Test(shards, out_of_order_damaged_and_foreign_parts_are_refused)
{
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part, whole;
    nh_error err;
    shard_config(&s, &cfg, 1, 2);
    shard_config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    nh_partial *p = nh_partial_parse(text, "second", &err);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT), "shard 2 before shard 1");
    cr_assert(strstr(err.msg, "does not continue") != NULL, "%s", err.msg);
    nh_partial_free(p);
    /* a foreign seed */
    whole_cfg.seed = 78;
    nh_run_result_clear(&whole);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    whole.next_block = nh_run_chunk_first_block(&whole_cfg, 128);
    p = nh_partial_parse(text, "second", &err);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "another configuration") != NULL, "%s", err.msg);
    nh_partial_free(p);
    /* a damaged accumulator string (one hex digit replaced) */
    whole_cfg.seed = 77;
    nh_run_result_clear(&whole);
    cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
    whole.next_block = nh_run_chunk_first_block(&whole_cfg, 128);
    char *acc = strstr(text, "\"accumulators\":\"");
    cr_assert(acc != NULL);
    acc[20] = 'z';
    cr_assert(nh_partial_parse(text, "damaged", &err) == NULL);
    cr_assert(strstr(err.msg, "partial result 'damaged': checksum mismatch") != NULL, "%s", err.msg);
    char *sealed = reseal_text(text);
    p = nh_partial_parse(sealed, "damaged", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "field 'chunk_stats[0].accumulators' is") != NULL, "%s", err.msg);
    nh_partial_free(p);
    free(sealed);
    cr_assert(nh_partial_parse("{\"format\":\"nhens-checkpoint\"}", "other", &err) == NULL);
    cr_assert(strstr(err.msg, "not an nhens partial-result") != NULL, "%s", err.msg);
    free(text);
    nh_run_result_clear(&whole);
    nh_run_result_clear(&part);
}

/* A state's text with one member changed: KEY (top level, or "chunk0.KEY" in the first chunk) becomes the
 * JSON value VALUE, or, with VALUE "@INDEX=HEX", the INDEX-th double of the hex string KEY becomes HEX;
 * "VALUE|KEY2=VALUE2" changes a second top-level member too; then resealed (tests/reseal.h). */
static char *edited_state(const char *text, const char *key, const char *value)
{
    char first[256], *second = NULL;
    snprintf(first, sizeof first, "%s", value);
    if ((second = strchr(first, '|'))) {
        *second++ = '\0';
        char *eq = strchr(second, '=');
        *eq = '\0';
        char *once = edited_state(text, second, eq + 1);
        char *both = edited_state(once, key, first);
        free(once);
        return both;
    }
    cJSON *root = cJSON_Parse(text);
    cJSON *obj = root;
    if (!strncmp(key, "chunk0.", 7)) {
        obj = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "chunk_stats"), 0);
        key += 7;
    }
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert(item != NULL, "no %s", key);
    if (value[0] == '@') {
        const long index = strtol(value + 1, NULL, 10);
        cr_assert(cJSON_IsString(item) && (long)strlen(item->valuestring) >= 16 * (index + 1));
        memcpy(item->valuestring + 16 * index, strchr(value, '=') + 1, 16);
    } else {
        cr_assert(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_Parse(value)));
    }
    char *plain = cJSON_PrintUnformatted(root);
    char *sealed = reseal_text(plain);
    cJSON_free(plain);
    cJSON_Delete(root);
    return sealed;
}

typedef struct tampering {
    const char *key, *value, *message;
} tampering;

Test(shards, a_resealed_part_out_of_its_domain_is_refused_naming_the_field)
{
    /* the checksum caught aside: each edit is resealed, so the domain and consistency checks must catch it */
    static const tampering cases[] = {
        {"chunk0.accumulators", "@1=7ff8000000000000", "field 'chunk_stats[0].accumulators' entry 1 (the mean of output 0"},
        {"chunk0.accumulators", "@1=7ff0000000000000", "entry 1 (the mean of output 0, observer dH) is inf; allowed: finite"},
        {"chunk0.accumulators", "@2=bff0000000000000", "entry 2 (the m2 of output 0, observer dH) is -1; allowed: finite and >= 0"},
        {"chunk0.accumulators", "@0=4004000000000000", "entry 0 (the count of output 0, observer dH) is 2.5; allowed: a whole count"},
        {"chunk0.accumulators", "@0=c020000000000000", "(the count of output 0, observer dH) is -8"},
        {"chunk0.accumulators", "@28=3ff0000000000000", "(the counts of output 1, observer dH, summed over the chunks) is 17; allowed: 24"},
        {"chunk0.first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "first_failures of every chunk) is 1 failure records; allowed: at most 0"},
        {"chunk0.first_failures", "[{\"trajectory\":\"99\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "field 'chunk_stats[0].first_failures' entry 0 is trajectory 99; allowed: trajectories 0 to 7"},
        {"failed", "\"-1\"", "field 'failed' is '-1'; allowed: a whole number from 0 to 24"},
        {"failed", "\"2\"", "field 'failures_by_status' is 0 failures in all; allowed: 2"},
        {"failures_by_status", "[0,0.5,0,0,0,0,0,0]", "field 'failures_by_status' entry 1 is 0.5"},
        {"solver_failures", "\"1\"", "field 'solver_failures' is '1'; allowed: a whole number from 0 to 0"},
        {"completed_steps", "\"7\"", "field 'completed_steps' is 7; allowed:"},
        {"wall_seconds", "-1", "field 'wall_seconds' is -1; allowed: finite seconds >= 0"},
        {"method_seconds", "\"1\"", "field 'method_seconds' is '1'; allowed: finite seconds >= 0"},
        {"live", "[25]", "field 'live' is a list of 1; allowed: a list of"},
        {"sketches", "\"1:1,\"", "the sketch of observer"},
        {"sketches", "\"2:1,1:1,\"", "field 'sketches' entry 1 (its cell and bin) is out of order or range"},
        {"shard", "{\"index\":\"2\",\"count\":\"2\",\"first_chunk\":\"0\",\"chunks\":\"3\",\"total_chunks\":\"6\",\"interrupted\":false}",
         "field 'shard' is shard 2 of 2 with chunks 0 to 2; allowed: chunks 3 to 5"},
        {"shard", "{\"index\":\"1\",\"count\":\"2\",\"first_chunk\":\"0\",\"chunks\":\"3\",\"total_chunks\":\"6\",\"interrupted\":true}",
         "field 'shard' is interrupted shard 1 of 2 with chunks 0 to 2; allowed: fewer chunks than 0 to 2"},
        {"next_block", "\"6\"", "field 'next_block' is '6'; allowed: '3'"},
        {"trajectories_done", "\"45\"", "field 'trajectories_done' is '45'; allowed: '24'"},
        {"chunk0.trajectory_fits", "@0=7ff0000000000000", "field 'chunk_stats[0].trajectory_fits' entry 0 is inf"},
    };
    nh_system s;
    nh_run_config cfg, whole_cfg;
    nh_run_result part, whole;
    nh_error err;
    small_shard_config(&s, &cfg, 0, 2);
    small_shard_config(&s, &whole_cfg, 0, 0);
    cr_assert(eq(int, nh_run_ensemble(&cfg, &part, &err), NH_OK), "%s", err.msg);
    char *text = nh_partial_text(&cfg, &part, 0, NULL, &err);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *sealed = edited_state(text, cases[i].key, cases[i].value);
        nh_partial *p = nh_partial_parse(sealed, "edited", &err);
        cr_assert(p != NULL, "%s: %s", cases[i].key, err.msg);
        cr_assert(eq(int, nh_run_result_init(&whole_cfg, &whole, &err), NH_OK));
        cr_expect(eq(int, nh_partial_merge(p, &whole_cfg, &whole, &err), NH_ERR_INPUT), "%s %s accepted", cases[i].key,
                  cases[i].value);
        cr_expect(strstr(err.msg, cases[i].message) != NULL && strstr(err.msg, "partial result 'edited': ") == err.msg,
                  "%s %s: %s", cases[i].key, cases[i].value, err.msg);
        nh_partial_free(p);
        nh_run_result_clear(&whole);
        free(sealed);
    }
    /* resealed but unchanged, the part merges */
    char *sealed = reseal_text(text);
    cr_assert(strcmp(sealed, text) == 0, "the writer's checksum is the documented one");
    free(sealed);
    free(text);
    nh_run_result_clear(&part);
}

Test(shards, a_resealed_checkpoint_out_of_its_domain_is_refused_naming_the_field)
{
    static const tampering cases[] = {
        {"accumulators", "@5=7ff8000000000000", "checkpoint 'edited': field 'accumulators' entry 5 (the mean of output 0, observer"},
        {"accumulators", "@6=bff0000000000000", "field 'accumulators' entry 6 (the m2 of output 0"},
        {"accumulators", "@4=4010000000000000", "field 'accumulators' entry 4 (the count of output 0, observer"},
        {"groups", "@2=bff0000000000000", "field 'groups' entry 2 (the m2 of output 0 of fit group 0) is -1"},
        {"groups", "@0=3ff0000000000000", "field 'groups' (the counts of output 0 summed over the fit groups) is"},
        {"next_block", "\"6\"|trajectories_done=\"45\"", "field 'completed_steps' is 1440; allowed: 2700 to 2700"},
        {"next_block", "\"4\"", "field 'trajectories_done' is 24; allowed: 32, the trajectories of the first 4 blocks"},
        {"next_block", "\"9\"", "field 'next_block' is 9; allowed: the first block of a chunk, 0 to 6"},
        {"trajectories_done", "\"23\"", "field 'trajectories_done' is 23; allowed: 24"},
        {"live", "[1]", "field 'live' is a list of 1; allowed: a list of"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1}]",
         "field 'first_failures' entry 0 is status 1; allowed: a status counted in failures_by_status"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"7ff8000000000000\",\"status\":1}]",
         "field 'first_failures' entry 0 is a failure at t = nan; allowed: a time from 0 to T"},
        {"first_failures", "[{\"trajectory\":\"3\",\"time_bits\":\"0000000000000000\",\"status\":1.5}]",
         "field 'first_failures' entry 0 (status) is 1.5; allowed: a whole number from 0 to 7"},
        {"reference_seconds", "1e999", "field 'reference_seconds' is null; allowed: finite seconds >= 0"},
        {"paths_first", "\"1\"", "field 'paths_first' is '1'"},
    };
    nh_system s;
    nh_run_config cfg;
    nh_run_result whole, resumed;
    nh_error err;
    char path[128];
    snprintf(path, sizeof path, "/tmp/nhens-test-edited-ck-%d.json", (int)getpid());
    small_shard_config(&s, &cfg, 0, 0);
    checkpoint_target target = {path, &cfg};
    cfg.merged = checkpoint_at_third_chunk;
    cfg.hook_ctx = &target;
    cr_assert(eq(int, nh_run_ensemble(&cfg, &whole, &err), NH_OK), "%s", err.msg);
    cfg.merged = NULL;
    size_t size;
    char *text = nh_read_file(path, 1 << 26, &size, &err);
    cr_assert(text != NULL, "%s", err.msg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *sealed = edited_state(text, cases[i].key, cases[i].value), edited[160];
        snprintf(edited, sizeof edited, "/tmp/nhens-test-edited-%d", (int)getpid());
        FILE *f = fopen(edited, "w");
        fputs(sealed, f);
        fclose(f);
        nh_checkpoint *ck = nh_checkpoint_load(edited, &err);
        cr_assert(ck != NULL, "%s", err.msg);
        cr_assert(eq(int, nh_run_result_init(&cfg, &resumed, &err), NH_OK));
        cr_expect(eq(int, nh_checkpoint_restore(ck, &cfg, &resumed, &err), NH_ERR_INPUT), "%s %s accepted",
                  cases[i].key, cases[i].value);
        const char *message = strstr(cases[i].message, "checkpoint 'edited': ") == cases[i].message
                                  ? cases[i].message + strlen("checkpoint 'edited': ") : cases[i].message;
        cr_expect(strstr(err.msg, message) != NULL, "%s %s: %s", cases[i].key, cases[i].value, err.msg);
        nh_checkpoint_free(ck);
        nh_run_result_clear(&resumed);
        remove(edited);
        free(sealed);
    }
    free(text);
    remove(path);
    nh_run_result_clear(&whole);
}
