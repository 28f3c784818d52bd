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
};

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
                goto too_long;
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
        goto too_long;
    return n;
too_long:
    error_set(w->err, "GET %s (watch): an event is larger than %ld bytes", w->path,
              KUBE_MAX_WATCH_LINE);
    w->failed = true;
    return 0;
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
    return xasprintf("%s%s%cwatch=true&allowWatchBookmarks=true%s%s%s", c->server, path,
                     strchr(path, '?') ? '&' : '?', erv ? "&resourceVersion=" : "", erv ? erv : "",
                     tpart);
}

int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               kube_watch_fn on_event, void *ctx, struct kube_cancel *cancel, struct error *err)
{
    struct watch w = {
        .c = c, .path = path, .fn = on_event, .ctx = ctx, .cancel = cancel, .err = err};
    w.line.limit = KUBE_MAX_WATCH_LINE;
    w.body.limit = 64 * 1024;
    struct curl_slist *headers = NULL;
    CURLM *m = NULL;
    char curl_msg[CURL_ERROR_SIZE] = "";
    long timeout_s;
    int rc = -1;

    if (path == NULL || path[0] != '/')
        return error_set(err, "watch: the path must start with \"/\"");
    cleanup_free char *url = watch_url(c, path, resource_version, &timeout_s);
    if ((headers = kube_http_headers(c, NULL, err)) == NULL) {
        error_prefix(err, "GET %s (watch)", path);
        goto out;
    }
    if ((w.h = curl_easy_init()) == NULL || (m = curl_multi_init()) == NULL) {
        error_set(err, "GET %s (watch): cannot create a curl handle", path);
        goto out;
    }
    /* The server ends the watch after timeout_s; a server that does not is
     * given up on 30 s later. */
    kube_http_setup(c, w.h, (timeout_s + 30) * 1000);
    curl_easy_setopt(w.h, CURLOPT_URL, url);
    curl_easy_setopt(w.h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(w.h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(w.h, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(w.h, CURLOPT_ERRORBUFFER, curl_msg);
    curl_multi_add_handle(m, w.h);
    struct kube_cancel_waiter self = {.multi = m};
    kube_cancel_attach(cancel, &self); /* detached at out_remove, which every path passes */

    /* Data, the end of the watch or a fired cancel token end a poll at once. */
    int poll_ms = c->opts.timeout_ms < WATCH_POLL_MS ? (int)c->opts.timeout_ms : WATCH_POLL_MS;
    int running = 1;
    bool stopped = false;
    while (running) {
        CURLMcode mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK) {
            error_set(err, "GET %s (watch): %s", path, curl_multi_strerror(mc));
            goto out_remove;
        }
        if (!running)
            break;
        if (kube_cancel_fired(cancel)) {
            stopped = true;
            break;
        }
        curl_multi_poll(m, NULL, 0, poll_ms, NULL);
    }
    CURLcode result = CURLE_OK;
    CURLMsg *msg;
    int queued;
    while ((msg = curl_multi_info_read(m, &queued)) != NULL)
        if (msg->msg == CURLMSG_DONE)
            result = msg->data.result;
    if (w.status == 0)
        curl_easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.status);
    if (c->opts.on_response != NULL)
        c->opts.on_response(c->opts.on_response_ctx, "WATCH", w.status);

    if (w.callback_done || stopped || (kube_cancel_fired(cancel) && !w.failed)) {
        rc = 0;
    } else if (w.failed) {
        rc = -1;
    } else if (result != CURLE_OK) {
        if (result == CURLE_OPERATION_TIMEDOUT && w.status == 200)
            error_set(err, "GET %s (watch): the server did not end the watch within %ld s", path,
                      timeout_s + 30);
        else
            error_set(err, "GET %s (watch): %s", path,
                      curl_msg[0] ? curl_msg : curl_easy_strerror(result));
    } else if (w.status != 200) {
        json_t *body = w.body.len ? json_loadb(w.body.data, w.body.len, 0, NULL) : NULL;
        kube_http_status_error(err, "GET", path, w.status, body, w.body.data, w.body.len);
        error_prefix(err, "watch");
        json_decref(body);
    } else if (w.line.len > 0 && handle_line(&w, w.line.data, w.line.len) < 0 && w.failed) {
        rc = -1; /* the last event had no newline and was broken */
    } else {
        LOG_V(4, "GET %s (watch): the server ended the watch after %lu events", path, w.events);
        rc = 0;
    }
out_remove:
    kube_cancel_detach(cancel, &self);
    curl_multi_remove_handle(m, w.h);
out:
    if (m)
        curl_multi_cleanup(m);
    if (w.h)
        curl_easy_cleanup(w.h);
    curl_slist_free_all(headers);
    kube_buf_free(&w.line);
    kube_buf_free(&w.body);
    return rc;
}
