// SPDX-License-Identifier: Apache-2.0
/* pluginregistration.Registration: how the kubelet finds the plugin.
 *
 * Serve it on the registration socket <registrar dir>/<driver>-reg.sock.  The
 * kubelet calls GetInfo (1 s deadline; newer kubelets also re-probe every
 * 10 s), checks the type, picks the first entry of supported_versions it
 * knows, and reports the outcome with NotifyRegistrationStatus. */
#ifndef FAKEHW_DRIVER_REGISTRATION_SERVICE_H
#define FAKEHW_DRIVER_REGISTRATION_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/grpc/rpc_server.h"
#include "error.h"

#define REGISTRATION_GET_INFO "/pluginregistration.Registration/GetInfo"
#define REGISTRATION_NOTIFY   "/pluginregistration.Registration/NotifyRegistrationStatus"
#define REGISTRATION_TYPE_DRA "DRAPlugin"

/* The services this plugin offers on its DRA socket, in the order the
 * kubelet should consider them: v1 first, v1beta1 for older kubelets, and the
 * health stream, v1 (picked by 1.37+ kubelets) before v1alpha1 (the only one
 * 1.34-1.36 kubelets call; they skip strings they do not know). */
extern const char *const registration_default_versions[];
extern const size_t registration_n_default_versions;

/* Called on every NotifyRegistrationStatus: registered, and the kubelet's
 * reason when it refused (NULL when registered).  Runs on a server worker. */
typedef void (*registration_status_fn)(void *ctx, bool registered, const char *error);

struct registration_config {
    const char *driver_name;     /* GetInfo name */
    const char *endpoint;        /* absolute path of the DRA socket */
    const char *const *versions; /* NULL = registration_default_versions */
    size_t n_versions;
    registration_status_fn on_status; /* optional */
    void *ctx;
};

struct registration_service;

/* Validates and copies cfg, and packs the GetInfo answer once (so GetInfo is
 * a copy, never a computation).  Fails on an empty driver name or a relative
 * endpoint. */
struct registration_service *registration_service_new(const struct registration_config *cfg,
                                                      struct error *err);

/* Adds GetInfo and NotifyRegistrationStatus to srv (before rpc_server_start). */
int registration_service_register(struct registration_service *svc, struct rpc_server *srv,
                                  struct error *err);

/* True after the kubelet's latest NotifyRegistrationStatus said registered. */
bool registration_service_registered(struct registration_service *svc);

/* Call after rpc_server_free of the server it was registered with. */
void registration_service_free(struct registration_service *svc);

#endif
