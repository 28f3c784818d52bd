// SPDX-License-Identifier: Apache-2.0
/* The fleet's binder devices: every node's in-memory attach files, behind
 * the plugin's own binder (driver/bind/binder.h, binder_options.devices).
 *
 * One binder serves the whole fleet from one claim watch of the driver's
 * claims in every pool: an allocation result's pool is its node's name,
 * which names the node (prefix + index, checked against the node's own
 * name: O(1), no lookup table), and the attach goes to that node's
 * inventory, where fakehw's attach code applies it (its configured delay
 * and scripted failures).  Pools that are no node of the fleet are not
 * served: their claims are left alone.
 *
 * The binder detaches what no claim holds; for that it asks for the
 * attachable devices that are not detached.  Only the binder attaches a
 * fleet's devices, so only the nodes it asked to attach can have any: they
 * are kept on a list, and a pass reads those nodes alone, dropping a node
 * once every device of it is detached again.  All of it runs on the
 * binder's worker thread. */
#ifndef FAKEHW_FLEET_BIND_H
#define FAKEHW_FLEET_BIND_H

#include <stddef.h>

#include "driver/bind/binder.h"
#include "fleet_node.h"

struct fleet_bind;

/* The devices of nodes[0 .. n-1], named prefix + index (the array is
 * borrowed and must outlive the binder). */
struct fleet_bind *fleet_bind_new(const char *prefix, struct fleet_node *const *nodes, size_t n);

/* The node a pool names, or NULL. */
struct fleet_node *fleet_bind_node(const struct fleet_bind *fb, const char *pool);

/* The binder's view of them (ctx = fb). */
void fleet_bind_devices(struct fleet_bind *fb, struct binder_devices *dev);

/* How many nodes are on the list of those that may hold attached devices. */
size_t fleet_bind_engaged_nodes(const struct fleet_bind *fb);

void fleet_bind_free(struct fleet_bind *fb);

#endif
