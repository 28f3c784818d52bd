// SPDX-License-Identifier: Apache-2.0
#include "cdi_spec.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi_names.h"
#include "cleanup.h"
#include "driver/device/personality.h"

static int make_kind(const char *vendor_prefix, const char *driver, const char *class, char *buf,
                     size_t size, struct error *err)
{
    int n = snprintf(buf, size, "%s%s/%s", vendor_prefix, driver, class);
    if (n < 0 || (size_t)n >= size)
        return error_set(err, "CDI kind for driver %s is too long", driver);
    return cdi_check_kind(buf, err);
}

int cdi_claim_kind(const char *driver, char *buf, size_t size, struct error *err)
{
    return make_kind("k8s.", driver, CDI_CLAIM_CLASS, buf, size, err);
}

int cdi_metadata_kind(const char *driver, char *buf, size_t size, struct error *err)
{
    return make_kind("", driver, CDI_METADATA_CLASS, buf, size, err);
}

/* Appends a formatted "K=V" string to the array. */
static int append_env(json_t *env, struct error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int append_env(json_t *env, struct error *err, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0 || json_array_append_new(env, json_string(s)) < 0) {
        free(s);
        return error_set(err, "CDI env: out of memory");
    }
    free(s);
    return 0;
}

static json_t *bind_mount(const char *host, const char *container)
{
    return json_pack("{s:s, s:s, s:[s,s]}", "hostPath", host, "containerPath", container, "options",
                     "ro", "bind");
}

/* The sharing env of one device, with a prefix ("FAKEHW_DEVICE_3_" or "FAKEHW_"). */
static int sharing_env(json_t *env, const char *prefix, const struct gpu_config *g,
                       struct error *err)
{
    if (append_env(env, err, "%sSHARING_STRATEGY=%s", prefix,
                   gpu_sharing_strategy_name(g->strategy)) < 0)
        return -1;
    if (g->strategy == GPU_SHARING_SPACE_PARTITIONING)
        return append_env(env, err, "%sPARTITION_COUNT=%ld", prefix, g->partition_count);
    return append_env(env, err, "%sTIMESLICE_INTERVAL=%s", prefix, g->interval);
}

/* The env of an NVIDIA config (nvidia_config.h), as far as a container
 * without CUDA sees it: the real driver's CUDA_MPS_PIPE_DIRECTORY, the
 * client variables that carry the MPS daemon's defaults, and the strategy
 * and interval under the device's prefix as the fakehw personality names
 * them. */
