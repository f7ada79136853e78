/* Whole-or-absent files and one-set commits of a run's files (see include/nhens/files.h). */
#include "nhens/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAGE_PREFIX ".nhens-stage."
#define MANIFEST "MANIFEST"

const char *const nh_output_set_names[] = {"timeseries.csv", "summary.json", "smoothed.csv", "paths.csv",
                                           "quantiles.csv", "config.hash", NULL};

static int make_one(const char *path, nh_error *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return nh_fail(err, NH_ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
    return NH_OK;
}

int nh_make_directory(const char *path, nh_error *err)
{
    char buf[2048];
    if (strlen(path) == 0 || strlen(path) >= sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "output directory '%.100s' is empty or longer than %zu characters", path,
                       sizeof buf - 1);
    strcpy(buf, path);
    for (char *p = buf + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (make_one(buf, err))
            return NH_ERR_IO;
        *p = '/';
    }
    if (make_one(buf, err))
        return NH_ERR_IO;
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return nh_fail(err, NH_ERR_IO, "output path '%s' exists and is not a directory", buf);
    /* writable? found out now, before any work, by creating and removing a probe file */
    char probe[2200];
    snprintf(probe, sizeof probe, "%s/.nhens-probe.%ld", buf, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f)
        return nh_fail(err, NH_ERR_IO, "output directory '%s' is not writable: %s", buf, strerror(errno));
    int bad = fclose(f) != 0;
    remove(probe);
    return bad ? nh_fail(err, NH_ERR_IO, "output directory '%s' is not writable", buf) : NH_OK;
}

int nh_write_file(const char *path, nh_write_body body, const void *data, nh_error *err)
{
    char tmp[NH_WRITE_PATH_MAX + 64];   /* the path, "/.", ".tmp." and a pid */
    const size_t path_length = strlen(path);
    if (path_length > NH_WRITE_PATH_MAX) /* cut short, the temporary's name could sit in another folder */
        return nh_fail(err, NH_ERR_INPUT, "cannot write '%.120s...': the path is %zu bytes; allowed: at most %d",
                       path, path_length, NH_WRITE_PATH_MAX);
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp.%ld", (int)(slash - path), path, slash + 1, (long)getpid());
    else
        snprintf(tmp, sizeof tmp, ".%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return nh_fail(err, NH_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    errno = 0;
    int bad = body(f, data) != 0;
    bad |= fflush(f) != 0;
    bad |= ferror(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    int e = errno;
    bad |= fclose(f) != 0;
    e = e ? e : errno;
    if (bad || rename(tmp, path) != 0) {
        e = bad ? e : errno;
        remove(tmp);
        return nh_fail(err, NH_ERR_IO, "could not write '%s': %s", path, e ? strerror(e) : "write error");
    }
    return NH_OK;
}

char *nh_read_file(const char *path, size_t max_bytes, size_t *size, nh_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return nh_fail(err, NH_ERR_IO, "cannot read '%s': %s", path, strerror(e)), NULL;
    }
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max_bytes) {
        close(fd);
        return nh_fail(err, NH_ERR_INPUT, "'%s' is %s; allowed: a regular file of at most %zu bytes", path,
                       S_ISREG(st.st_mode) ? "too large" : "not a regular file", max_bytes), NULL;
    }
    const size_t cap = (size_t)st.st_size + 1; /* one byte more than expected: growth is detected */
    char *text = malloc(cap + 1);
    size_t used = 0;
    ssize_t got = 0;
    while (text && used < cap) {
        got = read(fd, text + used, cap - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    if (!text || got < 0 || used >= cap) {
        free(text);
        return nh_fail(err, !text ? NH_ERR_NOMEM : NH_ERR_IO, "cannot read '%s' whole (it failed or changed while read)",
                       path), NULL;
    }
    text[used] = '\0';
    *size = used;
    return text;
}

static int in_manifest(const char *manifest, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = manifest; (p = strstr(p, name)); p += len)
        if ((p == manifest || p[-1] == '\n') && p[len] == '\n')
            return 1;
    return 0;
}

/* Removes every file in a staging folder (it holds files only), then the folder. */
static void remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", stage, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(stage);
}

/* Roll a committed stage forward: idempotent, so a second interruption is repaired the same way. */
static int apply_stage(const char *dir, const char *stage, const char *manifest, nh_error *err)
{
    for (int i = 0; nh_output_set_names[i]; ++i) {
        char from[4400], to[4400];
        snprintf(from, sizeof from, "%s/%s", stage, nh_output_set_names[i]);
        snprintf(to, sizeof to, "%s/%s", dir, nh_output_set_names[i]);
        int rc = in_manifest(manifest, nh_output_set_names[i]) ? rename(from, to) : unlink(to);
        if (rc != 0 && errno != ENOENT)
            return nh_fail(err, NH_ERR_IO, "cannot commit '%s': %s", to, strerror(errno));
    }
    remove_stage(stage);
    return NH_OK;
}

static int read_manifest(const char *stage, char *buf, size_t len)
{
    char path[4500];
    snprintf(path, sizeof path, "%s/" MANIFEST, stage);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
    return 0;
}

static int stage_owner_alive(const char *name)
{
    char *end;
    long pid = strtol(name + strlen(STAGE_PREFIX), &end, 10);
    if (*end || pid <= 0)
        return 0;
    return pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

int nh_output_recover(const char *dir, nh_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return NH_OK; /* nothing there yet */
    int rc = NH_OK;
    for (struct dirent *e; rc == NH_OK && (e = readdir(d));) {
        if (strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) != 0)
            continue;
        char stage[4400], manifest[1024];
        snprintf(stage, sizeof stage, "%s/%s", dir, e->d_name);
        if (read_manifest(stage, manifest, sizeof manifest) == 0)
            rc = apply_stage(dir, stage, manifest, err);
        else if (!stage_owner_alive(e->d_name))
            remove_stage(stage);
    }
    closedir(d);
    return rc;
}

int nh_output_set_begin(nh_output_set *set, const char *dir, nh_error *err)
{
    if (strlen(dir) >= sizeof set->dir)
        return nh_fail(err, NH_ERR_INPUT, "output directory '%.100s...' is longer than %zu characters", dir,
                       sizeof set->dir - 1);
    snprintf(set->dir, sizeof set->dir, "%s", dir);
    snprintf(set->stage, sizeof set->stage, "%s/" STAGE_PREFIX "%ld", dir, (long)getpid());
    int rc = nh_output_recover(dir, err);
    if (rc)
        return rc;
    remove_stage(set->stage);
    if (mkdir(set->stage, 0777) != 0)
        return nh_fail(err, NH_ERR_IO, "cannot create '%s': %s", set->stage, strerror(errno));
    return NH_OK;
}

static int manifest_body(FILE *f, const void *data)
{
    const char *stage = data;
    for (int i = 0; nh_output_set_names[i]; ++i) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", stage, nh_output_set_names[i]);
        if (access(path, F_OK) == 0 && fprintf(f, "%s\n", nh_output_set_names[i]) < 0)
            return 1;
    }
    return 0;
}

int nh_output_set_commit(nh_output_set *set, nh_error *err)
{
    char path[4400], manifest[1024];
    snprintf(path, sizeof path, "%s/" MANIFEST, set->stage);
    int rc = nh_write_file(path, manifest_body, set->stage, err);
    if (rc) {
        nh_output_set_abort(set);
        return rc;
    }
    if (read_manifest(set->stage, manifest, sizeof manifest))
        return nh_fail(err, NH_ERR_IO, "cannot read back '%s'", path);
    return apply_stage(set->dir, set->stage, manifest, err);
}

void nh_output_set_abort(nh_output_set *set)
{
    remove_stage(set->stage);
}
