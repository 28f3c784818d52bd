// SPDX-License-Identifier: Apache-2.0
/* Typed, position-aware access to a libyaml document for the config parser.
 *
 * Every failure fills err as "<file>:<line>:<column>: <path>: <what>" with
 * 1-based positions of the offending node, where path is the key path in
 * the document ("nodes[0].devices[1].count"), and returns -1. */
#ifndef FAKEHW_CONFIG_YAML_H
#define FAKEHW_CONFIG_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "error.h"

#define YPATH_MAX 256

struct yctx {
    yaml_document_t *doc;
    const char *file; /* for messages */
    struct error *err;
};

/* Loads exactly one YAML document from text.  On success *doc must be
 * yaml_document_delete'd; errors (syntax, empty input, several documents)
 * name file, line and column.  Before libyaml's loader sees the text, it is
 * checked (common/base/yaml_guard.h): at most 1,048,576 nodes (a config of 16,384
 * full device entries has about 600,000), 64 levels of nesting, 128 anchors
 * of at most 64 bytes, 16,384 aliases, and no tags. */
int yload(const char *text, size_t len, const char *file, yaml_document_t *doc, struct error *err);

int yfail(const struct yctx *y, const yaml_node_t *node, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "a mapping", "a list", "a string", "null". */
const char *ykind(const yaml_node_t *node);

/* Path builders: "base.key" (or "key" at the top) and "base[i]". */
void ypath_key(char *out, const char *base, const char *key);
void ypath_index(char *out, const char *base, size_t i);

int yexpect_mapping(const struct yctx *y, const yaml_node_t *node, const char *path);

/* Checks node is a list and returns its length in *n. */
int yexpect_list(const struct yctx *y, const yaml_node_t *node, const char *path, size_t *n);

/* Item i of a list the caller checked (at path), with its path "path[i]"
 * written to item_path (YPATH_MAX bytes). */
yaml_node_t *ylist_item(const struct yctx *y, const yaml_node_t *list, const char *path, size_t i,
                        char *item_path);

/* Called for each key of a mapping; key_path is the path of the value. */
typedef int (*ykey_fn)(const struct yctx *y, const char *key, yaml_node_t *value,
                       const char *key_path, void *ctx);

/* Checks node is a mapping whose keys are unique strings from known
 * (NULL-terminated) and calls fn for each pair in document order. */
int ymap_each(const struct yctx *y, const yaml_node_t *node, const char *path,
              const char *const *known, ykey_fn fn, void *ctx);

/* Position of a node, 1-based. */
size_t yline(const yaml_node_t *node);
size_t ycolumn(const yaml_node_t *node);

/* A scalar's text: any scalar except null; no NUL bytes.  The pointer lives
 * as long as the document. */
int ytext(const struct yctx *y, const yaml_node_t *node, const char *path, const char **text);

/* ytext copied into buf; longer than size-1 bytes is an error. */
int ystring(const struct yctx *y, const yaml_node_t *node, const char *path, char *buf,
            size_t size);

/* A plain (unquoted) decimal integer between min and max, optionally
 * signed, without leading zeros (YAML 1.1 and 1.2 disagree on 010); what
 * names the thing in the range message ("-3 is not a valid count (0..4096)"). */
int ylong(const struct yctx *y, const yaml_node_t *node, const char *path, long min, long max,
          const char *what, long *out);

/* A plain (unquoted) true or false: quoted it is a string, refused as a
 * quoted integer is; YAML 1.1's yes/no/on/off are refused too. */
int ybool(const struct yctx *y, const yaml_node_t *node, const char *path, bool *out);

#endif
