/* report.html: the whole report on one self-contained page (no script, no file or address outside it): the
 * experiment's words, the claims with their measured values and verdicts, every panel's figure as the SVG
 * gnuplot wrote (inline) with its table, and the provenance (command, versions, plugins with checksums,
 * machine, date). Every text from an experiment file, the command line or the results is HTML-escaped. */
#include "report_doc.h"

#include "nhens/files.h"

#include <stdlib.h>
#include <string.h>

enum { SVG_MAX_BYTES = 64 << 20 };

static void html_text(FILE *f, const char *text)
{
    for (const char *c = text; *c; ++c)
        switch (*c) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*c, f);
        }
}

static const char STYLE[] =
    "body{font-family:Arial,Helvetica,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222;"
    "line-height:1.45}\nh1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .5em;"
    "text-align:left;vertical-align:top}th{background:#f2f2f2}tbody tr:nth-child(even){background:#fafafa}\n"
    "tr.fails td{background:#fde8e4}tr.unmeasured td{color:#777}.table{overflow-x:auto}\n"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}\n"
    "code{font-size:.95em}dt{font-weight:bold;margin-top:.5em}dd{margin-left:1.5em}.missing{color:#a33}\n";

static void html_cell(FILE *f, const nh_cell *c, const char *tag)
{
    const char *inner = c->style == NH_CELL_CODE ? "code" : c->style == NH_CELL_STRONG ? "strong" : NULL;
    fprintf(f, "<%s>", tag);
    if (inner)
        fprintf(f, "<%s>", inner);
    html_text(f, c->text);
    if (inner)
        fprintf(f, "</%s>", inner);
    fprintf(f, "</%s>", tag);
}

