// SPDX-License-Identifier: Apache-2.0
/* The live inventory: see inventory.h. */
#include "inventory.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devnodes.h"
#include "grow.h"
#include "monotonic.h"
#include "name_index.h"
#include "utf8.h"
#include "fakehw_attach.h"

struct live_device {
    struct gpu_device cfg; /* as configured */
    bool healthy;
    char reason[FAKEHW_REASON_MAX];
    int64_t since; /* Unix seconds of the last change of health or xid */
    long xid;      /* the last XID reported, 0: none */
    struct attach_live attach;
};

struct live_inventory {
    pthread_mutex_t lock;
    char node[256];
    char dev_dir[FAKEHW_PATH_MAX];
    uint64_t generation;
    int64_t loaded_at;  /* mtime of the static files */
    int64_t changed_at; /* mtime of generation */
    struct live_device *devs;
    size_t n;
    size_t *by_name; /* indices sorted by name */
    inventory_listener listener;
    void *listener_ctx;
    inventory_attach_waker attach_waker;
    void *attach_waker_ctx;
};

/* The attribute files, in tree order, NULL-terminated. */
#define FILE_NAME(id, file, kind, field, since, slice) file,
static const char *const attributes[FAKEHW_ATTR_COUNT + 1] = {FAKEHW_DEVICE_ATTRIBUTES(FILE_NAME)
                                                                  NULL};
#undef FILE_NAME

const char *const *inventory_attributes(void)
{
    return attributes;
}

static int attr_index(const char *name)
{
    for (int i = 0; i < FAKEHW_ATTR_COUNT; i++)
        if (!strcmp(attributes[i], name))
            return i;
    return -1;
}

bool inventory_attribute_writable(const char *attr)
{
    return !strcmp(attr, FAKEHW_ATTR(HEALTH)) || !strcmp(attr, FAKEHW_ATTR(ATTACH)) ||
           !strcmp(attr, FAKEHW_ATTR(XID));
}

static int64_t now_seconds(void)
{
    return (int64_t)time(NULL);
}

static int compare_names(const void *a, const void *b, void *ctx)
{
    const struct live_device *devs = ctx;
    return strcmp(devs[*(const size_t *)a].cfg.name, devs[*(const size_t *)b].cfg.name);
}

/* Builds the live devices and the name index for devs; old (may be NULL)
 * donates the health of unchanged devices. */
static int build(const struct gpu_device *devs, size_t n, const struct live_inventory *old,
                 struct live_device **out, size_t **by_name, bool *changed, struct error *err);

static const char *live_name(const void *items, size_t i)
{
    return ((const struct live_device *)items)[i].cfg.name;
}

static struct live_device *find_locked(const struct live_inventory *inv, const char *name)
{
    long i = name_index_find(inv->by_name, inv->n, live_name, inv->devs, name);
    return i < 0 ? NULL : &inv->devs[i];
}

/* render_config_attr's answer for an attribute whose value is live state. */
#define LIVE_ATTR (-2)

/* The count engine attribute a (multiprocessors .. ofaEngines) renders. */
static int engine_count(const struct mig_engines *e, enum fakehw_attr_id a)
{
    _Static_assert(FAKEHW_ATTR_ID_OFA_ENGINES - FAKEHW_ATTR_ID_MULTIPROCESSORS == 5,
                   "the engine attributes are one run of the table, in this order");
    const int counts[] = {e->multiprocessors, e->copy_engines, e->decoders,
                          e->encoders,        e->jpeg_engines, e->ofa_engines};
    return counts[a - FAKEHW_ATTR_ID_MULTIPROCESSORS];
}

/* Renders attribute a of a configured device into buf ("value\n"), or
 * returns LIVE_ATTR when its value is not the config's (health, attach, the
 * device node's path: render_attr_locked has those).  Every attribute of
 * the table has its case here, so -Wswitch names a new one's value source. */
