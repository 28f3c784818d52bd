// SPDX-License-Identifier: Apache-2.0
/* API requests caused by changes in the fakehw tree, on a node of 8 GPUs
 * whose last GPU is attachable, with the health stream open:
 *   - one device flapping: the bench writes unhealthy and healthy to its
 *     health file, one write(2) after the other on one open file, as fast
 *     as fakehw takes them, for a window; every write bumps the tree's
 *     generation;
 *   - the attachable device's scripted failure toggled the same way
 *     ("fail next", "fail never"): attachFailure is not published, so the
 *     slices have nothing to change.
 * Each window counts the API requests the stand-in answered in it (its
 * request log, /standin/requests).  After the flapping, which ends on
 * unhealthy, the bench measures how long the slices take to show that last
 * state: coalescing must never lose the newest one. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_client.h"
#include "suites.h"
#include "world.h"

#define FLAP_GPUS      8
#define FLAP_DEVICE    "gpu-0"
#define ATTACH_DEVICE  "gpu-7" /* the last GPU: world.last_attachable */
#define SETTLE_WAIT_MS 10000
#define SLICES_PATH    "/apis/resource.k8s.io/v1/resourceslices"

struct window_counts {
    double writes;    /* tree writes the bench made */
    double requests;  /* API requests answered in the window */
    double lists;     /* of which ResourceSlice LISTs */
    double slice_put; /* of which ResourceSlice writes (PUT, POST, DELETE) */
    double seconds;
};

/* Writes the commands a and b to <mount>/devices/<dev>/<file> in turn for
 * ms, ending with a; *writes counts them. */
static int hammer(const struct world *w, const char *dev, const char *file, const char *a,
                  const char *b, long ms, long *writes, struct error *err)
{
    char path[2500];
    snprintf(path, sizeof(path), "%s/devices/%s/%s", w->mount, dev, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "opening %s", path);
    int64_t end = now_mono_ns() + (int64_t)ms * 1000000;
    long n = 0;
    int rc = 0;
    while (rc == 0 && (now_mono_ns() < end || n % 2 == 0)) {
        const char *cmd = n % 2 == 0 ? a : b;
        size_t len = strlen(cmd);
        if (write(fd, cmd, len) != (ssize_t)len)
            rc = error_set_errno(err, errno, "writing \"%s\" to %s", cmd, path);
        n++;
    }
    close(fd);
    *writes = n;
    return rc;
}

static bool is_slices_list(const char *method, const char *path, const char *query)
{
    return !strcmp(method, "GET") && !strcmp(path, SLICES_PATH) &&
           (query == NULL || strstr(query, "watch=") == NULL);
}

/* Counts the requests answered between t0 and t1 (CLOCK_REALTIME ns). */
static int count_requests(struct api_client *api, int64_t t0, int64_t t1, struct window_counts *c,
                          struct error *err)
{
    json_t *log = NULL;
    if (api_request(api, "GET", "/standin/requests", NULL, &log, err) < 0)
        return error_prefix(err, "reading the API stand-in's request log");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(log, "requests"), i, r)
    {
        int64_t t = (int64_t)json_integer_value(json_object_get(r, "timeNs"));
        if (t < t0 || t > t1)
            continue;
        const char *method = json_string_value(json_object_get(r, "method"));
        const char *path = json_string_value(json_object_get(r, "path"));
        const char *query = json_string_value(json_object_get(r, "query"));
        if (method == NULL || path == NULL)
            continue;
        c->requests++;
        if (is_slices_list(method, path, query))
            c->lists++;
        else if (strncmp(path, SLICES_PATH "/", strlen(SLICES_PATH) + 1) == 0 ||
                 (!strcmp(path, SLICES_PATH) && strcmp(method, "GET") != 0))
            c->slice_put += strcmp(method, "GET") != 0;
    }
    json_decref(log);
    return 0;
}

/* 1: dev carries a taint in the slices now, 0: it does not, -1 with err. */
static int tainted_now(struct api_client *api, const char *dev, struct error *err)
{
    json_t *list = NULL;
    if (api_request(api, "GET", SLICES_PATH, NULL, &list, err) < 0)
        return -1;
    int found = 0;
    size_t i, j;
    json_t *s, *d;
    json_array_foreach(json_object_get(list, "items"), i, s)
    {
        json_array_foreach(json_object_get(json_object_get(s, "spec"), "devices"), j, d)
        {
            const char *name = json_string_value(json_object_get(d, "name"));
            if (name && !strcmp(name, dev) && json_array_size(json_object_get(d, "taints")) > 0)
                found = 1;
        }
    }
    json_decref(list);
    return found;
}

