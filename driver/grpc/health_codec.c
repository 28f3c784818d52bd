// SPDX-License-Identifier: Apache-2.0
/* Answers are built with the v1 generated types for both versions: v1 and
 * v1alpha1 share every field number and enum value, so the packed bytes are a
 * valid message of either (the unit tests decode them with both descriptors).
 * Requests are decoded with each method's own descriptor. */
#include "health_codec_test.h"

#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "proto/dra_health_v1.pb-c.h"
#include "proto/dra_health_v1alpha1.pb-c.h"
#include "utf8.h"
#include "xalloc.h"

void health_message_cut(const char *msg, char out[HEALTH_MESSAGE_MAX + 1])
{
    out[0] = '\0';
    if (msg == NULL || msg[0] == '\0')
        return;
    cleanup_free char *clean = utf8_sanitize(msg);
    const char *src = clean;
    size_t len = strlen(src);
    if (len <= HEALTH_MESSAGE_MAX) {
        memcpy(out, src, len + 1);
    } else {
        size_t keep = utf8_prefix_len(src, HEALTH_MESSAGE_MAX - 3);
        memcpy(out, src, keep);
        memcpy(out + keep, "...", 4);
    }
}

const ProtobufCMessageDescriptor *health_watch_request_type(enum health_api api)
{
    return api == HEALTH_API_V1 ? &v1__node_watch_resources_request__descriptor
                                : &v1alpha1__node_watch_resources_request__descriptor;
}

int health_encode(const struct health_entry *list, size_t n, uint8_t **out, size_t *len,
                  struct error *err)
{
    V1__NodeWatchResourcesResponse resp = V1__NODE_WATCH_RESOURCES_RESPONSE__INIT;
    cleanup_free V1__DeviceHealth **ptrs = xcalloc(n, sizeof(*ptrs));
    cleanup_free V1__DeviceHealth *dh = xcalloc(n, sizeof(*dh));
    cleanup_free V1__DeviceIdentifier *ids = xcalloc(n, sizeof(*ids));
    cleanup_free char(*msgs)[HEALTH_MESSAGE_MAX + 1] = xcalloc(n, sizeof(*msgs));
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct health_entry *d = &list[i];
        if (d->pool == NULL || d->pool[0] == '\0')
            return error_set(err, "health entry %zu (device %s): empty pool name", i,
                             d->device ? d->device : "");
        if (d->device == NULL || d->device[0] == '\0')
            return error_set(err, "health entry %zu (pool %s): empty device name", i, d->pool);
        if (d->health != HEALTH_ENTRY_UNKNOWN && d->health != HEALTH_ENTRY_HEALTHY &&
            d->health != HEALTH_ENTRY_UNHEALTHY)
            return error_set(err, "health entry %zu (%s/%s): unknown health value %d", i, d->pool,
                             d->device, (int)d->health);
        v1__device_identifier__init(&ids[i]);
        ids[i].pool_name = (char *)d->pool;
        ids[i].device_name = (char *)d->device;
        v1__device_health__init(&dh[i]);
        dh[i].device = &ids[i];
        dh[i].health = (V1__HealthStatus)d->health;
        dh[i].last_updated_time = d->last_updated;
        dh[i].health_check_timeout_seconds =
            d->health_check_timeout_seconds > 0 ? d->health_check_timeout_seconds : 0;
        health_message_cut(d->message, msgs[i]);
        dh[i].message = msgs[i];
        ptrs[i] = &dh[i];
    }
    resp.n_devices = n;
    resp.devices = ptrs;
    *len = protobuf_c_message_get_packed_size(&resp.base);
    *out = xmalloc(*len);
    protobuf_c_message_pack(&resp.base, *out);
    return 0;
}
