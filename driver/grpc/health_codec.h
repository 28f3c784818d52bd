// SPDX-License-Identifier: Apache-2.0
/* The health stream message (NodeWatchResourcesResponse) of both health API
 * versions: the driver-side device health list and its encoding.  v1 (1.37+)
 * and v1alpha1 have the same messages, field numbers and enum values, and
 * differ only in the package, so one encoding serves both. */
#ifndef FAKEHW_DRIVER_HEALTH_CODEC_H
#define FAKEHW_DRIVER_HEALTH_CODEC_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum health_api { HEALTH_API_V1, HEALTH_API_V1ALPHA1 };

#define HEALTH_V1_SERVICE            "v1.DRAResourceHealth"
#define HEALTH_V1ALPHA1_SERVICE      "v1alpha1.DRAResourceHealth"
#define HEALTH_V1_WATCH_METHOD       "/v1.DRAResourceHealth/NodeWatchResources"
#define HEALTH_V1ALPHA1_WATCH_METHOD "/v1alpha1.DRAResourceHealth/NodeWatchResources"

/* Values of the wire enum HealthStatus. */
enum health_entry_status {
    HEALTH_ENTRY_UNKNOWN = 0,
    HEALTH_ENTRY_HEALTHY = 1,
    HEALTH_ENTRY_UNHEALTHY = 2,
};

/* One device's health, as the driver knows it. */
struct health_entry {
    const char *pool;   /* pool name (the node name) */
    const char *device; /* device name in the ResourceSlice, e.g. gpu-0 */
    enum health_entry_status health;
    int64_t last_updated;                 /* Unix seconds of the last change */
    int64_t health_check_timeout_seconds; /* 0 = the kubelet's default */
    const char *message;                  /* NULL or "" = none; cut to HEALTH_MESSAGE_MAX */
};

/* The pod-status field that shows the message allows 1024 characters. */
#define HEALTH_MESSAGE_MAX 1024

/* The request descriptor of NodeWatchResources of that version. */
const ProtobufCMessageDescriptor *health_watch_request_type(enum health_api api);

/* Packs a NodeWatchResourcesResponse listing every device (malloc'd *out);
 * the bytes are the same message in both versions.
 * Fails, naming the entry, on an empty pool or device name or an unknown
 * health value. */
int health_encode(const struct health_entry *list, size_t n, uint8_t **out, size_t *len,
                  struct error *err);

#endif
