// SPDX-License-Identifier: Apache-2.0
/* Watches: one streaming GET whose chunked body is a sequence of JSON event
 * lines ({"type":"ADDED","object":{...}}), handed to a callback one by one. */
#include "kube_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "log.h"
#include "xalloc.h"

/* How often a watch wakes when nothing happens, to see the client's
 * shutdown deadline (a fired cancel token wakes it at once). */
#define WATCH_POLL_MS 1000

struct watch {
    struct kube_client *c;
    CURL *h;
    const char *path;
    kube_watch_fn fn;
    void *ctx;
    struct kube_cancel *cancel;
    long status;
    struct kube_buf line; /* the unfinished event line */
    struct kube_buf body; /* the body of a non-200 answer */
    bool callback_done;   /* on_event returned non-zero */
    bool failed;          /* err filled by the write callback */
    struct error *err;
    unsigned long events;

    /* What watch_release gives back, in libcurl's order. */
    CURLM *m;
    struct curl_slist *headers;
    bool added;                     /* h is in m */
    struct kube_cancel_waiter self; /* attached to cancel while h is in m */
};

/* Releases the watch's handles in the order libcurl wants: the easy handle
 * leaves the multi handle (and the cancel token lets go of it) before
 * either is cleaned up. */
static void watch_release(struct watch *w)
{
    if (w->added) {
        kube_cancel_detach(w->cancel, &w->self);
        curl_multi_remove_handle(w->m, w->h);
    }
    if (w->m)
        curl_multi_cleanup(w->m);
    if (w->h)
        curl_easy_cleanup(w->h);
    curl_slist_free_all(w->headers);
    kube_buf_free(&w->line);
    kube_buf_free(&w->body);
}
#define cleanup_watch __attribute__((cleanup(watch_release)))

/* Handles one complete line; returns -1 to end the watch. */
static int handle_line(struct watch *w, const char *p, size_t n)
{
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
        n--;
    if (n == 0)
        return 0;
    json_error_t jerr;
    json_t *ev = json_loadb(p, n, 0, &jerr);
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *object = json_object_get(ev, "object");
    if (ev == NULL || type == NULL || !json_is_object(object)) {
        error_set(w->err,
                  "GET %s (watch): event %lu is not {\"type\":..,\"object\":{..}}: %s: %.80s",
                  w->path, w->events + 1, ev ? "missing type or object" : jerr.text, p);
        json_decref(ev);
        w->failed = true;
        return -1;
    }
    w->events++;
    int r = w->fn(w->ctx, type, object);
    json_decref(ev);
    if (r != 0) {
        w->callback_done = true;
        return -1;
    }
    return 0;
}

static size_t too_long(struct watch *w)
{
    error_set(w->err, "GET %s (watch): an event is larger than %ld bytes", w->path,
              KUBE_MAX_WATCH_LINE);
    w->failed = true;
    return 0;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
    struct watch *w = ud;
    size_t n = size * nmemb;
    if (w->status == 0)
        curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->status != 200) {
        /* The body of an error answer, for the message; beyond 64 KiB it is dropped. */
        kube_buf_append(&w->body, p, n);
        return n;
    }
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n')
            continue;
        int r;
        if (w->line.len > 0) {
            if (kube_buf_append(&w->line, p + start, i - start) < 0)
                return too_long(w);
            r = handle_line(w, w->line.data, w->line.len);
            w->line.len = 0;
        } else {
            r = handle_line(w, p + start, i - start);
        }
        if (r < 0)
            return 0;
        if (kube_cancel_fired(w->cancel))
            return 0;
        start = i + 1;
    }
    if (start < n && kube_buf_append(&w->line, p + start, n - start) < 0)
        return too_long(w);
    return n;
}

/* The watch URL: path + watch=true, bookmarks, the resource version and a
 * server-side timeout (unless the path names one). */
static char *watch_url(struct kube_client *c, const char *path, const char *rv, long *timeout_s)
{
    cleanup_free char *erv = rv && rv[0] ? kube_query_escape(rv) : NULL;
    const char *ts = strstr(path, "timeoutSeconds=");
    *timeout_s = ts ? strtol(ts + strlen("timeoutSeconds="), NULL, 10) : KUBE_WATCH_TIMEOUT_S;
    if (*timeout_s <= 0)
        *timeout_s = KUBE_WATCH_TIMEOUT_S;
    char tpart[48] = "";
    if (ts == NULL)
        snprintf(tpart, sizeof(tpart), "&timeoutSeconds=%ld", *timeout_s);
    return xasprintf("%s%s%cwatch=true&allowWatchBookmarks=true%s%s%s", c->cfg.server, path,
                     strchr(path, '?') ? '&' : '?', erv ? "&resourceVersion=" : "", erv ? erv : "",
                     tpart);
}

