// SPDX-License-Identifier: Apache-2.0
#include "fleet_node.h"

#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fakehw/config.h"
#include "fakehw/flips.h"
#include "fakehw/inventory.h"
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
