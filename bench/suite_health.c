// SPDX-License-Identifier: Apache-2.0
/* Health flips and idle cost, with the kubelet's health stream open: flips
 * on nodes of 8 and 128 fake GPUs (the plugin re-reads the tree on every
 * change, so the size matters) and of 8 H100s in dynamic MIG mode (every
 * partition published: 152 devices in 4 slices; MIG partitions flip), idle
 * cost with 8.
 *
 * Flip latency: `health` of a device is written in the fakehw tree at t0
 * (CLOCK_REALTIME right before the write), then
 *   - to taint: the API stand-in's event log gives the time it handled the
 *     ResourceSlice write that shows the device tainted (untainted after a
 *     flip back),
 *   - to stream: the arrival time of the first health stream message that
 *     shows the device unhealthy (healthy after a flip back).
 * Every flip to unhealthy is followed by a flip back once both were seen.
 *
 * Idle: CPU time (utime + stime of the whole process) and context switches
 * of the plugin and fakehw over quiet windows after the flips. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event_log.h"
#include "fakehw_tree_read.h"
#include "stats.h"
#include "suites.h"
#include "world.h"

#define IDLE_GPUS 8
#define WAIT_MS   10000

/* The nodes whose flips are measured. */
static const struct flip_node {
    int gpus;
    bool mig; /* dynamic MIG: the flips are of partitions */
} flip_nodes[] = {{8, false}, {128, false}, {8, true}};

/* 8 H100s in dynamic MIG mode publish 19 devices each (suite_startup.c). */
#define MIG_DEVICES_PER_GPU 19

static int write_health(const struct world *w, const char *dev, const char *state, int64_t *t0,
                        struct error *err)
{
    char path[2500];
    snprintf(path, sizeof(path), "%s/devices/%s/health", w->mount, dev);
    char text[32];
    int n = snprintf(text, sizeof(text), "%s\n", state);
    *t0 = now_real_ns();
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "opening %s", path);
    ssize_t wr = write(fd, text, (size_t)n);
    int saved = errno;
    if (close(fd) < 0 && wr == n)
        return error_set_errno(err, errno, "closing %s", path);
    if (wr != n)
        return error_set_errno(err, saved, "writing \"%s\" to %s", state, path);
    return 0;
}

/* 1: the event is a write of a slice that lists dev with (tainted) or
 * without taints; 0: it says nothing about dev. */
static int slice_shows(const json_t *ev, const char *dev, bool tainted)
{
    if (!event_is_write_of(ev, "resourceslices"))
        return 0;
    const json_t *devs =
        json_object_get(json_object_get(json_object_get(ev, "object"), "spec"), "devices");
    size_t i;
    json_t *d;
    json_array_foreach(devs, i, d)
    {
        const char *name = json_string_value(json_object_get(d, "name"));
        if (name && !strcmp(name, dev))
            return (json_array_size(json_object_get(d, "taints")) > 0) == tainted;
    }
    return 0;
}

static int wait_slice(struct event_log *log, const char *dev, bool tainted, int64_t since,
                      int64_t *t_ns, struct error *err)
{
    for (;;) {
        json_t *ev;
        int got = event_log_next(log, WAIT_MS, &ev, err);
        if (got < 0)
            return -1;
        if (got == 0)
            return error_set(err, "no ResourceSlice write showed %s %s within %d ms", dev,
                             tainted ? "tainted" : "untainted", WAIT_MS);
        bool hit = event_time_ns(ev) >= since && slice_shows(ev, dev, tainted);
        if (hit)
            *t_ns = event_time_ns(ev);
        json_decref(ev);
        if (hit)
            return 0;
    }
}

/* One flip of dev to `healthy`, both observations recorded. */
static int flip(struct world *w, struct event_log *log, const char *dev, bool healthy,
                struct samples *to_slice, struct samples *to_stream, struct error *err)
{
    int64_t t0 = 0, t_stream = 0, t_slice = 0;
    if (write_health(w, dev, healthy ? "healthy" : "unhealthy", &t0, err) < 0 ||
        health_watch_wait(w->health, dev, healthy, t0, WAIT_MS, &t_stream, err) < 0 ||
        wait_slice(log, dev, !healthy, t0, &t_slice, err) < 0)
        return -1;
    if (samples_add(to_slice, (double)(t_slice - t0) / 1e6) < 0 ||
        samples_add(to_stream, (double)(t_stream - t0) / 1e6) < 0)
        return error_set(err, "out of memory");
    return 0;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* size: "8 GPUs", or what the MIG node is. */
static void add_p50_p99(struct bench *b, struct samples *s, const char *what, const char *size)
{
    figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms", "%s, %s, p50", what, size),
                   samples_percentile(s, 50));
    figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms", "%s, %s, p99", what, size),
                   samples_percentile(s, 99));
}

