// SPDX-License-Identifier: Apache-2.0
/* Field selectors ("spec.nodeName=n1,spec.driver=gpu.example.com"). */
#ifndef APISERVER_STANDIN_FIELDSEL_H
#define APISERVER_STANDIN_FIELDSEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "resources.h"

#define FSEL_MAX_TERMS 8

struct fsel_term {
    enum field_label field;
    bool neq; /* != */
    char *value;
};

struct fsel {
    struct fsel_term terms[FSEL_MAX_TERMS];
    size_t n;
};

/* Parses text (NULL or "" selects everything) for resource r.  On failure
 * msg holds the real server's 400 text, e.g. "field label not supported for
 * resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name". */
int fsel_parse(const char *text, const struct resource *r, struct fsel *out, char *msg,
               size_t msg_size);
void fsel_free(struct fsel *s);

/* values[f] is the object's value of field label f. */
bool fsel_match(const struct fsel *s, const char *const values[FIELD_COUNT]);
bool fsel_match_object(const struct fsel *s, const json_t *obj);

#endif
