/* `nhens run --initial FILE`: the user's initial states from a CSV file, q_1..q_n, v_1..v_n per row.
 * Blank lines and lines starting with '#' are skipped, and so is a first row that is a header (it holds a
 * letter other than e/E of an exponent). Every value is parsed strictly; a bad row is refused by its line
 * number. Checking the rows against the constraints is the engine's (nh_initial_states_check). */
#include "cli.h"

#include "nhens/files.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INITIAL_BYTES = 1 << 30, MAX_INITIAL_ROWS = 100000000, MAX_FIELD = 64 };

static int is_header(const char *line)
{
    for (const char *c = line; *c && *c != '\n'; ++c)
        if (isalpha((unsigned char)*c) && *c != 'e' && *c != 'E')
            return 1;
    return 0;
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
            return nh_fail(err, NH_ERR_INPUT, "%s:%ld: value %d '%s' is not a number in [-1e12, 1e12]", path,
                           line_no, j + 1, field);
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
    long cap = 64, count = 0, line_no = 0;
    double *out = malloc((size_t)cap * 2 * (size_t)n * sizeof *out);
    int rc = out ? NH_OK : nh_fail(err, NH_ERR_NOMEM, "out of memory reading %s", path);
    for (char *line = text; !rc && line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        ++line_no;
        if (*line == '\n' || *line == '\r' || *line == '#' || (count == 0 && line_no == 1 && is_header(line)))
            continue;
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
        rc = nh_fail(err, NH_ERR_INPUT, "%s holds no initial state (rows q_1..q_n, v_1..v_n)", path);
    if (rc) {
        free(out);
        return rc;
    }
    *states = out;
    *rows = count;
    return NH_OK;
}
