// SPDX-License-Identifier: Apache-2.0
/* NVIDIA's opaque configs: see nvidia_config.h. */
#include "nvidia_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config_entry.h"
#include "quantity.h"
#include "strict_json.h"
#include "text_list.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The sharing strategies, their time-slice intervals and the IOMMU backend
 * policies: sharing.go and iommu.go of the real API. */
static const struct {
    const char *name;
    enum nvidia_sharing sharing;
} strategies[] = {{"TimeSlicing", NVIDIA_SHARING_TIME_SLICING}, {"MPS", NVIDIA_SHARING_MPS}};
static const char *const intervals[] = {"Default", "Short", "Medium", "Long"};
static const char *const iommu_policies[] = {"LegacyOnly", "PreferIommuFD"};

/* One parsed entry of this driver. */
struct entry {
    long index;
    const char *source;
    const json_t *requests; /* non-empty array, or NULL = every request */
    enum nvidia_config_kind kind;
    enum nvidia_sharing sharing;
    const char *interval;
    long percentage; /* -1: not set */
    uint64_t pinned_default_mib;
    const json_t *per_device; /* object key -> quantity, or NULL */
    bool multi_user;
    const char *iommu_backend;
    bool iommu_api_device;
};

static int parse_gpu_or_mig(const json_t *params, struct entry *e, struct error *err);
static int parse_vfio(const json_t *params, struct entry *e, struct error *err);

/* The kinds: their name, what they parse, the device type they apply to. */
static const struct {
    const char *name;
    enum nvidia_config_kind kind;
    int (*parse)(const json_t *params, struct entry *e, struct error *err);
    const char *device_type; /* the slice attribute type of their devices */
} kinds[] = {
    [NVIDIA_GPU_CONFIG] = {"GpuConfig", NVIDIA_GPU_CONFIG, parse_gpu_or_mig, "gpu"},
    [NVIDIA_MIG_DEVICE_CONFIG] = {"MigDeviceConfig", NVIDIA_MIG_DEVICE_CONFIG, parse_gpu_or_mig,
                                  "mig"},
    [NVIDIA_VFIO_DEVICE_CONFIG] = {"VfioDeviceConfig", NVIDIA_VFIO_DEVICE_CONFIG, parse_vfio,
                                   "vfio"},
};

const char *nvidia_config_kind_name(enum nvidia_config_kind k)
{
    return (size_t)k < N(kinds) ? kinds[k].name : "?";
}

const char *nvidia_sharing_name(enum nvidia_sharing s)
{
    for (size_t i = 0; i < N(strategies); i++)
        if (strategies[i].sharing == s)
            return strategies[i].name;
    return "";
}

static int want_bool(const json_t *v, const char *path, bool *out, struct error *err)
{
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v))
        return error_set(err, "field \"%s\" must be true or false", path);
    *out = json_is_true(v);
    return 0;
}

/* One of names (n of them) into *out, or an error listing them. */
static int want_one_of(const json_t *v, const char *path, const char *const *names, size_t n,
                       size_t *out, struct error *err)
{
    if (strict_json_string(v, path, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(json_string_value(v), names[i])) {
            *out = i;
            return 0;
        }
    char list[128];
    struct text_list l = text_list_start(list, sizeof(list));
    for (size_t i = 0; i < n; i++)
        text_list_add(&l, "%s", names[i]);
    return error_set(err, "field \"%s\": \"%s\" is not one of %s", path, json_string_value(v),
                     list);
}

/* A memory limit (a quantity, as a string or a number) in whole MiB, at
 * least 1: the real driver passes "<N>M" to the MPS daemon and refuses 0. */
static int want_limit(const json_t *v, const char *path, uint64_t *mib, struct error *err)
{
    char text[64];
    if (json_is_integer(v))
        snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v) && json_string_length(v) < sizeof(text))
        snprintf(text, sizeof(text), "%s", json_string_value(v));
    else
        return error_set(err, "field \"%s\" must be a quantity (\"1Gi\", \"512Mi\")", path);
    uint64_t bytes;
    if (quantity_parse_bytes(text, &bytes, err) < 0)
        return error_prefix(err, "field \"%s\"", path);
    if (bytes < 1024 * 1024)
        return error_set(err, "field \"%s\": %s is below 1Mi (limits are whole MiB)", path, text);
    *mib = bytes / (1024 * 1024);
    return 0;
}

