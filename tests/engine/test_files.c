/* Whole-or-absent files and one-set commits (engine/files.c): a failed body leaves the old file; a set
 * interrupted after its commit point is completed by the next look at the folder, one interrupted before
 * it leaves the folder as it was; stale files of the set (an older smoothed.csv) are removed. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nhens/files.h"
#include "scratch.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
}

static int has(const char *dir, const char *name, const char *text)
{
    char path[512], buf[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return text == NULL || strcmp(buf, text) == 0;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void fresh(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/nhens-files-%s-%d", name, (int)getpid());
    remove_tree(dir);
    nh_error err;
    cr_assert(eq(int, nh_make_directory(dir, &err), NH_OK), "%s", err.msg);
}

static int failing_body(FILE *f, const void *data)
{
    (void)data;
    fputs("half", f);
    return 1;
}

static int text_body(FILE *f, const void *data)
{
    return fputs(data, f) < 0;
}

Test(files, a_failed_write_keeps_the_old_file_and_leaves_no_temporary)
{
    char dir[128], path[256];
    nh_error err;
    fresh(dir, sizeof dir, "one");
    snprintf(path, sizeof path, "%s/a.csv", dir);
    cr_assert(eq(int, nh_write_file(path, text_body, "old", &err), NH_OK));
    cr_assert(eq(int, nh_write_file(path, failing_body, NULL, &err), NH_ERR_IO));
    cr_assert(strstr(err.msg, "could not write") && strstr(err.msg, "a.csv"), "%s", err.msg);
    cr_assert(has(dir, "a.csv", "old"));
    cr_assert(eq(int, entries(dir), 1), "the temporary is removed");
    remove_tree(dir);
}

/* The temporary's name is the path plus a suffix: a path too long for it is refused, not cut (a cut
 * directory part names another folder). */
