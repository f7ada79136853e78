/* The hostile-file table (tests/cli/hostile_files.tsv): checkpoints, parts, caches, shared and long output
 * folders, interruptions, plugin descriptors and initial-state files as a hostile or careless user leaves
 * them. Every case runs in its own empty scratch folder: its SETUP steps build the situation, then its
 * command runs and must give the table's exit code and message; nothing outside {OUT} may change
 * between the end of the setup and the end of the command (every file of the scratch folder is compared
 * byte for byte), no temporary may be left, and the case's AFTER checks must hold. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>

#include "child.h"
#include "reseal.h"

enum { MAX_CASES = 300, MIN_CASES_PER_CLASS = 3, CLASSES = 10, MAX_FILES = 512, TEXT = 1 << 16 };

typedef struct hostile_case {
    int line, klass, exit_code;
    char expect[512], setup[2048], args[3072], after[1024];
} hostile_case;

/* Where a case runs: {DIR} is the scratch folder (and the working directory), {OUT} its out/ folder. */
typedef struct place {
    char dir[256], out[300], log[300];
    pid_t held[4];
    int n_held;
} place;

/* One file of the scratch folder outside out/: its path and content, to prove the command left it alone. */
typedef struct snapshot {
    int n;
    char *path[MAX_FILES];
    char *content[MAX_FILES];
    size_t size[MAX_FILES];
} snapshot;

static char *split_field(char **rest)
{
    char *field = strsep(rest, "\t");
    cr_assert(field != NULL, "hostile_files.tsv: a case needs CLASS, EXIT, EXPECT, SETUP, ARGS and AFTER");
    return field;
}

static int load_cases(hostile_case *cases)
{
    FILE *f = fopen(NHENS_HOSTILE_FILES, "r");
    cr_assert(f != NULL, "cannot open %s", NHENS_HOSTILE_FILES);
    static char line[8192];
    int n = 0;
    for (int number = 1; fgets(line, sizeof line, f); ++number) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        cr_assert(n < MAX_CASES, "hostile_files.tsv: more than %d cases", MAX_CASES);
        char *rest = line;
        hostile_case *c = &cases[n++];
        c->line = number;
        c->klass = atoi(split_field(&rest));
        c->exit_code = atoi(split_field(&rest));
        snprintf(c->expect, sizeof c->expect, "%s", split_field(&rest));
        snprintf(c->setup, sizeof c->setup, "%s", split_field(&rest));
        snprintf(c->args, sizeof c->args, "%s", split_field(&rest));
        snprintf(c->after, sizeof c->after, "%s", rest ? rest : "-");
        cr_assert(c->klass >= 1 && c->klass <= CLASSES, "hostile_files.tsv:%d: class %d", number, c->klass);
    }
    fclose(f);
    return n;
}

/* A path of about `length` characters under dir: components of 200 characters, the last one shorter. */
static void long_path(const char *dir, long length, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", dir);
    while ((long)used < length && used + 2 < len) {
        size_t part = (size_t)(length - (long)used - 1) < 200 ? (size_t)(length - (long)used - 1) : 200;
        buf[used++] = '/';
        for (size_t i = 0; i < part && used + 1 < len; ++i)
            buf[used++] = 'd';
        buf[used] = '\0';
    }
}

/* text with {OUT}, {DIR}, {LONG:N} (a path of N characters under {DIR}), {LONGOUT:N} (one under {OUT}),
 * {PLUGINS} (the test plugins' folder), {EXPERIMENTS} (the project's experiments/) and \n, \t, \e (escape),
 * \r replaced */