static int parse_mps(const json_t *mps, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"defaultActiveThreadPercentage",
                                         "defaultPinnedDeviceMemoryLimit",
                                         "defaultPerDevicePinnedMemoryLimit", "multiUser", NULL};
    static const char *const path = "sharing.mpsConfig";
    if (strict_json_object_of(mps, path, fields, err) < 0)
        return -1;
    const json_t *pct = strict_json_field(mps, "defaultActiveThreadPercentage");
    if (pct != NULL) {
        if (!json_is_integer(pct))
            return error_set(err, "field \"%s.defaultActiveThreadPercentage\" must be an integer",
                             path);
        json_int_t v = json_integer_value(pct);
        if (v < 0 || v > 100)
            return error_set(err,
                             "field \"%s.defaultActiveThreadPercentage\": %lld is not between 0 "
                             "and 100",
                             path, (long long)v);
        e->percentage = (long)v;
    }
    const json_t *pinned = strict_json_field(mps, "defaultPinnedDeviceMemoryLimit");
    if (pinned != NULL && want_limit(pinned, "sharing.mpsConfig.defaultPinnedDeviceMemoryLimit",
                                     &e->pinned_default_mib, err) < 0)
        return -1;
    const json_t *per = strict_json_field(mps, "defaultPerDevicePinnedMemoryLimit");
    if (per != NULL) {
        if (!json_is_object(per))
            return error_set(err,
                             "field \"%s.defaultPerDevicePinnedMemoryLimit\" must be an object "
                             "(device UUID or index: quantity)",
                             path);
        if (json_object_size(per) > NVIDIA_MPS_LIMITS_MAX)
            return error_set(err,
                             "field \"%s.defaultPerDevicePinnedMemoryLimit\": %zu devices; the "
                             "limit is %d",
                             path, json_object_size(per), NVIDIA_MPS_LIMITS_MAX);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)per, key, v)
        {
            char where[FAKEHW_TEXT_MAX + 64];
            uint64_t mib;
            snprintf(where, sizeof(where), "%s.defaultPerDevicePinnedMemoryLimit.%.*s", path,
                     FAKEHW_TEXT_MAX, key);
            if (want_limit(v, where, &mib, err) < 0)
                return -1;
        }
        e->per_device = per;
    }
    return want_bool(strict_json_field(mps, "multiUser"), "sharing.mpsConfig.multiUser",
                     &e->multi_user, err);
}

