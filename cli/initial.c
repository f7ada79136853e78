/* `nhens run --initial FILE`: the user's initial states from a CSV file, q_1..q_n, v_1..v_n per row.
 * Blank lines and lines starting with '#' are skipped (there are no comments after values). The first
 * other line is a header when every field is a name: a letter or '_' and then letters, digits and '_'
 * (nan and inf are numbers, not names); it must then have 2n fields. Every other line is data, parsed
 * strictly; a bad row is refused by its line number and column. Checking the rows against the
 * constraints is the engine's (nh_initial_states_check). */
#include "cli.h"

#include "nhens/files.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_INITIAL_BYTES = 1 << 30, MAX_INITIAL_ROWS = 100000000, MAX_FIELD = 64 };

/* Whether field [p, p + len) is a name: [A-Za-z_][A-Za-z0-9_]*, and not a word strtod reads as a number. */
static int is_name(const char *p, size_t len)
{
    static const char *const numbers[] = {"nan", "inf", "infinity"};
    if (len == 0 || !(isalpha((unsigned char)p[0]) || p[0] == '_'))
        return 0;
    for (size_t i = 1; i < len; ++i)
        if (!(isalnum((unsigned char)p[i]) || p[i] == '_'))
            return 0;
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; ++i)
        if (len == strlen(numbers[i]) && !strncasecmp(p, numbers[i], len))
            return 0;
    return 1;
}

/* The number of fields of line (ending at '\n', "\r\n" or NUL) when every one is a name (a header), else 0. */
static int header_names(const char *line)
{
    int names = 0;
    for (const char *p = line;; ++p) {
        size_t len = strcspn(p, ",\n");
        const size_t field = len > 0 && p[len - 1] == '\r' && p[len] != ',' ? len - 1 : len;
        if (!is_name(p, field))
            return 0;
        ++names;
        p += len;
        if (*p != ',')
            return names;
    }
}

/* One row of 2n values from line (ending at '\n' or NUL) into out. */
static int parse_row(const char *line, int width, double *out, long line_no, const char *path, nh_error *err)
{
    const char *p = line;
    for (int j = 0; j < width; ++j) {
        const char *end = p + strcspn(p, ",\n\r");
        char field[MAX_FIELD];
        const size_t len = (size_t)(end - p);
        if (len == 0 || len >= sizeof field)
            return nh_fail(err, NH_ERR_INPUT, "%s:%ld: value %d of %d is %s", path, line_no, j + 1, width,
                           len ? "too long" : "missing (a row is q_1..q_n, v_1..v_n)");
        memcpy(field, p, len);
        field[len] = '\0';
        if (nh_parse_double_in(field, -1e12, 1e12, &out[j]))
            return nh_fail(err, NH_ERR_INPUT, "%s:%ld: value %d '%s' is not a number in [-1e12, 1e12]%s", path,
                           line_no, j + 1, field,
                           strchr(field, '#')       ? " (a comment is a whole line starting with '#')"
                           : is_name(field, len) ? " (a header is the first row, and only names)"
                                                 : "");
        p = end;
        if (j + 1 < width && *p != ',')
            return nh_fail(err, NH_ERR_INPUT, "%s:%ld: %d values, a row needs %d (q_1..q_n, v_1..v_n)", path,
                           line_no, j + 1, width);
        if (j + 1 < width)
            ++p;
    }
    if (*p == '\r')
        ++p;
    if (*p && *p != '\n')
        return nh_fail(err, NH_ERR_INPUT, "%s:%ld: more than %d values (a row is q_1..q_n, v_1..v_n)", path, line_no,
                       width);
    return NH_OK;
}

int nh_cli_read_initial(const char *path, int n, double **states, long *rows, nh_error *err)
{
    size_t size;
    char *text = nh_read_file(path, MAX_INITIAL_BYTES, &size, err);
    if (!text)
        return NH_ERR_INPUT;
    long cap = 64, count = 0, line_no = 0, header_line = 0;
    int header = 0, first = 1;
    double *out = malloc((size_t)cap * 2 * (size_t)n * sizeof *out);
    int rc = out ? NH_OK : nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", path);
    const size_t text_length = strlen(text);
    if (!rc && text_length < size) { /* a NUL byte would end the text there and drop the rest unread */
        long nul_line = 1;
        for (size_t i = 0; i < text_length; ++i)
            nul_line += text[i] == '\n';
        rc = nh_fail(err, NH_ERR_INPUT, "%s:%ld: a NUL byte (at byte %zu); a CSV of text is allowed", path, nul_line,
                     text_length + 1);
    }
    for (char *line = text; !rc && line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        ++line_no;
        if (*line == '\n' || (line[0] == '\r' && (line[1] == '\n' || !line[1])) || *line == '#')
            continue;
        if (first && (header = header_names(line)) > 0) {
            first = 0, header_line = line_no;
            continue;
        }
        first = 0;
        if (header && header != 2 * n) {
            rc = nh_fail(err, NH_ERR_INPUT, "%s:%ld: the header has %d names, a row needs %d (q_1..q_%d, v_1..v_%d)",
                         path, header_line, header, 2 * n, n, n);
            break;
        }
        if (count == MAX_INITIAL_ROWS) {
            rc = nh_fail(err, NH_ERR_INPUT, "%s: more than %d initial states", path, MAX_INITIAL_ROWS);
            break;
        }
        if (count == cap) {
            double *bigger = realloc(out, (size_t)(cap *= 2) * 2 * (size_t)n * sizeof *out);
            if (!bigger) {
                rc = nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            out = bigger;
        }
        rc = parse_row(line, 2 * n, out + 2 * n * count, line_no, path, err);
        ++count;
    }
    free(text);
    if (!rc && count == 0)
        rc = nh_fail(err, NH_ERR_INPUT, "%s holds no initial state (rows q_1..q_n, v_1..v_n)%s", path,
                     header ? "; its only row is a header" : "");
    if (rc) {
        free(out);
        return rc;
    }
    *states = out;
    *rows = count;
    return NH_OK;
}
