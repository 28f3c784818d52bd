/* SPDX-License-Identifier: Apache-2.0 */
/* Strict reading of opaque driver configs, as Go's decoder with
 * DisallowUnknownFields reads them. */
#ifndef FAKEHW_STRICT_JSON_H
#define FAKEHW_STRICT_JSON_H

#include <jansson.h>

#include "error.h"

/* obj's member key; a JSON null counts as absent, as Go's decoder treats it. */
const json_t *strict_json_field(const json_t *obj, const char *key);

/* Every key of obj must be one of allowed (NULL-terminated); else an
 * "unknown field \"path.key\"" error. */
int strict_json_check_fields(const json_t *obj, const char *path, const char *const *allowed,
                             struct error *err);

/* path must be an object; -1 with "field \"path\" must be an object". */
int strict_json_object(const json_t *v, const char *path, struct error *err);

/* strict_json_object, then strict_json_check_fields: an object of only the
 * allowed keys. */
int strict_json_object_of(const json_t *v, const char *path, const char *const *allowed,
                          struct error *err);

/* path must be a string with no NUL character in it. */
int strict_json_string(const json_t *v, const char *path, struct error *err);

#endif