#define FLIP_TAINT  "flip to taint (health write to tainted slice at the API stand-in)"
#define FLIP_STREAM "flip to health stream (health write to message at the kubelet stand-in)"
#define BACK_TAINT  "flip back to untaint"
#define BACK_STREAM "flip back to healthy on the health stream"

/* The floor of a flip: the plugin re-reads the whole tree on every change
 * (driver/inventory.c), so one read of it from this process (common/
 * fakehw_tree_read.c, as the plugin reads) is what a flip costs at least.  Taken
 * between the flips, so both meet the same load. */
static int tree_read(struct world *w, size_t want, struct samples *out, struct error *err)
{
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    int64_t t0 = now_mono_ns();
    if (fakehw_tree_list(w->mount, &devs, &n, err) < 0)
        return error_prefix(err, "reading the fakehw tree");
    double ms = (double)(now_mono_ns() - t0) / 1e6;
    free(devs);
    if (n != want)
        return error_set(err, "the fakehw tree at %s has %zu devices, want %zu", w->mount, n, want);
    return samples_add(out, ms) < 0 ? error_set(err, "out of memory") : 0;
}

/* The devices that flip: the GPUs, or on a MIG node its partitions (in
 * the tree's order); a JSON array of names. */
static json_t *flip_targets(struct world *w, const struct flip_node *fn, size_t *n_tree,
                            struct error *err)
{
    json_t *names = json_array();
    if (names == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    if (!fn->mig) {
        for (int g = 0; g < fn->gpus; g++) {
            char dev[16];
            snprintf(dev, sizeof(dev), "gpu-%d", g);
            json_array_append_new(names, json_string(dev));
        }
        *n_tree = (size_t)fn->gpus;
        return names;
    }
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    if (fakehw_tree_list(w->mount, &devs, &n, err) < 0) {
        json_decref(names);
        error_prefix(err, "reading the fakehw tree");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (devs[i].parent[0] != '\0')
            json_array_append_new(names, json_string(devs[i].name));
    free(devs);
    *n_tree = n;
    if (n != (size_t)fn->gpus * MIG_DEVICES_PER_GPU || json_array_size(names) == 0) {
        json_decref(names);
        error_set(err, "the fakehw tree at %s has %zu devices, want %d in dynamic MIG", w->mount, n,
                  fn->gpus * MIG_DEVICES_PER_GPU);
        return NULL;
    }
    return names;
}

static int flips(struct bench *b, struct world *w, struct event_log *log,
                 const struct flip_node *fn, struct error *err)
{
    int gpus = fn->gpus;
    char size[96];
    if (fn->mig)
        snprintf(size, sizeof(size), "%d GPUs in dynamic MIG (%d devices), partitions flipped",
                 gpus, gpus * MIG_DEVICES_PER_GPU);
    else
        snprintf(size, sizeof(size), "%d GPUs", gpus);
    size_t n_tree = 0;
    json_t *targets = flip_targets(w, fn, &n_tree, err);
    if (targets == NULL)
        return -1;
    size_t n_targets = json_array_size(targets);
    int per_run = b->quick ? 8 : gpus <= 8 ? 40 : 12;
    for (int run = 0; run < b->runs; run++) {
        fprintf(stderr, "bench: health flips, %s, run %d/%d\n", size, run + 1, b->runs);
        struct samples s[5] = {{0}, {0}, {0}, {0}, {0}};
        int rc = 0;
        for (int i = 0; i < per_run && rc == 0; i++) {
            if (i % 4 == 3)
                rc = tree_read(w, n_tree, &s[4], err);
            /* Spread over the node. */
            const char *dev =
                json_string_value(json_array_get(targets, ((size_t)i * 37) % n_targets));
            if (rc == 0)
                rc = flip(w, log, dev, false, &s[0], &s[1], err);
            if (rc == 0)
                rc = flip(w, log, dev, true, &s[2], &s[3], err);
            /* Spaced out and not in step with any period of the plugin. */
            pause_ms(20 + (i * 7) % 30);
        }
        if (rc == 0) {
            add_p50_p99(b, &s[0], FLIP_TAINT, size);
            add_p50_p99(b, &s[1], FLIP_STREAM, size);
            add_p50_p99(b, &s[2], BACK_TAINT, size);
            add_p50_p99(b, &s[3], BACK_STREAM, size);
            figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms",
                                         "floor: one read of the whole fakehw tree, %s, p50", size),
                           samples_percentile(&s[4], 50));
        }
        for (int k = 0; k < 5; k++)
            samples_free(&s[k]);
        if (rc < 0) {
            json_decref(targets);
            return -1;
        }
    }
    json_decref(targets);
    figure_target_below(
        report_figure(b->report, GROUP_HEALTH, "ms", "%s, %s, p99", FLIP_TAINT, size), 250,
        "< 250 ms");
    figure_target_below(
        report_figure(b->report, GROUP_HEALTH, "ms", "%s, %s, p99", FLIP_STREAM, size), 250,
        "< 250 ms");
    return 0;
}

