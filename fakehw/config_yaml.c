// SPDX-License-Identifier: Apache-2.0
/* Position-aware libyaml document access: see config_yaml.h. */
#include "config_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_list.h"
#include "yaml_guard.h"

/* What a config may use of YAML, checked before libyaml's loader sees it
 * (docs/reliability.md lists them). */
static const struct yaml_guard config_yaml_limits = {
    .max_nodes = 1 << 20,
    .max_depth = 64,
    .max_anchors = 128,
    .max_aliases = 16384,
    .max_anchor_len = 64,
    .refuse_tags = true,
    .depth_hint = " (a config needs 5)",
    .tag_hint = ": the config uses none (write integers plainly, text plainly or quoted)",
};

static void parser_deletep(yaml_parser_t **p)
{
    yaml_parser_delete(*p);
}

/* "<file>:<line>:<column>: YAML syntax error: <problem>[ <context>]". */
static int syntax_error(const yaml_parser_t *parser, const char *file, bool context,
                        struct error *err)
{
    const char *problem = parser->problem ? parser->problem : "malformed YAML";
    if (context && parser->context != NULL)
        return error_set(err, "%s:%zu:%zu: YAML syntax error: %s %s", file,
                         parser->problem_mark.line + 1, parser->problem_mark.column + 1, problem,
                         parser->context);
    return error_set(err, "%s:%zu:%zu: YAML syntax error: %s", file, parser->problem_mark.line + 1,
                     parser->problem_mark.column + 1, problem);
}

int yload(const char *text, size_t len, const char *file, yaml_document_t *doc, struct error *err)
{
    if (yaml_guard_check(text, len, file, &config_yaml_limits, err) < 0)
        return -1;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return error_set(err, "%s: cannot initialise the YAML parser", file);
    __attribute__((cleanup(parser_deletep))) yaml_parser_t *owned = &parser;
    yaml_parser_set_input_string(owned, (const unsigned char *)text, len);
    if (!yaml_parser_load(owned, doc))
        return syntax_error(owned, file, true, err);
    if (yaml_document_get_root_node(doc) == NULL) {
        yaml_document_delete(doc);
        return error_set(
            err,
            "%s:1:1: the config is empty (fakehw.md of the fakehw-dra documentation describes it)",
            file);
    }
    yaml_document_t next;
    if (!yaml_parser_load(owned, &next)) {
        yaml_document_delete(doc);
        return syntax_error(owned, file, false, err);
    }
    yaml_node_t *extra = yaml_document_get_root_node(&next);
    if (extra != NULL) {
        error_set(err, "%s:%zu:%zu: a second YAML document; the config is one document", file,
                  extra->start_mark.line + 1, extra->start_mark.column + 1);
        yaml_document_delete(&next);
        yaml_document_delete(doc);
        return -1;
    }
    yaml_document_delete(&next);
    return 0;
}

size_t yline(const yaml_node_t *node)
{
    return node->start_mark.line + 1;
}

size_t ycolumn(const yaml_node_t *node)
{
    return node->start_mark.column + 1;
}

int yfail(const struct yctx *y, const yaml_node_t *node, const char *path, const char *fmt, ...)
{
    if (y->err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    error_setv(y->err, fmt, ap);
    va_end(ap);
    if (path != NULL && *path != '\0')
        return error_prefix(y->err, "%s:%zu:%zu: %s", y->file, yline(node), ycolumn(node), path);
    return error_prefix(y->err, "%s:%zu:%zu", y->file, yline(node), ycolumn(node));
}

static bool is_null(const yaml_node_t *node)
{
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)node->data.scalar.value;
    return !strcmp(v, "") || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
           !strcmp(v, "NULL");
}

const char *ykind(const yaml_node_t *node)
{
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_SCALAR_NODE:
        return is_null(node) ? "null" : "a string";
    default:
        return "nothing";
    }
}

void ypath_key(char *out, const char *base, const char *key)
{
    if (*base == '\0')
        snprintf(out, YPATH_MAX, "%s", key);
    else
        snprintf(out, YPATH_MAX, "%s.%s", base, key);
}

void ypath_index(char *out, const char *base, size_t i)
{
    snprintf(out, YPATH_MAX, "%s[%zu]", base, i);
}

int yexpect_mapping(const struct yctx *y, const yaml_node_t *node, const char *path)
{
    if (node->type != YAML_MAPPING_NODE)
        return yfail(y, node, path, "expected a mapping (key: value lines), got %s", ykind(node));
    return 0;
}

