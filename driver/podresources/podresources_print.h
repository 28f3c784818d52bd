// SPDX-License-Identifier: Apache-2.0
/* What fakehw-podresources prints: the DRA claims and devices of the pods
 * in a PodResources answer, as a text table or as JSON.  Pure (no I/O but
 * the output stream).  Only containers with at least one claim, and pods
 * with at least one such container, are shown; the API carries no request
 * names, so there are none to print. */
#ifndef FAKEHW_PODRESOURCES_PRINT_H
#define FAKEHW_PODRESOURCES_PRINT_H

#include <jansson.h>
#include <stdio.h>

#include "proto/podresources_v1.pb-c.h"

/* {"pods": [{"namespace", "name", "containers": [{"name", "claims":
 *   [{"namespace", "name", "devices": [{"driver", "pool", "device",
 *   "shareID" (when set), "cdiDevices": [...]}]}]}]}]}; NULL when out of
 * memory. */
json_t *podres_json(V1__PodResources *const *pods, size_t n);

/* One row per device:
 *   NAMESPACE  POD  CONTAINER  CLAIM  DRIVER  POOL  DEVICE  CDI-DEVICES
 * columns padded to their widest value; a claim without devices gets one
 * row with "-" for the device columns; "(no DRA devices)" when there is no
 * row.  -1 when out of memory. */
int podres_print_text(FILE *out, V1__PodResources *const *pods, size_t n);

#endif