/* sharing of a GpuConfig (time_slicing true) or a MigDeviceConfig. */
static int parse_sharing(const json_t *sharing, bool time_slicing, struct entry *e,
                         struct error *err)
{
    static const char *const gpu_fields[] = {"strategy", "timeSlicingConfig", "mpsConfig", NULL};
    static const char *const mig_fields[] = {"strategy", "mpsConfig", NULL};
    if (strict_json_object_of(sharing, "sharing", time_slicing ? gpu_fields : mig_fields, err) < 0)
        return -1;
    const json_t *strategy = strict_json_field(sharing, "strategy");
    const json_t *ts = strict_json_field(sharing, "timeSlicingConfig");
    const json_t *mps = strict_json_field(sharing, "mpsConfig");
    if (strategy == NULL)
        return error_set(err, "field \"sharing.strategy\" is required (TimeSlicing or MPS)");
    const char *names[N(strategies)];
    for (size_t i = 0; i < N(strategies); i++)
        names[i] = strategies[i].name;
    size_t s;
    if (want_one_of(strategy, "sharing.strategy", names, N(names), &s, err) < 0)
        return -1;
    e->sharing = strategies[s].sharing;
    if (e->sharing == NVIDIA_SHARING_TIME_SLICING) {
        if (mps != NULL)
            return error_set(err, "field \"sharing.mpsConfig\" is not allowed with strategy "
                                  "TimeSlicing");
        if (!time_slicing)
            return 0; /* a MIG device keeps its GPU's time slice */
        e->interval = intervals[0];
        if (ts == NULL)
            return 0;
        static const char *const ts_fields[] = {"interval", NULL};
        if (strict_json_object_of(ts, "sharing.timeSlicingConfig", ts_fields, err) < 0)
            return -1;
        const json_t *iv = strict_json_field(ts, "interval");
        size_t k = 0;
        if (iv != NULL && want_one_of(iv, "sharing.timeSlicingConfig.interval", intervals,
                                      N(intervals), &k, err) < 0)
            return -1;
        e->interval = intervals[k];
        return 0;
    }
    if (ts != NULL)
        return error_set(err, "field \"sharing.timeSlicingConfig\" is not allowed with strategy "
                              "MPS");
    return mps ? parse_mps(mps, e, err) : 0;
}

/* A GpuConfig or a MigDeviceConfig (e->kind, set by the caller): sharing
 * only, with time slicing on a whole GPU alone. */
static int parse_gpu_or_mig(const json_t *params, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"apiVersion", "kind", "sharing", NULL};
    if (strict_json_check_fields(params, "", fields, err) < 0)
        return -1;
    const json_t *sharing = strict_json_field(params, "sharing");
    return sharing ? parse_sharing(sharing, e->kind == NVIDIA_GPU_CONFIG, e, err) : 0;
}

static int parse_vfio(const json_t *params, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"apiVersion", "kind", "iommu", NULL};
    static const char *const iommu_fields[] = {"backendPolicy", "enableAPIDevice", NULL};
    e->iommu_backend = iommu_policies[0];
    if (strict_json_check_fields(params, "", fields, err) < 0)
        return -1;
    const json_t *iommu = strict_json_field(params, "iommu");
    if (iommu == NULL)
        return 0;
    if (strict_json_object_of(iommu, "iommu", iommu_fields, err) < 0)
        return -1;
    const json_t *policy = strict_json_field(iommu, "backendPolicy");
    size_t k = 0;
    /* An empty policy is LegacyOnly, as the real driver normalizes it. */
    if (policy != NULL && !(json_is_string(policy) && json_string_length(policy) == 0) &&
        want_one_of(policy, "iommu.backendPolicy", iommu_policies, N(iommu_policies), &k, err) < 0)
        return -1;
    e->iommu_backend = iommu_policies[k];
    return want_bool(strict_json_field(iommu, "enableAPIDevice"), "iommu.enableAPIDevice",
                     &e->iommu_api_device, err);
}

static int parse_parameters(const json_t *params, struct entry *e, struct error *err)
{
    if (!json_is_object(params))
        return error_set(err, "must be a JSON object");
    const json_t *api = json_object_get(params, "apiVersion");
    const json_t *kind = json_object_get(params, "kind");
    if (!json_is_string(api))
        return error_set(err, "field \"apiVersion\" is required (want %s)",
                         NVIDIA_CONFIG_API_VERSION);
    if (strcmp(json_string_value(api), NVIDIA_CONFIG_API_VERSION) != 0)
        return error_set(err, "apiVersion \"%s\" is not supported (want %s)",
                         json_string_value(api), NVIDIA_CONFIG_API_VERSION);
    if (!json_is_string(kind))
        return error_set(err, "field \"kind\" is required (want GpuConfig, MigDeviceConfig or "
                              "VfioDeviceConfig)");
    for (size_t k = 0; k < N(kinds); k++)
        if (!strcmp(json_string_value(kind), kinds[k].name)) {
            e->kind = kinds[k].kind;
            return kinds[k].parse(params, e, err);
        }
    return error_set(err,
                     "kind \"%s\" is not supported (want GpuConfig, MigDeviceConfig or "
                     "VfioDeviceConfig)",
                     json_string_value(kind));
}