static void substitute(const char *text, const place *p, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *s = text; *s && used + 1 < len;) {
        char piece[8192] = "";
        size_t skip = 1;
        if (!strncmp(s, "{OUT}", 5))
            snprintf(piece, sizeof piece, "%s", p->out), skip = 5;
        else if (!strncmp(s, "{DIR}", 5))
            snprintf(piece, sizeof piece, "%s", p->dir), skip = 5;
        else if (!strncmp(s, "{EXPERIMENTS}", 13))
            snprintf(piece, sizeof piece, "%s", NHENS_EXPERIMENTS_DIR), skip = 13;
        else if (!strncmp(s, "{PLUGINS}", 9))
            snprintf(piece, sizeof piece, "%s", NHENS_TEST_PLUGIN_DIR), skip = 9;
        else if (!strncmp(s, "{LONG:", 6)) {
            char *end;
            long n = strtol(s + 6, &end, 10);
            long_path(p->dir, n, piece, sizeof piece);
            skip = (size_t)(end - s) + 1;
        } else if (!strncmp(s, "{LONGOUT:", 9)) { /* a path of N characters under {OUT} */
            char *end;
            long n = strtol(s + 9, &end, 10);
            long_path(p->out, n, piece, sizeof piece);
            skip = (size_t)(end - s) + 1;
        } else if (s[0] == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == 'e' || s[1] == 'r'))
            piece[0] = s[1] == 'n' ? '\n' : s[1] == 't' ? '\t' : s[1] == 'r' ? '\r' : '\033', piece[1] = '\0', skip = 2;
        else
            piece[0] = s[0], piece[1] = '\0';
        used += (size_t)snprintf(buf + used, len - used, "%s", piece);
        s += skip;
    }
}

/* argv of words split at single spaces (two spaces give an empty word) */
static int words(char *text, char **argv, int max)
{
    int n = 0;
    for (char *rest = text, *tok; (tok = strsep(&rest, " ")) && n < max;)
        argv[n++] = tok;
    argv[n] = NULL;
    return n;
}

/* Starts nhens with the words (a leading "nhens" is skipped; "mpirun K" first runs mpirun -n K nhens) with stdout and stderr in
 * p->log, in p->dir. */
static pid_t start(char **argv, const place *p)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (chdir(p->dir) != 0)
            _exit(126);
        int null = open("/dev/null", O_RDWR), log = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(null, STDIN_FILENO);
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        setpgid(0, 0);
        char *args[CHILD_MAX_ARGS + 8];
        int n = 0;
        if (!strcmp(argv[0], "mpirun")) {
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
            /* Open MPI's own allocations at MPI_Init outlive MPI_Finalize: LeakSanitizer would report them, not
             * ours (as in tests/cli/test_ranks.sh) */
            const char *asan = getenv("ASAN_OPTIONS");
            char options[1024];
            snprintf(options, sizeof options, "%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
            setenv("ASAN_OPTIONS", options, 1);
            args[n++] = "mpirun", args[n++] = "--oversubscribe", args[n++] = "-n", args[n++] = argv[1];
            argv += 2;
        } else if (!strcmp(argv[0], "nhens")) {
            argv += 1;
        }
        args[n++] = NHENS_CLI_PATH;
        for (int i = 0; argv[i] && n < CHILD_MAX_ARGS; ++i)
            args[n++] = argv[i];
        args[n] = NULL;
        execvp(args[0], args);
        _exit(127);
    }
    return pid;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Waits until path exists (or the child ended, or 60 s passed); returns whether it exists. */
static int await_file(const char *path, pid_t pid)
{
    for (int ms = 0; ms < 60000; ms += 2) {
        if (access(path, F_OK) == 0)
            return 1;
        if (pid > 0 && waitpid(pid, NULL, WNOHANG) == pid)
            return access(path, F_OK) == 0;
        sleep_ms(2);
    }
    return 0;
}

/* Waits until a process holds a record lock on the file (a folder's .nhens-lock exists a moment before it is
 * locked); at once for a file nobody locks as a rule (any other name). */
static int await_lock(const char *path, pid_t pid)
{
    const char *base = strrchr(path, '/');
    if (strcmp(base ? base + 1 : path, ".nhens-lock"))
        return 1;
    for (int ms = 0; ms < 60000; ms += 2) {
        const int fd = open(path, O_RDWR);
        struct flock probe = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        const int held = fd >= 0 && fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
        if (fd >= 0)
            close(fd);
        if (held)
            return 1;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return 0;
        sleep_ms(2);
    }
    return 0;
}

static int signal_number(const char *name)
{
    return !strcmp(name, "INT") ? SIGINT : !strcmp(name, "TERM") ? SIGTERM : !strcmp(name, "KILL") ? SIGKILL : 0;
}