/* Waits until dev's taint is as `want`; *ms gets how long from t0 (mono ns). */
static int wait_taint(struct api_client *api, const char *dev, int want, int64_t t0, double *ms,
                      struct error *err)
{
    for (;;) {
        int got = tainted_now(api, dev, err);
        if (got < 0)
            return -1;
        int64_t now = now_mono_ns();
        if (got == want) {
            *ms = (double)(now - t0) / 1e6;
            return 0;
        }
        if (now - t0 > (int64_t)SETTLE_WAIT_MS * 1000000)
            return error_set(err, "the slices did not show %s %s within %d ms", dev,
                             want ? "tainted" : "untainted", SETTLE_WAIT_MS);
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void add(struct bench *b, const char *unit, double value, const char *what)
{
    figure_add_run(report_figure(b->report, GROUP_FLAP, unit, "%s", what), value);
}

#define FLAP_WRITES   "health writes per second, one device flapping as fast as fakehw takes them"
#define FLAP_REQUESTS "API requests per second while one device flaps"
#define FLAP_LISTS    "ResourceSlice LISTs per second while one device flaps"
#define FLAP_PUTS     "ResourceSlice writes per second while one device flaps"
#define FLAP_SETTLE   "last flip of the flapping to its taint in the slices"
#define FAIL_WRITES   "attach failure mode toggles per second (nothing published changes)"
#define FAIL_REQUESTS "API requests per second while the attach failure mode toggles"

static int one_run(struct bench *b, struct world *w, struct api_client *api, long window_ms,
                   struct error *err)
{
    struct window_counts flap = {0}, fail = {0};
    long writes = 0;
    int64_t t0 = now_real_ns();
    int64_t m0 = now_mono_ns();
    if (hammer(w, FLAP_DEVICE, "health", "unhealthy\n", "healthy\n", window_ms, &writes, err) < 0)
        return -1;
    int64_t m1 = now_mono_ns();
    int64_t t1 = now_real_ns();
    double settle_ms;
    if (wait_taint(api, FLAP_DEVICE, 1, m1, &settle_ms, err) < 0 ||
        count_requests(api, t0, t1, &flap, err) < 0)
        return -1;
    flap.writes = (double)writes;
    flap.seconds = (double)(m1 - m0) / 1e9;
    /* Back to healthy, and quiet, before the next window. */
    int fd = -1;
    char path[2500];
    snprintf(path, sizeof(path), "%s/devices/%s/health", w->mount, FLAP_DEVICE);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, "healthy\n", 8) != 8) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return error_set_errno(err, e, "writing healthy to %s", path);
    }
    close(fd);
    double ignored;
    if (wait_taint(api, FLAP_DEVICE, 0, now_mono_ns(), &ignored, err) < 0)
        return -1;
    struct timespec quiet = {0, 300 * 1000000L};
    nanosleep(&quiet, NULL);

    t0 = now_real_ns();
    m0 = now_mono_ns();
    if (hammer(w, ATTACH_DEVICE, "attach", "fail next\n", "fail never\n", window_ms, &writes, err) <
        0)
        return -1;
    m1 = now_mono_ns();
    t1 = now_real_ns();
    if (count_requests(api, t0, t1, &fail, err) < 0)
        return -1;
    fail.writes = (double)writes;
    fail.seconds = (double)(m1 - m0) / 1e9;

    add(b, "/s", flap.writes / flap.seconds, FLAP_WRITES);
    add(b, "/s", flap.requests / flap.seconds, FLAP_REQUESTS);
    add(b, "/s", flap.lists / flap.seconds, FLAP_LISTS);
    add(b, "/s", flap.slice_put / flap.seconds, FLAP_PUTS);
    add(b, "ms", settle_ms, FLAP_SETTLE);
    add(b, "/s", fail.writes / fail.seconds, FAIL_WRITES);
    add(b, "/s", fail.requests / fail.seconds, FAIL_REQUESTS);
    /* Put the attach file back as the config had it. */
    snprintf(path, sizeof(path), "%s/devices/%s/attach", w->mount, ATTACH_DEVICE);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
        if (write(fd, "fail never\n", 11) != 11)
            fprintf(stderr, "bench: resetting %s: %s\n", path, strerror(errno));
        close(fd);
    }
    nanosleep(&quiet, NULL);
    return 0;
}

static int flap_runs(struct bench *b, struct world *w, struct error *err)
{
    long window_ms = b->quick ? 500 : 3000;
    cleanup_api_client struct api_client *api = NULL;
    if (world_start(w, FLAP_GPUS, err) < 0 || (api = api_client_new(w->api_url, NULL, err)) == NULL)
        return -1;
    for (int run = 0; run < b->runs; run++) {
        fprintf(stderr, "bench: API requests from tree changes, run %d/%d (2 x %ld ms)\n", run + 1,
                b->runs, window_ms);
        if (one_run(b, w, api, window_ms, err) < 0)
            return -1;
    }
    return 0;
}

int suite_flap(struct bench *b, struct error *err)
{
    struct world w;
    if (bench_world_init(b, &w, "flap", err) < 0)
        return -1;
    w.last_attachable = true;
    int rc = world_finish(&w, flap_runs(b, &w, err), false, err);
    return rc < 0 ? error_prefix(err, "flap") : 0;
}
