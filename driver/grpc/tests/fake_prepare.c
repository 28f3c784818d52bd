// SPDX-License-Identifier: Apache-2.0
#include "fake_prepare.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct prepare_state {
    pthread_mutex_t mu;
    size_t prepares, unprepares;
};

struct prepare_state *fake_prepare_new(void)
{
    struct prepare_state *st = calloc(1, sizeof(*st));
    if (st)
        pthread_mutex_init(&st->mu, NULL);
    return st;
}

void fake_prepare_free(struct prepare_state *st)
{
    if (st != NULL)
        pthread_mutex_destroy(&st->mu);
    free(st);
}

/* One of st's counters, read under its lock. */
static size_t count_of(struct prepare_state *st, const size_t *counter)
{
    pthread_mutex_lock(&st->mu);
    size_t n = *counter;
    pthread_mutex_unlock(&st->mu);
    return n;
}

size_t fake_prepare_calls(struct prepare_state *st)
{
    return count_of(st, &st->prepares);
}

size_t fake_unprepare_calls(struct prepare_state *st)
{
    return count_of(st, &st->unprepares);
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int fake_failure(const char *ns, const char *name, const char *uid, struct error *err)
{
    if (starts_with(name, "failutf8"))
        return error_set(err, "claim %s/%s (uid %s): fake failure \xff\xfe in the message", ns,
                         name, uid);
    return error_set(err, "claim %s/%s (uid %s): fake failure", ns, name, uid);
}

static char **strv(size_t n, ...)
{
    char **v = calloc(n, sizeof(*v));
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        v[i] = strdup(va_arg(ap, const char *));
    va_end(ap);
    return v;
}

static void fill_device(struct prepared_device *d, const char *uid, const char *device, bool shared,
                        bool extra)
{
    char cdi[256], share[128];
    snprintf(cdi, sizeof(cdi), "k8s.gpu.fakehw.example.com/gpu=%s-%s", uid, device);
    d->pool_name = strdup("node-a");
    d->device_name = strdup(device);
    d->n_request_names = extra ? 2 : 1;
    d->request_names = extra ? strv(2, "gpu", "extra") : strv(1, "gpu");
    d->n_cdi_device_ids = 1;
    d->cdi_device_ids = strv(1, cdi);
    snprintf(share, sizeof(share), "share-%s", uid);
    d->share_id = shared ? strdup(share) : NULL;
}

static void count_call(struct prepare_state *st, size_t *counter)
{
    pthread_mutex_lock(&st->mu);
    (*counter)++;
    pthread_mutex_unlock(&st->mu);
}

/* A claim whose name starts with prefix is answered FAKE_PREPARE_SLOW_MS late. */
static void slow_if(const char *name, const char *prefix)
{
    if (!starts_with(name, prefix))
        return;
    struct timespec ts = {FAKE_PREPARE_SLOW_MS / 1000, (FAKE_PREPARE_SLOW_MS % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int prepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                  struct prepared_claim *out, struct error *err)
{
    count_call(st, &st->prepares);
    memset(out, 0, sizeof(*out));
    if (starts_with(name, "fail"))
        return fake_failure(ns, name, uid, err);
    slow_if(name, "slow");
    if (starts_with(name, "empty"))
        return 0;
    bool shared = strstr(name, "shared") != NULL;
    size_t n = starts_with(name, "two") ? 2 : 1;
    out->devices = calloc(n, sizeof(*out->devices));
    out->n_devices = n;
    fill_device(&out->devices[0], uid, "gpu-0", shared, false);
    if (n == 2)
        fill_device(&out->devices[1], uid, "gpu-1", shared, true);
    return 0;
}

int unprepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                    struct error *err)
{
    count_call(st, &st->unprepares);
    if (starts_with(name, "fail"))
        return fake_failure(ns, name, uid, err);
    slow_if(name, "slowun");
    return 0;
}

void prepare_after_answer(struct prepare_state *st)
{
    (void)st; /* nothing is left for after the answer here */
}
