// SPDX-License-Identifier: Apache-2.0
/* A small HTTP client for the API stand-in (libcurl + jansson): setting up
 * claims for the prepare benchmark and the HTTP round-trip floor.  One
 * client is one keep-alive connection; use one per thread. */
#ifndef FAKEHW_BENCH_API_CLIENT_H
#define FAKEHW_BENCH_API_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "cleanup.h"
#include "error.h"

struct api_client;

/* base_url: "http://127.0.0.1:PORT", or "https://..." with tls (the CA and
 * the client certificate and key, PEM files).  tls NULL: none. */
struct api_client_tls {
    const char *ca, *cert, *key;
};
struct api_client *api_client_new(const char *base_url, const struct api_client_tls *tls,
                                  struct error *err);
void api_client_free(struct api_client *c);
CLEANUP_FUNC(struct api_client, api_client_free)
#define cleanup_api_client __attribute__((cleanup(api_client_freep)))

/* GET whose body is read and dropped: the round-trip floor.  0 on 200. */
int api_get_discard(struct api_client *c, const char *path, struct error *err);

/* One request with an optional JSON body: 0 on a 2xx answer, with *resp
 * the decoded body (NULL when empty; resp may be NULL); -1 with err naming
 * the method, path, status and answer. */
int api_request(struct api_client *c, const char *method, const char *path, const char *body,
                json_t **resp, struct error *err);

/* Creates ResourceClaim ns/name (request "gpu" of `n` devices of the
 * driver's DeviceClass), then sets status.allocation to those devices of
 * pool `pool` and reserves it for a pod, as the scheduler would.  uid gets
 * the claim's metadata.uid. */
int api_create_allocated_claim(struct api_client *c, const char *ns, const char *name,
                               const char *driver, const char *pool, char *const *devices, size_t n,
                               char uid[64], struct error *err);

#endif
