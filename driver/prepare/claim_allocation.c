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

/* "a number", for a field that should have been a string. */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}

/* A string field of result i; optional ones may be absent or null (NULL). */
static int result_string(const json_t *r, const char *key, bool optional, size_t i,
                         const char **out, struct error *err)
{
    const json_t *v = json_object_get(r, key);
    *out = json_string_value(v);
    if (*out != NULL || (optional && (v == NULL || json_is_null(v))))
        return 0;
    if (v == NULL)
        return error_set(err, "allocation result %zu: %s is missing", i, key);
    return error_set(err, "allocation result %zu: %s is %s, not a string", i, key, json_kind(v));
}

/* One step of reading allocation result i of this driver into *cr, in the
 * order of result_steps below.  pool: this node's pool. */
typedef int (*result_step)(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                           struct error *err);

static int read_strings(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                        struct error *err)
{
    (void)pool;
    if (result_string(r, "request", false, i, &cr->request, err) < 0 ||
        result_string(r, "pool", false, i, &cr->pool, err) < 0 ||
        result_string(r, "device", false, i, &cr->device, err) < 0 ||
        result_string(r, "shareID", true, i, &cr->share_id, err) < 0)
        return -1;
    return 0;
}

static int check_request(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                         struct error *err)
{
    (void)r, (void)pool;
    if (!claim_request_split(cr->request, cr->base_request))
        return error_set(err,
                         "allocation result %zu: request \"%.300s\" is not a request name (a DNS "
                         "label, or two joined by '/')",
                         i, cr->request);
    return 0;
}

static int check_pool(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                      struct error *err)
{
    (void)r;
    if (strcmp(cr->pool, pool) != 0)
        return error_set(err,
                         "allocation result %zu (device %.64s): pool \"%.253s\" is not this "
                         "node's pool \"%s\"",
                         i, cr->device, cr->pool, pool);
    return 0;
}

static int check_device(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                        struct error *err)
{
    (void)r, (void)pool;
    if (k8s_is_dns_label(cr->device))
        return 0;
    k8s_check_dns_label("device", cr->device, err);
    return error_prefix(err, "allocation result %zu", i);
}

static int check_share(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                       struct error *err)
{
    (void)r, (void)pool;
    return cr->share_id != NULL ? check_share_id(cr->share_id, i, err) : 0;
}

/* consumedCapacity: memory only, a quantity of bytes. */
static int parse_consumed(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                          struct error *err)
{
    (void)pool;
    const json_t *consumed = json_object_get(r, "consumedCapacity");
    if (consumed == NULL || json_is_null(consumed))
        return 0;
    if (!json_is_object(consumed))
        return error_set(err,
                         "allocation result %zu (device %.64s): consumedCapacity is %s, not "
                         "a map",
                         i, cr->device, json_kind(consumed));
    const char *name;
    const json_t *value;
    json_object_foreach((json_t *)consumed, name, value)
    {
        if (strcmp(name, "memory") != 0)
            return error_set(err,
                             "allocation result %zu (device %.64s): consumedCapacity.%.64s: the "
                             "device has no such capacity (only memory)",
                             i, cr->device, name);
    }
    const json_t *mem = json_object_get(consumed, "memory");
    if (mem == NULL || json_is_null(mem))
        return 0;
    struct error qerr;
    const char *q = json_string_value(mem);
    if (q == NULL || quantity_parse_bytes(q, &cr->consumed_memory, &qerr) < 0)
        return error_set(err, "allocation result %zu (device %.64s): consumedCapacity.memory: %s",
                         i, cr->device, q ? qerr.msg : "not a quantity string");
    cr->has_consumed_memory = true;
    return 0;
}

static int parse_admin(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                       struct error *err)
{
    (void)pool;
    const json_t *admin = json_object_get(r, "adminAccess");
    if (admin != NULL && !json_is_null(admin) && !json_is_boolean(admin))
        return error_set(err,
                         "allocation result %zu (device %.64s): adminAccess is %s, not a boolean",
                         i, cr->device, json_kind(admin));
    cr->admin_access = json_is_true(admin);
    return 0;
}

static int parse_binding(const json_t *r, size_t i, const char *pool, struct claim_result *cr,
                         struct error *err)
{
    (void)pool;
    const json_t *bc = json_object_get(r, "bindingConditions");
    if (bc == NULL || json_is_null(bc))
        return 0;
    const json_t *first = json_array_get(bc, 0);
    if (!json_is_array(bc) || (first != NULL && !json_is_string(first)))
        return error_set(err,
                         "allocation result %zu (device %.64s): bindingConditions is not a "
                         "list of strings",
                         i, cr->device);
    cr->binding_condition = json_string_value(first);
    return 0;
}

static const result_step result_steps[] = {
    read_strings, check_request,  check_pool,  check_device,
    check_share,  parse_consumed, parse_admin, parse_binding,
};

/* The claim is the one asked for and allocated: its status.allocation. */
static const json_t *allocation_of(const json_t *claim, const char *uid, struct error *err)
{
    if (!json_is_object(claim)) {
        error_set(err, "the API server's answer is not a JSON object");
        return NULL;
    }
    const char *got = json_string_value(get_path(claim, "metadata", "uid"));
    const json_t *alloc = get_path(claim, "status", "allocation");
    if (got == NULL)
        error_set(err, "the claim has no metadata.uid");
    else if (strcmp(got, uid) != 0)
        error_set(err, "got replaced: the API server has it with uid %s", got);
    else if (alloc == NULL || json_is_null(alloc))
        error_set(err, "not allocated");
    else if (!json_is_object(alloc))
        error_set(err, "status.allocation is not an object");
    else
        return alloc;
    return NULL;
}

/* This driver's results, each through result_steps. */
static int parse_results(const json_t *results, const char *driver, const char *pool,
                         struct claim_allocation *out, struct error *err)
{
    size_t total = json_array_size(results);
    out->results = calloc(total ? total : 1, sizeof(*out->results));
    if (out->results == NULL)
        return error_set(err, "out of memory for %zu results", total);
    for (size_t i = 0; i < total; i++) {
        const json_t *r = json_array_get(results, i);
        const char *drv = string_field(r, "driver");
        if (drv == NULL)
            return error_set(err, "allocation result %zu: no driver", i);
        if (strcmp(drv, driver) != 0)
            continue;
        struct claim_result *cr = &out->results[out->n_results];
        for (size_t k = 0; k < sizeof(result_steps) / sizeof(result_steps[0]); k++)
            if (result_steps[k](r, i, pool, cr, err) < 0)
                return -1;
        out->n_results++;
    }
    return 0;
}

int claim_allocation_parse(const json_t *claim, const char *uid, const char *driver,
                           const char *pool, struct claim_allocation *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const json_t *alloc = allocation_of(claim, uid, err);
    if (alloc == NULL)
        return -1;
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
    if (parse_results(results, driver, pool, out, err) < 0) {
        claim_allocation_free(out);
        return -1;
    }
    return 0;
}

void claim_allocation_free(struct claim_allocation *a)
{
    free(a->results);
    a->results = NULL;
    a->n_results = 0;
}
