// SPDX-License-Identifier: Apache-2.0
/* Field selector parsing and matching, with the label checks of the real server. */
#include "fieldsel.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unsupported(const struct resource *r, const char *label, char *msg, size_t size)
{
    if (r == &RES_RESOURCESLICES)
        snprintf(msg, size, "field label not supported for %s, Kind=%s: %s", r->api_version,
                 r->kind, label);
    else if (r == &RES_NODES)
        snprintf(msg, size, "field label not supported: %s", label);
    else
        snprintf(msg, size,
                 "\"%s\" is not a known field selector: only \"metadata.name\", "
                 "\"metadata.namespace\"",
                 label);
    return -1;
}

/* Undoes fields.EscapeValue: "\\" "\," "\=". */
static char *unescape(const char *p, size_t n)
{
    char *out = xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n)
            i++;
        *o++ = p[i];
    }
    *o = '\0';
    return out;
}

/* The terms of text into out; -1 with msg (out then holds the terms read so
 * far, for fsel_parse to free). */
static int parse_terms(const char *text, const struct resource *r, struct fsel *out, char *msg,
                       size_t msg_size)
{
    const char *p = text;
    while (*p) {
        /* One term up to an unescaped ','. */
        const char *end = p;
        while (*end && *end != ',') {
            if (*end == '\\' && end[1])
                end++;
            end++;
        }
        size_t n = (size_t)(end - p);
        const char *op = NULL;
        size_t oplen = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '\\') {
                i++;
                continue;
            }
            if (p[i] == '!' && i + 1 < n && p[i + 1] == '=') {
                op = p + i;
                oplen = 2;
                break;
            }
            if (p[i] == '=') {
                op = p + i;
                oplen = i + 1 < n && p[i + 1] == '=' ? 2 : 1;
                break;
            }
        }
        if (op == NULL || op == p) {
            snprintf(msg, msg_size, "invalid selector: '%s'; can't understand '%.*s'", text, (int)n,
                     p);
            return -1;
        }
        char label[128];
        snprintf(label, sizeof(label), "%.*s", (int)(op - p), p);
        int f = -1;
        for (int i = 0; i < FIELD_COUNT; i++)
            if (!strcmp(label, field_label_name((enum field_label)i)) &&
                (r->field_labels & (1u << i)))
                f = i;
        if (f < 0) {
            unsupported(r, label, msg, msg_size);
            return -1;
        }
        if (out->n == FSEL_MAX_TERMS) {
            snprintf(msg, msg_size, "invalid selector: '%s': more than %d terms", text,
                     FSEL_MAX_TERMS);
            return -1;
        }
        struct fsel_term *t = &out->terms[out->n];
        t->field = (enum field_label)f;
        t->neq = op[0] == '!';
        const char *v = op + oplen;
        t->value = unescape(v, (size_t)(p + n - v));
        out->n++;
        p = *end ? end + 1 : end;
    }
    return 0;
}

int fsel_parse(const char *text, const struct resource *r, struct fsel *out, char *msg,
               size_t msg_size)
{
    memset(out, 0, sizeof(*out));
    if (text == NULL || text[0] == '\0')
        return 0;
    if (parse_terms(text, r, out, msg, msg_size) < 0) {
        fsel_free(out);
        return -1;
    }
    return 0;
}

void fsel_free(struct fsel *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->terms[i].value);
    memset(s, 0, sizeof(*s));
}

bool fsel_match(const struct fsel *s, const char *const values[FIELD_COUNT])
{
    for (size_t i = 0; i < s->n; i++) {
        bool eq = !strcmp(values[s->terms[i].field], s->terms[i].value);
        if (eq == s->terms[i].neq)
            return false;
    }
    return true;
}

bool fsel_match_object(const struct fsel *s, const json_t *obj)
{
    const char *values[FIELD_COUNT];
    for (int i = 0; i < FIELD_COUNT; i++)
        values[i] = field_value(obj, (enum field_label)i);
    return fsel_match(s, values);
}
