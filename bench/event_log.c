// SPDX-License-Identifier: Apache-2.0
#include "event_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "proc.h"

struct event_log {
    int fd, in;
    char path[4096];
    char *buf;
    size_t len, cap;
};

struct event_log *event_log_open(const char *path, struct error *err)
{
    struct event_log *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return error_set(err, "out of memory"), NULL;
    snprintf(l->path, sizeof(l->path), "%s", path);
    l->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (l->fd < 0) {
        error_set_errno(err, errno, "opening the event log %s", path);
        free(l);
        return NULL;
    }
    l->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (l->in < 0 || inotify_add_watch(l->in, path, IN_MODIFY) < 0) {
        error_set_errno(err, errno, "watching the event log %s", path);
        event_log_close(l);
        return NULL;
    }
    return l;
}

void event_log_close(struct event_log *l)
{
    if (l == NULL)
        return;
    if (l->fd >= 0)
        close(l->fd);
    if (l->in >= 0)
        close(l->in);
    free(l->buf);
    free(l);
}

/* Appends whatever the file has beyond what was read; -1 on a read error. */
static int read_more(struct event_log *l, size_t *got, struct error *err)
{
    *got = 0;
    for (;;) {
        if (l->cap - l->len < 65536) {
            size_t cap = l->cap ? l->cap * 2 : 262144;
            char *nb = realloc(l->buf, cap);
            if (nb == NULL)
                return error_set(err, "out of memory");
            l->buf = nb;
            l->cap = cap;
        }
        ssize_t n = read(l->fd, l->buf + l->len, l->cap - l->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return error_set_errno(err, errno, "reading the event log %s", l->path);
        if (n == 0)
            return 0;
        l->len += (size_t)n;
        *got += (size_t)n;
    }
}

int event_log_next(struct event_log *l, int timeout_ms, json_t **ev, struct error *err)
{
    int64_t end = now_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        char *nl = l->len ? memchr(l->buf, '\n', l->len) : NULL;
        if (nl) {
            size_t line = (size_t)(nl - l->buf);
            json_error_t je;
            *ev = json_loadb(l->buf, line, 0, &je);
            memmove(l->buf, nl + 1, l->len - line - 1);
            l->len -= line + 1;
            if (*ev == NULL)
                return error_set(err, "%s: a line is not JSON: %s", l->path, je.text);
            return 1;
        }
        size_t got;
        if (read_more(l, &got, err) < 0)
            return -1;
        if (got > 0)
            continue;
        int64_t left = end - now_mono_ns();
        if (left <= 0)
            return 0;
        /* Appends to the file raise IN_MODIFY; the cap only bounds a wake
         * that raced with the read above. */
        struct pollfd p = {l->in, POLLIN, 0};
        int ms = left / 1000000 > 100 ? 100 : (int)(left / 1000000) + 1;
        if (poll(&p, 1, ms) > 0) {
            char evbuf[4096];
            while (read(l->in, evbuf, sizeof(evbuf)) > 0)
                ;
        }
    }
}

int64_t event_time_ns(const json_t *ev)
{
    return (int64_t)json_integer_value(json_object_get(ev, "timeNs"));
}

int event_is_write_of(const json_t *ev, const char *resource)
{
    const char *res = json_string_value(json_object_get(ev, "resource"));
    json_int_t status = json_integer_value(json_object_get(ev, "status"));
    return res && !strcmp(res, resource) && status >= 200 && status < 300;
}
