// SPDX-License-Identifier: Apache-2.0
/* One API request with a per-attempt timeout and bounded, jittered retries. */
#include "kube_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "log.h"
#include "retry.h"
#include "xalloc.h"

/* What one attempt produced. */
struct attempt {
    CURLcode curl_rc;
    char curl_msg[CURL_ERROR_SIZE];
    long status;
    long retry_after_s; /* -1: no Retry-After header */
    struct kube_buf body;
};

static void attempt_done(struct attempt *a)
{
    kube_buf_free(&a->body);
}
#define cleanup_attempt __attribute__((cleanup(attempt_done)))

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct kube_buf *b = ud;
    return kube_buf_append(b, p, size * n) < 0 ? 0 : size * n;
}

const char *kube_method_name(enum kube_method method)
{
    switch (method) {
    case KUBE_GET:
        return "GET";
    case KUBE_HEAD:
        return "HEAD";
    case KUBE_POST:
        return "POST";
    case KUBE_PUT:
        return "PUT";
    case KUBE_PATCH:
        return "PATCH";
    case KUBE_DELETE:
        return "DELETE";
    }
    return "GET";
}

static int attempt_once(struct kube_client *c, enum kube_method m, const char *url,
                        const char *payload, const char *content_type, struct attempt *a,
                        struct error *err)
{
    const char *method = kube_method_name(m);
    memset(a, 0, sizeof(*a));
    a->retry_after_s = -1;
    a->body.limit = KUBE_MAX_BODY;
    struct curl_slist *headers = kube_http_headers(c, payload ? content_type : NULL, err);
    if (headers == NULL)
        return -1;
    CURL *h = kube_handle_get(c);
    if (h == NULL) {
        curl_slist_free_all(headers);
        return error_set(err, "curl_easy_init failed");
    }
    kube_http_setup(c, h, c->opts.timeout_ms);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (payload) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
    } else if (m == KUBE_HEAD) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, a->curl_msg);
    a->curl_rc = curl_easy_perform(h);
    if (a->curl_rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
        curl_off_t ra = -1;
        if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
            a->retry_after_s = (long)ra;
    } else if (a->curl_msg[0] == '\0') {
        snprintf(a->curl_msg, sizeof(a->curl_msg), "%s", curl_easy_strerror(a->curl_rc));
    }
    if (c->opts.on_response != NULL)
        c->opts.on_response(c->opts.on_response_ctx, method,
                            a->curl_rc == CURLE_OK ? a->status : 0);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    kube_handle_put(c, h);
    curl_slist_free_all(headers);
    return 0;
}

/* Whether a transport failure may be retried.  Failures before the request
 * left are always safe; after that only for methods whose repetition cannot
 * create a second object (a POST with generateName could). */
static bool transport_retriable(CURLcode rc, enum kube_method method)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return true;
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return method != KUBE_POST;
    default:
        return false;
    }
}

static bool status_retriable(long status, enum kube_method method)
{
    if (status == 429)
        return true;
    /* A 504 may mean the write happened after all: same rule as above. */
    if (status == 504)
        return method != KUBE_POST;
    return status >= 500 && status <= 599;
}

/* Appends " (after N attempts)" when the request was retried.  Returns -1. */
static int note_attempts(struct error *err, int attempts)
{
    if (err == NULL || attempts < 2)
        return -1;
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof(err->msg) - n, " (after %d attempts)", attempts);
    return -1;
}

/* What an attempt's answer calls for: 0 when it is the answer (good or
 * not), 1 to try again after *delay ms (a transport failure or a status
 * worth retrying), -1 with err when it is given up. */
