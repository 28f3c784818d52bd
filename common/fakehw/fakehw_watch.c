// SPDX-License-Identifier: Apache-2.0
/* Change watcher for the fakehw tree: FUSE poll or inotify, a safety resync,
 * and gone/back tracking.  See fakehw_watch.h for the contract. */
#include "fakehw_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fakehw_tree.h"
#include "fakehw_tree_read.h"
#include "grow.h"
#include "log.h"
#include "monotonic.h"

#define FUSE_SUPER_MAGIC  0x65735546
#define DEFAULT_RESYNC_MS 30000
#define DEFAULT_RETRY_MS  1000
/* Immediate wakes in a row with an unchanged counter before we decide the
 * daemon has no poll support (the kernel then reports the fd always ready). */
#define SPURIOUS_WAKES_MAX 3
/* A poll(2) that returns faster than this did not block: "immediate". */
#define IMMEDIATE_MS 10

/* Only completed writes (close after write, rename into place) count for
 * files: a wake on IN_MODIFY would let readers see half-written values. */
#define ROOT_MASK                                                                                  \
    (IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |       \
     IN_MOVE_SELF | IN_ONLYDIR)
#define DEVICES_MASK                                                                               \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |         \
     IN_ONLYDIR)
#define DEVICE_MASK (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)
#define SELF_GONE   (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)

enum mode { MODE_DOWN, MODE_FUSE_POLL, MODE_FUSE_INTERVAL, MODE_INOTIFY };

struct fakehw_watch {
    char root[PATH_MAX];
    char devices[PATH_MAX];
    char genpath[PATH_MAX];
    int resync_ms; /* <= 0: no resync */
    int retry_ms;
    int wake_fd; /* eventfd written by fakehw_watch_wake */
    enum mode mode;
    char down_reason[ERROR_MSG_MAX];

    /* What was armed, compared on resync to spot a new tree at the same path. */
    dev_t root_dev, devices_dev;
    ino_t root_ino, devices_ino;
    long fs_type;

    uint64_t gen;
    /* FUSE modes */
    int gen_fd;
    int spurious;
    /* inotify mode */
    int ino_fd;
    int root_wd, devices_wd;
    int *dev_wds;
    size_t n_dev_wds;

    /* CLOCK_MONOTONIC milliseconds */
    int64_t next_resync; /* up */
    int64_t next_retry;  /* down: next look for the tree; fuse-interval: next counter read */
};

/* What arming found: the tree is up, down (not there or not readable), or
 * the system refused resources (an error for the caller). */
enum arm_result { ARM_ERROR = -1, ARM_UP = 0, ARM_DOWN = 1 };

/* Errors that say "the system is out of something", not "the tree is not there". */
static bool resource_errno(int e)
{
    return e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOSPC;
}

const char *fakehw_watch_event_name(enum fakehw_watch_event ev)
{
    switch (ev) {
    case FAKEHW_WATCH_TIMEOUT:
        return "timeout";
    case FAKEHW_WATCH_CHANGED:
        return "changed";
    case FAKEHW_WATCH_RESYNC:
        return "resync";
    case FAKEHW_WATCH_GONE:
        return "gone";
    case FAKEHW_WATCH_BACK:
        return "back";
    case FAKEHW_WATCH_WOKEN:
        return "woken";
    }
    return "unknown";
}

const char *fakehw_watch_mode(const struct fakehw_watch *w)
{
    switch (w->mode) {
    case MODE_FUSE_POLL:
        return "fuse-poll";
    case MODE_FUSE_INTERVAL:
        return "fuse-interval";
    case MODE_INOTIFY:
        return "inotify";
    case MODE_DOWN:
        break;
    }
    return "down";
}

bool fakehw_watch_up(const struct fakehw_watch *w)
{
    return w->mode != MODE_DOWN;
}

const char *fakehw_watch_down_reason(const struct fakehw_watch *w)
{
    return w->mode == MODE_DOWN ? w->down_reason : "";
}