/* Sends sig to every child process of parent (the ranks mpirun started), as a batch system signals them. */
static void signal_children(pid_t parent, int sig)
{
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], stat_line[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        const char *after_name = fgets(stat_line, sizeof stat_line, f) ? strrchr(stat_line, ')') : NULL;
        int ppid;
        char state;
        if (after_name && sscanf(after_name + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
            kill((pid_t)atoi(e->d_name), sig);
        fclose(f);
    }
    if (d)
        closedir(d);
}

/* "@SIG:WHEN rest" ("@ranks/SIG:WHEN": SIG to the ranks that mpirun started, not to mpirun): start rest, wait until the file WHEN exists (or WHEN = Nms milliseconds passed), send SIG
 * (a second time if SIG is given twice, as INT,INT), and return the exit code. */
static int run_interrupted(char *spec, char **argv, const place *p)
{
    char *when = strchr(spec, ':');
    cr_assert(when != NULL, "@SIG:WHEN");
    *when++ = '\0';
    pid_t pid = start(argv, p);
    char *end;
    long ms = strtol(when, &end, 10);
    if (end != when && !strcmp(end, "ms"))
        sleep_ms(ms);
    else
        cr_assert(await_file(when, pid), "%s never appeared", when);
    const int to_ranks = !strncmp(spec + 1, "ranks/", 6);
    for (char *rest = spec + 1 + (to_ranks ? 6 : 0), *sig; (sig = strsep(&rest, ","));) {
        cr_assert(signal_number(sig) != 0, "unknown signal %s", sig);
        if (to_ranks)
            signal_children(pid, signal_number(sig));
        else
            kill(-pid, signal_number(sig));
        sleep_ms(20);
    }
    return child_code(child_wait(pid));
}

static int run_words(char *text, const place *p)
{
    char *argv[CHILD_MAX_ARGS + 1];
    if (text[0] == '@') {
        char *space = strchr(text, ' ');
        cr_assert(space != NULL);
        *space = '\0';
        words(space + 1, argv, CHILD_MAX_ARGS);
        return run_interrupted(text, argv, p);
    }
    words(text, argv, CHILD_MAX_ARGS);
    return child_code(child_wait(start(argv, p)));
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot read %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;)
        if ((n += got) + 1 == cap)
            buf = realloc(buf, cap *= 2);
    buf[n] = '\0';
    fclose(f);
    if (size)
        *size = n;
    return buf;
}

static void spill(const char *path, const char *text, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f != NULL, "cannot write %s", path);
    cr_assert(fwrite(text, 1, size, f) == size);
    fclose(f);
}

/* set FILE KEY VALUE: the JSON value of the first "KEY": in FILE (a number, string, literal or array
 * without nested brackets) becomes VALUE, verbatim. */
static void step_set(char *args)
{
    char *file = strsep(&args, " "), *key = strsep(&args, " "), *value = args;
    cr_assert(file && key && value, "set FILE KEY VALUE");
    size_t size;
    char *text = slurp(file, &size), pattern[256];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    char *at = strstr(text, pattern);
    cr_assert(at != NULL, "%s has no %s", file, pattern);
    char *start_value = at + strlen(pattern);
    while (*start_value == ' ' || *start_value == '\t')
        ++start_value;
    char *end = start_value;
    if (*end == '"')
        end = strchr(end + 1, '"') + 1;
    else if (*end == '[')
        end = strchr(end, ']') + 1;
    else
        end += strcspn(end, ",}\n");
    FILE *f = fopen(file, "wb");
    fwrite(text, 1, (size_t)(start_value - text), f);
    fputs(value, f);
    fputs(end, f);
    fclose(f);
    free(text);
}

/* flip FILE KEY: the 7th character of the string value of "KEY": (a hex digit) becomes another hex digit. */
static void step_flip(char *args)
{
    char *file = strsep(&args, " "), *key = args, pattern[256];
    size_t size;
    char *text = slurp(file, &size);
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    char *at = strstr(text, pattern);
    cr_assert(at != NULL && strlen(at) > strlen(pattern) + 8, "%s has no string %s", file, pattern);
    char *digit = at + strlen(pattern) + 6;
    *digit = *digit == '3' ? '4' : '3';
    spill(file, text, size);
    free(text);
}