static int render_config_attr(const struct gpu_device *c, enum fakehw_attr_id a, char *buf,
                              size_t size)
{
    switch (a) {
    case FAKEHW_ATTR_ID_NAME:
        return snprintf(buf, size, "%s\n", c->name);
    case FAKEHW_ATTR_ID_INDEX:
        return snprintf(buf, size, "%ld\n", c->index);
    case FAKEHW_ATTR_ID_UUID:
        return snprintf(buf, size, "%s\n", c->uuid);
    case FAKEHW_ATTR_ID_PRODUCT_NAME:
        return snprintf(buf, size, "%s\n", c->product_name);
    case FAKEHW_ATTR_ID_ARCHITECTURE:
        return snprintf(buf, size, "%s\n", c->architecture);
    case FAKEHW_ATTR_ID_BRAND:
        return snprintf(buf, size, "%s\n", c->brand);
    case FAKEHW_ATTR_ID_MEMORY:
        return snprintf(buf, size, "%" PRIu64 "\n", c->memory_bytes);
    case FAKEHW_ATTR_ID_COMPUTE_CAPABILITY:
        return snprintf(buf, size, "%s\n", c->compute_capability);
    case FAKEHW_ATTR_ID_DRIVER_VERSION:
        return snprintf(buf, size, "%s\n", c->driver_version);
    case FAKEHW_ATTR_ID_CUDA_DRIVER_VER:
        return snprintf(buf, size, "%s\n", c->cuda_driver_version);
    case FAKEHW_ATTR_ID_PCI_BUS_ID:
        return snprintf(buf, size, "%s\n", c->pci_bus_id);
    case FAKEHW_ATTR_ID_PCIE_ROOT:
        return snprintf(buf, size, "%s\n", c->pcie_root);
    case FAKEHW_ATTR_ID_NUMA_NODE:
        return snprintf(buf, size, "%ld\n", c->numa_node);
    case FAKEHW_ATTR_ID_MINOR:
        return snprintf(buf, size, "%ld\n", c->minor);
    case FAKEHW_ATTR_ID_VIRTUAL:
        return snprintf(buf, size, "%s\n", c->virtual_gpu ? "true" : "false");
    case FAKEHW_ATTR_ID_MIG_MODE:
        return snprintf(buf, size, "%s\n", gpu_mig_mode_name(c->mig_mode));
    case FAKEHW_ATTR_ID_PARENT:
        return snprintf(buf, size, "%s\n", c->parent);
    case FAKEHW_ATTR_ID_MIG_PROFILE:
        return snprintf(buf, size, "%s\n", c->mig_profile);
    case FAKEHW_ATTR_ID_MIG_PLACEMENT:
        if (c->parent[0] == '\0')
            return snprintf(buf, size, "\n");
        return snprintf(buf, size, "%ld:%ld\n", c->mig_start, c->mig_size);
    case FAKEHW_ATTR_ID_MEMORY_SHARING:
        if (c->share_default == 0)
            return snprintf(buf, size, "\n");
        return snprintf(buf, size, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", c->share_default,
                        c->share_min, c->share_step);
    case FAKEHW_ATTR_ID_MIG_PROFILE_ID:
        return snprintf(buf, size, "%d\n", c->mig_profile_id);
    case FAKEHW_ATTR_ID_MULTIPROCESSORS:
    case FAKEHW_ATTR_ID_COPY_ENGINES:
    case FAKEHW_ATTR_ID_DECODERS:
    case FAKEHW_ATTR_ID_ENCODERS:
    case FAKEHW_ATTR_ID_JPEG_ENGINES:
    case FAKEHW_ATTR_ID_OFA_ENGINES:
        return snprintf(buf, size, "%d\n", engine_count(&c->mig_engines, a));
    case FAKEHW_ATTR_ID_VFIO:
        return snprintf(buf, size, "%s\n", c->vfio ? "true" : "false");
    case FAKEHW_ATTR_ID_IOMMU_GROUP:
        return snprintf(buf, size, "%ld\n", c->iommu_group);
    case FAKEHW_ATTR_ID_PCI_DEVICE_ID:
        return snprintf(buf, size, "%s\n", c->pci_device_id);
    case FAKEHW_ATTR_ID_PCI_DEVICE_NAME:
        return snprintf(buf, size, "%s\n", c->pci_device_name);
    case FAKEHW_ATTR_ID_DEVICE_PATH:
    case FAKEHW_ATTR_ID_VFIO_DEVICE_PATH:
    case FAKEHW_ATTR_ID_HEALTH:
    case FAKEHW_ATTR_ID_HEALTH_REASON:
    case FAKEHW_ATTR_ID_HEALTH_SINCE:
    case FAKEHW_ATTR_ID_ATTACH:
    case FAKEHW_ATTR_ID_ATTACH_FAILURE:
    case FAKEHW_ATTR_ID_ATTACH_DELAY_MS:
    case FAKEHW_ATTR_ID_XID:
        return LIVE_ATTR;
    case FAKEHW_ATTR_COUNT:
        break;
    }
    return -1;
}