/* The request: headers, the handles, the options, the cancel token
 * attached. */
static int watch_open(struct watch *w, const char *url, long timeout_s, char *curl_msg)
{
    struct kube_client *c = w->c;
    if ((w->headers = kube_http_headers(c, NULL, w->err)) == NULL)
        return error_prefix(w->err, "GET %s (watch)", w->path);
    if ((w->h = curl_easy_init()) == NULL || (w->m = curl_multi_init()) == NULL)
        return error_set(w->err, "GET %s (watch): cannot create a curl handle", w->path);
    /* The server ends the watch after timeout_s; a server that does not is
     * given up on 30 s later. */
    kube_http_setup(c, w->h, (timeout_s + 30) * 1000);
    curl_easy_setopt(w->h, CURLOPT_URL, url);
    curl_easy_setopt(w->h, CURLOPT_HTTPHEADER, w->headers);
    curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(w->h, CURLOPT_ERRORBUFFER, curl_msg);
    curl_multi_add_handle(w->m, w->h);
    w->self = (struct kube_cancel_waiter){.multi = w->m};
    kube_cancel_attach(w->cancel, &w->self);
    w->added = true;
    return 0;
}

/* Runs the transfer until it ends or the token fires (*stopped); -1 with
 * err when curl cannot go on.  *result: how the transfer ended. */
static int watch_pump(struct watch *w, bool *stopped, CURLcode *result)
{
    /* Data, the end of the watch or a fired cancel token end a poll at once. */
    int poll_ms =
        w->c->opts.timeout_ms < WATCH_POLL_MS ? (int)w->c->opts.timeout_ms : WATCH_POLL_MS;
    int running = 1;
    while (running) {
        CURLMcode mc = curl_multi_perform(w->m, &running);
        if (mc != CURLM_OK)
            return error_set(w->err, "GET %s (watch): %s", w->path, curl_multi_strerror(mc));
        if (!running)
            break;
        if (kube_cancel_fired(w->cancel)) {
            *stopped = true;
            break;
        }
        curl_multi_poll(w->m, NULL, 0, poll_ms, NULL);
    }
    CURLMsg *msg;
    int queued;
    while ((msg = curl_multi_info_read(w->m, &queued)) != NULL)
        if (msg->msg == CURLMSG_DONE)
            *result = msg->data.result;
    if (w->status == 0)
        curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->c->opts.on_response != NULL)
        w->c->opts.on_response(w->c->opts.on_response_ctx, "WATCH", w->status);
    return 0;
}

/* What the ended watch comes to: 0 when it ended as a watch may (its
 * callback, the token or the server ended it), -1 with err otherwise. */
static int watch_outcome(struct watch *w, bool stopped, CURLcode result, long timeout_s,
                         const char *curl_msg)
{
    struct error *err = w->err;
    const char *path = w->path;
    if (w->callback_done || stopped || (kube_cancel_fired(w->cancel) && !w->failed))
        return 0;
    if (w->failed)
        return -1;
    if (result != CURLE_OK) {
        if (result == CURLE_OPERATION_TIMEDOUT && w->status == 200)
            return error_set(err, "GET %s (watch): the server did not end the watch within %ld s",
                             path, timeout_s + 30);
        return error_set(err, "GET %s (watch): %s", path,
                         curl_msg[0] ? curl_msg : curl_easy_strerror(result));
    }
    if (w->status != 200) {
        json_auto_t *body = w->body.len ? json_loadb(w->body.data, w->body.len, 0, NULL) : NULL;
        kube_http_status_error(err, "GET", path, w->status, body, w->body.data, w->body.len);
        return error_prefix(err, "watch");
    }
    if (w->line.len > 0 && handle_line(w, w->line.data, w->line.len) < 0 && w->failed)
        return -1; /* the last event had no newline and was broken */
    LOG_V(4, "GET %s (watch): the server ended the watch after %lu events", path, w->events);
    return 0;
}

int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               kube_watch_fn on_event, void *ctx, struct kube_cancel *cancel, struct error *err)
{
    if (path == NULL || path[0] != '/')
        return error_set(err, "watch: the path must start with \"/\"");
    cleanup_watch struct watch w = {
        .c = c, .path = path, .fn = on_event, .ctx = ctx, .cancel = cancel, .err = err};
    w.line.limit = KUBE_MAX_WATCH_LINE;
    w.body.limit = 64 * 1024;
    char curl_msg[CURL_ERROR_SIZE] = "";
    long timeout_s;
    cleanup_free char *url = watch_url(c, path, resource_version, &timeout_s);
    bool stopped = false;
    CURLcode result = CURLE_OK;
    if (watch_open(&w, url, timeout_s, curl_msg) < 0 || watch_pump(&w, &stopped, &result) < 0)
        return -1;
    return watch_outcome(&w, stopped, result, timeout_s, curl_msg);
}