static int nvidia_env(json_t *env, const char *prefix, const struct nvidia_config *c,
                      struct error *err)
{
    if (c->sharing == NVIDIA_SHARING_NONE)
        return 0;
    if (append_env(env, err, "%sSHARING_STRATEGY=%s", prefix, nvidia_sharing_name(c->sharing)) < 0)
        return -1;
    if (c->sharing == NVIDIA_SHARING_TIME_SLICING)
        return c->interval ? append_env(env, err, "%sTIMESLICE_INTERVAL=%s", prefix, c->interval)
                           : 0;
    if (append_env(env, err, "CUDA_MPS_PIPE_DIRECTORY=%s", NVIDIA_MPS_PIPE_DIRECTORY) < 0 ||
        (c->active_thread_percentage >= 0 &&
         append_env(env, err, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%ld",
                    c->active_thread_percentage) < 0) ||
        (c->pinned_limits[0] &&
         append_env(env, err, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s", c->pinned_limits) < 0) ||
        (c->pinned_limit_mib && append_env(env, err, "%sMPS_PINNED_DEVICE_MEM_LIMIT=%lluM", prefix,
                                           (unsigned long long)c->pinned_limit_mib) < 0))
        return -1;
    return 0;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The config's env map in name order, so the spec text is deterministic. */
static int user_env(json_t *env, const json_t *map, struct error *err)
{
    size_t n = json_object_size(map);
    if (n == 0)
        return 0;
    const char **names = calloc(n, sizeof(*names));
    if (names == NULL)
        return error_set(err, "CDI env: out of memory");
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)map, key, v)
    {
        names[k++] = key;
    }
    qsort(names, k, sizeof(*names), compare_strings);
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = append_env(env, err, "%s=%s", names[i],
                        json_string_value(json_object_get(map, names[i])));
    free(names);
    return rc;
}

/* The env of the fakehw personality's GpuConfig: sharing under the
 * device's prefix and container-wide, then the config's own variables. */
static int config_env(json_t *env, const char *prefix, const struct gpu_config *g,
                      struct error *err)
{
    if (sharing_env(env, prefix, g, err) < 0 || sharing_env(env, "FAKEHW_", g, err) < 0 ||
        user_env(env, g->env, err) < 0)
        return -1;
    return 0;
}

static int name_device(struct cdi_claim *c, size_t i, struct error *err)
{
    size_t repeat = 0;
    for (size_t j = 0; j < i; j++)
        repeat += !strcmp(c->devices[j].dev->name, c->devices[i].dev->name);
    char *out = c->devices[i].cdi_name;
    int n = repeat
                ? snprintf(out, CDI_NAME_MAX, "%s-%s_%zu", c->uid, c->devices[i].dev->name, repeat)
                : snprintf(out, CDI_NAME_MAX, "%s-%s", c->uid, c->devices[i].dev->name);
    if (n < 0 || n >= CDI_NAME_MAX)
        return error_set(err, "CDI device name for %s is too long", c->devices[i].dev->name);
    return cdi_check_device_name(out, err);
}

static json_t *oom(struct error *err)
{
    error_set(err, "CDI spec: out of memory");
    return NULL;
}

/* The env of one device, under its prefix ("FAKEHW_DEVICE_3_"). */
static int device_env(json_t *env, const struct cdi_claim_device *d, struct error *err)
{
    const struct fakehw_device *dev = d->dev;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "FAKEHW_DEVICE_%ld_", dev->index);
    if (append_env(env, err, "%sUUID=%s", prefix, dev->uuid) < 0 ||
        append_env(env, err, "%sNAME=%s", prefix, dev->name) < 0 ||
        append_env(env, err, "%sREQUEST=%s", prefix, d->request) < 0 ||
        (d->share_id && append_env(env, err, "%sSHARE_ID=%s", prefix, d->share_id) < 0) ||
        (d->memory &&
         append_env(env, err, "%sMEMORY=%llu", prefix, (unsigned long long)d->memory) < 0))
        return -1;
    return d->nvidia ? nvidia_env(env, prefix, d->nvidia, err)
                     : config_env(env, prefix, d->config, err);
}

/* Appends the read-only bind mount of <fakehw host root>/devices/<dir>. */
static int mount_device_dir(json_t *mounts, const struct cdi_claim *c, const char *dir,
                            const char *name, struct error *err)
{
    char path[FAKEHW_PATH_MAX + FAKEHW_NAME_MAX + 16];
    if (snprintf(path, sizeof(path), "%s/%s/%s", c->fakehw_host_root, FAKEHW_DIR_DEVICES, dir) >=
        (int)sizeof(path))
        return error_set(err, "fakehw path of %s is too long", name);
    if (json_array_append_new(mounts, bind_mount(path, path)) < 0)
        return error_set(err, "CDI spec: out of memory");
    return 0;
}

static bool is_vfio(const struct cdi_claim_device *d)
{
    return d->nvidia != NULL && d->nvidia->kind == NVIDIA_VFIO_DEVICE_CONFIG;
}

/* A VFIO device's node: its IOMMU group's /dev/vfio/<group>, from the node
 * fakehw made for it; none without (fakehw without --dev-dir). */
static int vfio_device_nodes(json_t *edits, const struct fakehw_device *dev, struct error *err)
{
    if (dev->vfio_device_path[0] == '\0')
        return 0;
    char node[64];
    snprintf(node, sizeof(node), "%s/%ld", CDI_VFIO_DIR, dev->iommu_group);
    json_t *nodes = json_pack("[{s:s, s:s}]", "path", node, "hostPath", dev->vfio_device_path);
    if (json_object_set_new(edits, "deviceNodes", nodes) < 0)
        return error_set(err, "CDI spec: out of memory");
    return 0;
}

