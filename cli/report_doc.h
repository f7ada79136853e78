/* The content of a report, gathered once (cli/report_doc.c) and written twice: report.md (cli/report_doc.c) and
 * report.html (cli/report_html.c). Tables are cells of text, each with a style the two writers render their
 * own way (Markdown: `code`, **strong**; HTML: <code>, <strong>, every text escaped). */
#ifndef NHENS_REPORT_DOC_H
#define NHENS_REPORT_DOC_H

#include "experiment.h"

typedef enum { NH_CELL_TEXT, NH_CELL_CODE, NH_CELL_STRONG } nh_cell_style;

typedef struct nh_cell {
    char *text;
    nh_cell_style style;
} nh_cell;

/* Row-major cells, the first row the header; failed is set when a cell could not be allocated. */
typedef struct nh_table {
    int cols, n, cap, failed;
    nh_cell *cells;
} nh_table;

void nh_table_init(nh_table *t, int cols);
void nh_table_add(nh_table *t, nh_cell_style style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int nh_table_rows(const nh_table *t);
void nh_table_free(nh_table *t);

/* "1.23e-04 ± 5.6e-06" (no ± without a finite positive error) */
void nh_report_value_text(char *buf, size_t len, double v, double e);

typedef struct nh_report_panel {
    const nh_exp_panel *panel;
    char setting[1400];     /* "Methods on SYSTEM(...), preset ..., h = ..., T = ..., N trajectories, seed S." */
    int figure;             /* its PNG is there (and its SVG) */
    char note[1024];        /* what the table's numbers are, where that needs saying ("" none) */
    nh_table table;
} nh_report_panel;

typedef struct nh_report_plugin {
    char path[NH_PATH_MAX];
    char checksum[40];      /* "fnv1a-64:0123456789abcdef", or why there is none */
    long long bytes;
} nh_report_plugin;

typedef struct nh_report_doc {
    const nh_experiment *exp;
    const char *experiment, *out;
    double scale;
    char command[4096];     /* as typed, after "nhens" */
    const nh_claim_result *claims;
    int claims_held;
    nh_table claims_table;  /* no rows without claims */
    nh_report_panel panels[NH_EXP_MAX_PANELS];
    /* provenance */
    char versions[256], system[400], cpu[256], date[40];
    nh_report_plugin plugins[NH_EXP_MAX_PLUGINS];
    int n_plugins;
} nh_report_doc;

/* cli/work_precision.c: a work-precision panel's table (a row per method and step size) and what its numbers are. */
void nh_work_precision_table(nh_table *t, char *note, size_t len, const char *out, const nh_exp_panel *p);

/* Everything the two pages show, from the results below out (summaries read once); NH_ERR_NOMEM when a table
 * could not be allocated. nh_report_doc_free frees the tables. */
int nh_report_doc_build(nh_report_doc *doc, const nh_experiment *exp, const char *experiment, const char *out,
                        double scale, int argc, char **argv, const nh_claim_result *claims, nh_error *err);
void nh_report_doc_free(nh_report_doc *doc);
/* OUT/report.md and OUT/report.html, each whole or absent (nh_write_file). */
int nh_report_write_markdown(const nh_report_doc *doc, nh_error *err);
int nh_report_write_html(const nh_report_doc *doc, nh_error *err);

#endif