/* Parses config[i]: 1 when it is for this driver, 0 when not, -1 on error. */
static int parse_entry(const char *driver, const json_t *item, size_t i, struct entry *e,
                       struct error *err)
{
    memset(e, 0, sizeof(*e));
    e->index = (long)i;
    e->percentage = -1;
    struct config_entry head;
    int r = config_entry_read(driver, item, i, true, &head, err);
    if (r <= 0)
        return r;
    e->source = head.source;
    e->requests = head.requests;
    if (parse_parameters(head.parameters, e, err) < 0)
        return error_prefix(err, "config[%zu] (%s): parameters", i, e->source);
    return 1;
}

static enum nvidia_config_kind kind_of(const struct fakehw_device *d)
{
    return d->parent[0] ? NVIDIA_MIG_DEVICE_CONFIG
           : d->vfio    ? NVIDIA_VFIO_DEVICE_CONFIG
                        : NVIDIA_GPU_CONFIG;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The MPS limits of entry e over the devices it applies to (chosen[i] ==
 * e): the default for each, then the per-device ones, whose keys are a
 * device's UUID or its index in the sorted UUIDs. */
static int mps_limits(const struct entry *e, const struct entry *const *chosen,
                      const struct fakehw_device *devs, size_t n, struct nvidia_config *out,
                      struct error *err)
{
    cleanup_free const char **uuids = calloc(n ? n : 1, sizeof(*uuids));
    cleanup_free uint64_t *mib = calloc(n ? n : 1, sizeof(*mib));
    size_t k = 0;
    if (uuids == NULL || mib == NULL)
        return error_set(err, "config: out of memory");
    for (size_t i = 0; i < n; i++)
        if (chosen[i] == e)
            uuids[k++] = devs[i].uuid;
    qsort(uuids, k, sizeof(*uuids), by_string);
    for (size_t j = 0; j < k; j++)
        mib[j] = e->pinned_default_mib;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)e->per_device, key, v)
    {
        size_t j = 0;
        while (j < k && strcmp(uuids[j], key) != 0)
            j++;
        if (j == k) {
            char *end;
            errno = 0;
            long idx = strtol(key, &end, 10);
            if (*key == '\0' || *end != '\0' || errno != 0 || idx < 0 || (size_t)idx >= k)
                return error_set(
                    err,
                    "config[%ld] (%s): parameters: field "
                    "\"sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit\": \"%s\" is "
                    "neither the UUID nor the index (0..%zu) of a device it applies to",
                    e->index, e->source, key, k ? k - 1 : 0);
            j = (size_t)idx;
        }
        struct error ignored;
        (void)want_limit(v, "", &mib[j], &ignored); /* checked when parsed */
    }
    char list[sizeof(out->pinned_limits)] = "";
    for (size_t j = 0; j < k; j++) {
        if (mib[j] == 0)
            continue;
        size_t used = strlen(list);
        int w = snprintf(list + used, sizeof(list) - used, "%s%s=%lluM", used ? "," : "", uuids[j],
                         (unsigned long long)mib[j]);
        if (w < 0 || (size_t)w >= sizeof(list) - used)
            return error_set(
                err, "config[%ld] (%s): the pinned memory limits of %zu devices are too long",
                e->index, e->source, k);
    }
    for (size_t i = 0; i < n; i++) {
        if (chosen[i] != e)
            continue;
        snprintf(out[i].pinned_limits, sizeof(out[i].pinned_limits), "%s", list);
        for (size_t j = 0; j < k; j++)
            if (!strcmp(uuids[j], devs[i].uuid))
                out[i].pinned_limit_mib = mib[j];
    }
    return 0;
}

