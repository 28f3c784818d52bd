/* The Kubernetes API client: libcurl + jansson.
 *
 * Configuration comes from a kubeconfig file (current context: server, CA,
 * client certificate/key or bearer token, inline *-data or file paths) or,
 * without one, from the in-cluster service account
 * (/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt} and
 * KUBERNETES_SERVICE_HOST/PORT).
 *
 * Every request has a timeout.  Retriable failures (connection errors, 429,
 * 5xx) are retried with exponential backoff and full jitter, a bounded number
 * of times.  4xx answers are returned to the caller, not retried.  Error
 * messages name the method, the object path, the HTTP status and the API
 * server's own message ("GET /apis/.../resourceclaims/c1: 404 Not Found:
 * resourceclaims.resource.k8s.io \"c1\" not found").
 *
 * A client may be used from several threads at once. */
#ifndef FAKEHW_DRIVER_KUBE_CLIENT_H
#define FAKEHW_DRIVER_KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

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

/* kubeconfig_path NULL or "": in-cluster config.  Errors name the file and the
 * missing or bad field ("kubeconfig /x: context \"kind\": cluster \"c\" not found"). */
int kube_config_load(const char *kubeconfig_path, struct kube_config *cfg, struct error *err);
void kube_config_free(struct kube_config *cfg);

struct kube_client_options {
    long timeout_ms;      /* per attempt; default 10000 */
    int max_attempts;     /* default 5 */
    long backoff_base_ms; /* default 100, doubles each attempt, full jitter */
    long backoff_max_ms;  /* default 5000 */
    const char *user_agent;
};

struct kube_client;

/* opts may be NULL for the defaults.  The client copies what it needs from cfg. */
struct kube_client *kube_client_new(const struct kube_config *cfg,
                                    const struct kube_client_options *opts, struct error *err);
void kube_client_free(struct kube_client *c);

/* One request.  path starts with "/api" or "/apis" and may carry a query.
 * body may be NULL; content_type NULL means application/json (use
 * "application/merge-patch+json" or "application/strategic-merge-patch+json"
 * for PATCH).
 *
 * Returns 0 when the server answered (any status), with *status set and
 * *response the decoded JSON body (NULL when empty or not JSON; caller
 * json_decref()s it).  Returns -1 when no answer could be had after the
 * retries, or the answer was a 4xx/5xx and err is filled in that case too, so
 * callers that only care about success can test the return value and
 * callers that handle 404/409 can read *status.  status/response may be NULL. */
int kube_request(struct kube_client *c, const char *method, const char *path, const json_t *body,
                 const char *content_type, long *status, json_t **response, struct error *err);

/* Watches path (a list path; "watch=true" and resourceVersion are added) and
 * calls on_event for every event line: type is ADDED, MODIFIED, DELETED,
 * BOOKMARK or ERROR; object is borrowed.  Returns when on_event returns
 * non-zero (0 then), when *stop becomes true (checked at least every
 * timeout_ms), when the server ends the watch (0), or on error (-1). */
typedef int (*kube_watch_fn)(void *ctx, const char *type, json_t *object);
int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               kube_watch_fn on_event, void *ctx, volatile bool *stop, struct error *err);

/* Percent-encodes s for use in a query value (field selectors). Caller frees. */
char *kube_query_escape(const char *s);

#endif
