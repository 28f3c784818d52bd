// SPDX-License-Identifier: Apache-2.0
/* k8s.io.kubelet.pkg.apis.dra.{v1,v1beta1}.DRAPlugin: NodePrepareResources
 * and NodeUnprepareResources for both API versions on one socket.
 *
 * Each claim of a request goes through prepare_claim / unprepare_claim
 * (driver/prepare/prepare.h) once, in request order; a claim that fails gets
 * its own error string in the answer and does not fail the others.  Every
 * claim of a request gets an entry in the answer map (keyed by claim uid);
 * share_id is sent only in v1 answers.  A request with a claim without uid,
 * or with a string that is not UTF-8, or with more than
 * DRA_MAX_CLAIMS_PER_REQUEST claims, is refused as INVALID_ARGUMENT.  A
 * claim repeated in one request is done once (de-duplicated by uid in
 * n log n).  Failed claims are logged one line each for the first
 * DRA_LOGGED_CLAIM_ERRORS, then as a count. */
#ifndef FAKEHW_DRIVER_DRA_SERVICE_H
#define FAKEHW_DRIVER_DRA_SERVICE_H

#include "driver/grpc/rpc_server.h"
#include "driver/prepare/prepare.h"
#include "error.h"

/* The kubelet sends the claims of one pod per request (a handful); this
 * bounds the work one request can hold a worker for. */
#define DRA_MAX_CLAIMS_PER_REQUEST 1024
#define DRA_LOGGED_CLAIM_ERRORS    5

struct dra_service;

/* st must outlive the service; the service does not own it. */
struct dra_service *dra_service_new(struct prepare_state *st, struct error *err);

/* The four methods (v1 prepare, v1 unprepare, v1beta1 prepare, v1beta1
 * unprepare), as dra_service_register adds them; the fuzzer (fuzz/) calls
 * their handlers on decoded requests without a server. */
#define DRA_SERVICE_METHODS 4
void dra_service_methods(struct dra_service *svc, struct rpc_method out[DRA_SERVICE_METHODS]);

/* Called once per claim of a prepare (prepare true) or unprepare call, on
 * the handler's thread, with the claim's result and how long it took
 * (monotonic ns).  Must be cheap and not block (it records metrics). */
typedef void (*dra_claim_observer)(void *ctx, bool prepare, bool ok, long long duration_ns);

/* Unprepare may wait for something outside this process (the lock of a
 * rolling update): it then runs on a worker thread instead of the poller,
 * which must never block.  Before dra_service_register. */
void dra_service_set_unprepare_may_wait(struct dra_service *svc);

/* Sets the observer (NULL = none).  Before dra_service_register. */
void dra_service_set_observer(struct dra_service *svc, dra_claim_observer fn, void *ctx);

/* Adds the four methods (v1 and v1beta1 prepare/unprepare) to srv. */
int dra_service_register(struct dra_service *svc, struct rpc_server *srv, struct error *err);

/* Call after rpc_server_free of the server it was registered with. */
void dra_service_free(struct dra_service *svc);

#endif
