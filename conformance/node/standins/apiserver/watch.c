// SPDX-License-Identifier: Apache-2.0
/* Watch streams; see watch.h. */
#include "watch.h"
#include "grow.h"
#include "k8s_codec.h"
#include "log.h"
#include "xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct watch_stream {
    struct store *store;
    const struct resource *res;
    char *ns;
    struct fsel sel;
    uint64_t last_rv;      /* events up to this one are handled */
    struct timespec until; /* CLOCK_REALTIME deadline (condvar clock) */
    int fd;
    char *pending; /* bytes not yet handed to the server */
    size_t len, pos, cap;
    bool done;     /* end after pending is sent */
    bool protobuf; /* length-delimited protobuf frames instead of JSON lines */
};

static void reserve(struct watch_stream *w, size_t need)
{
    GROW(w->pending, w->cap, w->len + need);
}

static void append(struct watch_stream *w, const char *type, const char *object_json)
{
    if (w->protobuf) {
        struct pb_bytes frame = {0};
        struct error err;
        if (codec_watch_frame(type, object_json, w->res, &frame, &err) < 0) {
            /* Stored objects were validated JSON; a failure here is a bug. */
            LOG_E("watch %s: %s event: %s", w->res->plural, type, err.msg);
            w->done = true;
        } else {
            reserve(w, frame.len);
            memcpy(w->pending + w->len, frame.p, frame.len);
            w->len += frame.len;
        }
        pb_bytes_free(&frame);
        return;
    }
    size_t need = strlen(type) + strlen(object_json) + 32;
    reserve(w, need);
    w->len += (size_t)snprintf(w->pending + w->len, w->cap - w->len,
                               "{\"type\":\"%s\",\"object\":%s}\n", type, object_json);
}

static void expired(struct watch_stream *w, uint64_t rv, uint64_t oldest)
{
    char line[512];
    snprintf(line, sizeof(line),
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
             "\"message\":\"too old resource version: %llu (%llu)\",\"reason\":\"Expired\","
             "\"code\":410}",
             (unsigned long long)rv, (unsigned long long)oldest);
    append(w, "ERROR", line);
    w->done = true;
}

/* The BOOKMARK that ends the initial events of a watch-list request. */
static void initial_events_end(struct watch_stream *w, uint64_t rv)
{
    char rvs[32];
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "kind", w->res->kind, "apiVersion",
                            w->res->api_version, "metadata", "resourceVersion", rvs, "annotations",
                            "k8s.io/initial-events-end", "true");
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (text)
        append(w, "BOOKMARK", text);
    free(text);
}

struct watch_stream *watch_new(struct store *s, const struct resource *r, const char *ns,
                               struct fsel *sel, const struct watch_opts *o)
{
    struct watch_stream *w = xcalloc(1, sizeof(*w));
    w->protobuf = o->protobuf;
    w->store = s;
    w->res = r;
    w->fd = -1;
    w->ns = ns ? xstrdup(ns) : NULL;
    w->sel = *sel;
    memset(sel, 0, sizeof(*sel));
    clock_gettime(CLOCK_REALTIME, &w->until);
    w->until.tv_sec += o->timeout_s;
    if (o->initial) {
        json_t *items = store_list(s, r, ns);
        size_t i;
        json_t *obj;
        json_array_foreach(items, i, obj)
        {
            if (!fsel_match_object(&w->sel, obj))
                continue;
            char *text = json_dumps(obj, JSON_COMPACT);
            if (text)
                append(w, "ADDED", text);
            free(text);
        }
        json_decref(items);
        w->last_rv = s->rv;
        if (o->initial_events_end)
            initial_events_end(w, s->rv);
    } else if (o->from_rv < s->expired_rv) {
        expired(w, o->from_rv, s->expired_rv + 1);
    } else {
        w->last_rv = o->from_rv;
    }
    return w;
}

void watch_set_fd(struct watch_stream *w, int fd)
{
    w->fd = fd;
}

/* Adds the events after last_rv that this watch sees; store locked. */
static void collect(struct watch_stream *w)
{
    struct store *s = w->store;
    if (w->last_rv < s->expired_rv) {
        /* This watch fell behind the history (or asked for the future and
         * the history moved past it): the real server ends it the same way. */
        expired(w, w->last_rv, s->expired_rv + 1);
        return;
    }
    for (size_t i = store_first_after(s, w->last_rv); i < s->ring_len; i++) {
        const struct store_event *e = store_event_at(s, i);
        w->last_rv = e->rv;
        if (e->res != w->res || (w->ns && strcmp(w->ns, e->ns)))
            continue;
        bool now = fsel_match(&w->sel, (const char *const *)e->now);
        const char *type = e->type;
        if (!strcmp(type, "MODIFIED")) {
            bool was = fsel_match(&w->sel, (const char *const *)e->was);
            /* Moving into or out of the selection reads as ADDED / DELETED. */
            if (!was && !now)
                continue;
            type = !was ? "ADDED" : !now ? "DELETED" : "MODIFIED";
        } else if (!now) {
            continue;
        }
        append(w, type, e->object_json);
    }
}

static bool client_gone(int fd)
{
    if (fd < 0)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0)
        return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

ssize_t watch_read(struct watch_stream *w, char *buf, size_t max)
{
    if (w->pos == w->len && !w->done) {
        w->pos = w->len = 0;
        struct store *s = w->store;
        store_lock(s);
        for (;;) {
            if (s->closing) {
                w->done = true;
                break;
            }
            collect(w);
            if (w->len > 0 || w->done)
                break;
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (now.tv_sec > w->until.tv_sec ||
                (now.tv_sec == w->until.tv_sec && now.tv_nsec >= w->until.tv_nsec)) {
                w->done = true;
                break;
            }
            if (client_gone(w->fd)) {
                w->done = true;
                break;
            }
            /* Wake at least once a second to notice a client that left. */
            struct timespec wake = now;
            wake.tv_sec += 1;
            if (wake.tv_sec > w->until.tv_sec ||
                (wake.tv_sec == w->until.tv_sec && wake.tv_nsec > w->until.tv_nsec))
                wake = w->until;
            pthread_cond_timedwait(&s->changed, &s->lock, &wake);
        }
        store_unlock(s);
    }
    if (w->pos == w->len)
        return -1;
    size_t n = w->len - w->pos;
    if (n > max)
        n = max;
    memcpy(buf, w->pending + w->pos, n);
    w->pos += n;
    return (ssize_t)n;
}

void watch_free(struct watch_stream *w)
{
    if (w == NULL)
        return;
    fsel_free(&w->sel);
    free(w->ns);
    free(w->pending);
    free(w);
}