/* replace FILE OLD NEW: the first OLD in FILE becomes NEW (both without spaces). */
static void step_replace(char *args)
{
    char *file = strsep(&args, " "), *old = strsep(&args, " "), *new = args;
    cr_assert(file && old && new, "replace FILE OLD NEW");
    size_t size;
    char *text = slurp(file, &size);
    char *at = strstr(text, old);
    cr_assert(at != NULL, "%s has no %s", file, old);
    FILE *f = fopen(file, "wb");
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(new, f);
    fputs(at + strlen(old), f);
    fclose(f);
    free(text);
}

/* One setup step (its placeholders already substituted). */
static void run_step(char *step, place *p)
{
    char *verb = strsep(&step, " "), *rest = step ? step : (char *)"";
    if (!strcmp(verb, "nhens") || !strcmp(verb, "fails")) {
        char copy[8192];
        snprintf(copy, sizeof copy, rest[0] == '@' ? "%s" : "nhens %s", rest);
        int code = run_words(copy, p);
        char log[4096];
        read_text_file(p->log, log, sizeof log);
        cr_assert(!strcmp(verb, "fails") || code == 0, "setup 'nhens %s' exited %d: %s", rest, code, log);
    } else if (!strcmp(verb, "hold")) { /* hold FILE ARGS: a run in the background, until FILE exists */
        char *file = strsep(&rest, " "), copy[8192], *argv[CHILD_MAX_ARGS + 1];
        snprintf(copy, sizeof copy, "nhens %s", rest);
        words(copy, argv, CHILD_MAX_ARGS);
        cr_assert(p->n_held < 4);
        pid_t pid = p->held[p->n_held++] = start(argv, p);
        cr_assert(await_file(file, pid), "hold: %s never appeared", file);
        cr_assert(await_lock(file, pid), "hold: nobody locked %s", file);
    } else if (!strcmp(verb, "set")) {
        step_set(rest);
    } else if (!strcmp(verb, "flip")) {
        step_flip(rest);
    } else if (!strcmp(verb, "replace")) {
        step_replace(rest);
    } else if (!strcmp(verb, "write")) { /* write FILE TEXT (\0 in TEXT: a NUL byte) */
        char *file = strsep(&rest, " ");
        size_t n = 0;
        for (char *c = rest ? rest : (char *)""; *c; ++c, ++n)
            if (c[0] == '\\' && c[1] == '0')
                rest[n] = '\0', ++c;
            else
                rest[n] = *c;
        spill(file, rest ? rest : "", n);
    } else if (!strcmp(verb, "mkdir")) {
        cr_assert(mkdir(rest, 0755) == 0 || errno == EEXIST, "mkdir %s", rest);
    } else if (!strcmp(verb, "fifo")) {
        cr_assert(mkfifo(rest, 0644) == 0, "mkfifo %s", rest);
    } else if (!strcmp(verb, "rm")) {
        remove_tree(rest);
    } else if (!strcmp(verb, "copy")) {
        char *from = strsep(&rest, " ");
        size_t size;
        char *text = slurp(from, &size);
        spill(rest, text, size);
        free(text);
    } else if (!strcmp(verb, "chmod")) {
        char *mode = strsep(&rest, " ");
        cr_assert(chmod(rest, (mode_t)strtol(mode, NULL, 8)) == 0, "chmod %s", rest);
    } else if (!strcmp(verb, "symlink")) {
        char *target = strsep(&rest, " ");
        cr_assert(symlink(target, rest) == 0, "symlink %s", rest);
    } else if (!strcmp(verb, "reseal")) { /* reseal FILE: its checksum recomputed after an edit (tests/reseal.h) */
        size_t size;
        char *text = slurp(rest, &size), *sealed = reseal_text(text);
        cr_assert(sealed != NULL, "reseal: %s is not JSON", rest);
        spill(rest, sealed, strlen(sealed));
        free(sealed);
        free(text);
    } else if (!strcmp(verb, "sethex")) { /* sethex FILE KEY INDEX HEX: the INDEX-th double of the string KEY */
        char *file = strsep(&rest, " "), *key = strsep(&rest, " "), *index = strsep(&rest, " "), pattern[256];
        cr_assert(file && key && index && rest && strlen(rest) == 16, "sethex FILE KEY INDEX HEX16");
        size_t size;
        char *text = slurp(file, &size);
        snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
        char *at = strstr(text, pattern);
        cr_assert(at != NULL, "%s has no string %s", file, pattern);
        char *digits = at + strlen(pattern) + 16 * strtol(index, NULL, 10);
        cr_assert(strspn(digits, "0123456789abcdef") >= 16, "%s: %s has no double %s", file, key, index);
        memcpy(digits, rest, 16);
        spill(file, text, size);
        free(text);
    } else {
        cr_assert(0, "unknown setup step '%s'", verb);
    }
}

