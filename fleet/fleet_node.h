// SPDX-License-Identifier: Apache-2.0
/* One fake node of a fleet, held in memory: the devices fakehw's config
 * gives that node (its `nodes` section or glob, else `defaults`: the same
 * catalogue, MIG, shares, attachable and virtual GPUs), a live inventory
 * of them (fakehw/inventory.h, the model behind fakehw's tree), the
 * config's flips for that node, applied on schedule by fakehw's own flip
 * scheduler, and its devices' attach files (fakehw/attach.h), which the
 * fleet's binder writes (fleet_bind.h).
 *
 * What the plugin would read from that node's mount, it reads here from
 * the inventory's snapshot text (the same format, parsed by the same
 * reader, fakehw_tree_parse_snapshot), so a fleet node's devices are
 * exactly those a fakehw mount with --node NAME would serve. */
#ifndef FAKEHW_FLEET_NODE_H
#define FAKEHW_FLEET_NODE_H

#include <stddef.h>

#include "driver/device/device_snapshot.h"
#include "driver/device/personality.h"
#include "error.h"

struct fleet_node;

/* Called on the flip scheduler's thread after a flip changed the node's
 * devices, with the new snapshot (lent: take a reference to keep it). */
typedef void (*fleet_node_listener)(void *ctx, struct fleet_node *node,
                                    struct device_snapshot *snap);

/* Loads config text (len bytes; display names it in errors) for node, and
 * makes its inventory.  Flips start only with fleet_node_start_flips.
 * NULL with err ("node fleet-node-3: <the config's error>"). */
struct fleet_node *fleet_node_new(const char *text, size_t len, const char *display,
                                  const char *node, enum personality personality,
                                  struct error *err);

const char *fleet_node_name(const struct fleet_node *n);

/* The number of flips the config gives this node. */
size_t fleet_node_flips(const struct fleet_node *n);

/* The node's devices now, as the plugin would read them (one reference,
 * the caller puts it); NULL with err. */
struct device_snapshot *fleet_node_snapshot(struct fleet_node *n, struct error *err);

/* Starts applying the node's flips; every change calls fn(ctx, node, snap).
 * Nothing happens for a node without flips. */
int fleet_node_start_flips(struct fleet_node *n, fleet_node_listener fn, void *ctx,
                           struct error *err);

/* The node's inventory, for the fleet's one attach timer (fakehw/attacher.h). */
struct live_inventory *fleet_node_inventory(struct fleet_node *n);

/* A device's attach state, as fakehw's attach file of it would read; -1
 * with err (ENOENT: no such device). */
int fleet_node_attach_state(struct fleet_node *n, const char *device, enum fakehw_attach *state,
                            struct error *err);

/* A write of command ("attach", "detach", ...) to the device's attach file,
 * applied by fakehw's own attach code (its configured delay and failures);
 * -1 with err. */
int fleet_node_write_attach(struct fleet_node *n, const char *device, const char *command,
                            struct error *err);

/* Calls fn for every device of the node with its attach state (none for a
 * device that is not attachable); -1 with err. */
typedef void (*fleet_node_attach_fn)(void *ctx, const char *device, enum fakehw_attach state);
int fleet_node_attach_states(struct fleet_node *n, fleet_node_attach_fn fn, void *ctx,
                             struct error *err);

/* Stops the flips and frees the node.  NULL is fine. */
void fleet_node_free(struct fleet_node *n);

#endif
