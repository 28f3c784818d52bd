// SPDX-License-Identifier: Apache-2.0
/* Bounds on a YAML text, checked on libyaml's event stream before its loader
 * builds the document.  libyaml's scanner is quadratic in flow nesting depth
 * (every token walks the stack of flow levels) and its loader compares every
 * anchor with every earlier one and every alias with every anchor, and it
 * holds every node (about 100 bytes each, whatever the text's size); the event
 * pass itself is linear once it stops at the first level past max_depth (the
 * scanner looks at most 1,024 characters ahead of the event it hands out).
 *
 * A refusal fills err as "<label>:<line>:<column>: <what>" (1-based) and
 * returns -1.  A syntax error is not reported here: the check returns 0 and
 * the loader reports it the usual way (the pass stops there, so its work is
 * bounded all the same). */
#ifndef FAKEHW_COMMON_YAML_GUARD_H
#define FAKEHW_COMMON_YAML_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct yaml_guard {
    size_t max_nodes;       /* keys, values, lists, mappings and aliases */
    size_t max_depth;       /* nested mappings and lists */
    size_t max_anchors;     /* &name definitions */
    size_t max_aliases;     /* *name uses */
    size_t max_anchor_len;  /* bytes of one anchor or alias name */
    bool refuse_tags;       /* any explicit tag (!!str, !!int, !local) */
    const char *depth_hint; /* appended to the depth message: " (a config needs 5)" */
    const char *tag_hint;   /* appended to the tag message; NULL for none */
};

int yaml_guard_check(const char *text, size_t len, const char *label, const struct yaml_guard *g,
                     struct error *err);

#endif