/* Whether a reload leaves a device as it was: every attribute the config
 * gives renders the same, and so does what the config sets beyond them (the
 * initial health and attach setup, the parent link). */
static bool same_config(const struct gpu_device *a, const struct gpu_device *b)
{
    char va[INVENTORY_FILE_MAX], vb[INVENTORY_FILE_MAX];
    for (int i = 0; i < FAKEHW_ATTR_COUNT; i++) {
        int na = render_config_attr(a, (enum fakehw_attr_id)i, va, sizeof(va));
        if (na == LIVE_ATTR)
            continue;
        int nb = render_config_attr(b, (enum fakehw_attr_id)i, vb, sizeof(vb));
        if (na < 0 || na != nb || memcmp(va, vb, (size_t)na) != 0)
            return false;
    }
    return a->healthy == b->healthy && !strcmp(a->health_reason, b->health_reason) &&
           a->attach.attachable == b->attach.attachable &&
           a->attach.delay_ms == b->attach.delay_ms && a->attach.failure == b->attach.failure &&
           a->parent_index == b->parent_index;
}

static int build(const struct gpu_device *devs, size_t n, const struct live_inventory *old,
                 struct live_device **out, size_t **by_name, bool *changed, struct error *err)
{
    struct live_device *live = calloc(n ? n : 1, sizeof(*live));
    size_t *idx = calloc(n ? n : 1, sizeof(*idx));
    if (live == NULL || idx == NULL) {
        free(live);
        free(idx);
        return error_set_and_errno(err, ENOMEM, "out of memory for %zu devices", n);
    }
    int64_t now = now_seconds();
    *changed = old == NULL || old->n != n;
    for (size_t i = 0; i < n; i++) {
        live[i].cfg = devs[i];
        const struct live_device *prev = old ? find_locked(old, devs[i].name) : NULL;
        if (prev != NULL && same_config(&prev->cfg, &devs[i])) {
            live[i].healthy = prev->healthy;
            memcpy(live[i].reason, prev->reason, sizeof(live[i].reason));
            live[i].since = prev->since;
            live[i].xid = prev->xid;
            live[i].attach = prev->attach;
        } else {
            attach_init(&live[i].attach, &devs[i].attach);
            live[i].healthy = devs[i].healthy;
            memcpy(live[i].reason, devs[i].health_reason, sizeof(live[i].reason));
            live[i].since = now;
            *changed = true;
        }
        idx[i] = i;
    }
    qsort_r(idx, n, sizeof(*idx), compare_names, live);
    for (size_t i = 1; i < n; i++) {
        if (!strcmp(live[idx[i - 1]].cfg.name, live[idx[i]].cfg.name)) {
            int rc =
                error_set_and_errno(err, EINVAL, "two devices are named %s", live[idx[i]].cfg.name);
            free(live);
            free(idx);
            return rc;
        }
    }
    *out = live;
    *by_name = idx;
    return 0;
}

/* Every value of the tree is one line: a control character (a newline
 * above all) would split a file, and a line of snapshot, in two. */