/* The next part of a list separated by " ; " (a lone ';' stays: experiment files use it), or NULL. */
static char *next_part(char **rest)
{
    if (!*rest)
        return NULL;
    char *part = *rest, *end = strstr(part, " ; ");
    if (end) {
        *end = '\0';
        *rest = end + 3;
    } else {
        *rest = NULL;
    }
    while (*part == ' ')
        ++part;
    size_t n = strlen(part);
    while (n && part[n - 1] == ' ')
        part[--n] = '\0';
    return part;
}

static void take_snapshot(const char *dir, const char *skip, snapshot *s)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!strcmp(path, skip))
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && access(path, R_OK | X_OK) == 0)
            take_snapshot(path, skip, s);
        cr_assert(s->n < MAX_FILES);
        s->path[s->n] = strdup(path);
        s->content[s->n] = S_ISREG(st.st_mode) && access(path, R_OK) == 0 ? slurp(path, &s->size[s->n]) : NULL;
        s->n++;
    }
    if (d)
        closedir(d);
}

static void free_snapshot(snapshot *s)
{
    for (int i = 0; i < s->n; ++i)
        free(s->path[i]), free(s->content[i]);
    s->n = 0;
}

static int find_path(const snapshot *s, const char *path)
{
    for (int i = 0; i < s->n; ++i)
        if (!strcmp(s->path[i], path))
            return i;
    return -1;
}

/* Nothing outside {OUT} appeared, vanished or changed (the command's own log excepted). */
static void assert_untouched(const hostile_case *c, const snapshot *before, const place *p)
{
    snapshot now = {0};
    take_snapshot(p->dir, p->out, &now);
    for (int i = 0; i < now.n; ++i) {
        if (!strcmp(now.path[i], p->log))
            continue;
        int j = find_path(before, now.path[i]);
        cr_expect(j >= 0, "hostile_files.tsv:%d: wrote %s outside --out", c->line, now.path[i]);
        if (j >= 0 && now.content[i] && before->content[j])
            cr_expect(now.size[i] == before->size[j] && !memcmp(now.content[i], before->content[j], now.size[i]),
                      "hostile_files.tsv:%d: changed %s outside --out", c->line, now.path[i]);
    }
    for (int j = 0; j < before->n; ++j)
        cr_expect(!strcmp(before->path[j], p->log) || find_path(&now, before->path[j]) >= 0,
                  "hostile_files.tsv:%d: removed %s outside --out", c->line, before->path[j]);
    free_snapshot(&now);
}

