// SPDX-License-Identifier: Apache-2.0
#include "prepared_claim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static json_t *string_array(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

json_t *prepared_claim_to_json(const struct prepared_claim *c)
{
    json_t *devices = json_array();
    for (size_t i = 0; devices && i < c->n_devices; i++) {
        const struct prepared_device *d = &c->devices[i];
        json_t *o = json_pack("{s:o, s:s, s:s, s:o}", "requestNames",
                              string_array(d->request_names, d->n_request_names), "poolName",
                              d->pool_name, "deviceName", d->device_name, "cdiDeviceIDs",
                              string_array(d->cdi_device_ids, d->n_cdi_device_ids));
        if (o != NULL && d->share_id != NULL &&
            json_object_set_new(o, "shareID", json_string(d->share_id)) < 0) {
            json_decref(o);
            o = NULL;
        }
        if (o == NULL || json_array_append_new(devices, o) < 0) {
            json_decref(devices);
            return NULL;
        }
    }
    return devices;
}

static int copy_string(const json_t *obj, const char *key, bool optional, size_t i, char **out,
                       struct error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL && optional)
        return 0;
    if (!json_is_string(v))
        return error_set(err, "devices[%zu].%s: not a string", i, key);
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int copy_strings(const json_t *obj, const char *key, size_t i, char ***out, size_t *n,
                        struct error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_array(v))
        return error_set(err, "devices[%zu].%s: not a list", i, key);
    size_t count = json_array_size(v);
    *out = xcalloc(count ? count : 1, sizeof(**out));
    for (size_t k = 0; k < count; k++) {
        const char *s = json_string_value(json_array_get(v, k));
        if (s == NULL)
            return error_set(err, "devices[%zu].%s[%zu]: not a string", i, key, k);
        (*out)[k] = xstrdup(s);
        (*n)++;
    }
    return 0;
}

/* devices[i] into *d (which may hold part of it on failure). */
static int device_from_json(const json_t *o, size_t i, struct prepared_device *d, struct error *err)
{
    if (!json_is_object(o))
        return error_set(err, "devices[%zu]: not an object", i);
    if (copy_strings(o, "requestNames", i, &d->request_names, &d->n_request_names, err) ||
        copy_string(o, "poolName", false, i, &d->pool_name, err) ||
        copy_string(o, "deviceName", false, i, &d->device_name, err) ||
        copy_strings(o, "cdiDeviceIDs", i, &d->cdi_device_ids, &d->n_cdi_device_ids, err) ||
        copy_string(o, "shareID", true, i, &d->share_id, err))
        return -1;
    return 0;
}

int prepared_claim_from_json(const json_t *devices, struct prepared_claim *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_array(devices))
        return error_set(err, "devices: not a list");
    size_t n = json_array_size(devices);
    out->devices = xcalloc(n ? n : 1, sizeof(*out->devices));
    for (size_t i = 0; i < n; i++) {
        out->n_devices++;
        if (device_from_json(json_array_get(devices, i), i, &out->devices[i], err) < 0) {
            prepared_claim_free(out);
            return -1;
        }
    }
    return 0;
}

static char **copy_strv(char *const *v, size_t n)
{
    char **out = xcalloc(n ? n : 1, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(v[i]);
    return out;
}

void prepared_claim_copy(const struct prepared_claim *from, struct prepared_claim *to)
{
    to->n_devices = from->n_devices;
    to->devices = xcalloc(from->n_devices ? from->n_devices : 1, sizeof(*to->devices));
    for (size_t i = 0; i < from->n_devices; i++) {
        const struct prepared_device *s = &from->devices[i];
        struct prepared_device *d = &to->devices[i];
        d->request_names = copy_strv(s->request_names, s->n_request_names);
        d->n_request_names = s->n_request_names;
        d->cdi_device_ids = copy_strv(s->cdi_device_ids, s->n_cdi_device_ids);
        d->n_cdi_device_ids = s->n_cdi_device_ids;
        d->pool_name = xstrdup(s->pool_name);
        d->device_name = xstrdup(s->device_name);
        d->share_id = s->share_id ? xstrdup(s->share_id) : NULL;
    }
}

void prepared_device_add_cdi_id(struct prepared_device *d, const char *id)
{
    d->cdi_device_ids =
        xrealloc(d->cdi_device_ids, (d->n_cdi_device_ids + 1) * sizeof(*d->cdi_device_ids));
    d->cdi_device_ids[d->n_cdi_device_ids++] = xstrdup(id);
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void prepared_claim_free(struct prepared_claim *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_devices; i++) {
        struct prepared_device *d = &c->devices[i];
        free_strings(d->request_names, d->n_request_names);
        free_strings(d->cdi_device_ids, d->n_cdi_device_ids);
        free(d->pool_name);
        free(d->device_name);
        free(d->share_id);
    }
    free(c->devices);
    c->devices = NULL;
    c->n_devices = 0;
}
