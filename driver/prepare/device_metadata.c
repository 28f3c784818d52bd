// SPDX-License-Identifier: Apache-2.0
#include "device_metadata.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

int device_metadata_container_path(const struct device_metadata_claim *c, const char *request,
                                   char *buf, size_t size, struct error *err)
{
    bool tmpl = c->pod_claim_name != NULL && c->pod_claim_name[0] != '\0';
    int n = snprintf(buf, size, "%s/%s/%s/%s/%s-metadata.json", DEVICE_METADATA_CONTAINER_DIR,
                     tmpl ? "resourceclaimtemplates" : "resourceclaims",
                     tmpl ? c->pod_claim_name : c->name, request, c->driver);
    if (n < 0 || (size_t)n >= size)
        return error_set(err, "metadata container path for request %s is too long", request);
    return 0;
}

int device_metadata_add_device(json_t *devices, const char *driver, const char *pool,
                               const char *name, json_t *attributes, struct error *err)
{
    json_t *d = json_pack("{s:s, s:s, s:s, s:o}", "driver", driver, "pool", pool, "name", name,
                          "attributes", attributes);
    if (d == NULL || json_array_append_new(devices, d) < 0)
        return error_set(err, "device metadata: out of memory");
    return 0;
}

char *device_metadata_stream(const struct device_metadata_claim *c, const char *request,
                             const json_t *devices, struct error *err)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}}", "apiVersion",
                            DEVICE_METADATA_API_VERSION, "kind", DEVICE_METADATA_KIND, "metadata",
                            "name", c->name, "namespace", c->ns, "uid", c->uid, "generation", 1);
    char *body = NULL, *text = NULL;
    if (obj == NULL ||
        (c->pod_claim_name &&
         json_object_set_new(obj, "podClaimName", json_string(c->pod_claim_name)) < 0) ||
        json_object_set_new(obj, "requests",
                            json_pack("[{s:s, s:O}]", "name", request, "devices", devices)) < 0 ||
        (body = json_dumps(obj, JSON_INDENT(2))) == NULL || asprintf(&text, "%s\n", body) < 0) {
        text = NULL;
        error_set(err, "device metadata: out of memory");
    }
    free(body);
    json_decref(obj);
    return text;
}