struct idle_sample {
    unsigned long long ticks, switches;
};

static int idle_read(pid_t pid, struct idle_sample *s, struct error *err)
{
    if (proc_cpu_ticks(pid, &s->ticks, err) < 0 || proc_ctx_switches(pid, &s->switches, err) < 0)
        return -1;
    return 0;
}

static int idle(struct bench *b, struct world *w, struct error *err)
{
    int windows = b->quick ? 2 : (b->runs < 3 ? b->runs : 3);
    long window_ms = b->quick ? 2000 : 10000;
    double hz = (double)sysconf(_SC_CLK_TCK);
    pause_ms(2000); /* let the last flip's work settle */
    for (int k = 0; k < windows; k++) {
        fprintf(stderr, "bench: idle, window %d/%d (%ld s)\n", k + 1, windows, window_ms / 1000);
        struct idle_sample p0, p1, f0, f1;
        if (idle_read(w->plugin.pid, &p0, err) < 0 || idle_read(w->fakehw.pid, &f0, err) < 0)
            return -1;
        int64_t t0 = now_mono_ns();
        pause_ms(window_ms);
        if (idle_read(w->plugin.pid, &p1, err) < 0 || idle_read(w->fakehw.pid, &f1, err) < 0)
            return -1;
        double secs = (double)(now_mono_ns() - t0) / 1e9;
        struct report *r = b->report;
        figure_add_run(report_figure(r, GROUP_IDLE, "%",
                                     "plugin CPU, %d GPUs, idle with the health stream open",
                                     IDLE_GPUS),
                       (double)(p1.ticks - p0.ticks) / hz / secs * 100);
        figure_add_run(
            report_figure(r, GROUP_IDLE, "/s", "plugin context switches (wake-ups), idle"),
            (double)(p1.switches - p0.switches) / secs);
        figure_add_run(report_figure(r, GROUP_IDLE, "%", "fakehw CPU, %d GPUs, idle", IDLE_GPUS),
                       (double)(f1.ticks - f0.ticks) / hz / secs * 100);
        figure_add_run(report_figure(r, GROUP_IDLE, "/s", "fakehw context switches, idle"),
                       (double)(f1.switches - f0.switches) / secs);
    }
    figure_target_below(report_figure(b->report, GROUP_IDLE, "%",
                                      "plugin CPU, %d GPUs, idle with the health stream open",
                                      IDLE_GPUS),
                        1, "< 1%%");
    return 0;
}

/* One node: flips, then (for the idle size, without MIG) the idle windows. */
static int node_measure(struct bench *b, struct world *w, const struct flip_node *fn,
                        struct error *err)
{
    cleanup_event_log struct event_log *log = NULL;
    if (world_start(w, fn->gpus, err) < 0 || (log = event_log_open(w->event_log, err)) == NULL)
        return -1;
    /* Skip what start-up wrote. */
    json_t *ev;
    int got;
    while ((got = event_log_next(log, 0, &ev, err)) == 1)
        json_decref(ev);
    if (got < 0 || flips(b, w, log, fn, err) < 0)
        return -1;
    if (fn->gpus == IDLE_GPUS && !fn->mig && idle(b, w, err) < 0)
        return -1;
    return 0;
}

static int one_node(struct bench *b, const struct flip_node *fn, struct error *err)
{
    struct world w;
    if (bench_world_init(b, &w, fn->mig ? "health-mig" : "health", err) < 0)
        return -1;
    w.mig_dynamic = fn->mig;
    return world_finish(&w, node_measure(b, &w, fn, err), false, err);
}

int suite_health(struct bench *b, struct error *err)
{
    for (size_t i = 0; i < sizeof(flip_nodes) / sizeof(flip_nodes[0]); i++)
        if (one_node(b, &flip_nodes[i], err) < 0)
            return error_prefix(err, "health, %d GPUs%s", flip_nodes[i].gpus,
                                flip_nodes[i].mig ? " in dynamic MIG" : "");
    return 0;
}
