/* Faults: SIGINT and SIGTERM stop a run gracefully (merged prefix written with "complete": false, exit
 * 128 + signal, no temporaries); SIGKILL loses at most the blocks since the last checkpoint, and
 * --resume then finishes the run bitwise identical to an uninterrupted one; a full disk (writes failing
 * with EFBIG under a file-size limit) leaves the previous run's files whole and unmixed and is an error,
 * never an exit 0 with empty files; a damaged or foreign checkpoint is refused. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <sys/stat.h>

#include "child.h"
#include "reseal.h"

#define STUDY "run", "--system", "quartic", "--method", "dla", "--h", "0.01", "--T", "20", "--energy", "1", \
              "--ensemble", "400", "--threads", "2", "--quiet", "--paths", "3"

typedef struct scratch {
    char root[128], reference[256], out[256], checkpoint[300], err[256];
} scratch;

static void scratch_make(scratch *s, const char *name)
{
    snprintf(s->root, sizeof s->root, "/tmp/nhens-faults-%s-%d", name, (int)getpid());
    remove_tree(s->root);
    cr_assert(mkdir(s->root, 0755) == 0);
    snprintf(s->reference, sizeof s->reference, "%s/reference", s->root);
    snprintf(s->out, sizeof s->out, "%s/out", s->root);
    snprintf(s->checkpoint, sizeof s->checkpoint, "%s/run.checkpoint", s->out); /* --checkpoint run.checkpoint */
    snprintf(s->err, sizeof s->err, "%s/stderr", s->root);
}

static void file_text(const char *dir, const char *name, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    read_text_file(path, buf, len);
}

/* summary.json without the lines that may differ between an interrupted and an uninterrupted run: the
 * timing, the command line and the thread count (docs/guide/scaling.md, "Checkpoints and resume"). */
static void comparable_summary(const char *dir, char *buf, size_t len)
{
    static char text[1 << 16];
    file_text(dir, "summary.json", text, sizeof text);
    buf[0] = '\0';
    size_t used = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (!strstr(line, "_seconds") && !strstr(line, "steps_per_second") && !strstr(line, "ns_per_step") &&
            !strstr(line, "peak_rss_kib") && !strstr(line, "\"command\"") && !strstr(line, "\"threads\""))
            used += (size_t)snprintf(buf + used, len - used, "%s\n", line);
}

static void reference_run(const scratch *s)
{
    char *args[] = {"nhens", STUDY, "--out", (char *)s->reference, NULL};
    child_options o = {.err_path = s->err};
    cr_assert(eq(int, child_run(args, &o), 0));
}

/* Starts the study with a checkpoint after every block and returns once the first checkpoint exists. */
static pid_t start_checkpointed(const scratch *s)
{
    char *args[] = {"nhens", STUDY, "--out", (char *)s->out, "--checkpoint", "run.checkpoint",
                    "--checkpoint-every", "0", NULL};
    child_options o = {.err_path = s->err};
    pid_t pid = child_start(args, &o);
    for (int ms = 0; access(s->checkpoint, F_OK) != 0; ms += 2) {
        cr_assert(ms < 60000, "no checkpoint after 60 s");
        cr_assert(waitpid(pid, NULL, WNOHANG) == 0, "the run ended before its first checkpoint");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return pid;
}

static void assert_same_results(const scratch *s)
{
    static char a[1 << 22], b[1 << 22];
    file_text(s->reference, "timeseries.csv", a, sizeof a);
    file_text(s->out, "timeseries.csv", b, sizeof b);
    cr_assert(strlen(a) > 1000 && strcmp(a, b) == 0, "timeseries.csv differs from the uninterrupted run's");
    file_text(s->reference, "paths.csv", a, sizeof a);
    file_text(s->out, "paths.csv", b, sizeof b);
    cr_assert(strlen(a) > 1000 && strcmp(a, b) == 0, "paths.csv differs from the uninterrupted run's");
    file_text(s->reference, "quantiles.csv", a, sizeof a);
    file_text(s->out, "quantiles.csv", b, sizeof b);
    cr_assert(strlen(a) > 1000 && strcmp(a, b) == 0, "quantiles.csv differs from the uninterrupted run's");
    comparable_summary(s->reference, a, sizeof a);
    comparable_summary(s->out, b, sizeof b);
    cr_assert(strcmp(a, b) == 0, "summary.json differs:\n%s\n---\n%s", a, b);
}

static void assert_no_temporary(const scratch *s)
{
    char found[4608] = "";
    find_temporary(s->root, found, sizeof found);
    cr_assert(found[0] == '\0', "temporary left: %s", found);
}

static void resume(const scratch *s)
{
    char *args[] = {"nhens", "run", "--resume", (char *)s->checkpoint, "--threads", "1", "--quiet", NULL};
    child_options o = {.err_path = s->err};
    char err[4096];
    int code = child_run(args, &o);
    read_text_file(s->err, err, sizeof err);
    cr_assert(eq(int, code, 0), "resume: %s", err);
    cr_assert(access(s->checkpoint, F_OK) != 0, "the checkpoint of a completed run is removed");
}

/* Signal `sig` to a checkpointing run: exit 128 + sig, the finished whole blocks written with
 * "complete": false, no temporary left. */
static void assert_stops_gracefully(const scratch *s, pid_t pid, int sig)
{
    kill(pid, sig);
    cr_assert(eq(int, child_code(child_wait(pid)), 128 + sig));
    char summary[1 << 16];
    file_text(s->out, "summary.json", summary, sizeof summary);
    cr_assert(strstr(summary, "\"complete\":\tfalse") != NULL, "%s", summary);
    const char *done = strstr(summary, "\"trajectories_done\":");
    long n = done ? strtol(done + 21, NULL, 10) : -1;
    cr_assert(n > 0 && n < 400 && n % 8 == 0, "trajectories_done = %ld: a whole number of blocks, not all", n);
    assert_no_temporary(s);
}

Test(faults, sigint_writes_the_finished_part_and_resume_finishes_bitwise, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "int");
    reference_run(&s);
    assert_stops_gracefully(&s, start_checkpointed(&s), SIGINT);
    resume(&s);
    assert_same_results(&s);
    remove_tree(s.root);
}

