// SPDX-License-Identifier: Apache-2.0
/* Loading the config: read, parse (config_parse.c), resolve for the node
 * (config_resolve.c). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config_spec.h"
#include "grow.h"

/* A config is a few KB; anything this big is the wrong file. */
#define CONFIG_MAX_BYTES (16 * 1024 * 1024)

int config_load_string(const char *text, size_t len, const char *display_name, const char *node,
                       struct config *out, struct error *err)
{
    struct config_spec spec;
    if (config_parse(text, len, display_name, &spec, err) < 0)
        return -1;
    int rc = config_resolve(&spec, node, out, err);
    config_spec_free(&spec);
    return rc;
}

int config_load_file(const char *path, const char *node, struct config *out, struct error *err)
{
    cleanup_fclose FILE *f = fopen(path, "rb");
    if (f == NULL)
        return error_set_errno(err, errno, "reading config %s", path);
    cleanup_free char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= CONFIG_MAX_BYTES)
                return error_set(err, "reading config %s: larger than %d bytes", path,
                                 CONFIG_MAX_BYTES);
            GROW(buf, cap, len + 1);
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        return error_set_errno(err, errno, "reading config %s", path);
    return config_load_string(buf ? buf : "", len, path, node, out, err);
}

void config_free(struct config *c)
{
    free(c->devices);
    free(c->flips);
    memset(c, 0, sizeof(*c));
}
