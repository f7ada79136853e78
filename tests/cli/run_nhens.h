/* The nhens program run through the shell (popen) by the command-line tests: its stdout, exit code
 * and stderr (in err_text, this test process's copy). */
#ifndef NHENS_TEST_RUN_NHENS_H
#define NHENS_TEST_RUN_NHENS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char err_text[8192];

/* Run `nhens ARGS`: stdout into out (cut to size - 1, the rest read and dropped), stderr into err_text;
 * returns the exit code (-1 if it did not exit). */
static inline int nhens_output(const char *args, char *out, size_t size)
{
    char cmd[2048], errpath[256], rest[4096];
    snprintf(errpath, sizeof errpath, "/tmp/nhens-cli-%d.err", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", NHENS_CLI_PATH, args, errpath);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    while (fread(rest, 1, sizeof rest, p) > 0)
        ;
    int status = pclose(p);
    FILE *f = fopen(errpath, "r");
    n = f ? fread(err_text, 1, sizeof err_text - 1, f) : 0;
    err_text[n] = '\0';
    if (f)
        fclose(f);
    remove(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run `nhens ARGS`, return its exit code; stdout is dropped, stderr goes to err_text. */
static inline int nhens(const char *args)
{
    char out[1];
    return nhens_output(args, out, sizeof out);
}

/* `nhens ARGS` is refused: exit code 2 and `expect` in its stderr. */
static inline void refused(const char *args, const char *expect)
{
    int code = nhens(args);
    cr_assert(code == 2, "'%s' exited %d (stderr: %s)", args, code, err_text);
    cr_assert(strstr(err_text, expect) != NULL, "'%s': expected '%s' in: %s", args, expect, err_text);
}

#endif
