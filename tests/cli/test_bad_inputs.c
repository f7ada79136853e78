/* The bad-input table (tests/cli/bad_inputs.tsv): every case is run as its own nhens process in an empty
 * scratch folder and must give the table's exit code, a message containing the table's text (the
 * offending value and what is allowed), nothing written outside its --out folder, and no temporary left. */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "child.h"

enum { MAX_CASES = 400, MIN_CASES = 150 };

typedef struct bad_case {
    int line;
    int exit_code;
    char expect[512];
    char args[1024];
} bad_case;

static const char BASE_EXPERIMENT[] = "[experiment]\nsystem = cvt\nparams = eps=0.1\npreset = rotating\n"
                                      "h = 0.1\nT = 1\nmethods = lf\n";

static int load_cases(bad_case *cases)
{
    FILE *f = fopen(NHENS_BAD_INPUTS, "r");
    cr_assert(f != NULL, "cannot open %s", NHENS_BAD_INPUTS);
    char line[2048];
    int n = 0;
    for (int number = 1; fgets(line, sizeof line, f); ++number) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        cr_assert(tab2 != NULL && n < MAX_CASES, "bad_inputs.tsv:%d: needs EXIT<TAB>EXPECT<TAB>ARGS", number);
        *tab1 = *tab2 = '\0';
        cases[n] = (bad_case){.line = number, .exit_code = atoi(line)};
        snprintf(cases[n].expect, sizeof cases[n].expect, "%s", tab1 + 1);
        snprintf(cases[n].args, sizeof cases[n].args, "%s", tab2 + 1);
        ++n;
    }
    fclose(f);
    return n;
}

/* text with every {OUT} replaced by out */
static void substitute(const char *text, const char *out, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *p = text; *p && used + 1 < len;) {
        if (!strncmp(p, "{OUT}", 5)) {
            used += (size_t)snprintf(buf + used, len - used, "%s", out);
            p += 5;
        } else {
            buf[used++] = *p++;
            buf[used] = '\0';
        }
    }
}

/* argv of the case (split at single spaces: two spaces give an empty argument) */
static int case_argv(const bad_case *c, const char *scratch, char *storage, size_t len, char **argv)
{
    char out[600];
    snprintf(out, sizeof out, "%s/out", scratch);
    int n = 0;
    argv[n++] = "nhens";
    if (!strncmp(c->args, "ini: ", 5)) {
        char path[700];
        snprintf(path, sizeof path, "%s/e.ini", scratch);
        FILE *f = fopen(path, "w");
        cr_assert(f != NULL);
        fprintf(f, "%s%s\n", BASE_EXPERIMENT, c->args + 5);
        fclose(f);
        snprintf(storage, len, "report %s --out %s --scale 1", path, out);
    } else {
        substitute(c->args, out, storage, len);
    }
    for (char *rest = storage, *tok; (tok = strsep(&rest, " ")) && n < CHILD_MAX_ARGS;)
        argv[n++] = tok;
    argv[n] = NULL;
    return n;
}

/* Entries of the scratch folder other than out/ and the case's own e.ini. */
static int strays(const char *scratch, char *name, size_t len)
{
    DIR *d = opendir(scratch);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "out") &&
            strcmp(e->d_name, "e.ini"))
            count++, snprintf(name, len, "%s", e->d_name);
    if (d)
        closedir(d);
    return count;
}

static void run_case(const bad_case *c, const char *root)
{
    char scratch[512], err_path[600], storage[2048], err[8192], expect[1024], stray[256] = "", temporary[2048] = "";
    char *argv[CHILD_MAX_ARGS + 1];
    snprintf(scratch, sizeof scratch, "%s/case", root);
    snprintf(err_path, sizeof err_path, "%s/stderr", root);
    remove_tree(scratch);
    cr_assert(mkdir(scratch, 0755) == 0);
    case_argv(c, scratch, storage, sizeof storage, argv);
    child_options o = {.cwd = scratch, .err_path = err_path};
    int code = child_run(argv, &o);
    read_text_file(err_path, err, sizeof err);
    char out[600];
    snprintf(out, sizeof out, "%s/out", scratch);
    substitute(c->expect, out, expect, sizeof expect);
    cr_expect(code == c->exit_code, "bad_inputs.tsv:%d (%s): exit %d, expected %d; stderr: %s", c->line, c->args, code,
              c->exit_code, err);
    cr_expect(strstr(err, expect) != NULL, "bad_inputs.tsv:%d (%s): expected '%s' in: %s", c->line, c->args, expect,
              err);
    cr_expect(strays(scratch, stray, sizeof stray) == 0, "bad_inputs.tsv:%d: wrote '%s' outside --out", c->line, stray);
    find_temporary(scratch, temporary, sizeof temporary);
    cr_expect(temporary[0] == '\0', "bad_inputs.tsv:%d: left the temporary %s", c->line, temporary);
}

Test(bad_inputs, every_case_of_the_table_is_refused_cleanly, .timeout = 600)
{
    static bad_case cases[MAX_CASES];
    const int n = load_cases(cases);
    cr_assert(n >= MIN_CASES, "the table has %d cases; the issue asks for at least %d", n, MIN_CASES);
    char root[128];
    snprintf(root, sizeof root, "/tmp/nhens-bad-inputs-%d", (int)getpid());
    remove_tree(root);
    cr_assert(mkdir(root, 0755) == 0);
    for (int i = 0; i < n; ++i)
        run_case(&cases[i], root);
    remove_tree(root);
}
