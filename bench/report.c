// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "stats.h"

struct figure *report_figure(struct report *r, const char *group, const char *unit, const char *fmt,
                             ...)
{
    char name[sizeof(r->figs[0].name)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->figs[i].group, group) && !strcmp(r->figs[i].name, name))
            return &r->figs[i];
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct figure *nf = realloc(r->figs, cap * sizeof(*nf));
        if (nf == NULL)
            return NULL;
        r->figs = nf;
        r->cap = cap;
    }
    struct figure *f = &r->figs[r->n++];
    memset(f, 0, sizeof(*f));
    snprintf(f->group, sizeof(f->group), "%s", group);
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->unit, sizeof(f->unit), "%s", unit);
    return f;
}

void figure_add_run(struct figure *f, double v)
{
    if (f == NULL || isnan(v) || f->n >= REPORT_MAX_RUNS)
        return;
    f->runs[f->n++] = v;
}

void figure_target_below(struct figure *f, double limit, const char *fmt, ...)
{
    if (f == NULL)
        return;
    f->has_target = true;
    f->limit = limit;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->target, sizeof(f->target), fmt, ap);
    va_end(ap);
}

void report_meta(struct report *r, const char *key, const char *fmt, ...)
{
    char *val = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&val, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    for (size_t i = 0; i < r->n_meta; i++) {
        if (!strcmp(r->meta_key[i], key)) {
            free(r->meta_val[i]);
            r->meta_val[i] = val;
            return;
        }
    }
    char *k = strdup(key);
    if (k == NULL || r->n_meta == REPORT_MAX_META) {
        free(k);
        free(val);
        return;
    }
    r->meta_key[r->n_meta] = k;
    r->meta_val[r->n_meta++] = val;
}

/* Enough digits to compare, not more than the measurement can tell. */
static void fmt_value(char *buf, size_t len, const char *unit, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    const char *f;
    double a = fabs(v);
    if (!strcmp(unit, "/s") || !strcmp(unit, "KiB"))
        f = "%.0f";
    else if (!strcmp(unit, "MiB"))
        f = "%.1f";
    else if (!strcmp(unit, "%") || !strcmp(unit, "x"))
        f = "%.2f";
    else
        f = a < 1 ? "%.3f" : a < 10 ? "%.2f" : a < 100 ? "%.1f" : "%.0f";
    snprintf(buf, len, f, v);
}

static bool figure_met(const struct figure *f, const struct spread *s)
{
    return f->has_target && s->runs > 0 && s->median < f->limit;
}

void report_print_markdown(const struct report *r, FILE *out)
{
    for (size_t i = 0; i < r->n_meta; i++)
        fprintf(out, "- **%s:** %s\n", r->meta_key[i], r->meta_val[i]);
    const char *group = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const struct figure *f = &r->figs[i];
        /* Groups are printed in order of first appearance, all their figures together. */
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(r->figs[j].group, f->group))
                seen = true;
        if (seen)
            continue;
        group = f->group;
        fprintf(out, "\n### %s\n\n", group);
        fprintf(out, "| figure | median | spread (min-max) | runs | target | met |\n");
        fprintf(out, "|---|---:|---:|---:|---|---|\n");
        for (size_t j = i; j < r->n; j++) {
            const struct figure *g = &r->figs[j];
            if (strcmp(g->group, group))
                continue;
            struct spread s;
            spread_of(g->runs, g->n, &s);
            char med[32], lo[32], hi[32];
            fmt_value(med, sizeof(med), g->unit, s.median);
            fmt_value(lo, sizeof(lo), g->unit, s.min);
            fmt_value(hi, sizeof(hi), g->unit, s.max);
            fprintf(out, "| %s | %s %s | %s-%s | %zu | %s | %s |\n", g->name, med, g->unit, lo, hi,
                    s.runs, g->has_target ? g->target : "",
                    !g->has_target      ? ""
                    : s.runs == 0       ? "no value"
                    : figure_met(g, &s) ? "yes"
                                        : "**no**");
        }
    }
}

static json_t *report_json(const struct report *r)
{
    json_t *meta = json_object();
    for (size_t i = 0; i < r->n_meta; i++)
        json_object_set_new(meta, r->meta_key[i], json_string(r->meta_val[i]));
    json_t *figs = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const struct figure *f = &r->figs[i];
        struct spread s;
        spread_of(f->runs, f->n, &s);
        json_t *runs = json_array();
        for (size_t k = 0; k < f->n; k++)
            json_array_append_new(runs, json_real(f->runs[k]));
        json_t *o = json_pack("{s:s, s:s, s:s, s:o}", "group", f->group, "name", f->name, "unit",
                              f->unit, "runs", runs);
        if (s.runs > 0) {
            json_object_set_new(o, "median", json_real(s.median));
            json_object_set_new(o, "min", json_real(s.min));
            json_object_set_new(o, "max", json_real(s.max));
        }
        if (f->has_target) {
            json_object_set_new(o, "target", json_string(f->target));
            json_object_set_new(o, "limit", json_real(f->limit));
            json_object_set_new(o, "met", json_boolean(figure_met(f, &s)));
        }
        json_array_append_new(figs, o);
    }
    return json_pack("{s:o, s:o}", "machine", meta, "figures", figs);
}

int report_write(const struct report *r, const char *dir, struct error *err)
{
    char path[4096];
    cleanup_free char *md = NULL;
    size_t md_len = 0;
    if (mkdir_p(dir, 0755, err) < 0)
        return -1;
    FILE *f = open_memstream(&md, &md_len);
    if (f == NULL)
        return error_set(err, "out of memory");
    fprintf(f, "# fakehw-dra benchmark results\n\n");
    report_print_markdown(r, f);
    if (fclose(f) != 0)
        return error_set(err, "out of memory");
    snprintf(path, sizeof(path), "%s/results.md", dir);
    if (atomic_write_file(path, md, md_len, 0644, err) < 0)
        return -1;
    json_auto_t *j = report_json(r);
    cleanup_free char *js = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (js == NULL)
        return error_set(err, "out of memory");
    snprintf(path, sizeof(path), "%s/results.json", dir);
    return atomic_write_file(path, js, strlen(js), 0644, err) < 0 ? -1 : 0;
}

void report_free(struct report *r)
{
    free(r->figs);
    for (size_t i = 0; i < r->n_meta; i++) {
        free(r->meta_key[i]);
        free(r->meta_val[i]);
    }
    memset(r, 0, sizeof(*r));
}
