/* Whole-or-absent files and one-set commits of a run's files (see include/nhens/files.h). */
#include "nhens/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAGE_PREFIX ".nhens-stage."
#define PROBE_PREFIX ".nhens-probe."
#define TEMPORARY_MARK ".tmp."
#define MANIFEST "MANIFEST"
#if defined(__linux__) && !defined(F_OFD_GETLK)
#define F_OFD_GETLK 36 /* Linux's open-file-description lock query; <fcntl.h> shows it only under _GNU_SOURCE */
#endif

const char *const nh_output_set_names[] = {"timeseries.csv", "summary.json", "smoothed.csv", "paths.csv",
                                           "quantiles.csv", "trajectories.csv", "config.hash", NULL};

int nh_path_format(char *buf, size_t len, nh_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < len)
        return NH_OK;
    char start[101];
    snprintf(start, sizeof start, "%s", buf);
    buf[0] = '\0';
    return nh_fail(err, NH_ERR_INPUT, "the path '%s...' is longer than %zu bytes", start, len - 1);
}

static int make_one(const char *path, nh_error *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return nh_fail(err, NH_ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
    return NH_OK;
}

int nh_make_directory(const char *path, nh_error *err)
{
    char buf[NH_DIR_MAX];
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
    char probe[NH_PATH_MAX];
    if (nh_path_format(probe, sizeof probe, err, "%s/" PROBE_PREFIX "%ld", buf, (long)getpid()))
        return NH_ERR_INPUT;
    FILE *f = nh_create_own_file(probe);
    if (!f)
        return nh_fail(err, NH_ERR_IO, "output directory '%s' is not writable: %s", buf, strerror(errno));
    int bad = fclose(f) != 0;
    remove(probe);
    return bad ? nh_fail(err, NH_ERR_IO, "output directory '%s' is not writable", buf) : NH_OK;
}

FILE *nh_create_own_file(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        return NULL;
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        const int e = errno;
        close(fd);
        unlink(path);
        errno = e;
    }
    return f;
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
    FILE *f = nh_create_own_file(tmp);
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

FILE *nh_open_regular(const char *path, nh_error *err)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int e = errno, regular = fd < 0 || S_ISREG(st.st_mode);
        if (fd >= 0)
            close(fd);
        return nh_fail(err, regular ? NH_ERR_IO : NH_ERR_INPUT, "cannot read '%s': %s", path,
                       regular ? strerror(e) : "not a regular file"), NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        const int e = errno;
        close(fd);
        return nh_fail(err, NH_ERR_NOMEM, "cannot read '%s': %s", path, strerror(e)), NULL;
    }
    return f;
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
            char path[NH_PATH_MAX];
            if (nh_path_format(path, sizeof path, NULL, "%s/%s", stage, e->d_name) == NH_OK)
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
        char from[NH_PATH_MAX], to[NH_PATH_MAX];
        if (nh_path_format(from, sizeof from, err, "%s/%s", stage, nh_output_set_names[i]) ||
            nh_path_format(to, sizeof to, err, "%s/%s", dir, nh_output_set_names[i]))
            return NH_ERR_INPUT;
        int rc = in_manifest(manifest, nh_output_set_names[i]) ? rename(from, to) : unlink(to);
        if (rc != 0 && errno != ENOENT)
            return nh_fail(err, NH_ERR_IO, "cannot commit '%s': %s", to, strerror(errno));
    }
    remove_stage(stage);
    return NH_OK;
}

static int read_manifest(const char *stage, char *buf, size_t len)
{
    char path[NH_PATH_MAX];
    if (nh_path_format(path, sizeof path, NULL, "%s/" MANIFEST, stage))
        return 1;
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
    return 0;
}

/* The pid in a name PREFIX.PID (PREFIX found by the caller), or 0 if what follows is not a pid. */
static long pid_after(const char *digits)
{
    char *end;
    errno = 0;
    const long pid = strtol(digits, &end, 10);
    return digits[0] >= '0' && digits[0] <= '9' && !*end && !errno && pid > 0 ? pid : 0;
}

/* The owner of a temporary nhens leaves only if killed: .NAME.tmp.PID (nh_write_file, report's figures) or
 * .nhens-probe.PID; 0 for any other name. */