static json_t *device_edits(const struct cdi_claim *c, const struct cdi_claim_device *d,
                            struct error *err)
{
    const struct fakehw_device *dev = d->dev;
    json_auto_t *edits = json_object();
    json_t *env = json_array();
    if (json_object_set_new(edits, "env", env) < 0) /* takes env, also when it fails */
        return oom(err);
    if (device_env(env, d, err) < 0)
        return NULL;
    /* Passed through: the group's node, nothing of the GPU's driver. */
    if (is_vfio(d))
        return vfio_device_nodes(edits, dev, err) < 0 ? NULL : steal_pointer(&edits);
    if (dev->device_path[0]) {
        char node[64];
        snprintf(node, sizeof(node), "/dev/fakegpu%ld", dev->minor);
        json_t *nodes = json_pack("[{s:s, s:s}]", "path", node, "hostPath", dev->device_path);
        if (json_object_set_new(edits, "deviceNodes", nodes) < 0)
            return oom(err);
    }
    json_t *mounts = json_array();
    if (json_object_set_new(edits, "mounts", mounts) < 0)
        return oom(err);
    if (mount_device_dir(mounts, c, fakehw_device_dir(dev), dev->name, err) < 0)
        return NULL;
    /* A MIG partition: its GPU's directory too (read for the GPU row that
     * fakegpu-smi -L lists the partition under, as nvidia-smi -L does). */
    if (dev->parent[0] != '\0' &&
        mount_device_dir(mounts, c, fakehw_device_parent_dir(dev), dev->parent, err) < 0)
        return NULL;
    return steal_pointer(&edits);
}

/* FAKEHW_VISIBLE_DEVICES: the claim's UUIDs, comma-separated (caller
 * frees); NULL when out of memory. */
static char *visible_devices(const struct cdi_claim *c)
{
    char *visible = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&visible, &len);
    if (f == NULL)
        return NULL;
    for (size_t i = 0; i < c->n_devices; i++)
        fprintf(f, "%s%s", i ? "," : "", c->devices[i].dev->uuid);
    if (fclose(f) != 0) {
        free(visible);
        return NULL;
    }
    return visible;
}

/* fakegpu-smi, and under nvidia-smi's path too where workloads written for
 * NVIDIA's driver call it. */
static int smi_mounts(json_t *edits, const struct cdi_claim *c)
{
    json_t *mounts = json_pack("[o]", bind_mount(c->fakegpu_smi, CDI_SMI_PATH));
    if (mounts != NULL && c->nvidia_smi &&
        json_array_append_new(mounts, bind_mount(c->fakegpu_smi, CDI_NVIDIA_SMI_PATH)) < 0) {
        json_decref(mounts);
        return -1;
    }
    return json_object_set_new(edits, "mounts", mounts);
}

/* The claim's first VFIO device, or NULL. */
static const struct cdi_claim_device *first_vfio(const struct cdi_claim *c)
{
    for (size_t i = 0; i < c->n_devices; i++)
        if (is_vfio(&c->devices[i]))
            return &c->devices[i];
    return NULL;
}

/* The claim-wide edits of VFIO devices, as the real driver's
 * GetCommonEdits makes them: NVIDIA_VISIBLE_DEVICES=void, and with
 * iommu.enableAPIDevice the VFIO container node /dev/vfio/vfio (also for
 * PreferIommuFD: fakehw has no /dev/iommu, and the real driver falls back
 * to the legacy node then).  Its host node is <dir>/vfio beside the
 * group's node <dir>/<group>. */
static int vfio_claim_edits(json_t *edits, json_t *env, const struct cdi_claim_device *v,
                            struct error *err)
{
    if (append_env(env, err, "NVIDIA_VISIBLE_DEVICES=void") < 0)
        return -1;
    const char *group = v->dev->vfio_device_path;
    const char *slash = strrchr(group, '/');
    if (!v->nvidia->iommu_api_device || slash == NULL)
        return 0;
    char host[FAKEHW_PATH_MAX + 8];
    snprintf(host, sizeof(host), "%.*s/%s", (int)(slash - group), group, CDI_VFIO_CONTROL);
    json_t *nodes =
        json_pack("[{s:s, s:s}]", "path", CDI_VFIO_DIR "/" CDI_VFIO_CONTROL, "hostPath", host);
    if (json_object_set_new(edits, "deviceNodes", nodes) < 0)
        return error_set(err, "CDI spec: out of memory");
    return 0;
}

