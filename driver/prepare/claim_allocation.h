// SPDX-License-Identifier: Apache-2.0
/* Reading a ResourceClaim (resource.k8s.io/v1 JSON) for prepare: the checks
 * the kubelet plugin helper makes, and this driver's allocation results.
 *
 * - metadata.uid must equal the uid the kubelet asked for, else the claim
 *   "got replaced" (deleted and re-created under the same name);
 * - status.allocation must be set, else it is "not allocated";
 * - results of other drivers are skipped; a result of this driver must name
 *   this node's pool (the driver publishes one pool per node, named after
 *   it): a result from another pool is an error, since that device is not
 *   on this node and preparing a local device of the same name would hand
 *   out the wrong GPU;
 * - requests ("req" or "req/sub") and device names must be DNS labels, a
 *   shareID at most 64 letters, digits and '-', and the annotation
 *   resource.kubernetes.io/pod-claim-name a DNS label: all of them reach
 *   file names, CDI names or env values;
 * - bindingConditions, when present, must be a list of strings;
 * - consumedCapacity names only memory, a quantity (the only capacity the
 *   driver publishes); adminAccess is a boolean.
 * What the device can hold is allocation_checks.h's. */
#ifndef FAKEHW_PREPARE_CLAIM_ALLOCATION_H
#define FAKEHW_PREPARE_CLAIM_ALLOCATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "k8s_names.h"

#define CLAIM_POD_CLAIM_NAME_ANNOTATION "resource.kubernetes.io/pod-claim-name"
#define CLAIM_SHARE_ID_MAX              64

/* One allocation result of this driver.  Strings are borrowed from the
 * claim JSON, which must outlive this. */
struct claim_result {
    const char *request;                      /* "req" or "req/sub" */
    char base_request[K8S_DNS_LABEL_MAX + 1]; /* "req" */
    const char *pool;
    const char *device;
    const char *share_id; /* NULL when the result has none */
    /* consumedCapacity.memory in bytes (consumable capacity: the part of a
     * shared GPU this share got); 0 when the result has none. */
    uint64_t consumed_memory;
    bool has_consumed_memory;
    bool admin_access; /* adminAccess: true (may be given a device in use) */
    /* The first of the result's bindingConditions (KEP-5007), NULL when it
     * has none (a scheduler without DRADeviceBindingConditions drops them). */
    const char *binding_condition;
};

struct claim_allocation {
    const char *pod_claim_name; /* NULL unless the claim came from a template */
    const json_t *config;       /* status.allocation.devices.config, or NULL */
    struct claim_result *results;
    size_t n_results;
};

/* Fills *out from claim.  Errors say what is wrong without naming the claim
 * (the caller prefixes it): "not allocated", "allocation result 2: pool ...". */
int claim_allocation_parse(const json_t *claim, const char *uid, const char *driver,
                           const char *pool, struct claim_allocation *out, struct error *err);
void claim_allocation_free(struct claim_allocation *a);

/* Checks a request reference ("req" or "req/sub", DNS labels) and copies
 * its base name ("req") into base. */
bool claim_request_split(const char *request, char base[K8S_DNS_LABEL_MAX + 1]);

#endif
