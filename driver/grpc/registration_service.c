// SPDX-License-Identifier: Apache-2.0
#include "registration_service.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "health_codec.h"
#include "log.h"
#include "proto/pluginregistration.pb-c.h"
#include "utf8.h"
#include "xalloc.h"

const char *const registration_default_versions[] = {
    "v1.DRAPlugin",
    "v1beta1.DRAPlugin",
    HEALTH_V1_SERVICE,
    HEALTH_V1ALPHA1_SERVICE,
};
const size_t registration_n_default_versions =
    sizeof(registration_default_versions) / sizeof(registration_default_versions[0]);

struct registration_service {
    char *driver_name;
    uint8_t *info; /* the packed PluginInfo */
    size_t info_len;
    registration_status_fn on_status;
    void *ctx;
    pthread_mutex_t mu;
    bool registered;
};

static void get_info(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    (void)req;
    struct registration_service *svc = ctx;
    rpc_reply_packed(reply, svc->info, svc->info_len);
}

static void notify_status(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    struct registration_service *svc = ctx;
    const Pluginregistration__RegistrationStatus *st =
        (const Pluginregistration__RegistrationStatus *)req;
    bool ok = st->plugin_registered;
    const char *why = st->error && st->error[0] ? st->error : "(no reason given)";
    pthread_mutex_lock(&svc->mu);
    bool was = svc->registered;
    svc->registered = ok;
    pthread_mutex_unlock(&svc->mu);
    if (ok)
        LOG_I("kubelet registered driver %s%s", svc->driver_name, was ? " again" : "");
    else
        LOG_E("kubelet refused to register driver %s: %s", svc->driver_name, why);
    if (svc->on_status)
        svc->on_status(svc->ctx, ok, ok ? NULL : why);
    if (ok) {
        Pluginregistration__RegistrationStatusResponse resp =
            PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;
        rpc_reply_message(reply, &resp.base);
    } else {
        /* Like the Go helper: a refusal is answered with an error, which the
         * kubelet logs next to its own. */
        cleanup_free char *clean = utf8_sanitize(why);
        rpc_reply_error(reply, GRPC_STATUS_UNKNOWN, "registration of driver %s failed: %s",
                        svc->driver_name, clean);
    }
}

struct registration_service *registration_service_new(const struct registration_config *cfg,
                                                      struct error *err)
{
    if (cfg->driver_name == NULL || cfg->driver_name[0] == '\0')
        return error_set(err, "registration: empty driver name"), NULL;
    if (cfg->endpoint == NULL || cfg->endpoint[0] != '/')
        return error_set(err,
                         "registration: endpoint \"%s\" must be the absolute path of the DRA "
                         "socket (the kubelet dials it as is)",
                         cfg->endpoint ? cfg->endpoint : ""),
               NULL;
    const char *const *versions = cfg->versions ? cfg->versions : registration_default_versions;
    size_t nv = cfg->versions ? cfg->n_versions : registration_n_default_versions;
    if (nv == 0)
        return error_set(err, "registration: no supported versions"), NULL;
    for (size_t i = 0; i < nv; i++)
        if (versions[i] == NULL || versions[i][0] == '\0')
            return error_set(err, "registration: supported version %zu is empty", i), NULL;

    struct registration_service *svc = xcalloc(1, sizeof(*svc));
    pthread_mutex_init(&svc->mu, NULL);
    svc->on_status = cfg->on_status;
    svc->ctx = cfg->ctx;
    svc->driver_name = xstrdup(cfg->driver_name);

    Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
    info.type = REGISTRATION_TYPE_DRA;
    info.name = (char *)cfg->driver_name;
    info.endpoint = (char *)cfg->endpoint;
    info.n_supported_versions = nv;
    info.supported_versions = (char **)versions;
    svc->info_len = protobuf_c_message_get_packed_size(&info.base);
    svc->info = xmalloc(svc->info_len);
    protobuf_c_message_pack(&info.base, svc->info);
    return svc;
}

int registration_service_register(struct registration_service *svc, struct rpc_server *srv,
                                  struct error *err)
{
    const struct rpc_method methods[] = {
        {.path = REGISTRATION_GET_INFO,
         .request = &pluginregistration__info_request__descriptor,
         .unary = get_info,
         .ctx = svc},
        {.path = REGISTRATION_NOTIFY,
         .request = &pluginregistration__registration_status__descriptor,
         .unary = notify_status,
         .ctx = svc},
    };
    return rpc_server_add_methods(srv, methods, sizeof(methods) / sizeof(methods[0]), err);
}

bool registration_service_registered(struct registration_service *svc)
{
    pthread_mutex_lock(&svc->mu);
    bool r = svc->registered;
    pthread_mutex_unlock(&svc->mu);
    return r;
}

void registration_service_free(struct registration_service *svc)
{
    if (svc == NULL)
        return;
    free(svc->driver_name);
    free(svc->info);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
}
