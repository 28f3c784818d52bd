// SPDX-License-Identifier: Apache-2.0
/* The kubelet's side of the plugin's sockets, for the benchmarks: register
 * (GetInfo + NotifyRegistrationStatus), NodePrepareResources and
 * NodeUnprepareResources (v1) of one claim, with the answers checked.  Built
 * on the kubelet stand-in's gRPC client (grpc_client.h). */
#ifndef FAKEHW_BENCH_KUBELET_CALLS_H
#define FAKEHW_BENCH_KUBELET_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "conformance/node/standins/kubelet/grpc_client.h"
#include "error.h"

/* Registers the plugin whose registration socket is reg_socket, as the
 * kubelet does once the socket appears: GetInfo (retried while nothing
 * answers, up to timeout_s), check the type, NotifyRegistrationStatus(true). */
int kubelet_register(const char *reg_socket, double timeout_s, struct error *err);

/* One claim's requests, packed once. */
struct dra_claim {
    char ns[64], name[128], uid[64];
    size_t n_devices; /* what a prepare must answer */
    uint8_t *prepare, *unprepare;
    size_t prepare_len, unprepare_len;
};

int dra_claim_init(struct dra_claim *c, const char *ns, const char *name, const char *uid,
                   size_t n_devices, struct error *err);
void dra_claim_free(struct dra_claim *c);

/* NodePrepareResources of that claim alone; 0 when the answer has the claim
 * without error and with n_devices devices. */
int dra_prepare(struct rpc_client *rc, const struct dra_claim *c, struct error *err);

/* NodeUnprepareResources of that claim alone; 0 when answered without error. */
int dra_unprepare(struct rpc_client *rc, const struct dra_claim *c, struct error *err);

#endif