static int judge_attempt(struct kube_client *c, enum kube_method m, const char *path, int attempt,
                         const struct attempt *a, long *delay, struct error *err)
{
    const char *method = kube_method_name(m);
    bool last = attempt >= c->opts.max_attempts;
    *delay = retry_backoff_ms(attempt, c->opts.backoff_base_ms, c->opts.backoff_max_ms);
    if (a->curl_rc != CURLE_OK) {
        if (a->body.overflow)
            return error_set(err, "%s %s: the response is larger than %ld bytes", method, path,
                             KUBE_MAX_BODY);
        if (kube_client_expired(c)) {
            error_set(err, "%s %s: cancelled: the client is shutting down (%s)", method, path,
                      a->curl_msg);
            return note_attempts(err, attempt);
        }
        if (last || !transport_retriable(a->curl_rc, m)) {
            error_set(err, "%s %s: no answer from %s: %s", method, path, c->cfg.server,
                      a->curl_msg);
            return note_attempts(err, attempt);
        }
        LOG_W("%s %s: attempt %d of %d failed (%s); retrying in %ld ms", method, path, attempt,
              c->opts.max_attempts, a->curl_msg, *delay);
        return 1;
    }
    if (last || !status_retriable(a->status, m))
        return 0;
    /* Honour Retry-After, but never wait longer than backoff_max_ms. */
    if (a->retry_after_s >= 0) {
        long ra = a->retry_after_s > c->opts.backoff_max_ms / 1000 ? c->opts.backoff_max_ms
                                                                   : a->retry_after_s * 1000;
        if (ra > *delay)
            *delay = ra;
    }
    LOG_W("%s %s: attempt %d of %d answered %ld; retrying in %ld ms", method, path, attempt,
          c->opts.max_attempts, a->status, *delay);
    return 1;
}

/* The answer: its status, its body decoded; -1 with err for a status that
 * is not 2xx (the body, the API server's Status, is handed back too). */
static int take_answer(enum kube_method m, const char *path, const struct attempt *a, int attempts,
                       long *status, json_t **response, struct error *err)
{
    const char *method = kube_method_name(m);
    json_t *decoded = NULL;
    if (a->body.len > 0)
        decoded = json_loadb(a->body.data, a->body.len, 0, NULL);
    if (status)
        *status = a->status;
    LOG_V(4, "%s %s: %ld (%zu bytes)", method, path, a->status, a->body.len);
    int rc = 0;
    if (a->status >= 400 || a->status < 200) {
        kube_http_status_error(err, method, path, a->status, decoded, a->body.data, a->body.len);
        if (status_retriable(a->status, m))
            note_attempts(err, attempts);
        rc = -1;
    }
    if (response)
        *response = decoded;
    else
        json_decref(decoded);
    return rc;
}

int kube_request(struct kube_client *c, enum kube_method m, const char *path, const json_t *body,
                 const char *content_type, long *status, json_t **response, struct error *err)
{
    const char *method = kube_method_name(m);
    if (status)
        *status = 0;
    if (response)
        *response = NULL;
    if (path == NULL || path[0] != '/')
        return error_set(err, "%s %s: the path must start with \"/\"", method,
                         path ? path : "(null)");
    cleanup_free char *url = xasprintf("%s%s", c->cfg.server, path);
    cleanup_free char *payload = NULL;
    cleanup_attempt struct attempt a = {0};
    if (body && (payload = json_dumps(body, JSON_COMPACT)) == NULL)
        return error_set(err, "%s %s: cannot encode the request body as JSON", method, path);
    if (content_type == NULL)
        content_type = "application/json";
    for (int attempt = 1;; attempt++) {
        if (kube_client_expired(c)) {
            error_set(err, "%s %s: cancelled: the client is shutting down", method, path);
            return note_attempts(err, attempt - 1);
        }
        if (attempt_once(c, m, url, payload, content_type, &a, err) < 0)
            return error_prefix(err, "%s %s", method, path);
        long delay;
        int verdict = judge_attempt(c, m, path, attempt, &a, &delay, err);
        if (verdict < 0)
            return -1;
        if (verdict == 0)
            return take_answer(m, path, &a, attempt, status, response, err);
        kube_buf_free(&a.body);
        /* The wait ends with the deadline; the next turn then gives up. */
        if (delay > 0)
            retry_sleep_ms(kube_client_remaining_ms(c, delay));
    }
}