static void fill(struct nvidia_config *c, const struct entry *e, enum nvidia_config_kind kind)
{
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->entry = -1;
    c->active_thread_percentage = -1;
    c->iommu_backend = iommu_policies[0]; /* the default VfioDeviceConfig: LegacyOnly */
    if (e == NULL)
        return; /* the default: no sharing */
    c->entry = e->index;
    c->source = e->source;
    c->sharing = e->sharing;
    c->interval = e->interval;
    c->active_thread_percentage = e->percentage;
    c->multi_user = e->multi_user;
    c->iommu_backend = e->iommu_backend;
    c->iommu_api_device = e->iommu_api_device;
}

/* The real driver prepares the VFIO devices of a claim as one group with
 * one config: VFIO devices whose configs are different entries (or an
 * entry and the default) are refused, as its prepareDevices does. */
static int one_vfio_group(const struct entry *const *chosen, const struct fakehw_device *devs,
                          size_t n, struct error *err)
{
    size_t first = n, groups = 0;
    for (size_t i = 0; i < n; i++) {
        if (kind_of(&devs[i]) != NVIDIA_VFIO_DEVICE_CONFIG)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = kind_of(&devs[j]) == NVIDIA_VFIO_DEVICE_CONFIG && chosen[j] == chosen[i];
        groups += !seen;
        if (first == n)
            first = i;
    }
    if (groups <= 1)
        return 0;
    return error_set(err,
                     "it contains %zu VFIO device groups (its VFIO devices, from %s on, get "
                     "different VfioDeviceConfigs), but at most one is supported per claim",
                     groups, devs[first].name);
}