static bool has_control(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

struct live_inventory *inventory_new(const char *node, const char *dev_dir,
                                     const struct gpu_device *devs, size_t n, struct error *err)
{
    if (*node == '\0' || has_control(node)) {
        error_set_and_errno(err, EINVAL,
                            "node name \"%.64s\" is empty or holds a control character", node);
        return NULL;
    }
    if (has_control(dev_dir)) {
        error_set_and_errno(err, EINVAL, "device directory \"%.200s\" holds a control character",
                            dev_dir);
        return NULL;
    }
    struct live_inventory *inv = calloc(1, sizeof(*inv));
    if (inv == NULL) {
        error_set_and_errno(err, ENOMEM, "out of memory");
        return NULL;
    }
    bool changed;
    if (snprintf(inv->node, sizeof(inv->node), "%s", node) >= (int)sizeof(inv->node) ||
        snprintf(inv->dev_dir, sizeof(inv->dev_dir), "%s", dev_dir) >= (int)sizeof(inv->dev_dir)) {
        error_set_and_errno(err, ENAMETOOLONG, "node name or device directory too long");
        free(inv);
        return NULL;
    }
    if (build(devs, n, NULL, &inv->devs, &inv->by_name, &changed, err) < 0) {
        free(inv);
        return NULL;
    }
    pthread_mutex_init(&inv->lock, NULL);
    inv->n = n;
    inv->generation = 1;
    inv->loaded_at = inv->changed_at = now_seconds();
    return inv;
}

void inventory_free(struct live_inventory *inv)
{
    if (inv == NULL)
        return;
    pthread_mutex_destroy(&inv->lock);
    free(inv->devs);
    free(inv->by_name);
    free(inv);
}

void inventory_set_listener(struct live_inventory *inv, inventory_listener fn, void *ctx)
{
    inv->listener = fn;
    inv->listener_ctx = ctx;
}

uint64_t inventory_generation(struct live_inventory *inv)
{
    pthread_mutex_lock(&inv->lock);
    uint64_t g = inv->generation;
    pthread_mutex_unlock(&inv->lock);
    return g;
}

/* Bumps the generation (lock held); returns the new value. */
static uint64_t bump_locked(struct live_inventory *inv)
{
    inv->changed_at = now_seconds();
    return ++inv->generation;
}

static void notify(struct live_inventory *inv, uint64_t generation)
{
    if (inv->listener != NULL)
        inv->listener(inv->listener_ctx, generation);
}

int inventory_replace(struct live_inventory *inv, const struct gpu_device *devs, size_t n,
                      bool *changed, struct error *err)
{
    struct live_device *live;
    size_t *by_name;
    pthread_mutex_lock(&inv->lock);
    int rc = build(devs, n, inv, &live, &by_name, changed, err);
    if (rc == 0) {
        free(inv->devs);
        free(inv->by_name);
        inv->devs = live;
        inv->by_name = by_name;
        inv->n = n;
        if (*changed)
            inv->loaded_at = now_seconds();
    }
    uint64_t gen = rc == 0 && *changed ? bump_locked(inv) : 0;
    pthread_mutex_unlock(&inv->lock);
    if (gen != 0)
        notify(inv, gen);
    return rc;
}

int inventory_snapshot(struct live_inventory *inv, struct gpu_device **devs, size_t *n,
                       struct error *err)
{
    pthread_mutex_lock(&inv->lock);
    struct gpu_device *copy = calloc(inv->n ? inv->n : 1, sizeof(*copy));
    if (copy != NULL) {
        for (size_t i = 0; i < inv->n; i++)
            copy[i] = inv->devs[i].cfg;
        *n = inv->n;
    }
    pthread_mutex_unlock(&inv->lock);
    if (copy == NULL)
        return error_set_and_errno(err, ENOMEM, "out of memory");
    *devs = copy;
    return 0;
}

/* Applies a health change to d (lock held); true when something changed. */
static bool set_health_locked(struct live_device *d, bool healthy, const char *reason, int64_t now)
{
    if (reason == NULL)
        reason = "";
    if (d->healthy == healthy && !strcmp(d->reason, reason))
        return false;
    if (d->healthy != healthy)
        d->since = now;
    d->healthy = healthy;
    snprintf(d->reason, sizeof(d->reason), "%s", reason);
    return true;
}

static int check_reason(const char *reason, struct error *err)
{
    if (reason != NULL && strlen(reason) >= FAKEHW_REASON_MAX)
        return error_set_and_errno(err, EINVAL, "reason is longer than %d bytes",
                                   FAKEHW_REASON_MAX - 1);
    if (reason != NULL && has_control(reason))
        return error_set_and_errno(err, EINVAL, "reason holds a control character");
    /* The plugin puts reasons into UTF-8 only fields (health stream, claim
     * status): refused here, like other bad writes. */
    size_t bad = reason != NULL ? utf8_invalid_at(reason, strlen(reason)) : 0;
    if (reason != NULL && bad < strlen(reason))
        return error_set_and_errno(err, EINVAL, "reason is not valid UTF-8 (byte %zu)", bad);
    return 0;
}

/* Applies an XID change to d (lock held); true when something changed. */
static bool set_xid_locked(struct live_device *d, long xid, int64_t now)
{
    if (d->xid == xid)
        return false;
    d->xid = xid;
    d->since = now;
    return true;
}

static int check_xid(long xid, struct error *err)
{
    if (xid < 0 || xid > FAKEHW_XID_MAX)
        return error_set_and_errno(err, EINVAL, "xid: %ld is not an XID (1..%d, or 0 to clear)",
                                   xid, FAKEHW_XID_MAX);
    return 0;
}

/* A change of a device's live state: its health with a reason, or its XID. */
struct live_change {
    bool is_xid;
    bool healthy;
    const char *reason;
    long xid;
};

/* Applies c to d (lock held); true when something changed. */
static bool change_locked(struct live_device *d, const struct live_change *c, int64_t now)
{
    if (c->is_xid)
        return set_xid_locked(d, c->xid, now);
    return set_health_locked(d, c->healthy, c->reason, now);
}

/* Applies c to the device named device, or to every device when device is
 * NULL, and tells the listener the new generation when anything changed. */
static int apply_change(struct live_inventory *inv, const char *device, const struct live_change *c,
                        struct error *err)
{
    if ((c->is_xid ? check_xid(c->xid, err) : check_reason(c->reason, err)) < 0)
        return -1;
    pthread_mutex_lock(&inv->lock);
    int64_t now = now_seconds();
    struct live_device *d = device != NULL ? find_locked(inv, device) : NULL;
    bool changed = d != NULL && change_locked(d, c, now);
    for (size_t i = 0; device == NULL && i < inv->n; i++)
        changed = change_locked(&inv->devs[i], c, now) || changed;
    uint64_t gen = changed ? bump_locked(inv) : 0;
    pthread_mutex_unlock(&inv->lock);
    if (device != NULL && d == NULL)
        return error_set_and_errno(err, ENOENT, "no device %s on node %s", device, inv->node);
    if (gen != 0)
        notify(inv, gen);
    return 0;
}

int inventory_set_health(struct live_inventory *inv, const char *device, bool healthy,
                         const char *reason, struct error *err)
{
    return apply_change(inv, device, &(struct live_change){.healthy = healthy, .reason = reason},
                        err);
}

int inventory_set_health_all(struct live_inventory *inv, bool healthy, const char *reason,
                             struct error *err)
{
    return apply_change(inv, NULL, &(struct live_change){.healthy = healthy, .reason = reason},
                        err);
}

int health_parse_command(const char *buf, size_t len, bool *healthy, char *reason, size_t size,
                         struct error *err)
{
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            return error_set_and_errno(err, EINVAL, "health: control character in the value");
    size_t word = 0;
    while (word < len && buf[word] != ' ')
        word++;
    if (word == strlen(FAKEHW_HEALTHY) && !strncmp(buf, FAKEHW_HEALTHY, word))
        *healthy = true;
    else if (word == strlen(FAKEHW_UNHEALTHY) && !strncmp(buf, FAKEHW_UNHEALTHY, word))
        *healthy = false;
    else
        return error_set_and_errno(err, EINVAL, "health: \"%.*s\" is not healthy or unhealthy",
                                   (int)(word < 64 ? word : 64), buf);
    size_t rlen = word < len ? len - word - 1 : 0;
    if (rlen >= size || rlen >= FAKEHW_REASON_MAX)
        return error_set_and_errno(err, EINVAL, "health: the reason is longer than %d bytes",
                                   FAKEHW_REASON_MAX - 1);
    memcpy(reason, buf + len - rlen, rlen);
    reason[rlen] = '\0';
    return 0;
}

int inventory_write_health(struct live_inventory *inv, const char *device, const char *buf,
                           size_t len, struct error *err)
{
    bool healthy;
    char reason[FAKEHW_REASON_MAX];
    if (health_parse_command(buf, len, &healthy, reason, sizeof(reason), err) < 0)
        return -1;
    return inventory_set_health(inv, device, healthy, reason, err);
}

int inventory_set_xid(struct live_inventory *inv, const char *device, long xid, struct error *err)
{
    return apply_change(inv, device, &(struct live_change){.is_xid = true, .xid = xid}, err);
}

int inventory_set_xid_all(struct live_inventory *inv, long xid, struct error *err)
{
    return apply_change(inv, NULL, &(struct live_change){.is_xid = true, .xid = xid}, err);
}

int xid_parse_command(const char *buf, size_t len, long *xid, struct error *err)
{
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    long v = 0;
    bool digits = len > 0 && len <= 5 && !(len > 1 && buf[0] == '0');
    for (size_t i = 0; digits && i < len; i++) {
        digits = buf[i] >= '0' && buf[i] <= '9';
        v = v * 10 + (buf[i] - '0');
    }
    if (!digits || v > FAKEHW_XID_MAX) {
        char shown[32];
        size_t n = len < 16 ? len : 16;
        for (size_t i = 0; i < n; i++)
            shown[i] = (unsigned char)buf[i] < 0x20 || buf[i] == 0x7f ? '?' : buf[i];
        shown[n] = '\0';
        return error_set_and_errno(err, EINVAL,
                                   "xid: \"%s%s\" is not an XID (a decimal 1..%d, or 0 to clear)",
                                   shown, len > n ? "..." : "", FAKEHW_XID_MAX);
    }
    *xid = v;
    return 0;
}

int inventory_write_xid(struct live_inventory *inv, const char *device, const char *buf, size_t len,
                        struct error *err)
{
    long xid;
    if (xid_parse_command(buf, len, &xid, err) < 0)
        return -1;
    return inventory_set_xid(inv, device, xid, err);
}

void inventory_set_attach_waker(struct live_inventory *inv, inventory_attach_waker fn, void *ctx)
{
    inv->attach_waker = fn;
    inv->attach_waker_ctx = ctx;
}

int inventory_write_attach(struct live_inventory *inv, const char *device, const char *buf,
                           size_t len, struct error *err)
{
    struct attach_command cmd;
    if (attach_parse_command(buf, len, &cmd, err) < 0)
        return -1;
    pthread_mutex_lock(&inv->lock);
    struct live_device *d = find_locked(inv, device);
    uint64_t gen = 0;
    bool changed = false, pending = false;
    int rc = 0;
    if (d != NULL) {
        rc = attach_apply(&d->attach, &d->cfg.attach, &cmd, monotonic_ms(), &changed, err);
        pending = d->attach.state == FAKEHW_ATTACH_ATTACHING;
        if (changed)
            gen = bump_locked(inv);
    }
    pthread_mutex_unlock(&inv->lock);
    if (d == NULL)
        return error_set_and_errno(err, ENOENT, "no device %s on node %s", device, inv->node);
    if (rc < 0)
        return error_prefix(err, "%s", device);
    if (gen != 0)
        notify(inv, gen);
    if (changed && pending && inv->attach_waker != NULL)
        inv->attach_waker(inv->attach_waker_ctx);
    return 0;
}

int64_t inventory_attach_tick(struct live_inventory *inv, int64_t now_ms)
{
    int64_t next = -1;
    bool changed = false;
    pthread_mutex_lock(&inv->lock);
    for (size_t i = 0; i < inv->n; i++) {
        struct live_device *d = &inv->devs[i];
        changed = attach_tick(&d->attach, now_ms) || changed;
        if (d->attach.state == FAKEHW_ATTACH_ATTACHING && (next < 0 || d->attach.due_ms < next))
            next = d->attach.due_ms;
    }
    uint64_t gen = changed ? bump_locked(inv) : 0;
    pthread_mutex_unlock(&inv->lock);
    if (gen != 0)
        notify(inv, gen);
    return next;
}

bool inventory_has_device(struct live_inventory *inv, const char *device)
{
    pthread_mutex_lock(&inv->lock);
    bool found = find_locked(inv, device) != NULL;
    pthread_mutex_unlock(&inv->lock);
    return found;
}

int inventory_device_names(struct live_inventory *inv, char (**names)[FAKEHW_NAME_MAX], size_t *n,
                           struct error *err)
{
    pthread_mutex_lock(&inv->lock);
    char(*copy)[FAKEHW_NAME_MAX] = calloc(inv->n ? inv->n : 1, sizeof(*copy));
    if (copy != NULL) {
        for (size_t i = 0; i < inv->n; i++)
            memcpy(copy[i], inv->devs[i].cfg.name, sizeof(copy[i]));
        *n = inv->n;
    }
    pthread_mutex_unlock(&inv->lock);
    if (copy == NULL)
        return error_set_and_errno(err, ENOMEM, "out of memory");
    *names = copy;
    return 0;
}

/* The parent of a partition whose health it shows, or NULL: a partition
 * reads unhealthy while its parent is (lock held). */
static const struct live_device *sick_parent_locked(const struct live_inventory *inv,
                                                    const struct live_device *d)
{
    long p = d->cfg.parent_index;
    if (d->cfg.parent[0] == '\0' || p < 0 || (size_t)p >= inv->n || inv->devs[p].healthy)
        return NULL;
    return &inv->devs[p];
}

/* "parent gpu-0 is unhealthy: REASON", cut to a reason's size on a UTF-8
 * character boundary. */
static int render_parent_reason(const struct live_device *parent, char *buf, size_t size)
{
    char r[FAKEHW_REASON_MAX];
    int n = snprintf(r, sizeof(r), "parent %s is unhealthy%s%s", parent->cfg.name,
                     parent->reason[0] ? ": " : "", parent->reason);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof(r) ? (size_t)n : sizeof(r) - 1;
    while (len > 0 && len < (size_t)n && ((unsigned char)r[len] & 0xc0) == 0x80)
        len--;
    r[len] = '\0';
    return snprintf(buf, size, "%s\n", r);
}

/* Renders attribute a of d (lock held): the live ones here, the rest as
 * configured. */
static int render_attr_locked(const struct live_inventory *inv, const struct live_device *d,
                              enum fakehw_attr_id a, char *buf, size_t size, int64_t *mtime)
{
    const struct live_device *sick = sick_parent_locked(inv, d);
    char path[FAKEHW_PATH_MAX] = "";
    *mtime = inv->loaded_at;
    switch (a) {
    case FAKEHW_ATTR_ID_DEVICE_PATH:
        if (inv->dev_dir[0] != '\0' &&
            devnode_path(inv->dev_dir, d->cfg.minor, path, sizeof(path)) < 0)
            return -1;
        return snprintf(buf, size, "%s\n", path);
    case FAKEHW_ATTR_ID_VFIO_DEVICE_PATH:
        if (inv->dev_dir[0] != '\0' && d->cfg.vfio &&
            devnode_vfio_path(inv->dev_dir, d->cfg.iommu_group, path, sizeof(path)) < 0)
            return -1;
        return snprintf(buf, size, "%s\n", path);
    case FAKEHW_ATTR_ID_HEALTH:
        *mtime = sick && sick->since > d->since ? sick->since : d->since;
        return snprintf(buf, size, "%s\n", d->healthy && !sick ? FAKEHW_HEALTHY : FAKEHW_UNHEALTHY);
    case FAKEHW_ATTR_ID_HEALTH_REASON:
        *mtime = sick && sick->since > d->since ? sick->since : d->since;
        if (sick != NULL && d->healthy)
            return render_parent_reason(sick, buf, size);
        return snprintf(buf, size, "%s\n", d->reason);
    case FAKEHW_ATTR_ID_HEALTH_SINCE:
        *mtime = sick && sick->since > d->since ? sick->since : d->since;
        return snprintf(buf, size, "%" PRId64 "\n", *mtime);
    case FAKEHW_ATTR_ID_XID:
        *mtime = d->since;
        return snprintf(buf, size, "%ld\n", d->xid);
    case FAKEHW_ATTR_ID_ATTACH:
        *mtime = inv->changed_at;
        return snprintf(buf, size, "%s\n", fakehw_attach_name(d->attach.state));
    case FAKEHW_ATTR_ID_ATTACH_FAILURE:
        *mtime = inv->changed_at;
        return snprintf(buf, size, "%s\n", fakehw_attach_failure_name(d->attach.failure));
    case FAKEHW_ATTR_ID_ATTACH_DELAY_MS:
        *mtime = inv->changed_at;
        return snprintf(buf, size, "%" PRId64 "\n", d->attach.delay_ms);
    default:
        return render_config_attr(&d->cfg, a, buf, size);
    }
}

int inventory_read_file(struct live_inventory *inv, const char *device, const char *file, char *buf,
                        size_t size, size_t *len, int64_t *mtime, uint64_t *generation,
                        struct error *err)
{
    int n = -1;
    bool found = true;
    pthread_mutex_lock(&inv->lock);
    *generation = inv->generation;
    if (device == NULL) {
        if (!strcmp(file, FAKEHW_FILE_NODE)) {
            *mtime = inv->loaded_at;
            n = snprintf(buf, size, "%s\n", inv->node);
        } else if (!strcmp(file, FAKEHW_FILE_GENERATION)) {
            *mtime = inv->changed_at;
            n = snprintf(buf, size, "%" PRIu64 "\n", inv->generation);
        } else {
            found = false;
        }
    } else {
        const struct live_device *d = find_locked(inv, device);
        int a = attr_index(file);
        if (d == NULL || a < 0)
            found = false;
        else
            n = render_attr_locked(inv, d, (enum fakehw_attr_id)a, buf, size, mtime);
    }
    pthread_mutex_unlock(&inv->lock);
    if (!found)
        return error_set_and_errno(err, ENOENT, "no file %s%s%s", device ? device : "",
                                   device ? "/" : "", file);
    if (n < 0 || (size_t)n >= size)
        return error_set_and_errno(err, EOVERFLOW, "%s: value does not fit %zu bytes", file, size);
    *len = (size_t)n;
    return 0;
}

/* A growing text buffer. */
struct text {
    char *p;
    size_t len, cap;
};

static void text_append(struct text *t, const char *s, size_t n)
{
    GROW(t->p, t->cap, t->len + n);
    memcpy(t->p + t->len, s, n);
    t->len += n;
}

/* Appends "key value\n"; line is the rendered file, "value\n". */
static void text_line(struct text *t, const char *key, const char *line, size_t n)
{
    text_append(t, key, strlen(key));
    text_append(t, " ", 1);
    text_append(t, line, n);
}

int inventory_render_snapshot(struct live_inventory *inv, char **text, size_t *len,
                              uint64_t *generation, struct error *err)
{
    struct text t = {0};
    char line[INVENTORY_FILE_MAX];
    int64_t mtime;
    bool bad = false;
    pthread_mutex_lock(&inv->lock);
    /* Lines average about 20 bytes, 19 per device. */
    size_t guess = 256 + inv->n * (FAKEHW_ATTR_COUNT + 1) * 24;
    GROW(t.p, t.cap, guess);
    *generation = inv->generation;
    int n = snprintf(line, sizeof(line), "%" PRIu64 "\n", inv->generation);
    text_line(&t, FAKEHW_FILE_GENERATION, line, (size_t)n);
    n = snprintf(line, sizeof(line), "%s\n", inv->node);
    text_line(&t, FAKEHW_FILE_NODE, line, (size_t)n);
    for (size_t i = 0; i < inv->n && !bad; i++) {
        const struct live_device *d = &inv->devs[i];
        n = snprintf(line, sizeof(line), "%s\n", d->cfg.name);
        text_line(&t, FAKEHW_SNAPSHOT_DEVICE, line, (size_t)n);
        for (int a = 0; a < FAKEHW_ATTR_COUNT && !bad; a++) {
            n = render_attr_locked(inv, d, (enum fakehw_attr_id)a, line, sizeof(line), &mtime);
            if (n < 0 || (size_t)n >= sizeof(line))
                bad = true;
            else
                text_line(&t, attributes[a], line, (size_t)n);
        }
    }
    n = snprintf(line, sizeof(line), "%zu\n", inv->n);
    text_line(&t, FAKEHW_SNAPSHOT_END, line, (size_t)n);
    pthread_mutex_unlock(&inv->lock);
    if (bad) {
        free(t.p);
        return error_set_and_errno(err, EOVERFLOW, "snapshot: a value does not fit %zu bytes",
                                   sizeof(line));
    }
    *text = t.p;
    *len = t.len;
    return 0;
}