/* AFTER checks, separated by " ; ": absent PATH, present PATH, has PATH TEXT, lacks PATH TEXT. */
static void check_after(const hostile_case *c, char *after)
{
    for (char *rest = after, *check; (check = next_part(&rest));) {
        if (!check[0] || !strcmp(check, "-"))
            continue;
        char *verb = strsep(&check, " "), *path = strsep(&check, " "), *text = check;
        cr_assert(path != NULL, "hostile_files.tsv:%d: AFTER '%s' needs a path", c->line, verb);
        if (!strcmp(verb, "absent")) {
            cr_expect(access(path, F_OK) != 0, "hostile_files.tsv:%d: %s exists", c->line, path);
        } else if (!strcmp(verb, "present")) {
            cr_expect(access(path, F_OK) == 0, "hostile_files.tsv:%d: %s is missing", c->line, path);
        } else if (!strcmp(verb, "has") || !strcmp(verb, "lacks")) {
            cr_assert(text != NULL, "hostile_files.tsv:%d: %s PATH TEXT", c->line, verb);
            if (access(path, R_OK) != 0) {
                cr_expect(0, "hostile_files.tsv:%d: %s is missing", c->line, path);
                continue;
            }
            char *content = slurp(path, NULL);
            int found = strstr(content, text) != NULL;
            cr_expect(found == !strcmp(verb, "has"), "hostile_files.tsv:%d: %s %s '%s'", c->line, path,
                      found ? "has" : "lacks", text);
            free(content);
        } else {
            cr_assert(0, "hostile_files.tsv:%d: unknown AFTER check '%s'", c->line, verb);
        }
    }
}

static void release_held(place *p)
{
    for (int i = 0; i < p->n_held; ++i) {
        kill(-p->held[i], SIGKILL);
        waitpid(p->held[i], NULL, 0);
    }
    p->n_held = 0;
}

static void run_case(const hostile_case *c, const char *root)
{
    place p = {0};
    snprintf(p.dir, sizeof p.dir, "%s/case%d", root, c->line);
    snprintf(p.out, sizeof p.out, "%s/out", p.dir);
    snprintf(p.log, sizeof p.log, "%s/log", p.dir);
    remove_tree(p.dir);
    cr_assert(mkdir(p.dir, 0755) == 0);
    static char text[1 << 14], steps[1 << 14];
    if (strcmp(c->setup, "-")) {
        substitute(c->setup, &p, steps, sizeof steps);
        for (char *rest = steps, *step; (step = next_part(&rest));) {
            if (step[0])
                run_step(step, &p);
        }
    }
    snapshot before = {0};
    take_snapshot(p.dir, p.out, &before);
    substitute(c->args, &p, text, sizeof text);
    int code = run_words(text, &p);
    release_held(&p);
    static char log[1 << 16], expect[4096];
    read_text_file(p.log, log, sizeof log);
    substitute(c->expect, &p, expect, sizeof expect);
    cr_expect(code == c->exit_code, "hostile_files.tsv:%d (class %d): exit %d, expected %d; output: %s", c->line,
              c->klass, code, c->exit_code, log);
    cr_expect(!strcmp(expect, "-") || strstr(log, expect) != NULL,
              "hostile_files.tsv:%d (class %d): expected '%s' in: %s", c->line, c->klass, expect, log);
    assert_untouched(c, &before, &p);
    free_snapshot(&before);
    char temporary[8192] = "";
    find_temporary(p.dir, temporary, sizeof temporary);
    cr_expect(temporary[0] == '\0', "hostile_files.tsv:%d: left the temporary %s", c->line, temporary);
    substitute(c->after, &p, text, sizeof text);
    check_after(c, text);
    chmod(p.out, 0755);
    remove_tree(p.dir);
}

Test(hostile_files, every_case_of_the_table_holds, .timeout = 1800)
{
    static hostile_case cases[MAX_CASES];
    const int n = load_cases(cases);
    int per_class[CLASSES + 1] = {0};
    for (int i = 0; i < n; ++i)
        per_class[cases[i].klass]++;
    for (int k = 1; k <= CLASSES; ++k)
        cr_expect(per_class[k] >= MIN_CASES_PER_CLASS, "class %d has %d cases; every class needs at least %d", k,
                  per_class[k], MIN_CASES_PER_CLASS);
    char root[128];
    snprintf(root, sizeof root, "/tmp/nhens-hostile-%d", (int)getpid());
    remove_tree(root);
    cr_assert(mkdir(root, 0755) == 0);
    const char *only = getenv("NHENS_HOSTILE_CLASS"); /* while working on one class: run only its cases */
    for (int i = 0; i < n; ++i)
        if (!only || atoi(only) == cases[i].klass)
            run_case(&cases[i], root);
    remove_tree(root);
}
