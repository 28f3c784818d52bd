// SPDX-License-Identifier: Apache-2.0
#include "claim_allocation.h"

#include <stdlib.h>
#include <string.h>

#include "quantity.h"

static const json_t *get_path(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    return b && v ? json_object_get(v, b) : v;
}

bool claim_request_split(const char *request, char base[K8S_DNS_LABEL_MAX + 1])
{
    const char *slash = strchr(request, '/');
    size_t n = slash ? (size_t)(slash - request) : strlen(request);
    if (n > K8S_DNS_LABEL_MAX)
        return false;
    memcpy(base, request, n);
    base[n] = '\0';
    return k8s_is_dns_label(base) && (slash == NULL || k8s_is_dns_label(slash + 1));
}

static int check_share_id(const char *id, size_t i, struct error *err)
{
    size_t n = strlen(id);
    bool ok = n > 0 && n <= CLAIM_SHARE_ID_MAX;
    for (size_t k = 0; ok && k < n; k++)
        ok = (id[k] >= 'a' && id[k] <= 'z') || (id[k] >= 'A' && id[k] <= 'Z') ||
             (id[k] >= '0' && id[k] <= '9') || id[k] == '-';
    if (!ok)
        return error_set(err,
                         "allocation result %zu: shareID \"%.80s\" is not 1 to %d letters, "
                         "digits and '-'",
                         i, id, CLAIM_SHARE_ID_MAX);
    return 0;
}

static const char *string_field(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

int claim_allocation_parse(const json_t *claim, const char *uid, const char *driver,
                           const char *pool, struct claim_allocation *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(claim))
        return error_set(err, "the API server's answer is not a JSON object");
    const char *got = json_string_value(get_path(claim, "metadata", "uid"));
    if (got == NULL)
        return error_set(err, "the claim has no metadata.uid");
    if (strcmp(got, uid) != 0)
        return error_set(err, "got replaced: the API server has it with uid %s", got);
    const json_t *alloc = get_path(claim, "status", "allocation");
    if (alloc == NULL || json_is_null(alloc))
        return error_set(err, "not allocated");
    if (!json_is_object(alloc))
        return error_set(err, "status.allocation is not an object");

    const json_t *ann = get_path(claim, "metadata", "annotations");
    const json_t *pcn = json_object_get(ann, CLAIM_POD_CLAIM_NAME_ANNOTATION);
    if (pcn != NULL) {
        out->pod_claim_name = json_string_value(pcn);
        if (k8s_check_dns_label("annotation " CLAIM_POD_CLAIM_NAME_ANNOTATION, out->pod_claim_name,
                                err) < 0)
            return -1;
    }

    const json_t *devices = json_object_get(alloc, "devices");
    const json_t *results = json_object_get(devices, "results");
    const json_t *config = json_object_get(devices, "config");
    if (results != NULL && !json_is_null(results) && !json_is_array(results))
        return error_set(err, "status.allocation.devices.results is not a list");
    out->config = json_is_null(config) ? NULL : config;

    size_t total = json_array_size(results);
    out->results = calloc(total ? total : 1, sizeof(*out->results));
    if (out->results == NULL)
        return error_set(err, "out of memory for %zu results", total);
    for (size_t i = 0; i < total; i++) {
        const json_t *r = json_array_get(results, i);
        const char *drv = string_field(r, "driver");
        if (drv == NULL) {
            error_set(err, "allocation result %zu: no driver", i);
            goto fail;
        }
        if (strcmp(drv, driver) != 0)
            continue;
        struct claim_result *cr = &out->results[out->n_results];
        cr->request = string_field(r, "request");
        cr->pool = string_field(r, "pool");
        cr->device = string_field(r, "device");
        const json_t *share = json_object_get(r, "shareID");
        cr->share_id = json_is_null(share) ? NULL : json_string_value(share);
        if (cr->request == NULL || cr->pool == NULL || cr->device == NULL ||
            (share != NULL && !json_is_null(share) && cr->share_id == NULL)) {
            error_set(err, "allocation result %zu: request, pool and device must be strings", i);
            goto fail;
        }
        if (!claim_request_split(cr->request, cr->base_request)) {
            error_set(err,
                      "allocation result %zu: request \"%.300s\" is not a request name (a DNS "
                      "label, or two joined by '/')",
                      i, cr->request);
            goto fail;
        }
        if (strcmp(cr->pool, pool) != 0) {
            error_set(err,
                      "allocation result %zu (device %.64s): pool \"%.253s\" is not this "
                      "node's pool \"%s\"",
                      i, cr->device, cr->pool, pool);
            goto fail;
        }
        if (!k8s_is_dns_label(cr->device)) {
            k8s_check_dns_label("device", cr->device, err);
            error_prefix(err, "allocation result %zu", i);
            goto fail;
        }
        if (cr->share_id != NULL && check_share_id(cr->share_id, i, err) < 0)
            goto fail;
        const json_t *consumed = json_object_get(r, "consumedCapacity");
        const json_t *mem = json_object_get(consumed, "memory");
        if (mem != NULL && !json_is_null(mem)) {
            struct error qerr;
            const char *q = json_string_value(mem);
            if (q == NULL || quantity_parse_bytes(q, &cr->consumed_memory, &qerr) < 0) {
                error_set(err, "allocation result %zu (device %.64s): consumedCapacity.memory: %s",
                          i, cr->device, q ? qerr.msg : "not a quantity string");
                goto fail;
            }
        }
        const json_t *bc = json_object_get(r, "bindingConditions");
        if (bc != NULL && !json_is_null(bc)) {
            const json_t *first = json_array_get(bc, 0);
            if (!json_is_array(bc) || (first != NULL && !json_is_string(first))) {
                error_set(err,
                          "allocation result %zu (device %.64s): bindingConditions is not a "
                          "list of strings",
                          i, cr->device);
                goto fail;
            }
            cr->binding_condition = json_string_value(first);
        }
        out->n_results++;
    }
    return 0;
fail:
    claim_allocation_free(out);
    return -1;
}

void claim_allocation_free(struct claim_allocation *a)
{
    free(a->results);
    a->results = NULL;
    a->n_results = 0;
}