/* A table; row_class(i) (NULL: none) gives body row i a class. */
static void html_table(FILE *f, const nh_table *t, const char *table_class, const char *(*row_class)(const void *, int),
                       const void *ctx)
{
    if (nh_table_rows(t) == 0)
        return;
    fprintf(f, "<div class=\"table\"><table class=\"%s\">\n<thead><tr>", table_class);
    for (int c = 0; c < t->cols; ++c)
        html_cell(f, &t->cells[c], "th");
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int r = 1; r < nh_table_rows(t); ++r) {
        const char *cls = row_class ? row_class(ctx, r - 1) : NULL;
        fputs(cls ? "<tr class=\"" : "<tr>", f);
        if (cls)
            fprintf(f, "%s\">", cls);
        for (int c = 0; c < t->cols; ++c)
            html_cell(f, &t->cells[r * t->cols + c], "td");
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

static const char *claim_class(const void *ctx, int i)
{
    const nh_report_doc *doc = ctx;
    const nh_claim_result *r = &doc->claims[i];
    return r->holds > 0 && r->foil_holds <= 0 ? "holds" : r->holds < 0 ? "unmeasured" : "fails";
}

/* The SVG gnuplot wrote for the panel, from its <svg> element on (the XML prolog and gnuplot's <title> left
 * out); 0, or 1 when it cannot be read. */
static int inline_svg(FILE *f, const char *out, const char *name)
{
    char path[NH_PATH_MAX];
    nh_error err;
    size_t size;
    if (nh_path_format(path, sizeof path, NULL, "%s/%s.svg", out, name))
        return 1;
    char *svg = nh_read_file(path, SVG_MAX_BYTES, &size, &err);
    const char *start = svg ? strstr(svg, "<svg") : NULL;
    if (!start) {
        free(svg);
        return 1;
    }
    static const char title[] = "<title>Gnuplot</title>";
    const char *skip = strstr(start, title);
    if (skip) {
        fwrite(start, 1, (size_t)(skip - start), f);
        start = skip + strlen(title);
    }
    fputs(start, f);
    free(svg);
    return 0;
}

static void html_panel(FILE *f, const nh_report_doc *doc, const nh_report_panel *rp)
{
    const nh_exp_panel *p = rp->panel;
    fputs("<section id=\"panel-", f);
    html_text(f, p->name);
    fputs("\">\n<h2>", f);
    html_text(f, p->title[0] ? p->title : p->name);
    fputs("</h2>\n<p>", f);
    html_text(f, rp->setting);
    fputs("</p>\n", f);
    if (rp->figure) {
        fputs("<figure>\n", f);
        if (inline_svg(f, doc->out, p->name))
            fputs("<p class=\"missing\">The figure's SVG could not be read.</p>", f);
        fputs("\n<figcaption>", f);
        html_text(f, p->name);
        fputs(".svg</figcaption></figure>\n", f);
    } else
        fputs("<p class=\"missing\"><em>Figure not drawn: gnuplot or the file system failed (the report printed "
              "the reason).</em></p>\n", f);
    if (rp->note[0]) {
        fputs("<p>", f);
        html_text(f, rp->note);
        fputs("</p>\n", f);
    }
    html_table(f, &rp->table, "panel", NULL, NULL);
    fputs("</section>\n", f);
}

static void html_entry(FILE *f, const char *term, const char *value, int code)
{
    fprintf(f, "<dt>%s</dt><dd>%s", term, code ? "<code>" : "");
    html_text(f, value);
    fprintf(f, "%s</dd>\n", code ? "</code>" : "");
}

static void html_provenance(FILE *f, const nh_report_doc *doc)
{
    char command[sizeof doc->command + 8], scale[64];
    snprintf(command, sizeof command, "nhens%s", doc->command);
    snprintf(scale, sizeof scale, "%g", doc->scale);
    fputs("<section id=\"provenance\">\n<h2>Provenance</h2>\n<dl>\n", f);
    html_entry(f, "Command", command, 1);
    html_entry(f, "Experiment file", doc->experiment, 1);
    html_entry(f, "Scale", scale, 0);
    html_entry(f, "Output folder", doc->out, 1);
    html_entry(f, "Versions", doc->versions, 0);
    fputs("<dt>Plugins</dt>", f);
    if (!doc->n_plugins)
        fputs("<dd>none</dd>\n", f);
    for (int i = 0; i < doc->n_plugins; ++i) {
        fputs("<dd><code>", f);
        html_text(f, doc->plugins[i].path);
        fputs("</code>: ", f);
        html_text(f, doc->plugins[i].checksum);
        if (doc->plugins[i].bytes >= 0)
            fprintf(f, ", %lld bytes", doc->plugins[i].bytes);
        fputs("</dd>\n", f);
    }
    html_entry(f, "Machine", doc->system[0] ? doc->system : "unknown", 0);
    html_entry(f, "CPU", doc->cpu, 0);
    html_entry(f, "Written (UTC)", doc->date, 0);
    fputs("</dl>\n</section>\n", f);
}

static void html_contents(FILE *f, const nh_report_doc *doc)
{
    fputs("<nav><ul>\n", f);
    if (doc->exp->n_claims)
        fputs("<li><a href=\"#claims\">Claims</a></li>\n", f);
    for (int i = 0; i < doc->exp->n_panels; ++i) {
        const nh_exp_panel *p = &doc->exp->panels[i];
        fputs("<li><a href=\"#panel-", f);
        html_text(f, p->name);
        fputs("\">", f);
        html_text(f, p->title[0] ? p->title : p->name);
        fputs("</a></li>\n", f);
    }
    fputs("<li><a href=\"#provenance\">Provenance</a></li>\n</ul></nav>\n", f);
}

static void html_paragraph(FILE *f, const char *lead, const char *text, const char *tail)
{
    if (!text[0])
        return;
    fprintf(f, "<p>%s", lead);
    html_text(f, text);
    fprintf(f, "%s</p>\n", tail);
}

static int html_body(FILE *f, const void *data)
{
    const nh_report_doc *doc = data;
    const nh_experiment *exp = doc->exp;
    const char *title = exp->title[0] ? exp->title : doc->experiment;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
    html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", STYLE);
    html_text(f, title);
    fputs("</h1>\n", f);
    html_paragraph(f, "Reproduces: ", exp->figure, ".");
    html_paragraph(f, "", exp->description, "");
    html_paragraph(f, "What the run should show: ", exp->expect, "");
    fputs("</header>\n", f);
    html_contents(f, doc);
    if (exp->n_claims) {
        fprintf(f, "<section id=\"claims\">\n<h2>Claims</h2>\n<p><strong>%d of %d hold.</strong> <code>K*se</code> is K "
                   "times the combined standard error of the two sides; a <code>ci</code> claim's foil (the runs "
                   "swapped, or <code>vs</code> METHOD in place of its method) must fail.</p>\n",
                doc->claims_held, exp->n_claims);
        html_table(f, &doc->claims_table, "claims", claim_class, doc);
        fputs("</section>\n", f);
    }
    for (int i = 0; i < exp->n_panels; ++i)
        html_panel(f, doc, &doc->panels[i]);
    html_provenance(f, doc);
    fputs("</body>\n</html>\n", f);
    return ferror(f);
}

int nh_report_write_html(const nh_report_doc *doc, nh_error *err)
{
    char path[NH_PATH_MAX];
    if (nh_path_format(path, sizeof path, err, "%s/report.html", doc->out))
        return NH_ERR_INPUT;
    return nh_write_file(path, html_body, doc, err);
}