Test(files, a_path_too_long_for_its_temporary_is_refused_and_nothing_is_written)
{
    char dir[128], path[NH_WRITE_PATH_MAX + 2];
    nh_error err;
    fresh(dir, sizeof dir, "long");
    int used = snprintf(path, sizeof path, "%s/", dir);
    memset(path + used, 'a', sizeof path - 1 - (size_t)used);
    path[sizeof path - 1] = '\0';
    cr_assert(eq(int, nh_write_file(path, text_body, "x", &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "allowed: at most 4136") != NULL, "%s", err.msg);
    cr_assert(eq(int, entries(dir), 0), "nothing is written");
    path[NH_WRITE_PATH_MAX] = '\0';   /* at the limit the name is too long for the file system, not for us */
    cr_assert(eq(int, nh_write_file(path, text_body, "x", &err), NH_ERR_IO), "%s", err.msg);
    remove_tree(dir);
}

Test(files, a_commit_replaces_the_set_and_drops_its_stale_members)
{
    char dir[128];
    nh_error err;
    nh_output_set set;
    fresh(dir, sizeof dir, "commit");
    put(dir, "timeseries.csv", "old t");
    put(dir, "summary.json", "old s");
    put(dir, "smoothed.csv", "old smoothed");
    put(dir, "notes.txt", "the user's");
    cr_assert(eq(int, nh_output_set_begin(&set, dir, &err), NH_OK), "%s", err.msg);
    put(set.stage, "timeseries.csv", "new t");
    put(set.stage, "summary.json", "new s");
    cr_assert(has(dir, "timeseries.csv", "old t"), "nothing changes before the commit");
    cr_assert(eq(int, nh_output_set_commit(&set, &err), NH_OK), "%s", err.msg);
    cr_assert(has(dir, "timeseries.csv", "new t") && has(dir, "summary.json", "new s"));
    cr_assert(has(dir, "smoothed.csv", NULL) == 0, "the old run's smoothed.csv does not stay beside the new run");
    cr_assert(has(dir, "notes.txt", "the user's"), "files outside the set are never touched");
    cr_assert(eq(int, entries(dir), 3));
    remove_tree(dir);
}

Test(files, a_commit_killed_after_its_manifest_is_completed_by_the_next_look)
{
    char dir[128], stage[256];
    nh_error err;
    fresh(dir, sizeof dir, "after");
    put(dir, "timeseries.csv", "old t");
    put(dir, "summary.json", "old s");
    /* what a process (pid 999999999, gone) left after the commit point, timeseries.csv already moved */
    snprintf(stage, sizeof stage, "%s/.nhens-stage.999999999", dir);
    cr_assert(mkdir(stage, 0755) == 0);
    put(stage, "MANIFEST", "timeseries.csv\nsummary.json\n");
    put(stage, "summary.json", "new s");
    put(dir, "timeseries.csv", "new t");
    cr_assert(eq(int, nh_output_recover(dir, &err), NH_OK), "%s", err.msg);
    cr_assert(has(dir, "timeseries.csv", "new t") && has(dir, "summary.json", "new s"), "one run's set, not a mix");
    cr_assert(eq(int, entries(dir), 2), "the staging folder is gone");
    remove_tree(dir);
}

Test(files, a_set_killed_before_its_manifest_leaves_the_folder_as_it_was)
{
    char dir[128], stage[256];
    nh_error err;
    fresh(dir, sizeof dir, "before");
    put(dir, "timeseries.csv", "old t");
    snprintf(stage, sizeof stage, "%s/.nhens-stage.999999999", dir);
    cr_assert(mkdir(stage, 0755) == 0);
    put(stage, "timeseries.csv", "new but unfinished");
    put(stage, ".summary.json.tmp.999999999", "half");
    cr_assert(eq(int, nh_output_recover(dir, &err), NH_OK));
    cr_assert(has(dir, "timeseries.csv", "old t"));
    cr_assert(eq(int, entries(dir), 1));
    remove_tree(dir);
}

Test(files, reading_refuses_what_is_not_a_regular_file_of_bounded_size)
{
    nh_error err;
    size_t size;
    cr_assert(nh_read_file("/dev/zero", 100, &size, &err) == NULL);
    cr_assert(strstr(err.msg, "'/dev/zero' is not a regular file") != NULL, "%s", err.msg);
    cr_assert(nh_read_file("/etc/passwd", 4, &size, &err) == NULL);
    cr_assert(strstr(err.msg, "too large") != NULL, "%s", err.msg);
    cr_assert(nh_read_file("/nonexistent", 4, &size, &err) == NULL);
    cr_assert(strstr(err.msg, "cannot read '/nonexistent'") != NULL, "%s", err.msg);
}

/* A path that does not fit is refused, never cut: a cut path names another file. */
Test(files, a_path_that_does_not_fit_is_refused_not_cut)
{
    char buf[16];
    nh_error err;
    cr_assert(eq(int, nh_path_format(buf, sizeof buf, &err, "%s/%s", "dir", "name"), NH_OK));
    cr_assert(eq(str, buf, "dir/name"));
    cr_assert(eq(int, nh_path_format(buf, sizeof buf, &err, "%s/%s", "a-long-folder", "name"), NH_ERR_INPUT));
    cr_assert(eq(str, buf, ""), "nothing usable is left in the buffer");
    cr_assert(strstr(err.msg, "longer than 15 bytes") != NULL, "%s", err.msg);
}

/* One process at a time: a second process is refused with the holder's pid; the lock goes with its holder. */
Test(files, a_locked_folder_refuses_another_process_until_its_holder_is_gone)
{
    char dir[128];
    nh_error err;
    nh_folder_lock lock;
    fresh(dir, sizeof dir, "lock");
    cr_assert(eq(int, nh_folder_lock_take(dir, &lock, &err), NH_OK), "%s", err.msg);
    pid_t child = fork();
    if (child == 0) {
        nh_folder_lock other;
        char expected[256];
        snprintf(expected, sizeof expected, "'%s' is in use by another nhens process (pid %ld)", dir, (long)getppid());
        _exit(nh_folder_lock_take(dir, &other, &err) == NH_ERR_IO && strstr(err.msg, expected) ? 0 : 1);
    }
    int status;
    cr_assert(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    nh_folder_lock_release(&lock);
    child = fork();
    if (child == 0) {
        nh_folder_lock other;
        _exit(nh_folder_lock_take(dir, &other, &err) == NH_OK ? 0 : 1);
    }
    cr_assert(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    remove_tree(dir);
}

/* A folder below a locked one: refused to another process (nothing created), open to the holder itself,
 * whose lock stays (looking at the ancestor's lock file must not drop it). */
Test(files, a_folder_inside_a_locked_one_is_refused_to_another_process_only)
{
    char dir[128], sub[256], deep[300];
    nh_error err;
    nh_folder_lock lock, inner;
    fresh(dir, sizeof dir, "nest");
    snprintf(sub, sizeof sub, "%s/a", dir);
    snprintf(deep, sizeof deep, "%s/b/c", dir);
    cr_assert(eq(int, nh_folder_lock_take(dir, &lock, &err), NH_OK), "%s", err.msg);
    pid_t child = fork();
    if (child == 0) {
        nh_folder_lock other;
        char expected[128];
        snprintf(expected, sizeof expected, "which is in use by another nhens process (pid %ld)", (long)getppid());
        const int refused = nh_output_folder_open(deep, &other, &err) == NH_ERR_IO && strstr(err.msg, expected) &&
                            strstr(err.msg, "is inside '") && access(deep, F_OK) != 0;
        _exit(refused ? 0 : 1);
    }
    int status;
    cr_assert(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cr_assert(eq(int, nh_output_folder_open(sub, &inner, &err), NH_OK), "%s", err.msg);
    nh_folder_lock_release(&inner);
    child = fork();
    if (child == 0) {
        nh_folder_lock other;
        _exit(nh_folder_lock_take(dir, &other, &err) == NH_ERR_IO ? 0 : 1);
    }
    cr_assert(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the holder's own lock survives opening a folder inside");
    nh_folder_lock_release(&lock);
    remove_tree(dir);
}

/* Temporaries of killed processes: recovery removes those whose process is gone; the lock's holder removes
 * every one of another process (pid 1 runs, but writes no nhens file into a locked folder). */
Test(files, temporaries_of_other_processes_are_removed_by_the_lock_holder)
{
    char dir[128], stage[256];
    nh_error err;
    nh_folder_lock lock;
    fresh(dir, sizeof dir, "clean");
    put(dir, ".summary.json.tmp.999999999", "half");
    put(dir, ".run.ck.tmp.1", "half");
    put(dir, ".nhens-probe.999999999", "");
    put(dir, "notes.tmp.1", "the user's");
    put(dir, ".notes.tmp.txt", "the user's");
    snprintf(stage, sizeof stage, "%s/.nhens-stage.1", dir);
    cr_assert(mkdir(stage, 0755) == 0);
    cr_assert(eq(int, nh_output_recover(dir, &err), NH_OK), "%s", err.msg);
    cr_assert(has(dir, ".summary.json.tmp.999999999", NULL) == 0 && has(dir, ".nhens-probe.999999999", NULL) == 0);
    cr_assert(has(dir, ".run.ck.tmp.1", NULL), "a running process's temporary stays without the lock");
    cr_assert(eq(int, nh_folder_lock_take(dir, &lock, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, nh_output_clean(dir, &err), NH_OK), "%s", err.msg);
    nh_folder_lock_release(&lock);
    cr_assert(has(dir, ".run.ck.tmp.1", NULL) == 0 && access(stage, F_OK) != 0);
    cr_assert(has(dir, "notes.tmp.1", "the user's") && has(dir, ".notes.tmp.txt", "the user's"));
    cr_assert(eq(int, entries(dir), 3), "the user's two files and the lock file");
    remove_tree(dir);
}

Test(files, opening_for_reading_never_blocks_on_a_fifo)
{
    char dir[128], fifo[256];
    nh_error err;
    fresh(dir, sizeof dir, "fifo");
    snprintf(fifo, sizeof fifo, "%s/summary.json", dir);
    cr_assert(mkfifo(fifo, 0644) == 0);
    cr_assert(nh_open_regular(fifo, &err) == NULL);
    cr_assert(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    cr_assert(nh_open_regular(dir, &err) == NULL);
    remove_tree(dir);
}

/* A symbolic link planted where this process's temporary or probe will be is removed, not followed: the
 * file it points to, outside the folder, keeps its bytes. */
Test(files, a_link_planted_at_a_temporary_name_is_not_followed)
{
    char dir[128], victim[160], target[256], link[512], sub[256];
    fresh(dir, sizeof dir, "planted");
    snprintf(victim, sizeof victim, "%s-victim", dir);
    remove_tree(victim);
    cr_assert(mkdir(victim, 0755) == 0);
    put(victim, "f", "precious");
    snprintf(target, sizeof target, "%s/f", victim);
    snprintf(link, sizeof link, "%s/.summary.json.tmp.%ld", dir, (long)getpid());
    cr_assert(symlink(target, link) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    nh_error err;
    cr_assert(eq(int, nh_write_file(path, text_body, "written", &err), NH_OK), "%s", err.msg);
    cr_assert(has(dir, "summary.json", "written"));
    cr_assert(has(victim, "f", "precious"), "nh_write_file wrote through the planted link");
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert(mkdir(sub, 0755) == 0);
    snprintf(link, sizeof link, "%s/.nhens-probe.%ld", sub, (long)getpid());
    cr_assert(symlink(target, link) == 0);
    cr_assert(eq(int, nh_make_directory(sub, &err), NH_OK), "%s", err.msg);
    cr_assert(has(victim, "f", "precious"), "the writability probe wrote through the planted link");
    cr_assert(eq(int, entries(sub), 0), "the probe and the link are gone");
    remove_tree(dir);
    remove_tree(victim);
}
