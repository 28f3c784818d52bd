// SPDX-License-Identifier: Apache-2.0
#include "fleet_node.h"

#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fakehw/config.h"
#include "fakehw/flips.h"
#include "fakehw/inventory.h"
#include "fakehw_attach.h"
#include "fakehw_tree_read.h"
#include "log.h"

struct fleet_node {
    char *name;
    enum personality personality;
    struct config cfg;
    struct live_inventory *inv;
    struct flip_scheduler *flips;
    fleet_node_listener fn;
    void *ctx;
};

struct fleet_node *fleet_node_new(const char *text, size_t len, const char *display,
                                  const char *node, enum personality personality, struct error *err)
{
    struct fleet_node *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    n->personality = personality;
    n->name = strdup(node);
    if (n->name == NULL || config_load_string(text, len, display, node, &n->cfg, err) < 0) {
        if (n->name == NULL)
            error_set(err, "out of memory");
        else
            error_prefix(err, "node %s", node);
        free(n->name);
        free(n);
        return NULL;
    }
    n->inv = inventory_new(node, "", n->cfg.devices, n->cfg.ndevices, err);
    if (n->inv == NULL) {
        error_prefix(err, "node %s", node);
        fleet_node_free(n);
        return NULL;
    }
    return n;
}

const char *fleet_node_name(const struct fleet_node *n)
{
    return n->name;
}

size_t fleet_node_flips(const struct fleet_node *n)
{
    return n->cfg.nflips;
}

struct device_snapshot *fleet_node_snapshot(struct fleet_node *n, struct error *err)
{
    cleanup_free char *text = NULL;
    size_t len = 0;
    uint64_t gen = 0;
    if (inventory_render_snapshot(n->inv, &text, &len, &gen, err) < 0)
        return NULL;
    struct fakehw_device *devs = NULL;
    size_t count = 0;
    char what[320];
    snprintf(what, sizeof(what), "node %s: snapshot", n->name);
    if (fakehw_tree_parse_snapshot(what, text, len, &devs, &count, err) < 0)
        return NULL;
    if (personality_rename(n->personality, devs, count, err) < 0) {
        free(devs);
        error_prefix(err, "node %s", n->name);
        return NULL;
    }
    return device_snapshot_new(devs, count, true, err);
}

/* The inventory's listener: runs after every change, outside its lock. */
static void on_change(void *ctx, uint64_t generation)
{
    struct fleet_node *n = ctx;
    struct error err = {{0}};
    struct device_snapshot *snap = fleet_node_snapshot(n, &err);
    if (snap == NULL) {
        LOG_E("fleet: node %s: reading generation %llu: %s", n->name,
              (unsigned long long)generation, err.msg);
        return;
    }
    if (n->fn != NULL)
        n->fn(n->ctx, n, snap);
    device_snapshot_put(snap);
}

int fleet_node_start_flips(struct fleet_node *n, fleet_node_listener fn, void *ctx,
                           struct error *err)
{
    n->fn = fn;
    n->ctx = ctx;
    inventory_set_listener(n->inv, on_change, n);
    if (n->cfg.nflips == 0)
        return 0;
    n->flips = flip_scheduler_start(n->inv, n->cfg.flips, n->cfg.nflips, err);
    return n->flips != NULL ? 0 : error_prefix(err, "node %s: flips", n->name);
}

struct live_inventory *fleet_node_inventory(struct fleet_node *n)
{
    return n->inv;
}

int fleet_node_attach_state(struct fleet_node *n, const char *device, enum fakehw_attach *state,
                            struct error *err)
{
    char value[INVENTORY_FILE_MAX];
    size_t len = 0;
    int64_t mtime = 0;
    uint64_t gen = 0;
    if (inventory_read_file(n->inv, device, FAKEHW_ATTR(ATTACH), value, sizeof(value), &len, &mtime,
                            &gen, err) < 0)
        return error_prefix(err, "node %s", n->name);
    if (len > 0 && value[len - 1] == '\n')
        value[len - 1] = '\0';
    if (!fakehw_attach_parse(value, state))
        return error_set(err, "node %s: %s: \"%s\" is not an attach state", n->name, device, value);
    return 0;
}

int fleet_node_write_attach(struct fleet_node *n, const char *device, const char *command,
                            struct error *err)
{
    if (inventory_write_attach(n->inv, device, command, strlen(command), err) < 0)
        return error_prefix(err, "node %s", n->name);
    return 0;
}

int fleet_node_attach_states(struct fleet_node *n, fleet_node_attach_fn fn, void *ctx,
                             struct error *err)
{
    cleanup_free char(*names)[FAKEHW_NAME_MAX] = NULL;
    size_t count = 0;
    if (inventory_device_names(n->inv, &names, &count, err) < 0)
        return error_prefix(err, "node %s", n->name);
    for (size_t i = 0; i < count; i++) {
        enum fakehw_attach state;
        if (fleet_node_attach_state(n, names[i], &state, err) < 0)
            return -1;
        fn(ctx, names[i], state);
    }
    return 0;
}

void fleet_node_free(struct fleet_node *n)
{
    if (n == NULL)
        return;
    flip_scheduler_stop(n->flips);
    inventory_free(n->inv);
    config_free(&n->cfg);
    free(n->name);
    free(n);
}
