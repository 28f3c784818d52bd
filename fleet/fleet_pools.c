// SPDX-License-Identifier: Apache-2.0
/* The fleet's pools: see fleet_pools.h. */
#include "fleet_pools.h"

#include <stdlib.h>
#include <string.h>

long fleet_pool_index(const char *prefix, struct fleet_node *const *nodes, size_t n,
                      const char *pool)
{
    size_t prefix_len = strlen(prefix);
    if (strncmp(pool, prefix, prefix_len) != 0)
        return -1;
    const char *digits = pool + prefix_len;
    size_t len = strspn(digits, "0123456789");
    if (len == 0 || len > 9 || digits[len] != '\0' || (digits[0] == '0' && len > 1))
        return -1;
    long i = strtol(digits, NULL, 10);
    if ((size_t)i >= n)
        return -1;
    /* The node's own name has the last word (a prefix that ends in digits). */
    return strcmp(fleet_node_name(nodes[i]), pool) == 0 ? i : -1;
}
