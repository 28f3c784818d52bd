// SPDX-License-Identifier: Apache-2.0
/* Fault injection; see faults.h. */
#include "faults.h"
#include "grow.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void faults_init(struct faults *f)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->lock, NULL);
    f->next_id = 1;
}

static void fault_free(struct fault *x)
{
    free(x->method);
    free(x->path);
}

void faults_destroy(struct faults *f)
{
    faults_clear(f);
    free(f->list);
    pthread_mutex_destroy(&f->lock);
}

static json_t *fault_json(const struct fault *x)
{
    json_t *j = json_pack("{s:I}", "id", (json_int_t)x->id);
    if (x->status)
        json_object_set_new(j, "status", json_integer(x->status));
    if (x->close)
        json_object_set_new(j, "close", json_true());
    if (x->after)
        json_object_set_new(j, "after", json_true());
    if (x->delay_ms)
        json_object_set_new(j, "delayMs", json_integer(x->delay_ms));
    if (x->retry_after_s >= 0)
        json_object_set_new(j, "retryAfter", json_integer(x->retry_after_s));
    if (x->method)
        json_object_set_new(j, "method", json_string(x->method));
    if (x->path)
        json_object_set_new(j, "path", json_string(x->path));
    if (x->remaining >= 0)
        json_object_set_new(j, "remaining", json_integer(x->remaining));
    if (x->until_ns)
        json_object_set_new(j, "untilNs", json_integer(x->until_ns));
    return j;
}

static int bad(char *msg, size_t size, const char *what)
{
    snprintf(msg, size, "fault: %s", what);
    return -1;
}

int faults_add(struct faults *f, const json_t *spec, json_t **added, char *msg, size_t msg_size)
{
    static const char *const known[] = {"status", "close",   "after",  "delayMs", "retryAfter",
                                        "count",  "seconds", "method", "path"};
    if (!json_is_object(spec))
        return bad(msg, msg_size, "the body must be a JSON object");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)spec, k, v)
    {
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            ok = ok || !strcmp(k, known[i]);
        if (!ok) {
            snprintf(msg, msg_size,
                     "fault: unknown key \"%s\" (known: status, close, after, delayMs, "
                     "retryAfter, count, seconds, method, path)",
                     k);
            return -1;
        }
    }
    struct fault x = {.retry_after_s = -1, .remaining = -1};
    json_t *status = json_object_get(spec, "status");
    json_t *count = json_object_get(spec, "count");
    json_t *seconds = json_object_get(spec, "seconds");
    json_t *delay = json_object_get(spec, "delayMs");
    json_t *retry = json_object_get(spec, "retryAfter");
    if (status && (!json_is_integer(status) || json_integer_value(status) < 400 ||
                   json_integer_value(status) > 599))
        return bad(msg, msg_size, "status must be an integer from 400 to 599");
    x.status = (int)json_integer_value(status);
    x.close = json_is_true(json_object_get(spec, "close"));
    x.after = json_is_true(json_object_get(spec, "after"));
    if (delay && (!json_is_integer(delay) || json_integer_value(delay) < 0 ||
                  json_integer_value(delay) > 600000))
        return bad(msg, msg_size, "delayMs must be an integer from 0 to 600000");
    x.delay_ms = (long)json_integer_value(delay);
    if (retry && (!json_is_integer(retry) || json_integer_value(retry) < 0))
        return bad(msg, msg_size, "retryAfter must be a non-negative integer (seconds)");
    if (retry)
        x.retry_after_s = (long)json_integer_value(retry);
    if (x.status == 0 && !x.close && x.delay_ms == 0)
        return bad(msg, msg_size, "give at least one of status, close or delayMs");
    if (x.status && x.close)
        return bad(msg, msg_size, "status and close exclude each other");
    if (x.after && !x.close)
        return bad(msg, msg_size, "after needs close");
    if (retry && !x.status)
        return bad(msg, msg_size, "retryAfter needs status");
    if (count && (!json_is_integer(count) || json_integer_value(count) < 1))
        return bad(msg, msg_size, "count must be an integer >= 1");
    if (seconds && (!json_is_number(seconds) || json_number_value(seconds) <= 0))
        return bad(msg, msg_size, "seconds must be a number > 0");
    if (seconds)
        x.until_ns = now_ns() + (int64_t)(json_number_value(seconds) * 1e9);
    if (count)
        x.remaining = (long)json_integer_value(count);
    else if (!seconds)
        x.remaining = 1;
    const char *method = json_string_value(json_object_get(spec, "method"));
    const char *path = json_string_value(json_object_get(spec, "path"));
    if ((json_object_get(spec, "method") && !method) || (json_object_get(spec, "path") && !path))
        return bad(msg, msg_size, "method and path must be strings");

    pthread_mutex_lock(&f->lock);
    GROW(f->list, f->cap, f->n + 1);
    x.id = f->next_id++;
    x.method = method ? xstrdup(method) : NULL;
    x.path = path ? xstrdup(path) : NULL;
    f->list[f->n++] = x;
    if (added)
        *added = fault_json(&x);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

void faults_clear(struct faults *f)
{
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->n; i++)
        fault_free(&f->list[i]);
    f->n = 0;
    pthread_mutex_unlock(&f->lock);
}

json_t *faults_list(struct faults *f)
{
    json_t *a = json_array();
    pthread_mutex_lock(&f->lock);
    int64_t now = now_ns();
    for (size_t i = 0; i < f->n; i++)
        if (!f->list[i].until_ns || f->list[i].until_ns > now)
            json_array_append_new(a, fault_json(&f->list[i]));
    pthread_mutex_unlock(&f->lock);
    return json_pack("{s:o}", "faults", a);
}

static void remove_at(struct faults *f, size_t i)
{
    fault_free(&f->list[i]);
    memmove(&f->list[i], &f->list[i + 1], (f->n - i - 1) * sizeof(f->list[0]));
    f->n--;
}

bool faults_take(struct faults *f, const char *method, const char *path, struct fault *out)
{
    bool hit = false;
    pthread_mutex_lock(&f->lock);
    int64_t now = now_ns();
    for (size_t i = 0; i < f->n;) {
        struct fault *x = &f->list[i];
        if (x->until_ns && x->until_ns <= now) {
            remove_at(f, i);
            continue;
        }
        if ((x->method && strcmp(x->method, method)) ||
            (x->path && strncmp(path, x->path, strlen(x->path)))) {
            i++;
            continue;
        }
        *out = *x;
        out->method = out->path = NULL;
        hit = true;
        if (x->remaining > 0 && --x->remaining == 0)
            remove_at(f, i);
        break;
    }
    pthread_mutex_unlock(&f->lock);
    return hit;
}
