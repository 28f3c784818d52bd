// SPDX-License-Identifier: Apache-2.0
/* The DRA node API messages of both versions (v1 and v1beta1) mapped to one
 * version-independent form, so the service logic exists once.  The two
 * versions are identical on the wire except that v1 has Device.share_id
 * (field 5); a v1beta1 answer never carries it. */
#ifndef FAKEHW_DRIVER_DRA_CODEC_H
#define FAKEHW_DRIVER_DRA_CODEC_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/prepare/prepare_types.h"
#include "error.h"

enum dra_api { DRA_API_V1, DRA_API_V1BETA1 };

#define DRA_V1_PREPARE      "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define DRA_V1_UNPREPARE    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
#define DRA_V1BETA1_PREPARE "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
#define DRA_V1BETA1_UNPREPARE                                                                      \
    "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"

/* Request descriptors, for rpc_method.request. */
const ProtobufCMessageDescriptor *dra_prepare_request_type(enum dra_api api);
const ProtobufCMessageDescriptor *dra_unprepare_request_type(enum dra_api api);

/* One claim of a request; the strings point into the decoded request. */
struct dra_claim_ref {
    const char *ns;
    const char *name;
    const char *uid;
};

/* Lists the claims of a decoded NodePrepareResourcesRequest or
 * NodeUnprepareResourcesRequest of that version (both have "repeated Claim
 * claims = 1").  *claims is malloc'd (NULL when there are none). */
int dra_request_claims(enum dra_api api, const ProtobufCMessage *req, struct dra_claim_ref **claims,
                       size_t *n, struct error *err);

/* The outcome for one claim: error != NULL means it failed (devices are then
 * not sent); otherwise claim holds the prepared devices. */
struct dra_prepare_result {
    const char *uid;
    const struct prepared_claim *claim;
    const char *error;
};

struct dra_unprepare_result {
    const char *uid;
    const char *error; /* NULL = success */
};

/* Packs a NodePrepareResourcesResponse / NodeUnprepareResourcesResponse (map
 * keyed by claim uid) into *out (malloc'd).  Error texts are cleaned to valid
 * UTF-8.  Returns 0: nothing but memory can fail, and that is fatal. */
int dra_encode_prepare_response(enum dra_api api, const struct dra_prepare_result *res, size_t n,
                                uint8_t **out, size_t *len, struct error *err);
int dra_encode_unprepare_response(enum dra_api api, const struct dra_unprepare_result *res,
                                  size_t n, uint8_t **out, size_t *len, struct error *err);

#endif
