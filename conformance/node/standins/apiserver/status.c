// SPDX-License-Identifier: Apache-2.0
/* metav1.Status construction; see status.h. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *status_new(int code, const char *reason, const char *message, const struct resource *r,
                   const char *name)
{
    json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                          "v1", "metadata", "status", "Failure", "message", message, "reason",
                          reason, "code", code);
    if (s && (r || name)) {
        json_t *d = json_object();
        if (name && name[0])
            json_object_set_new(d, "name", json_string(name));
        if (r && r->group[0])
            json_object_set_new(d, "group", json_string(r->group));
        if (r) /* the real server puts the resource (plural) in "kind" here */
            json_object_set_new(d, "kind", json_string(r->plural));
        json_object_set_new(s, "details", d);
    }
    return s;
}

json_t *status_newf(int code, const char *reason, const struct resource *r, const char *name,
                    const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return status_new(code, reason, msg, r, name);
}

json_t *status_not_found(const struct resource *r, const char *name)
{
    char q[128];
    resource_qualified(r, q, sizeof(q));
    return status_newf(404, "NotFound", r, name, "%s \"%s\" not found", q, name);
}

json_t *status_already_exists(const struct resource *r, const char *name)
{
    char q[128];
    resource_qualified(r, q, sizeof(q));
    return status_newf(409, "AlreadyExists", r, name, "%s \"%s\" already exists", q, name);
}

json_t *status_conflict(const struct resource *r, const char *name, const char *why)
{
    char q[128];
    resource_qualified(r, q, sizeof(q));
    return status_newf(409, "Conflict", r, name, "Operation cannot be fulfilled on %s \"%s\": %s",
                       q, name, why);
}

json_t *status_modified(const struct resource *r, const char *name)
{
    return status_conflict(r, name,
                           "the object has been modified; please apply your changes to the "
                           "latest version and try again");
}

void fe_init(struct field_errors *fe)
{
    fe->causes = json_array();
    fe->count = 0;
}

void fe_free(struct field_errors *fe)
{
    json_decref(fe->causes);
    fe->causes = NULL;
}

void fe_add(struct field_errors *fe, const char *type, const char *message, const char *field_fmt,
            ...)
{
    char field[512];
    va_list ap;
    va_start(ap, field_fmt);
    vsnprintf(field, sizeof(field), field_fmt, ap);
    va_end(ap);
    char reason[64];
    snprintf(reason, sizeof(reason), "FieldValue%s", type);
    json_array_append_new(fe->causes, json_pack("{s:s, s:s, s:s}", "reason", reason, "message",
                                                message, "field", field));
    fe->count++;
}

json_t *status_invalid(const struct resource *r, const char *name, const struct field_errors *fe)
{
    char *msg = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&msg, &size);
    if (f == NULL)
        return NULL;
    fprintf(f, "%s%s%s \"%s\" is invalid: %s", r->kind, r->group[0] ? "." : "", r->group, name,
            fe->count > 1 ? "[" : "");
    size_t i;
    json_t *c;
    json_array_foreach(fe->causes, i, c)
    {
        fprintf(f, "%s%s: %s", i ? ", " : "", json_string_value(json_object_get(c, "field")),
                json_string_value(json_object_get(c, "message")));
    }
    if (fe->count > 1)
        fputc(']', f);
    if (fclose(f) != 0) {
        free(msg);
        return NULL;
    }
    json_t *s = status_new(422, "Invalid", msg, NULL, NULL);
    free(msg);
    json_t *d = json_object();
    json_object_set_new(d, "name", json_string(name));
    if (r->group[0])
        json_object_set_new(d, "group", json_string(r->group));
    json_object_set_new(d, "kind", json_string(r->kind));
    json_object_set(d, "causes", fe->causes);
    json_object_set_new(s, "details", d);
    return s;
}