static long temporary_owner(const char *name)
{
    if (!strncmp(name, PROBE_PREFIX, strlen(PROBE_PREFIX)))
        return pid_after(name + strlen(PROBE_PREFIX));
    const char *mark = NULL;
    for (const char *p = name; (p = strstr(p, TEMPORARY_MARK)); ++p)
        mark = p;
    return name[0] == '.' && mark && mark > name + 1 ? pid_after(mark + strlen(TEMPORARY_MARK)) : 0;
}

/* Whether a leftover of process `pid` is still being written: this process's own are; another's are while a
 * process of that pid runs, unless the caller holds the folder's lock (then no other nhens writes there). */
static int owner_writing(long pid, int locked)
{
    if (pid == (long)getpid())
        return 1;
    return !locked && pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* One entry of dir: a committed stage is completed, another stage or a temporary whose owner is no longer
 * writing is removed; anything else is left alone. */
static int recover_entry(const char *dir, const char *name, int locked, nh_error *err)
{
    const int stage = !strncmp(name, STAGE_PREFIX, strlen(STAGE_PREFIX));
    const long owner = stage ? pid_after(name + strlen(STAGE_PREFIX)) : temporary_owner(name);
    if (!stage && !owner)
        return NH_OK;
    char path[NH_PATH_MAX], manifest[1024];
    if (nh_path_format(path, sizeof path, err, "%s/%s", dir, name))
        return NH_ERR_INPUT;
    if (stage && read_manifest(path, manifest, sizeof manifest) == 0)
        return apply_stage(dir, path, manifest, err);
    if (owner_writing(owner, locked))
        return NH_OK;
    if (stage)
        remove_stage(path);
    else
        unlink(path);
    return NH_OK;
}

static int recover(const char *dir, int locked, nh_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return NH_OK; /* nothing there yet */
    int rc = NH_OK;
    for (struct dirent *e; rc == NH_OK && (e = readdir(d));)
        rc = recover_entry(dir, e->d_name, locked, err);
    closedir(d);
    return rc;
}

int nh_output_recover(const char *dir, nh_error *err)
{
    return recover(dir, 0, err);
}

int nh_output_clean(const char *dir, nh_error *err)
{
    return recover(dir, 1, err);
}

/* The pid of the process holding fd's file's lock, or 0 if none does now. */
static long lock_holder(int fd)
{
    struct flock holder = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_GETLK, &holder) != 0 || holder.l_type == F_UNLCK)
        return 0;
    return holder.l_pid > 0 ? (long)holder.l_pid : -1;
}

int nh_folder_lock_take(const char *dir, nh_folder_lock *lock, nh_error *err)
{
    char path[NH_PATH_MAX];
    struct stat st;
    lock->fd = -1;
    if (nh_path_format(path, sizeof path, err, "%s/" NH_FOLDER_LOCK_NAME, dir))
        return NH_ERR_INPUT;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return nh_fail(err, NH_ERR_IO, "cannot lock '%s': %s is not a regular file (a link, folder or FIFO)", dir,
                       path);
    const int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return nh_fail(err, NH_ERR_IO, "cannot lock '%s': cannot open %s as a regular file: %s", dir, path,
                       strerror(e));
    }
    const struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    for (int attempt = 0; fcntl(fd, F_SETLK, &whole) != 0; ++attempt) {
        const int e = errno;
        const long holder = e == EACCES || e == EAGAIN ? lock_holder(fd) : 0;
        if (holder || attempt == 3 || (e != EACCES && e != EAGAIN)) { /* none: released in between, retry */
            close(fd);
            if (holder > 0)
                return nh_fail(err, NH_ERR_IO, "'%s' is in use by another nhens process (pid %ld)", dir, holder);
            return nh_fail(err, NH_ERR_IO, "cannot lock '%s': %s", dir,
                           holder ? "in use by another nhens process" : strerror(e));
        }
    }
    lock->fd = fd;
    return NH_OK;
}

void nh_folder_lock_release(nh_folder_lock *lock)
{
    if (lock->fd >= 0)
        close(lock->fd); /* closing the file drops this process's record lock */
    lock->fd = -1;
}