Test(faults, sigterm_exits_143_with_complete_false, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "term");
    assert_stops_gracefully(&s, start_checkpointed(&s), SIGTERM);
    remove_tree(s.root);
}

Test(faults, sigkill_midway_then_resume_is_bitwise_identical, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "kill");
    reference_run(&s);
    pid_t pid = start_checkpointed(&s);
    kill(pid, SIGKILL);
    cr_assert(eq(int, child_code(child_wait(pid)), 128 + SIGKILL));
    cr_assert(access(s.checkpoint, F_OK) == 0);
    resume(&s);
    assert_same_results(&s);
    assert_no_temporary(&s);
    remove_tree(s.root);
}

Test(faults, foreign_or_damaged_checkpoint_is_refused, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "damaged");
    pid_t pid = start_checkpointed(&s);
    kill(pid, SIGKILL);
    child_wait(pid);
    static char text[1 << 23];
    read_text_file(s.checkpoint, text, sizeof text);
    char *acc = strstr(text, "\"accumulators\":\"");
    cr_assert(acc != NULL);
    acc[17] = 'z'; /* not a hex digit */
    FILE *f = fopen(s.checkpoint, "w");
    fputs(text, f);
    fclose(f);
    char *args[] = {"nhens", "run", "--resume", (char *)s.checkpoint, NULL};
    child_options o = {.err_path = s.err};
    char err[4096];
    cr_assert(eq(int, child_run(args, &o), 2));
    read_text_file(s.err, err, sizeof err);
    cr_assert(strstr(err, "checksum mismatch: the file was changed after nhens wrote it") != NULL, "%s", err);
    char *sealed = reseal_text(text); /* the checksum recomputed: the hex string itself is refused by name */
    f = fopen(s.checkpoint, "w");
    fputs(sealed, f);
    fclose(f);
    free(sealed);
    cr_assert(eq(int, child_run(args, &o), 2));
    read_text_file(s.err, err, sizeof err);
    cr_assert(strstr(err, "field 'accumulators' is") != NULL, "%s", err);
    char *seed = strstr(text, "\"seed\":\"1\"");
    cr_assert(seed != NULL);
    seed[8] = '2'; /* the configuration of another run than the arguments describe */
    acc[17] = '0';
    sealed = reseal_text(text);
    f = fopen(s.checkpoint, "w");
    fputs(sealed, f);
    fclose(f);
    free(sealed);
    cr_assert(eq(int, child_run(args, &o), 2));
    read_text_file(s.err, err, sizeof err);
    cr_assert(strstr(err, "written by a run of another configuration") != NULL, "%s", err);
    remove_tree(s.root);
}

