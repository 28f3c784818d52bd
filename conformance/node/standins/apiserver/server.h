// SPDX-License-Identifier: Apache-2.0
/* The HTTP side of the stand-in (libmicrohttpd, one thread per connection,
 * 127.0.0.1 only): request bodies, authentication, fault injection, the
 * request and event logs, watch streaming, and the /standin/ control API. */
#ifndef APISERVER_STANDIN_SERVER_H
#define APISERVER_STANDIN_SERVER_H

#include "api.h"
#include "error.h"
#include "faults.h"
#include "reqlog.h"

/* Largest request body, as the real API server (3 MiB). */
#define SERVER_MAX_BODY (3L << 20)

struct server_config {
    long port;                  /* 0: any free port */
    const char *token;          /* required bearer token (NULL/"": none) */
    const char *tls_cert_file;  /* serve HTTPS with this certificate ... */
    const char *tls_key_file;   /* ... and key */
    const char *client_ca_file; /* accept client certificates signed by this CA */
};

struct server;

struct server *server_start(struct api *api, struct faults *faults, struct reqlog *log,
                            const struct server_config *cfg, struct error *err);
int server_port(const struct server *s);
/* Stops accepting, ends the connections, frees s.  Close the store first so
 * watches end. */
void server_stop(struct server *s);

#endif
