/* Running the nhens program as a child process with an argument vector (no shell: hostile arguments
 * reach nhens verbatim), in a chosen folder, with stderr captured, an optional file-size limit (a full
 * disk as nhens sees it: writes past the limit fail with EFBIG) and a timeout (a hang fails the test). */
#ifndef NHENS_TEST_CHILD_H
#define NHENS_TEST_CHILD_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scratch.h"

enum { CHILD_MAX_ARGS = 64, CHILD_TIMEOUT_SECONDS = 120 };

typedef struct child_options {
    const char *cwd;            /* NULL: the test's */
    const char *err_path;       /* stderr goes here (NULL: /dev/null) */
    long file_size_limit;       /* bytes; 0: none */
} child_options;

/* argv[0] is replaced by the nhens binary. */
static inline pid_t child_start(char *const *argv, const child_options *o)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (o->cwd && chdir(o->cwd) != 0)
            _exit(126);
        int null = open("/dev/null", O_RDWR);
        int err = o->err_path ? open(o->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : null;
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        if (o->file_size_limit > 0) {
            struct rlimit lim = {(rlim_t)o->file_size_limit, (rlim_t)o->file_size_limit};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        char *args[CHILD_MAX_ARGS + 1];
        int n = 0;
        args[n++] = NHENS_CLI_PATH;
        for (int i = 1; argv[i] && n < CHILD_MAX_ARGS; ++i)
            args[n++] = argv[i];
        args[n] = NULL;
        execv(NHENS_CLI_PATH, args);
        _exit(127);
    }
    return pid;
}

/* The wait status, or the test fails after CHILD_TIMEOUT_SECONDS (the child is killed). */
static inline int child_wait(pid_t pid)
{
    int status;
    for (int waited_ms = 0;; waited_ms += 5) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            return status;
        if (waited_ms > CHILD_TIMEOUT_SECONDS * 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            cr_assert(0, "nhens did not finish within %d s", CHILD_TIMEOUT_SECONDS);
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* Exit code, or 128 + signal for a child killed by a signal. */
static inline int child_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline int child_run(char *const *argv, const child_options *o)
{
    return child_code(child_wait(child_start(argv, o)));
}

static inline void read_text_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Name of a leftover temporary (.NAME.tmp.PID, staging folder, probe) under dir, recursively, or "". */
static inline void find_temporary(const char *dir, char *found, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; !found[0] && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4608];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        if (strstr(e->d_name, ".tmp.") || strstr(e->d_name, ".nhens-stage") || strstr(e->d_name, ".nhens-probe"))
            memcpy(found, path, strlen(path) < len ? strlen(path) + 1 : 0);
        else if (e->d_type == DT_DIR)
            find_temporary(path, found, len);
    }
    closedir(d);
}

#endif