uint64_t fakehw_watch_generation(const struct fakehw_watch *w)
{
    return w->mode == MODE_DOWN ? 0 : w->gen;
}

/* Drops every fd and watch of the armed tree; the watch is down afterwards. */
static void disarm(struct fakehw_watch *w, const char *reason)
{
    if (w->gen_fd >= 0)
        close(w->gen_fd);
    if (w->ino_fd >= 0)
        close(w->ino_fd); /* removes all its watches */
    w->gen_fd = w->ino_fd = -1;
    w->root_wd = w->devices_wd = -1;
    free(w->dev_wds);
    w->dev_wds = NULL;
    w->n_dev_wds = 0;
    w->gen = 0;
    w->spurious = 0;
    if (w->mode != MODE_DOWN)
        LOG_V(1, "fakehw watch %s: down: %s", w->root, reason);
    w->mode = MODE_DOWN;
    snprintf(w->down_reason, sizeof(w->down_reason), "%s", reason);
    w->next_retry = monotonic_ms() + w->retry_ms;
}

/* Reads the counter through the open fd; the daemon counts this read as
 * "seen" for the fd's next poll. */
static int pread_generation(struct fakehw_watch *w, uint64_t *gen, struct error *err)
{
    char buf[32];
    ssize_t r;
    do
        r = pread(w->gen_fd, buf, sizeof(buf), 0);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return error_set_errno(err, errno, "%s", w->genpath);
    return fakehw_tree_parse_generation(w->genpath, buf, (size_t)r, gen, err);
}