int nvidia_config_resolve(const char *driver, const json_t *config, const char *const *requests,
                          const struct fakehw_device *devs, size_t n, struct nvidia_config *out,
                          struct error *err)
{
    if (config != NULL && !json_is_array(config))
        return error_set(err, "status.allocation.devices.config must be a list");
    size_t total = json_array_size(config), k = 0;
    cleanup_free struct entry *entries = calloc(total ? total : 1, sizeof(*entries));
    cleanup_free const struct entry **chosen = calloc(n ? n : 1, sizeof(*chosen));
    if (entries == NULL || chosen == NULL)
        return error_set(err, "config: out of memory");
    /* FromClass entries first, then FromClaim, each in list order. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < total; i++) {
            const json_t *src = json_object_get(json_array_get(config, i), "source");
            bool from_class = json_is_string(src) && !strcmp(json_string_value(src), "FromClass");
            if (from_class != (pass == 0))
                continue;
            int r = parse_entry(driver, json_array_get(config, i), i, &entries[k], err);
            if (r < 0)
                return -1;
            k += (size_t)r;
        }
    for (size_t i = 0; i < n; i++) {
        enum nvidia_config_kind want = kind_of(&devs[i]);
        for (size_t j = k; j-- > 0 && chosen[i] == NULL;) {
            const struct entry *e = &entries[j];
            if (e->requests != NULL && config_entry_names_request(e->requests, requests[i])) {
                if (e->kind != want)
                    return error_set(err,
                                     "config[%ld] (%s): a %s cannot apply to device %s of type %s "
                                     "(request %s)",
                                     e->index, e->source, kinds[e->kind].name, devs[i].name,
                                     kinds[want].device_type, requests[i]);
                chosen[i] = e;
            } else if (e->requests == NULL && e->kind == want) {
                chosen[i] = e;
            }
        }
        fill(&out[i], chosen[i], want);
    }
    if (one_vfio_group(chosen, devs, n, err) < 0)
        return -1;
    for (size_t j = 0; j < k; j++) {
        bool used = false;
        for (size_t i = 0; i < n && !used; i++)
            used = chosen[i] == &entries[j];
        if (used && entries[j].sharing == NVIDIA_SHARING_MPS &&
            mps_limits(&entries[j], chosen, devs, n, out, err) < 0)
            return -1;
    }
    return 0;
}

json_t *nvidia_config_json(const struct nvidia_config *c)
{
    json_auto_t *o = json_pack("{s:s}", "kind", nvidia_config_kind_name(c->kind));
    if (o == NULL)
        return NULL;
    if (c->entry >= 0 && (json_object_set_new(o, "source", json_string(c->source)) < 0 ||
                          json_object_set_new(o, "entry", json_integer(c->entry)) < 0))
        return NULL;
    json_t *sharing = NULL;
    if (c->sharing == NVIDIA_SHARING_TIME_SLICING)
        sharing = c->interval ? json_pack("{s:s, s:{s:s}}", "strategy", "TimeSlicing",
                                          "timeSlicingConfig", "interval", c->interval)
                              : json_pack("{s:s}", "strategy", "TimeSlicing");
    if (c->sharing == NVIDIA_SHARING_MPS) {
        json_t *mps = json_pack("{s:b}", "multiUser", c->multi_user);
        char limit[32];
        snprintf(limit, sizeof(limit), "%lluM", (unsigned long long)c->pinned_limit_mib);
        if (mps == NULL ||
            (c->active_thread_percentage >= 0 &&
             json_object_set_new(mps, "defaultActiveThreadPercentage",
                                 json_integer(c->active_thread_percentage)) < 0) ||
            (c->pinned_limit_mib &&
             json_object_set_new(mps, "pinnedDeviceMemoryLimit", json_string(limit)) < 0)) {
            json_decref(mps);
            return NULL;
        }
        sharing = json_pack("{s:s, s:o}", "strategy", "MPS", "mpsConfig", mps);
    }
    if (c->sharing != NVIDIA_SHARING_NONE &&
        (sharing == NULL || json_object_set_new(o, "sharing", sharing) < 0))
        return NULL;
    if (c->kind == NVIDIA_VFIO_DEVICE_CONFIG &&
        json_object_set_new(o, "iommu",
                            json_pack("{s:s, s:b}", "backendPolicy", c->iommu_backend,
                                      "enableAPIDevice", c->iommu_api_device)) < 0)
        return NULL;
    return steal_pointer(&o);
}

static const char *str_at(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

json_t *nvidia_config_claim_data(const char *driver, const char *pool, const json_t *claim,
                                 size_t result, nvidia_device_find_fn find, void *find_ctx)
{
    const json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
    const json_t *devices = json_object_get(alloc, "devices");
    const json_t *results = json_object_get(devices, "results");
    size_t total = json_array_size(results), n = 0, mine = total;
    cleanup_free struct fakehw_device *devs = calloc(total ? total : 1, sizeof(*devs));
    cleanup_free const char **requests = calloc(total ? total : 1, sizeof(*requests));
    cleanup_free struct nvidia_config *out = calloc(total ? total : 1, sizeof(*out));
    if (devs == NULL || requests == NULL || out == NULL)
        return NULL;
    for (size_t i = 0; i < total; i++) {
        const json_t *r = json_array_get(results, i);
        const char *d = str_at(r, "driver"), *p = str_at(r, "pool"), *name = str_at(r, "device");
        if (d == NULL || p == NULL || name == NULL || strcmp(d, driver) || strcmp(p, pool))
            continue;
        const struct fakehw_device *dev = find(find_ctx, name);
        requests[n] = str_at(r, "request");
        if (dev == NULL || requests[n] == NULL)
            return NULL;
        devs[n] = *dev;
        if (i == result)
            mine = n;
        n++;
    }
    struct error err;
    if (mine < total && nvidia_config_resolve(driver, json_object_get(devices, "config"), requests,
                                              devs, n, out, &err) == 0)
        return nvidia_config_json(&out[mine]);
    return NULL;
}
