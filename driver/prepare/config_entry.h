// SPDX-License-Identifier: Apache-2.0
/* What every opaque config entry of a claim carries, whatever the driver's
 * parameters: which driver it is for, where it comes from (FromClass or
 * FromClaim) and the requests it applies to.  gpu_config.c and
 * nvidia_config.c read their own parameters after it. */
#ifndef FAKEHW_PREPARE_CONFIG_ENTRY_H
#define FAKEHW_PREPARE_CONFIG_ENTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct config_entry {
    const char *source;       /* "FromClass" or "FromClaim" (static text) */
    const json_t *requests;   /* non-empty array, or NULL = every request */
    const json_t *parameters; /* opaque.parameters, as given (may be NULL) */
};

/* Reads config[i] (item) into *e: 1 when it is an opaque config of driver,
 * 0 when it is another driver's, -1 on error.  An entry without opaque
 * parameters is 0 too, or with opaque_only an error. */
int config_entry_read(const char *driver, const json_t *item, size_t i, bool opaque_only,
                      struct config_entry *e, struct error *err);

/* Does an entry listing requests (NULL: every one) apply to a result of
 * request r ("req" also names "req/sub", as the API defines)? */
bool config_entry_names_request(const json_t *requests, const char *r);

#endif