/* The pid of another process holding FOLDER/.nhens-lock (opened as it is: never created, never followed),
 * or 0. A lock of this process is not another's: F_GETLK does not report it, and where Linux's F_OFD_GETLK
 * does, the descriptor is left open, since closing any descriptor of the file would drop that lock. */
static long other_holder(const char *folder)
{
    char path[NH_PATH_MAX];
    struct stat st;
    if (nh_path_format(path, sizeof path, NULL, "%s/" NH_FOLDER_LOCK_NAME, folder))
        return 0;
    const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long holder = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lock_holder(fd) : 0;
#ifdef F_OFD_GETLK
    struct flock any = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (!holder && fcntl(fd, F_OFD_GETLK, &any) == 0 && any.l_type != F_UNLCK && any.l_pid == getpid())
        return 0; /* this process's own lock: fd stays open */
#endif
    close(fd);
    return holder == (long)getpid() ? 0 : holder;
}

/* PATH with its last component (and trailing slashes) cut off, in place: "a/b/" -> "a", "a" -> ".", "/a" -> "/". */
static void cut_last_component(char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(path, 2, ".");
    else
        slash[slash == path] = '\0';
}

/* Refused (NH_ERR_IO) when a folder above DIR, its real path followed up to /, is locked by another process:
 * that process (a report) writes anywhere in its tree. DIR need not exist yet. */
static int check_ancestors_free(const char *dir, nh_error *err)
{
    char probe[NH_PATH_MAX];
    char *real = NULL;
    if (nh_path_format(probe, sizeof probe, err, "%s", dir))
        return NH_ERR_INPUT;
    int exists = 1;
    while (!(real = realpath(probe, NULL)) && strcmp(probe, ".") && strcmp(probe, "/")) {
        cut_last_component(probe);
        exists = 0;
    }
    if (!real)
        return NH_OK; /* not even the working folder resolves: nothing above to ask */
    if (exists && !strcmp(real, "/")) {
        free(real);
        return NH_OK;
    }
    if (exists)
        cut_last_component(real);
    for (int done = 0; !done; cut_last_component(real)) {
        const long holder = other_holder(real);
        if (holder) {
            nh_fail(err, NH_ERR_IO, "'%s' is inside '%s', which is in use by another nhens process (pid %ld)", dir,
                    real, holder);
            free(real);
            return NH_ERR_IO;
        }
        done = !strcmp(real, "/");
    }
    free(real);
    return NH_OK;
}

int nh_output_folder_open(const char *dir, nh_folder_lock *lock, nh_error *err)
{
    lock->fd = -1;
    int rc = check_ancestors_free(dir, err);
    if (!rc)
        rc = nh_make_directory(dir, err);
    if (!rc)
        rc = nh_folder_lock_take(dir, lock, err);
    if (!rc && (rc = nh_output_clean(dir, err)))
        nh_folder_lock_release(lock);
    return rc;
}

int nh_output_set_begin(nh_output_set *set, const char *dir, nh_error *err)
{
    if (strlen(dir) >= sizeof set->dir)
        return nh_fail(err, NH_ERR_INPUT, "output directory '%.100s...' is longer than %zu characters", dir,
                       sizeof set->dir - 1);
    snprintf(set->dir, sizeof set->dir, "%s", dir);
    int rc = nh_path_format(set->stage, sizeof set->stage, err, "%s/" STAGE_PREFIX "%ld", dir, (long)getpid());
    if (!rc)
        rc = nh_output_recover(dir, err);
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
        char path[NH_PATH_MAX];
        if (nh_path_format(path, sizeof path, NULL, "%s/%s", stage, nh_output_set_names[i]))
            return 1;
        if (access(path, F_OK) == 0 && fprintf(f, "%s\n", nh_output_set_names[i]) < 0)
            return 1;
    }
    return 0;
}

int nh_output_set_commit(nh_output_set *set, nh_error *err)
{
    char path[NH_PATH_MAX], manifest[1024];
    int rc = nh_path_format(path, sizeof path, err, "%s/" MANIFEST, set->stage);
    if (!rc)
        rc = nh_write_file(path, manifest_body, set->stage, err);
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
