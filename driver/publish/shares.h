// SPDX-License-Identifier: Apache-2.0
/* Consumable capacity (KEP-5075): a GPU the fakehw config shares by memory
 * (its memorySharing file) is published with allowMultipleAllocations: true
 * and a requestPolicy on its memory capacity:
 *
 *   capacity:
 *     memory:
 *       value: 80Gi
 *       requestPolicy: {default: 10Gi, validRange: {min: 1Gi, max: 80Gi, step: 1Gi}}
 *
 * where max is the largest min + n*step within the memory (the API requires
 * max on the step grid).
 * so the scheduler hands it to several claims, each with a shareID and the
 * memory it consumed (docs/resourceslices.md, docs/prepare.md). */
#ifndef FAKEHW_DRIVER_PUBLISH_SHARES_H
#define FAKEHW_DRIVER_PUBLISH_SHARES_H

#include <jansson.h>

#include "error.h"
#include "fakehw_tree.h"

/* Adds the two fields to dev (the device JSON of d) when d is shared. */
int shares_decorate(const struct fakehw_device *d, json_t *dev, struct error *err);

#endif
