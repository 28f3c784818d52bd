/* Health flips and idle cost, with the kubelet's health stream open: flips
 * on nodes of 8 and 128 fake GPUs (the plugin re-reads the tree on every
 * change, so the size matters), idle cost with 8.
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

static const int flip_sizes[] = {8, 128};

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

static void add_p50_p99(struct bench *b, struct samples *s, const char *what, int gpus)
{
    figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms", "%s, %d GPUs, p50", what, gpus),
                   samples_percentile(s, 50));
    figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms", "%s, %d GPUs, p99", what, gpus),
                   samples_percentile(s, 99));
}

#define FLIP_TAINT  "flip to taint (health write to tainted slice at the API stand-in)"
#define FLIP_STREAM "flip to health stream (health write to message at the kubelet stand-in)"
#define BACK_TAINT  "flip back to untaint"
#define BACK_STREAM "flip back to healthy on the health stream"

/* The floor of a flip: the plugin re-reads the whole tree on every change
 * (driver/inventory.c), so one read of it from this process (common/
 * fakehw_tree.c, as the plugin reads) is what a flip costs at least.  Taken
 * between the flips, so both meet the same load. */
static int tree_read(struct world *w, int gpus, struct samples *out, struct error *err)
{
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    int64_t t0 = now_mono_ns();
    if (fakehw_tree_list(w->mount, &devs, &n, err) < 0)
        return error_prefix(err, "reading the fakehw tree");
    double ms = (double)(now_mono_ns() - t0) / 1e6;
    free(devs);
    if (n != (size_t)gpus)
        return error_set(err, "the fakehw tree at %s has %zu devices, want %d", w->mount, n, gpus);
    return samples_add(out, ms) < 0 ? error_set(err, "out of memory") : 0;
}

static int flips(struct bench *b, struct world *w, struct event_log *log, int gpus,
                 struct error *err)
{
    int per_run = b->quick ? 8 : gpus <= 8 ? 40 : 12;
    for (int run = 0; run < b->runs; run++) {
        fprintf(stderr, "bench: health flips, %d GPUs, run %d/%d\n", gpus, run + 1, b->runs);
        struct samples s[5] = {{0}, {0}, {0}, {0}, {0}};
        int rc = 0;
        for (int i = 0; i < per_run && rc == 0; i++) {
            if (i % 4 == 3)
                rc = tree_read(w, gpus, &s[4], err);
            char dev[16];
            snprintf(dev, sizeof(dev), "gpu-%d", (i * 37) % gpus); /* spread over the node */
            if (rc == 0)
                rc = flip(w, log, dev, false, &s[0], &s[1], err);
            if (rc == 0)
                rc = flip(w, log, dev, true, &s[2], &s[3], err);
            /* Spaced out and not in step with any period of the plugin. */
            pause_ms(20 + (i * 7) % 30);
        }
        if (rc == 0) {
            add_p50_p99(b, &s[0], FLIP_TAINT, gpus);
            add_p50_p99(b, &s[1], FLIP_STREAM, gpus);
            add_p50_p99(b, &s[2], BACK_TAINT, gpus);
            add_p50_p99(b, &s[3], BACK_STREAM, gpus);
            figure_add_run(report_figure(b->report, GROUP_HEALTH, "ms",
                                         "floor: one read of the whole fakehw tree, %d GPUs, p50",
                                         gpus),
                           samples_percentile(&s[4], 50));
        }
        for (int k = 0; k < 5; k++)
            samples_free(&s[k]);
        if (rc < 0)
            return -1;
    }
    figure_target_below(
        report_figure(b->report, GROUP_HEALTH, "ms", "%s, %d GPUs, p99", FLIP_TAINT, gpus), 250,
        "< 250 ms");
    figure_target_below(
        report_figure(b->report, GROUP_HEALTH, "ms", "%s, %d GPUs, p99", FLIP_STREAM, gpus), 250,
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

/* One node of `gpus` GPUs: flips, then (for the idle size) the idle windows. */
static int one_node(struct bench *b, int gpus, struct error *err)
{
    struct world w;
    struct event_log *log = NULL;
    char name[64];
    int rc = -1;
    bench_world_name(b, "health", name, sizeof(name));
    if (world_init(&w, b->bin_dir, b->base, b->cdi_base, name, err) < 0 ||
        world_start(&w, gpus, err) < 0 || (log = event_log_open(w.event_log, err)) == NULL)
        goto out;
    /* Skip what start-up wrote. */
    json_t *ev;
    int got;
    while ((got = event_log_next(log, 0, &ev, err)) == 1)
        json_decref(ev);
    if (got < 0 || flips(b, &w, log, gpus, err) < 0)
        goto out;
    if (gpus == IDLE_GPUS && idle(b, &w, err) < 0)
        goto out;
    rc = 0;
out:
    event_log_close(log);
    struct error e;
    if (world_stop(&w, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    return rc;
}

int suite_health(struct bench *b, struct error *err)
{
    for (size_t i = 0; i < sizeof(flip_sizes) / sizeof(flip_sizes[0]); i++)
        if (one_node(b, flip_sizes[i], err) < 0)
            return error_prefix(err, "health, %d GPUs", flip_sizes[i]);
    return 0;
}
