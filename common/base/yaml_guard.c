// SPDX-License-Identifier: Apache-2.0
/* YAML limits checked on the event stream: see yaml_guard.h. */
#include "yaml_guard.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

#define CORE_TAG_PREFIX "tag:yaml.org,2002:"

/* "!!str" for the core schema's tags, the tag as written otherwise. */
static void tag_text(const char *tag, char *out, size_t size)
{
    size_t n = strlen(CORE_TAG_PREFIX);
    if (!strncmp(tag, CORE_TAG_PREFIX, n))
        snprintf(out, size, "!!%.60s", tag + n);
    else
        snprintf(out, size, "%.64s", tag);
}

static int refuse(struct error *err, const char *label, const yaml_event_t *ev, const char *what,
                  const char *suffix)
{
    return error_set(err, "%s:%zu:%zu: %s%s", label, ev->start_mark.line + 1,
                     ev->start_mark.column + 1, what, suffix ? suffix : "");
}

/* The anchor, alias name and tag of an event, whichever it has. */
static void properties(const yaml_event_t *ev, const char **anchor, const char **alias,
                       const char **tag)
{
    *anchor = *alias = *tag = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        *alias = (const char *)ev->data.alias.anchor;
        break;
    case YAML_SCALAR_EVENT:
        *anchor = (const char *)ev->data.scalar.anchor;
        *tag = (const char *)ev->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        *anchor = (const char *)ev->data.sequence_start.anchor;
        *tag = (const char *)ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        *anchor = (const char *)ev->data.mapping_start.anchor;
        *tag = (const char *)ev->data.mapping_start.tag;
        break;
    default:
        break;
    }
}

/* Checks one event; returns -1 with err on a refusal. */
static int check_event(const yaml_event_t *ev, const char *label, const struct yaml_guard *g,
                       size_t *depth, size_t *nodes, size_t *anchors, size_t *aliases,
                       struct error *err)
{
    char what[160];
    const char *anchor, *alias, *tag;
    properties(ev, &anchor, &alias, &tag);
    if (g->refuse_tags && tag != NULL) {
        char t[80];
        tag_text(tag, t, sizeof(t));
        snprintf(what, sizeof(what), "a YAML tag (%s)", t);
        return refuse(err, label, ev, what, g->tag_hint);
    }
    if ((ev->type == YAML_SCALAR_EVENT || ev->type == YAML_ALIAS_EVENT ||
         ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT) &&
        ++*nodes > g->max_nodes) {
        snprintf(what, sizeof(what), "more than %zu YAML nodes (keys, values, lists, mappings)",
                 g->max_nodes);
        return refuse(err, label, ev, what, NULL);
    }
    const char *name = anchor ? anchor : alias;
    if (name != NULL && strlen(name) > g->max_anchor_len) {
        snprintf(what, sizeof(what), "a YAML %s name longer than %zu bytes",
                 anchor ? "anchor" : "alias", g->max_anchor_len);
        return refuse(err, label, ev, what, NULL);
    }
    if (anchor != NULL && ++*anchors > g->max_anchors) {
        snprintf(what, sizeof(what), "more than %zu YAML anchors (&name)", g->max_anchors);
        return refuse(err, label, ev, what, NULL);
    }
    if (alias != NULL && ++*aliases > g->max_aliases) {
        snprintf(what, sizeof(what), "more than %zu YAML aliases (*name)", g->max_aliases);
        return refuse(err, label, ev, what, NULL);
    }
    if (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT) {
        if (++*depth > g->max_depth) {
            snprintf(what, sizeof(what), "YAML nested deeper than %zu levels of mappings and lists",
                     g->max_depth);
            return refuse(err, label, ev, what, g->depth_hint);
        }
    } else if (ev->type == YAML_SEQUENCE_END_EVENT || ev->type == YAML_MAPPING_END_EVENT) {
        --*depth;
    }
    return 0;
}

int yaml_guard_check(const char *text, size_t len, const char *label, const struct yaml_guard *g,
                     struct error *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return error_set(err, "%s: cannot initialise the YAML parser", label);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    size_t depth = 0, nodes = 0, anchors = 0, aliases = 0;
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev))
            break; /* the loader reports it */
        yaml_event_type_t type = ev.type;
        rc = check_event(&ev, label, g, &depth, &nodes, &anchors, &aliases, err);
        yaml_event_delete(&ev);
        if (rc < 0 || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return rc;
}