Test(faults, full_disk_leaves_the_previous_run_whole_and_is_an_error, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "full");
    char *first[] = {"nhens", "run", "--system", "cvt", "--method", "lf", "--h", "0.01", "--T", "10", "--energy", "2",
                     "--ensemble", "16", "--smooth", "1", "--out", s.out, NULL};
    child_options o = {.err_path = s.err};
    cr_assert(eq(int, child_run(first, &o), 0));
    static char before[3][1 << 21], after[1 << 21];
    const char *names[3] = {"timeseries.csv", "summary.json", "smoothed.csv"};
    for (int i = 0; i < 3; ++i)
        file_text(s.out, names[i], before[i], sizeof before[i]);
    /* the same study with another seed, on a "disk" that takes 20 kB per file: timeseries.csv (~100 kB)
     * cannot be written */
    char *second[] = {"nhens", "run", "--system", "cvt", "--method", "lf", "--h", "0.01", "--T", "10", "--energy",
                      "2", "--ensemble", "16", "--seed", "7", "--out", s.out, NULL};
    o.file_size_limit = 20000;
    char err[4096];
    cr_assert(eq(int, child_run(second, &o), 1), "a write error is exit 1");
    read_text_file(s.err, err, sizeof err);
    cr_assert(strstr(err, "could not write") && strstr(err, "File too large"), "%s", err);
    for (int i = 0; i < 3; ++i) {
        file_text(s.out, names[i], after, sizeof after);
        cr_assert(strlen(before[i]) > 100 && strcmp(before[i], after) == 0, "%s changed", names[i]);
    }
    assert_no_temporary(&s);
    /* report: the same limit makes it fail loudly instead of writing an empty report.md */
    char ini[512], report_out[512];
    snprintf(ini, sizeof ini, "%s/e.ini", s.root);
    snprintf(report_out, sizeof report_out, "%s/report", s.root);
    FILE *f = fopen(ini, "w");
    fputs("[experiment]\nsystem = cvt\nparams = eps=0.1\nenergy = 2\nensemble = 16\nh = 0.01\nT = 10\nmethods = lf\n", f);
    fclose(f);
    char *report[] = {"nhens", "report", ini, "--out", report_out, NULL};
    int code = child_run(report, &o);
    read_text_file(s.err, err, sizeof err);
    cr_assert(code != 0, "report on a full disk exits %d: %s", code, err);
    char path[600];
    snprintf(path, sizeof path, "%s/report.md", report_out);
    cr_assert(access(path, F_OK) != 0, "no report.md without its results");
    assert_no_temporary(&s);
    remove_tree(s.root);
}

Test(faults, unwritable_output_is_found_before_the_work, .timeout = 600)
{
    char *args[] = {"nhens", "run", "--system", "quartic", "--method", "dla", "--h", "0.01", "--T", "1000",
                    "--energy", "1", "--ensemble", "100000", "--out", "/proc/self/nhens", NULL};
    child_options o = {.err_path = "/tmp/nhens-faults-unwritable.err"};
    char err[4096];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert(eq(int, child_run(args, &o), 1));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    read_text_file(o.err_path, err, sizeof err);
    remove(o.err_path);
    cr_assert(strstr(err, "cannot create directory '/proc/self/nhens'") != NULL, "%s", err);
    /* the run itself would take hours; refusing takes a process start */
    const long seconds = (long)(t1.tv_sec - t0.tv_sec);
    cr_assert(seconds < 30, "refused only after %ld s of work", seconds);
}

Test(faults, sigint_during_a_report_keeps_nothing_half_done_and_the_rerun_finishes, .timeout = 600)
{
    scratch s;
    scratch_make(&s, "report");
    char ini[512], run_dir[600], report_md[600];
    snprintf(ini, sizeof ini, "%s/e.ini", s.root);
    snprintf(run_dir, sizeof run_dir, "%s/main/01-dla", s.out);
    snprintf(report_md, sizeof report_md, "%s/report.md", s.out);
    FILE *f = fopen(ini, "w");
    fputs("[experiment]\nsystem = quartic\nparams = n=3\nenergy = 1\nensemble = 400\nh = 0.01\nT = 20\nmethods = dla\n", f);
    fclose(f);
    char *args[] = {"nhens", "report", ini, "--out", s.out, "--threads", "2", NULL};
    child_options o = {.err_path = s.err};
    pid_t pid = child_start(args, &o);
    for (int ms = 0; access(run_dir, F_OK) != 0; ms += 2) { /* the run's folder: its ensemble is starting */
        cr_assert(ms < 60000 && waitpid(pid, NULL, WNOHANG) == 0, "the report never started its run");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGINT);
    char err[8192];
    int code = child_code(child_wait(pid));
    read_text_file(s.err, err, sizeof err);
    cr_assert(eq(int, code, 130), "%s", err);
    cr_assert(strstr(err, "interrupted") != NULL, "%s", err);
    cr_assert(access(report_md, F_OK) != 0, "no report.md from an interrupted report");
    assert_no_temporary(&s);
    cr_assert(eq(int, child_run(args, &o), 0));
    read_text_file(s.err, err, sizeof err);
    cr_assert(strstr(err, "dla: running") && strstr(err, "   done"), "the interrupted run is computed again, not reused: %s", err);
    cr_assert(access(report_md, F_OK) == 0);
    remove_tree(s.root);
}