int yexpect_list(const struct yctx *y, const yaml_node_t *node, const char *path, size_t *n)
{
    if (node->type != YAML_SEQUENCE_NODE)
        return yfail(y, node, path, "expected a list (\"- \" items), got %s", ykind(node));
    *n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    return 0;
}

yaml_node_t *ylist_item(const struct yctx *y, const yaml_node_t *list, const char *path, size_t i,
                        char *item_path)
{
    ypath_index(item_path, path, i);
    return yaml_document_get_node(y->doc, list->data.sequence.items.start[i]);
}

static void known_list(char *buf, size_t size, const char *const *known)
{
    struct text_list l = text_list_start(buf, size);
    for (size_t i = 0; known[i] != NULL; i++)
        text_list_add(&l, "%s", known[i]);
}

int ymap_each(const struct yctx *y, const yaml_node_t *node, const char *path,
              const char *const *known, ykey_fn fn, void *ctx)
{
    if (yexpect_mapping(y, node, path) < 0)
        return -1;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
        if (k->type != YAML_SCALAR_NODE || is_null(k))
            return yfail(y, k, path, "a key must be a string, got %s", ykind(k));
        const char *key = (const char *)k->data.scalar.value;
        char key_path[YPATH_MAX];
        ypath_key(key_path, path, key);
        bool ok = false;
        for (size_t i = 0; known[i] != NULL; i++)
            ok = ok || !strcmp(known[i], key);
        if (!ok) {
            char list[512];
            known_list(list, sizeof(list), known);
            return yfail(y, k, key_path, "unknown key (known keys here: %s)", list);
        }
        for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *prev = yaml_document_get_node(y->doc, q->key);
            if (prev->type == YAML_SCALAR_NODE &&
                !strcmp((const char *)prev->data.scalar.value, key))
                return yfail(y, k, key_path, "duplicate key (first at line %zu)", yline(prev));
        }
        if (fn(y, key, v, key_path, ctx) < 0)
            return -1;
    }
    return 0;
}

int ytext(const struct yctx *y, const yaml_node_t *node, const char *path, const char **text)
{
    if (node->type != YAML_SCALAR_NODE)
        return yfail(y, node, path, "expected a single value, got %s", ykind(node));
    if (is_null(node))
        return yfail(y, node, path, "needs a value");
    const char *v = (const char *)node->data.scalar.value;
    if (strlen(v) != node->data.scalar.length)
        return yfail(y, node, path, "contains a NUL byte");
    *text = v;
    return 0;
}

int ystring(const struct yctx *y, const yaml_node_t *node, const char *path, char *buf, size_t size)
{
    const char *v;
    if (ytext(y, node, path, &v) < 0)
        return -1;
    if (strlen(v) >= size)
        return yfail(y, node, path, "is too long (%zu bytes, at most %zu)", strlen(v), size - 1);
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

int ylong(const struct yctx *y, const yaml_node_t *node, const char *path, long min, long max,
          const char *what, long *out)
{
    const char *v;
    if (ytext(y, node, path, &v) < 0)
        return -1;
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return yfail(y, node, path, "\"%.64s\" is quoted, so it is a string, not an integer", v);
    /* YAML 1.1 reads 010 as octal 8, YAML 1.2's core schema as 10: refused
     * rather than guessed. */
    const char *digits = v + (v[0] == '-' || v[0] == '+');
    if (digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9')
        return yfail(y, node, path,
                     "\"%.64s\" has a leading zero (YAML 1.1 reads it as octal, YAML 1.2 as "
                     "decimal); write it without",
                     v);
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0')
        return yfail(y, node, path, "\"%.64s\" is not an integer", v);
    if (errno == ERANGE || n < min || n > max)
        return yfail(y, node, path, "%.64s is not a valid %s (%ld..%ld)", v, what, min, max);
    *out = n;
    return 0;
}

int ybool(const struct yctx *y, const yaml_node_t *node, const char *path, bool *out)
{
    const char *v;
    if (ytext(y, node, path, &v) < 0)
        return -1;
    bool t = !strcmp(v, "true"), f = !strcmp(v, "false");
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return yfail(y, node, path, "\"%.64s\" is quoted, so it is a string, not a boolean%s", v,
                     t || f ? " (write it without quotes)" : "");
    if (!t && !f)
        return yfail(y, node, path, "\"%.64s\" is not a boolean (true or false)", v);
    *out = t;
    return 0;
}
