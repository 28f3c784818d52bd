// SPDX-License-Identifier: Apache-2.0
/* The binder and its devices: a device's attach file in the fakehw tree
 * (or binder_options.devices), and what it says about one allocation
 * (binder_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binder_internal.h"
#include "fakehw_attach.h"
#include "fakehw_tree_read.h"
#include "log.h"

static int attach_path(const struct binder *b, const char *device, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/%s/%s/%s", b->root, FAKEHW_DIR_DEVICES, device,
                     FAKEHW_ATTR(ATTACH));
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int tree_read_attach(void *ctx, const char *pool, const char *device,
                            enum fakehw_attach *state)
{
    const struct binder *b = ctx;
    char path[PATH_MAX], value[32];
    struct error err;
    (void)pool;
    if (attach_path(b, device, path, sizeof(path)) < 0)
        return -1;
    if (fakehw_tree_read_value(path, value, sizeof(value), &err) < 0) {
        if (errno == ENOENT) { /* an older tree: nothing to attach */
            *state = FAKEHW_ATTACH_NONE;
            return 0;
        }
        LOG_W("binder: %s", err.msg);
        return -1;
    }
    if (!fakehw_attach_parse(value, state)) {
        LOG_W("binder: %s: \"%s\" is not an attach state", path, value);
        return -1;
    }
    return 0;
}

/* Writes one command to the device's attach file. */
static int tree_write_attach(void *ctx, const char *pool, const char *device, const char *command)
{
    const struct binder *b = ctx;
    char path[PATH_MAX];
    (void)pool;
    if (attach_path(b, device, path, sizeof(path)) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = strlen(command);
    ssize_t w = fd < 0 ? -1 : write(fd, command, len);
    int saved = errno;
    if (fd >= 0)
        close(fd);
    if (w != (ssize_t)len) {
        LOG_W("binder: writing \"%s\" to %s: %s", command, path, strerror(saved));
        return -1;
    }
    return 0;
}

static bool tree_serves(void *ctx, const char *pool)
{
    const struct binder *b = ctx;
    return !strcmp(pool, b->pool);
}

void binder_tree_devices(struct binder *b, struct binder_devices *dev)
{
    /* each_engaged: the tree's devices come as snapshots (reconcile). */
    *dev = (struct binder_devices){.serves = tree_serves,
                                   .read_attach = tree_read_attach,
                                   .write_attach = tree_write_attach,
                                   .ctx = b};
}

static int read_attach(struct binder *b, const char *pool, const char *device,
                       enum fakehw_attach *state)
{
    return b->dev.read_attach(b->dev.ctx, pool, device, state);
}

int binder_write_attach(struct binder *b, const char *pool, const char *device, const char *command)
{
    if (b->dev.write_attach(b->dev.ctx, pool, device, command) < 0)
        return -1;
    pthread_mutex_lock(&b->lock);
    if (!strcmp(command, "attach"))
        b->stats.attach_requests++;
    else
        b->stats.detach_requests++;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* --- deciding, per allocated device --- */

void binder_request_key(const json_t *claim, const char *pool, const char *device, char *key,
                        size_t size)
{
    const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
    snprintf(key, size, "%s/%s/%s/%s", uid ? uid : "", pool, device,
             binding_allocation_time(claim));
}

/* What the devices say about an allocated device; act asks for the attach
 * when nobody has yet (only the reconcile pass acts, the status write only
 * looks). */
enum outcome_kind binder_device_outcome(struct binder *b, const json_t *claim, const char *pool,
                                        const char *device, bool act)
{
    char key[768];
    binder_request_key(claim, pool, device, key, sizeof(key));
    bool asked = json_object_get(b->requested, key) != NULL;
    enum fakehw_attach state;
    if (read_attach(b, pool, device, &state) < 0)
        return WAIT;
    if (act && !asked &&
        (state == FAKEHW_ATTACH_DETACHED || state == FAKEHW_ATTACH_FAILED ||
         state == FAKEHW_ATTACH_ATTACHING)) {
        /* Attaching already (another claim's request, or ours before a
         * restart): wait for it like for our own. */
        if (state != FAKEHW_ATTACH_ATTACHING) {
            const json_t *meta = json_object_get(claim, "metadata");
            const char *ns = json_string_value(json_object_get(meta, "namespace"));
            const char *name = json_string_value(json_object_get(meta, "name"));
            LOG_I("binder: claim %s/%s (allocated %s) needs %s%s%s attached: asking fakehw",
                  ns ? ns : "?", name ? name : "?", binding_allocation_time(claim),
                  b->pool ? "" : pool, b->pool ? "" : "/", device);
            if (binder_write_attach(b, pool, device, "attach") < 0)
                return WAIT;
        }
        json_object_set_new(b->requested, key, json_true());
        asked = true;
        if (read_attach(b, pool, device, &state) < 0)
            return WAIT;
    } else if (act && asked && state == FAKEHW_ATTACH_DETACHED) {
        /* Detached under us (by hand): ask again. */
        if (binder_write_attach(b, pool, device, "attach") < 0 ||
            read_attach(b, pool, device, &state) < 0)
            return WAIT;
    }
    switch (state) {
    case FAKEHW_ATTACH_NONE:
    case FAKEHW_ATTACH_ATTACHED:
        return ATTACHED;
    case FAKEHW_ATTACH_FAILED:
        /* A failure left from an earlier allocation is not this one's. */
        return asked ? FAILED : WAIT;
    case FAKEHW_ATTACH_DETACHED:
    case FAKEHW_ATTACH_ATTACHING:
        break;
    }
    return WAIT;
}