static enum arm_result arm_fuse(struct fakehw_watch *w, struct error *err)
{
    w->gen_fd = open(w->genpath, O_RDONLY | O_CLOEXEC);
    if (w->gen_fd < 0) {
        int e = errno;
        error_set_errno(err, e, "%s", w->genpath);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    if (pread_generation(w, &w->gen, err) < 0) {
        close(w->gen_fd);
        w->gen_fd = -1;
        return ARM_DOWN;
    }
    w->spurious = 0;
    w->mode = MODE_FUSE_POLL;
    return ARM_UP;
}

static bool has_wd(const int *wds, size_t n, int wd)
{
    for (size_t i = 0; i < n; i++)
        if (wds[i] == wd)
            return true;
    return false;
}

/* Puts a watch on every device directory now in <root>/devices and drops the
 * watches of directories that are gone. */
static enum arm_result rescan_devices(struct fakehw_watch *w, struct error *err)
{
    cleanup_closedir DIR *d = opendir(w->devices);
    if (d == NULL) {
        int e = errno;
        error_set_errno(err, e, "%s", w->devices);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    cleanup_free int *wds = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL && errno != 0) {
            int e = errno;
            error_set_errno(err, e, "%s", w->devices);
            return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
        }
        if (de == NULL)
            break;
        if (de->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", w->devices, de->d_name) >= (int)sizeof(path))
            continue; /* the tree reader reports such a name; nothing to watch */
        int wd = inotify_add_watch(w->ino_fd, path, DEVICE_MASK);
        if (wd < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue; /* removed since readdir, or a stray file */
            error_set_errno(err, errno, "watching %s", path);
            return ARM_ERROR;
        }
        if (has_wd(wds, n, wd))
            continue;
        GROW(wds, cap, n + 1);
        wds[n++] = wd;
    }
    for (size_t i = 0; i < w->n_dev_wds; i++)
        if (!has_wd(wds, n, w->dev_wds[i]))
            inotify_rm_watch(w->ino_fd, w->dev_wds[i]); /* may be gone already: EINVAL */
    free(w->dev_wds);
    w->dev_wds = steal_pointer(&wds);
    w->n_dev_wds = n;
    return ARM_UP;
}

static enum arm_result arm_inotify(struct fakehw_watch *w, struct error *err)
{
    w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->ino_fd < 0) {
        error_set_errno(err, errno, "watching %s: inotify_init1", w->root);
        return ARM_ERROR;
    }
    w->root_wd = inotify_add_watch(w->ino_fd, w->root, ROOT_MASK);
    if (w->root_wd < 0) {
        int e = errno;
        error_set_errno(err, e, "watching %s", w->root);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    w->devices_wd = inotify_add_watch(w->ino_fd, w->devices, DEVICES_MASK);
    if (w->devices_wd < 0) {
        int e = errno;
        error_set_errno(err, e, "watching %s", w->devices);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    enum arm_result rc = rescan_devices(w, err);
    if (rc != ARM_UP)
        return rc;
    /* Optional on a plain directory; only informative here. */
    if (fakehw_tree_read_generation(w->root, &w->gen, NULL) < 0)
        w->gen = 0;
    w->mode = MODE_INOTIFY;
    return ARM_UP;
}

/* Looks at the tree and arms the right watch.  On ARM_DOWN and ARM_ERROR
 * nothing stays open. */
static enum arm_result arm(struct fakehw_watch *w, struct error *err)
{
    struct statfs sfs;
    struct stat rst, dst;
    if (statfs(w->root, &sfs) < 0 || stat(w->root, &rst) < 0) {
        int e = errno;
        error_set_errno(err, e, "%s", w->root);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    if (stat(w->devices, &dst) < 0) {
        int e = errno;
        error_set_errno(err, e, "%s", w->devices);
        return resource_errno(e) ? ARM_ERROR : ARM_DOWN;
    }
    if (!S_ISDIR(dst.st_mode)) {
        error_set(err, "%s: is not a directory", w->devices);
        return ARM_DOWN;
    }
    w->root_dev = rst.st_dev;
    w->root_ino = rst.st_ino;
    w->devices_dev = dst.st_dev;
    w->devices_ino = dst.st_ino;
    w->fs_type = (long)sfs.f_type;
    enum arm_result rc = sfs.f_type == FUSE_SUPER_MAGIC ? arm_fuse(w, err) : arm_inotify(w, err);
    if (rc != ARM_UP) {
        /* Close what was opened; keep err (disarm only logs for up watches). */
        w->mode = MODE_DOWN;
        char reason[ERROR_MSG_MAX];
        snprintf(reason, sizeof(reason), "%s", err ? err->msg : "");
        disarm(w, reason);
        return rc;
    }
    w->next_resync = monotonic_ms() + w->resync_ms;
    LOG_V(1, "fakehw watch %s: up (%s, generation %llu)", w->root, fakehw_watch_mode(w),
          (unsigned long long)w->gen);
    return ARM_UP;
}

/* Tries to bring a down watch up: BACK, or nothing to report (ev untouched). */
static int try_back(struct fakehw_watch *w, enum fakehw_watch_event *ev, bool *report,
                    struct error *err)
{
    struct error why;
    enum arm_result rc = arm(w, &why);
    if (rc == ARM_UP) {
        *ev = FAKEHW_WATCH_BACK;
        *report = true;
        return 0;
    }
    snprintf(w->down_reason, sizeof(w->down_reason), "%s", why.msg);
    w->next_retry = monotonic_ms() + w->retry_ms;
    if (rc == ARM_ERROR)
        return error_set(err, "%s", why.msg);
    return 0;
}

/* Drops the armed tree and arms whatever is at the path now: CHANGED when
 * that works, GONE when nothing readable is there. */
static int rearm(struct fakehw_watch *w, const char *why, enum fakehw_watch_event *ev,
                 struct error *err)
{
    disarm(w, why);
    bool report = false;
    if (try_back(w, ev, &report, err) < 0)
        return -1; /* down now; the next wait retries */
    *ev = report ? FAKEHW_WATCH_CHANGED : FAKEHW_WATCH_GONE;
    return 0;
}

/* Reads the counter after a wake of the generation fd (immediate: poll(2)
 * returned without blocking) or a timed check. */
static void on_fuse_ready(struct fakehw_watch *w, bool immediate, enum fakehw_watch_event *ev,
                          bool *report)
{
    struct error why;
    uint64_t gen;
    if (pread_generation(w, &gen, &why) < 0) {
        disarm(w, why.msg);
        *ev = FAKEHW_WATCH_GONE;
        *report = true;
        return;
    }
    if (gen != w->gen) {
        w->gen = gen;
        w->spurious = 0;
        *ev = FAKEHW_WATCH_CHANGED;
        *report = true;
        return;
    }
    if (w->mode != MODE_FUSE_POLL)
        return;
    w->spurious = immediate ? w->spurious + 1 : 0;
    if (w->spurious >= SPURIOUS_WAKES_MAX) {
        LOG_W("fakehw watch %s: %s wakes poll(2) with an unchanged counter (no FUSE poll "
              "support?); reading it every %d ms instead",
              w->root, w->genpath, w->retry_ms);
        w->mode = MODE_FUSE_INTERVAL;
        w->next_retry = monotonic_ms() + w->retry_ms;
    }
}

/* What one drain of the inotify queue saw. */
struct inotify_seen {
    bool changed, gone, overflow, rescan;
    char gone_why[ERROR_MSG_MAX];
};

/* Notes what one event says about the tree. */
static void note_event(const struct fakehw_watch *w, const struct inotify_event *e,
                       struct inotify_seen *seen)
{
    const char *name = e->len ? e->name : "";
    if (e->mask & IN_Q_OVERFLOW) {
        seen->overflow = true;
    } else if (e->wd == w->root_wd || e->wd == w->devices_wd) {
        bool is_root = e->wd == w->root_wd;
        if (e->mask & SELF_GONE) {
            seen->gone = true;
            snprintf(seen->gone_why, sizeof(seen->gone_why), "%s: %s",
                     is_root ? w->root : w->devices,
                     e->mask & IN_UNMOUNT     ? "unmounted"
                     : e->mask & IN_MOVE_SELF ? "renamed away"
                                              : "removed");
        } else if (is_root) {
            if (!strcmp(name, FAKEHW_FILE_GENERATION) || !strcmp(name, FAKEHW_FILE_NODE) ||
                !strcmp(name, FAKEHW_DIR_DEVICES))
                seen->changed = true;
        } else if (name[0] != '.') {
            seen->changed = seen->rescan = true;
        }
    } else if (has_wd(w->dev_wds, w->n_dev_wds, e->wd)) {
        /* Hidden names are temp files of atomic writes: their rename into
         * place is the change.  A removed device dir ends with IN_IGNORED;
         * its removal from devices/ already triggered the rescan that
         * forgets the wd. */
        if (!(e->mask & IN_IGNORED) && name[0] != '.')
            seen->changed = true;
    }
    /* other wds: left over from a rescan, nothing to say */
}

/* Reads every queued event into seen; -1 when the queue cannot be read. */
static int drain_inotify(struct fakehw_watch *w, struct inotify_seen *seen, struct error *err)
{
    /* inotify wants a buffer aligned for struct inotify_event */
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t r = read(w->ino_fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return 0;
        if (r <= 0) {
            /* Events may be lost: start over, the next wait re-arms and says BACK. */
            error_set_errno(err, r < 0 ? errno : EIO, "reading inotify events for %s", w->root);
            disarm(w, err ? err->msg : "inotify read failed");
            return -1;
        }
        for (char *p = buf; p < buf + r;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            p += sizeof(*e) + e->len;
            note_event(w, e, seen);
        }
    }
}

static int on_inotify_ready(struct fakehw_watch *w, enum fakehw_watch_event *ev, bool *report,
                            struct error *err)
{
    struct inotify_seen seen = {0};
    if (drain_inotify(w, &seen, err) < 0)
        return -1;
    if (seen.gone) {
        disarm(w, seen.gone_why);
        *ev = FAKEHW_WATCH_GONE;
        *report = true;
        return 0;
    }
    if (seen.overflow) {
        *report = true;
        return rearm(w, "inotify queue overflowed", ev, err);
    }
    if (seen.rescan) {
        struct error why;
        enum arm_result rc = rescan_devices(w, &why);
        if (rc == ARM_ERROR) {
            /* Some device would go unwatched: drop it all, the next wait re-arms. */
            disarm(w, why.msg);
            return error_set(err, "%s", why.msg);
        }
        if (rc == ARM_DOWN) {
            disarm(w, why.msg);
            *ev = FAKEHW_WATCH_GONE;
            *report = true;
            return 0;
        }
    }
    if (seen.changed) {
        uint64_t gen;
        if (fakehw_tree_read_generation(w->root, &gen, NULL) == 0)
            w->gen = gen;
        *ev = FAKEHW_WATCH_CHANGED;
        *report = true;
    }
    return 0;
}

/* The safety resync: is the armed tree still the one at the path? */
static int resync(struct fakehw_watch *w, enum fakehw_watch_event *ev, struct error *err)
{
    struct statfs sfs;
    struct stat rst, dst;
    char why[ERROR_MSG_MAX];
    if (statfs(w->root, &sfs) < 0 || stat(w->root, &rst) < 0) {
        snprintf(why, sizeof(why), "%s: %s", w->root, strerror(errno));
        disarm(w, why);
        *ev = FAKEHW_WATCH_GONE;
        return 0;
    }
    if (stat(w->devices, &dst) < 0) {
        snprintf(why, sizeof(why), "%s: %s", w->devices, strerror(errno));
        disarm(w, why);
        *ev = FAKEHW_WATCH_GONE;
        return 0;
    }
    if (rst.st_dev != w->root_dev || rst.st_ino != w->root_ino || dst.st_dev != w->devices_dev ||
        dst.st_ino != w->devices_ino || (long)sfs.f_type != w->fs_type) {
        snprintf(why, sizeof(why), "%s: a different tree is there now", w->root);
        return rearm(w, why, ev, err);
    }
    if (w->mode == MODE_FUSE_POLL || w->mode == MODE_FUSE_INTERVAL) {
        bool report = false;
        on_fuse_ready(w, false, ev, &report);
        if (report)
            return 0;
    }
    *ev = FAKEHW_WATCH_RESYNC;
    return 0;
}

int fakehw_watch_wait(struct fakehw_watch *w, int timeout_ms, enum fakehw_watch_event *ev,
                      struct error *err)
{
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : monotonic_ms() + timeout_ms;
    for (;;) {
        int64_t now = monotonic_ms();
        int64_t next = deadline;
        if (w->mode == MODE_DOWN || w->mode == MODE_FUSE_INTERVAL)
            next = next < w->next_retry ? next : w->next_retry;
        if (w->mode != MODE_DOWN && w->resync_ms > 0)
            next = next < w->next_resync ? next : w->next_resync;
        int wait_ms = next == INT64_MAX      ? -1
                      : next <= now          ? 0
                      : next - now > INT_MAX ? INT_MAX
                                             : (int)(next - now);

        struct pollfd p[2] = {{.fd = w->wake_fd, .events = POLLIN}, {.fd = -1}};
        if (w->mode == MODE_FUSE_POLL)
            p[1] = (struct pollfd){.fd = w->gen_fd, .events = POLLIN | POLLPRI};
        else if (w->mode == MODE_INOTIFY)
            p[1] = (struct pollfd){.fd = w->ino_fd, .events = POLLIN};
        int r = poll(p, 2, wait_ms);
        bool immediate = monotonic_ms() - now < IMMEDIATE_MS;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return error_set_errno(err, errno, "poll on the fakehw watch of %s", w->root);

        if (p[0].revents) {
            uint64_t count;
            ssize_t n = read(w->wake_fd, &count, sizeof(count));
            (void)n; /* EAGAIN only if another reader drained it: still a wake */
            *ev = FAKEHW_WATCH_WOKEN;
            return 0;
        }
        bool report = false;
        if (p[1].fd >= 0 && p[1].revents) {
            if (w->mode == MODE_FUSE_POLL)
                on_fuse_ready(w, immediate, ev, &report);
            else if (on_inotify_ready(w, ev, &report, err) < 0)
                return -1;
            if (report)
                return 0;
        }

        now = monotonic_ms();
        if (w->mode == MODE_DOWN && now >= w->next_retry) {
            if (try_back(w, ev, &report, err) < 0)
                return -1;
            if (report)
                return 0;
        }
        if (w->mode == MODE_FUSE_INTERVAL && now >= w->next_retry) {
            w->next_retry = now + w->retry_ms;
            on_fuse_ready(w, false, ev, &report);
            if (report)
                return 0;
        }
        if (w->mode != MODE_DOWN && w->resync_ms > 0 && now >= w->next_resync) {
            w->next_resync = now + w->resync_ms;
            return resync(w, ev, err);
        }
        if (now >= deadline) {
            *ev = FAKEHW_WATCH_TIMEOUT;
            return 0;
        }
    }
}

int fakehw_watch_wake(struct fakehw_watch *w)
{
    uint64_t one = 1;
    ssize_t n = write(w->wake_fd, &one, sizeof(one));
    if (n < 0 && errno != EAGAIN) /* EAGAIN: the counter is full, a wake is pending */
        return -1;
    return 0;
}

CLEANUP_FUNC(struct fakehw_watch, fakehw_watch_close)
#define cleanup_watch __attribute__((cleanup(fakehw_watch_closep)))

struct fakehw_watch *fakehw_watch_open(const char *root, const struct fakehw_watch_options *opts,
                                       struct error *err)
{
    cleanup_watch struct fakehw_watch *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        error_set(err, "watching %s: out of memory", root);
        return NULL;
    }
    w->wake_fd = w->gen_fd = w->ino_fd = -1;
    w->root_wd = w->devices_wd = -1;
    w->mode = MODE_DOWN;
    int resync = opts ? opts->resync_ms : 0;
    int retry = opts ? opts->retry_ms : 0;
    w->resync_ms = resync == 0 ? DEFAULT_RESYNC_MS : resync;
    w->retry_ms = retry <= 0 ? DEFAULT_RETRY_MS : retry;
    if (snprintf(w->root, sizeof(w->root), "%s", root) >= (int)sizeof(w->root) ||
        snprintf(w->devices, sizeof(w->devices), "%s/%s", root, FAKEHW_DIR_DEVICES) >=
            (int)sizeof(w->devices) ||
        snprintf(w->genpath, sizeof(w->genpath), "%s/%s", root, FAKEHW_FILE_GENERATION) >=
            (int)sizeof(w->genpath)) {
        error_set(err, "watching %.64s...: path is too long", root);
        return NULL;
    }
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0) {
        error_set_errno(err, errno, "watching %s: eventfd", root);
        return NULL;
    }
    struct error why;
    enum arm_result rc = arm(w, &why);
    if (rc == ARM_ERROR) {
        error_set(err, "watching %s: %s", root, why.msg);
        return NULL;
    }
    if (rc == ARM_DOWN) {
        snprintf(w->down_reason, sizeof(w->down_reason), "%s", why.msg);
        LOG_V(1, "fakehw watch %s: starts down: %s", root, why.msg);
    }
    return steal_pointer(&w);
}

void fakehw_watch_close(struct fakehw_watch *w)
{
    if (w == NULL)
        return;
    if (w->gen_fd >= 0)
        close(w->gen_fd);
    if (w->ino_fd >= 0)
        close(w->ino_fd);
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    free(w->dev_wds);
    free(w);
}
