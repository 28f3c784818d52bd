// SPDX-License-Identifier: Apache-2.0
/* {v1,v1alpha1}.DRAResourceHealth/NodeWatchResources: the kubelet's health
 * stream, both versions served from one device list.
 *
 * On open a stream gets the full current device list at once and stays open;
 * every health_service_update() sends the full list again to every open
 * stream.  A stream whose client reads slowly skips straight to the newest
 * list.  Serve it on the DRA socket (the GetInfo endpoint). */
#ifndef FAKEHW_DRIVER_HEALTH_SERVICE_H
#define FAKEHW_DRIVER_HEALTH_SERVICE_H

#include <stddef.h>

#include "driver/grpc/health_codec.h"
#include "driver/grpc/rpc_server.h"
#include "error.h"

struct health_service;

/* Starts with an empty device list. */
struct health_service *health_service_new(struct error *err);

/* Adds NodeWatchResources of both versions to srv (before rpc_server_start). */
int health_service_register(struct health_service *svc, struct rpc_server *srv, struct error *err);

/* Replaces the device list (copied; list may be freed after) and sends it to
 * every open stream.  Safe from any thread.  Fails, without changing the
 * current list, on an invalid entry (empty pool/device, unknown health). */
int health_service_update(struct health_service *svc, const struct health_entry *list, size_t n,
                          struct error *err);

/* Call after rpc_server_free of the server it was registered with. */
void health_service_free(struct health_service *svc);

#endif