/* Whether any device of the claim is not passed through (gets fakegpu-smi). */
static bool any_gpu(const struct cdi_claim *c)
{
    for (size_t i = 0; i < c->n_devices; i++)
        if (!is_vfio(&c->devices[i]))
            return true;
    return false;
}

/* Edits applied once per container that gets any device of the claim. */
static json_t *claim_edits(const struct cdi_claim *c, struct error *err)
{
    json_auto_t *edits = json_object();
    json_t *env = json_array();
    cleanup_free char *visible = visible_devices(c);
    if (json_object_set_new(edits, "env", env) < 0 || visible == NULL)
        return oom(err);
    if (append_env(env, err, "DRA_RESOURCE_DRIVER_NAME=%s", c->driver) < 0 ||
        append_env(env, err, "DRA_CLAIM_NAMESPACE=%s", c->ns) < 0 ||
        append_env(env, err, "DRA_CLAIM_NAME=%s", c->name) < 0 ||
        append_env(env, err, "DRA_CLAIM_UID=%s", c->uid) < 0 ||
        append_env(env, err, "FAKEHW_ROOT=%s", c->fakehw_host_root) < 0 ||
        append_env(env, err, "FAKEHW_VISIBLE_DEVICES=%s", visible) < 0)
        return NULL;
    const struct cdi_claim_device *vfio = first_vfio(c);
    if (vfio != NULL && vfio_claim_edits(edits, env, vfio, err) < 0)
        return NULL;
    if (c->fakegpu_smi && c->fakegpu_smi[0] && any_gpu(c) && smi_mounts(edits, c) < 0)
        return oom(err);
    return steal_pointer(&edits);
}

json_t *cdi_claim_spec(struct cdi_claim *c, struct error *err)
{
    char kind[CDI_NAME_MAX];
    if (c->n_devices == 0) {
        error_set(err, "a CDI spec needs at least one device");
        return NULL;
    }
    if (cdi_claim_kind(c->driver, kind, sizeof(kind), err) < 0)
        return NULL;
    json_t *edits = claim_edits(c, err);
    if (edits == NULL)
        return NULL;
    json_auto_t *spec = json_pack("{s:s, s:s, s:o, s:[]}", "cdiVersion", CDI_VERSION, "kind", kind,
                                  "containerEdits", edits, "devices");
    if (spec == NULL)
        return oom(err);
    json_t *devices = json_object_get(spec, "devices");
    for (size_t i = 0; i < c->n_devices; i++) {
        if (name_device(c, i, err) < 0)
            return NULL;
        json_t *dev_edits = device_edits(c, &c->devices[i], err);
        if (dev_edits == NULL)
            return NULL;
        json_t *d =
            json_pack("{s:s, s:o}", "name", c->devices[i].cdi_name, "containerEdits", dev_edits);
        if (d == NULL || json_array_append_new(devices, d) < 0)
            return oom(err);
    }
    return steal_pointer(&spec);
}

json_t *cdi_metadata_spec(const char *driver, const char *uid, const char *request,
                          const char *host_path, const char *container_path, struct error *err)
{
    char kind[CDI_NAME_MAX], name[CDI_NAME_MAX];
    if (cdi_metadata_kind(driver, kind, sizeof(kind), err) < 0)
        return NULL;
    int n = snprintf(name, sizeof(name), "%s_%s", uid, request);
    if (n < 0 || n >= (int)sizeof(name) || cdi_check_device_name(name, err) < 0) {
        if (n >= (int)sizeof(name))
            error_set(err, "CDI device name for request %s is too long", request);
        return NULL;
    }
    json_t *spec = json_pack("{s:s, s:s, s:[{s:s, s:{s:[o]}}]}", "cdiVersion", CDI_VERSION, "kind",
                             kind, "devices", "name", name, "containerEdits", "mounts",
                             bind_mount(host_path, container_path));
    if (spec == NULL)
        error_set(err, "CDI spec: out of memory");
    return spec;
}

char *cdi_spec_text(const json_t *spec)
{
    char *body = json_dumps(spec, JSON_INDENT(2));
    if (body == NULL)
        return NULL;
    char *text = NULL;
    if (asprintf(&text, "%s\n", body) < 0)
        text = NULL;
    free(body);
    return text;
}
