// SPDX-License-Identifier: Apache-2.0
/* metav1.Status bodies for errors, in the real API server's wording, and
 * the field error list behind 422 Invalid answers. */
#ifndef APISERVER_STANDIN_STATUS_H
#define APISERVER_STANDIN_STATUS_H

#include <jansson.h>

#include "resources.h"

/* {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":..,"reason":..,"details":{"name","group","kind"},"code":..}.
 * r/name may be NULL (no details). */
json_t *status_new(int code, const char *reason, const char *message, const struct resource *r,
                   const char *name);
json_t *status_newf(int code, const char *reason, const struct resource *r, const char *name,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* resourceslices.resource.k8s.io "x" not found */
json_t *status_not_found(const struct resource *r, const char *name);
/* resourceslices.resource.k8s.io "x" already exists */
json_t *status_already_exists(const struct resource *r, const char *name);
/* Operation cannot be fulfilled on resourceslices.resource.k8s.io "x": <why> */
json_t *status_conflict(const struct resource *r, const char *name, const char *why);
/* The stale-resourceVersion conflict of an update. */
json_t *status_modified(const struct resource *r, const char *name);

/* Field errors collected while validating one object. */
struct field_errors {
    json_t *causes; /* [{"reason","message","field"}] */
    int count;
};

void fe_init(struct field_errors *fe);
void fe_free(struct field_errors *fe);
/* type: "Required", "Invalid", "TooMany", "TooLong", "Duplicate",
 * "NotSupported", "Forbidden"; message as the real server words it after the
 * field ("Required value", "Invalid value: \"x\": ...").  field is printf-style. */
void fe_add(struct field_errors *fe, const char *type, const char *message, const char *field_fmt,
            ...) __attribute__((format(printf, 4, 5)));
/* 422: ResourceSlice.resource.k8s.io "x" is invalid: [a: .., b: ..] */
json_t *status_invalid(const struct resource *r, const char *name, const struct field_errors *fe);

#endif
