// SPDX-License-Identifier: Apache-2.0
/* The Kubernetes API semantics of the stand-in: routing of /api and /apis
 * paths, and get, list, watch, create, update, patch, delete and
 * deletecollection with the real server's metadata handling, preconditions,
 * conflicts, validation and Status answers. */
#ifndef APISERVER_STANDIN_API_H
#define APISERVER_STANDIN_API_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"
#include "watch.h"

struct api {
    struct store store;
    bool drop_device_taints; /* behave like a server with DRADeviceTaints off */
    /* Partitionable devices (sharedCounters, consumesCounters) on a
     * ResourceSlice write: kept, dropped (a server with the
     * DRAPartitionableDevices gate off) or refused with 422. */
    enum { PARTITIONABLE_ON, PARTITIONABLE_DROP, PARTITIONABLE_REFUSE } partitionable;
    bool drop_consumable_capacity; /* a server with DRAConsumableCapacity off */
    /* spec.partitionTypeAttribute dropped on write: a 1.37 server with
     * DRAPartitionableDevicesType off (its default) or an older release. */
    bool drop_partition_type;
    long watch_timeout_s; /* when the client gives no timeoutSeconds */
};

struct api_request {
    const char *method;
    const char *path; /* without the query */
    const char *content_type;
    const char *body;
    size_t body_len;
    bool protobuf; /* the answer goes out as protobuf (a watch streams frames) */
    /* Query parameter lookup (decoded); NULL when absent. */
    const char *(*query)(void *ctx, const char *key);
    void *query_ctx;
};

struct api_reply {
    int code;
    char *text;                 /* JSON body (malloc) */
    struct watch_stream *watch; /* instead of text, for watch requests */
    bool mutating;              /* a write was attempted (for the event log) */
    const struct resource *res; /* what it was about, for the event log */
    char ns[254], name[254];
};

/* Creates a node object named name, as POST /api/v1/nodes would. */
int api_create_node(struct api *a, const char *name);

/* Handles one request; fills rp (free rp->text with free()). */
void api_handle(struct api *a, const struct api_request *rq, struct api_reply *rp);

#endif
