// SPDX-License-Identifier: Apache-2.0
/* Request and event logs; see reqlog.h. */
#include "reqlog.h"
#include "cleanup.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int reqlog_init(struct reqlog *l, const char *event_log_path, struct error *err)
{
    memset(l, 0, sizeof(*l));
    l->event_fd = -1;
    pthread_mutex_init(&l->lock, NULL);
    l->entries = json_array();
    if (event_log_path && event_log_path[0]) {
        l->event_fd = open(event_log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (l->event_fd < 0)
            return error_set_errno(err, errno, "--event-log %s", event_log_path);
    }
    return 0;
}

void reqlog_destroy(struct reqlog *l)
{
    if (l->event_fd >= 0)
        close(l->event_fd);
    json_decref(l->entries);
    pthread_mutex_destroy(&l->lock);
}

void reqlog_add(struct reqlog *l, int64_t time_ns, const char *method, const char *path,
                const char *query, int status, const char *fault)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:I}", "method", method, "path", path, "query",
                          query ? query : "", "status", status, "timeNs", (json_int_t)time_ns);
    if (e && fault)
        json_object_set_new(e, "fault", json_string(fault));
    pthread_mutex_lock(&l->lock);
    if (json_array_size(l->entries) >= REQLOG_MAX) {
        /* Keep the newest 90%: one copy instead of shifting per entry. */
        size_t n = json_array_size(l->entries), keep = REQLOG_MAX * 9 / 10;
        json_t *kept = json_array();
        for (size_t i = n - keep; i < n; i++)
            json_array_append(kept, json_array_get(l->entries, i));
        l->dropped += n - keep;
        json_decref(l->entries);
        l->entries = kept;
    }
    json_array_append_new(l->entries, e);
    pthread_mutex_unlock(&l->lock);
}

char *reqlog_dump(struct reqlog *l)
{
    pthread_mutex_lock(&l->lock);
    json_t *j = json_pack("{s:O, s:I}", "requests", l->entries, "dropped", (json_int_t)l->dropped);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    pthread_mutex_unlock(&l->lock);
    return text;
}

void reqlog_clear(struct reqlog *l)
{
    pthread_mutex_lock(&l->lock);
    json_array_clear(l->entries);
    l->dropped = 0;
    pthread_mutex_unlock(&l->lock);
}

void reqlog_event(struct reqlog *l, int64_t time_ns, const char *method, const char *path,
                  int status, const char *resource, const char *ns, const char *name,
                  const char *object_json)
{
    if (l->event_fd < 0)
        return;
    json_t *j =
        json_pack("{s:I, s:s, s:s, s:i, s:s, s:s, s:s}", "timeNs", (json_int_t)time_ns, "method",
                  method, "path", path, "status", status, "resource", resource ? resource : "",
                  "namespace", ns ? ns : "", "name", name ? name : "");
    cleanup_free char *head = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (head == NULL)
        return;
    /* Splice the object text in rather than parsing it again. */
    size_t hl = strlen(head);
    head[hl - 1] = '\0'; /* drop the closing brace */
    cleanup_free char *line = object_json ? xasprintf("%s,\"object\":%s}\n", head, object_json)
                                          : xasprintf("%s}\n", head);
    pthread_mutex_lock(&l->lock);
    ssize_t w = write(l->event_fd, line, strlen(line));
    pthread_mutex_unlock(&l->lock);
    (void)w;
}
