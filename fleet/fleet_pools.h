// SPDX-License-Identifier: Apache-2.0
/* The fleet's pools: each node's pool is named as the node, prefix +
 * index (0 .. n-1), so a pool's node is read from its name alone, O(1)
 * with no table, for thousands of nodes.  The binder's devices
 * (fleet_bind.h) and the one slice watch of every pool (the publisher of
 * a slice's node) look pools up here. */
#ifndef FAKEHW_FLEET_POOLS_H
#define FAKEHW_FLEET_POOLS_H

#include <stddef.h>

#include "fleet_node.h"

/* The index in nodes[0 .. n-1] of the node a pool names: prefix, then a
 * decimal without sign or leading zeros, under n, and that node's own name
 * (a prefix that ends in digits); -1 for any other pool. */
long fleet_pool_index(const char *prefix, struct fleet_node *const *nodes, size_t n,
                      const char *pool);

#endif
