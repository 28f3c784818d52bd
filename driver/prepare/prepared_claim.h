// SPDX-License-Identifier: Apache-2.0
/* The prepare answer (struct prepared_claim of prepare_types.h): its release
 * (prepared_claim_free, declared with the type) and its JSON form, the form
 * the checkpoint stores it in:
 *   [{"requestNames": ["gpu"], "poolName": "node-1", "deviceName": "gpu-0",
 *     "cdiDeviceIDs": ["k8s.gpu.fakehw.example.com/gpu=<uid>-gpu-0"], "shareID": "..."}]
 * shareID only when set.  Out of memory is fatal (xalloc.h). */
#ifndef FAKEHW_PREPARE_PREPARED_CLAIM_H
#define FAKEHW_PREPARE_PREPARED_CLAIM_H

#include <jansson.h>

#include "driver/prepare/prepare_types.h"
#include "error.h"

/* New reference, or NULL when out of memory. */
json_t *prepared_claim_to_json(const struct prepared_claim *c);

/* Fills *out (free with prepared_claim_free), or -1 with err naming the
 * field ("devices[1].deviceName: not a string"); *out is then empty. */
int prepared_claim_from_json(const json_t *devices, struct prepared_claim *out, struct error *err);

/* A deep copy of from into *to (free with prepared_claim_free). */
void prepared_claim_copy(const struct prepared_claim *from, struct prepared_claim *to);

/* Appends a CDI device id (copied) to the device's list. */
void prepared_device_add_cdi_id(struct prepared_device *d, const char *id);

#endif
