// SPDX-License-Identifier: Apache-2.0
/* The Kubernetes API client: libcurl + jansson.
 *
 * Configuration comes from a kubeconfig file (current context: server, CA,
 * client certificate/key or bearer token, inline *-data or file paths) or,
 * without one, from the in-cluster service account
 * (/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt} and
 * KUBERNETES_SERVICE_HOST/PORT).  The environment variable
 * KUBE_SERVICEACCOUNT_DIR replaces that directory (tests use it).
 *
 * Every request has a timeout.  Retriable failures (connection errors, 429,
 * 5xx) are retried with exponential backoff and jitter (retry.h), a bounded
 * number of times; a Retry-After header is honoured up to backoff_max_ms.  A POST is
 * not repeated once it may have reached the server without an answer
 * (timeout, dropped connection, 504): with generateName that would create a
 * second object.  4xx answers are returned to the caller, not retried.  Error
 * messages name the method, the object path, the HTTP status and the API
 * server's own message ("GET /apis/.../resourceclaims/c1: 404 Not Found:
 * resourceclaims.resource.k8s.io \"c1\" not found").
 *
 * A client may be used from several threads at once; it must outlive the
 * requests and watches that use it. */
#ifndef FAKEHW_DRIVER_KUBE_CLIENT_H
#define FAKEHW_DRIVER_KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "kube_paths.h"

struct kube_config {
    char *server;           /* https://host:port or http://127.0.0.1:port */
    char *ca_file;          /* NULL: system CAs (or none for http) */
    char *ca_data;          /* PEM, from certificate-authority-data */
    char *client_cert_file; /* or client_cert_data */
    char *client_cert_data;
    char *client_key_file; /* or client_key_data */
    char *client_key_data;
    char *token;      /* bearer token */
    char *token_file; /* re-read on every request (projected tokens rotate) */
    bool insecure_skip_tls_verify;
};

/* kubeconfig_path NULL or "": in-cluster config.  Errors name the file, the
 * line and the missing or bad field
 * ("kubeconfig /x: context \"kind\": cluster \"c\" not found in clusters").
 * Relative file names in a kubeconfig are relative to its directory; files
 * and *-data are checked (readable, base64, PEM) here, not at the first
 * request.  On failure cfg is left zeroed. */
int kube_config_load(const char *kubeconfig_path, struct kube_config *cfg, struct error *err);
void kube_config_free(struct kube_config *cfg);

struct kube_client_options {
    long timeout_ms;      /* per attempt; default 10000 */
    int max_attempts;     /* default 5 */
    long backoff_base_ms; /* default 100, doubles each attempt, jittered */
    long backoff_max_ms;  /* default 5000 */
    const char *user_agent;
    /* Called after every attempt of a request (retries too) and at the end
     * of every watch, on the calling thread: the HTTP method ("WATCH" for a
     * watch) and the status, 0 when no answer came.  Must not block (it
     * records metrics).  NULL = none. */
    void (*on_response)(void *ctx, const char *method, long status);
    void *on_response_ctx;
};

struct kube_client;

/* opts may be NULL for the defaults.  The client copies what it needs from cfg. */
struct kube_client *kube_client_new(const struct kube_config *cfg,
                                    const struct kube_client_options *opts, struct error *err);
void kube_client_free(struct kube_client *c);

/* The HTTP methods of kube_request; kube_method_name gives the wire name
 * ("GET", ...), the one used in error messages and on_response. */
enum kube_method { KUBE_GET, KUBE_HEAD, KUBE_POST, KUBE_PUT, KUBE_PATCH, KUBE_DELETE };
const char *kube_method_name(enum kube_method method);

/* One request.  path starts with "/api" or "/apis" and may carry a query
 * (escape values with kube_query_escape).  body may be NULL; content_type
 * NULL means application/json (use "application/merge-patch+json" or
 * "application/strategic-merge-patch+json" for PATCH).
 *
 * Returns 0 when the server answered 2xx: *status is set and *response is the
 * decoded JSON body (NULL when empty or not JSON; caller json_decref()s it).
 * Returns -1 with err filled when the answer was not 2xx (4xx, or 5xx after
 * the retries): *status and *response are set then too (the response is
 * usually the metav1.Status), so callers that handle 404/409 can read
 * *status.  Returns -1 with *status 0 when no answer could be had.
 * status/response may be NULL. */
int kube_request(struct kube_client *c, enum kube_method method, const char *path,
                 const json_t *body, const char *content_type, long *status, json_t **response,
                 struct error *err);

/* Watches path (a list path, may carry a fieldSelector; "watch=true",
 * "allowWatchBookmarks=true", the resourceVersion when not NULL/"" and
 * "timeoutSeconds=300" unless the path has one are added) and calls on_event
 * for every event line: type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR
 * (object then is a metav1.Status, e.g. 410 Expired); object is borrowed.
 * Returns when on_event returns non-zero (0 then), when cancel is fired (0
 * then, at once; cancel may be NULL), when the server ends the watch (0), or
 * on error (-1: no connection, a non-200 answer such as 400 for a bad field
 * selector, a broken event line, or a server that keeps the watch open 30 s
 * past timeoutSeconds).  There are no retries: the caller lists again and
 * watches from the list's resourceVersion. */
typedef int (*kube_watch_fn)(void *ctx, const char *type, json_t *object);
struct kube_cancel;
int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               kube_watch_fn on_event, void *ctx, struct kube_cancel *cancel, struct error *err);

/* A cancel token for watches.  Firing it ends every kube_watch running with
 * it at once, and makes any later one return at once; it stays fired.  Safe
 * from any thread.  new never fails (out of memory is fatal); free, fire and
 * fired accept NULL (a NULL token is never fired). */
struct kube_cancel *kube_cancel_new(void);
void kube_cancel_free(struct kube_cancel *t);
void kube_cancel_fire(struct kube_cancel *t);
bool kube_cancel_fired(struct kube_cancel *t);

/* Shutdown: from deadline_ms on (CLOCK_MONOTONIC milliseconds, see
 * monotonic.h) no request or watch of this client starts or retries,
 * and one in flight ends with an error ("cancelled: shutting down").  A
 * deadline already past also ends the transfers in flight at once (their
 * sockets are shut down); a future one caps the timeout of the requests
 * that start before it.  0 removes the deadline.  Safe from any thread. */
void kube_client_set_deadline(struct kube_client *c, long long deadline_ms);
/* True once the deadline passed. */
bool kube_client_expired(struct kube_client *c);

/* Percent-encodes s for use in a query value (field selectors). Caller frees. */
char *kube_query_escape(const char *s);

#endif
