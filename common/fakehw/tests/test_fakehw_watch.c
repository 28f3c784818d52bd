// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the fakehw change watcher (common/fakehw/fakehw_watch.c): inotify on
 * plain directories built in /tmp, and FUSE poll against a tiny FUSE server
 * run in a child process (skipped without root or /dev/fuse).  Waits use
 * generous timeouts and only ever check what was reported, never how fast. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

#include "fakehw_tree_read.h"
#include "fakehw_watch.h"
#include "common/tests/fork_piped.h"
#include "common/tests/test_main.h"
#include "common/tests/tmp_dir.h"

#define LONG_WAIT_MS 5000 /* for events that must come: only a hang reaches it */
#define QUIET_MS     100  /* for "nothing happens" */
#define FUSE_MAGIC   0x65735546

struct fixture {
    char root[64];
    struct fakehw_watch *w;
    pid_t server; /* FUSE tests: the serving child, or 0 */
    int ctl;      /* FUSE tests: write a byte to bump the generation */
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void write_file(const char *root, const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

static void remove_tree(const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    tmp_dir_remove(path);
}

static struct fakehw_watch *open_watch(struct fixture *f, int resync_ms)
{
    struct fakehw_watch_options o = {.resync_ms = resync_ms, .retry_ms = 20};
    struct error err;
    f->w = fakehw_watch_open(f->root, &o, &err);
    if (f->w == NULL)
        fail_msg("fakehw_watch_open: %s", err.msg);
    return f->w;
}

static enum fakehw_watch_event wait_event(struct fakehw_watch *w, int timeout_ms)
{
    enum fakehw_watch_event ev;
    struct error err;
    if (fakehw_watch_wait(w, timeout_ms, &ev, &err) < 0)
        fail_msg("fakehw_watch_wait: %s", err.msg);
    return ev;
}

/* Waits for ev, letting CHANGED events that lead up to it pass. */
static void expect_event_after_changes(struct fakehw_watch *w, enum fakehw_watch_event want)
{
    for (int i = 0; i < 100; i++) {
        enum fakehw_watch_event ev = wait_event(w, LONG_WAIT_MS);
        if (ev == want)
            return;
        if (ev != FAKEHW_WATCH_CHANGED)
            fail_msg("waiting for %s, got %s", fakehw_watch_event_name(want),
                     fakehw_watch_event_name(ev));
    }
    fail_msg("waiting for %s: only changes", fakehw_watch_event_name(want));
}

/* Nothing is pending: events of earlier steps were all consumed. */
static void expect_quiet(struct fakehw_watch *w)
{
    assert_string_equal(fakehw_watch_event_name(wait_event(w, QUIET_MS)), "timeout");
}

static void expect(struct fakehw_watch *w, enum fakehw_watch_event want)
{
    assert_string_equal(fakehw_watch_event_name(wait_event(w, LONG_WAIT_MS)),
                        fakehw_watch_event_name(want));
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL || !tmp_dir_make(f->root, sizeof(f->root), "test_fakehw_watch"))
        return -1;
    f->ctl = -1;
    *state = f;
    return 0;
}

/* root/generation, root/devices/gpu-0/health */
static int setup_tree(void **state)
{
    if (setup(state) < 0)
        return -1;
    struct fixture *f = *state;
    char path[128];
    snprintf(path, sizeof(path), "%s/devices", f->root);
    if (mkdir(path, 0755) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/devices/gpu-0", f->root);
    if (mkdir(path, 0755) < 0)
        return -1;
    write_file(f->root, "devices/gpu-0/health", "healthy\n");
    write_file(f->root, "generation", "1\n");
    return 0;
}

static void stop_server(struct fixture *f)
{
    if (f->server > 0) {
        kill(f->server, SIGKILL);
        waitpid(f->server, NULL, 0);
        f->server = 0;
    }
    if (f->ctl >= 0) {
        close(f->ctl);
        f->ctl = -1;
    }
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fakehw_watch_close(f->w);
    stop_server(f);
    umount2(f->root, MNT_DETACH); /* FUSE tests; harmless otherwise */
    tmp_dir_remove(f->root);
    free(f);
    return 0;
}

static void test_quiet_tree_times_out(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    assert_true(fakehw_watch_up(w));
    assert_string_equal(fakehw_watch_mode(w), "inotify");
    assert_int_equal(fakehw_watch_generation(w), 1);
    assert_string_equal(fakehw_watch_down_reason(w), "");
    expect_quiet(w);
    assert_string_equal(fakehw_watch_event_name(wait_event(w, 0)), "timeout");
}

static void test_writes_wake_the_wait(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    write_file(f->root, "devices/gpu-0/health", "unhealthy\n");
    expect(w, FAKEHW_WATCH_CHANGED);
    expect_quiet(w);
    write_file(f->root, "generation", "2\n");
    expect(w, FAKEHW_WATCH_CHANGED);
    assert_int_equal(fakehw_watch_generation(w), 2);
    expect_quiet(w);
    /* Files written elsewhere in the root are not part of the tree. */
    write_file(f->root, "notes.txt", "x\n");
    expect_quiet(w);
}

static void test_atomic_replace_wakes_once_renamed(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    write_file(f->root, "devices/gpu-0/.health.tmp", "unhealthy\n");
    expect_quiet(w); /* the temp file is not the change */
    char from[256], to[256];
    snprintf(from, sizeof(from), "%s/devices/gpu-0/.health.tmp", f->root);
    snprintf(to, sizeof(to), "%s/devices/gpu-0/health", f->root);
    assert_int_equal(rename(from, to), 0);
    expect(w, FAKEHW_WATCH_CHANGED);
}

static void test_device_set_changes(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    make_dir(f->root, "devices/gpu-1");
    expect(w, FAKEHW_WATCH_CHANGED);
    expect_quiet(w);
    /* The new device is watched too. */
    write_file(f->root, "devices/gpu-1/health", "healthy\n");
    expect(w, FAKEHW_WATCH_CHANGED);
    expect_quiet(w);
    remove_tree(f->root, "devices/gpu-0");
    expect_event_after_changes(w, FAKEHW_WATCH_CHANGED);
    sleep_ms(50);
    while (wait_event(w, QUIET_MS) == FAKEHW_WATCH_CHANGED)
        ;
    assert_true(fakehw_watch_up(w));
}

static void test_gone_and_back(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    remove_tree(f->root, "devices");
    expect_event_after_changes(w, FAKEHW_WATCH_GONE);
    assert_false(fakehw_watch_up(w));
    assert_string_equal(fakehw_watch_mode(w), "down");
    assert_int_equal(fakehw_watch_generation(w), 0);
    char want[256];
    snprintf(want, sizeof(want), "%s/devices: removed", f->root);
    assert_string_equal(fakehw_watch_down_reason(w), want);
    expect_quiet(w); /* gone is reported once; retries find nothing */
    snprintf(want, sizeof(want), "%s/devices: No such file or directory", f->root);
    assert_string_equal(fakehw_watch_down_reason(w), want);

    make_dir(f->root, "devices");
    expect(w, FAKEHW_WATCH_BACK);
    assert_true(fakehw_watch_up(w));
    assert_string_equal(fakehw_watch_mode(w), "inotify");
    /* Re-armed on the new directory. */
    make_dir(f->root, "devices/gpu-7");
    expect(w, FAKEHW_WATCH_CHANGED);
}

static void test_root_renamed_away_and_back(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    char moved[128];
    snprintf(moved, sizeof(moved), "%s.moved", f->root);
    assert_int_equal(rename(f->root, moved), 0);
    expect(w, FAKEHW_WATCH_GONE);
    /* Writes in the old tree are no concern of this watch any more. */
    char path[256];
    snprintf(path, sizeof(path), "%s/generation", moved);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("5\n", fp);
    fclose(fp);
    expect_quiet(w);
    assert_int_equal(rename(moved, f->root), 0);
    expect(w, FAKEHW_WATCH_BACK);
    assert_int_equal(fakehw_watch_generation(w), 5);
}

static void test_starts_down_when_missing(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1); /* root exists, devices/ does not */
    assert_false(fakehw_watch_up(w));
    assert_non_null(strstr(fakehw_watch_down_reason(w), "/devices: No such file or directory"));
    expect_quiet(w);
    make_dir(f->root, "devices");
    expect(w, FAKEHW_WATCH_BACK);
}

static void *wake_later(void *arg)
{
    sleep_ms(50);
    fakehw_watch_wake(arg);
    return NULL;
}

static void test_wake_interrupts_wait(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, -1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wake_later, w), 0);
    expect(w, FAKEHW_WATCH_WOKEN);
    pthread_join(t, NULL);
    /* A wake before the wait is kept for it, and consumed by it. */
    assert_int_equal(fakehw_watch_wake(w), 0);
    assert_int_equal(fakehw_watch_wake(w), 0);
    assert_string_equal(fakehw_watch_event_name(wait_event(w, -1)), "woken");
    expect_quiet(w);
    /* A down watch can be woken as well. */
    remove_tree(f->root, "devices");
    expect_event_after_changes(w, FAKEHW_WATCH_GONE);
    assert_int_equal(fakehw_watch_wake(w), 0);
    assert_string_equal(fakehw_watch_event_name(wait_event(w, -1)), "woken");
}

static void test_resync_period(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = open_watch(f, 30);
    expect(w, FAKEHW_WATCH_RESYNC);
    expect(w, FAKEHW_WATCH_RESYNC);
    assert_true(fakehw_watch_up(w));
}

static void test_open_errors(void **state)
{
    (void)state;
    char root[5000];
    memset(root, 'a', sizeof(root) - 1);
    root[0] = '/';
    root[sizeof(root) - 1] = '\0';
    struct error err;
    assert_null(fakehw_watch_open(root, NULL, &err));
    assert_non_null(strstr(err.msg, ": path is too long"));
    fakehw_watch_close(NULL);
}

/* ---- a tiny FUSE server: /generation (with poll), /devices ---- */

#define INO_GENERATION 2
#define INO_DEVICES    3
#define MAX_OPEN       16

struct server {
    pthread_mutex_t lock;
    uint64_t gen;
    bool used[MAX_OPEN];
    uint64_t seen[MAX_OPEN]; /* generation each open fd last read */
    struct fuse_pollhandle *ph[MAX_OPEN];
    int ctl;
};

static struct server srv = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = ino == INO_GENERATION ? S_IFREG | 0444 : S_IFDIR | 0755;
    st->st_nlink = ino == INO_GENERATION ? 1 : 2;
}

static void srv_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e = {0}; /* timeouts 0: every access asks the server */
    if (parent == FUSE_ROOT_ID && !strcmp(name, "generation"))
        e.ino = INO_GENERATION;
    else if (parent == FUSE_ROOT_ID && !strcmp(name, "devices"))
        e.ino = INO_DEVICES;
    else {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fill_attr(e.ino, &e.attr);
    fuse_reply_entry(req, &e);
}

static void srv_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct stat st;
    fill_attr(ino, &st);
    fuse_reply_attr(req, &st, 0);
}

static void srv_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (ino != INO_GENERATION) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    pthread_mutex_lock(&srv.lock);
    int slot = -1;
    for (int i = 0; i < MAX_OPEN && slot < 0; i++)
        if (!srv.used[i])
            slot = i;
    if (slot >= 0) {
        srv.used[slot] = true;
        srv.seen[slot] = 0;
    }
    pthread_mutex_unlock(&srv.lock);
    if (slot < 0) {
        fuse_reply_err(req, EMFILE);
        return;
    }
    fi->fh = (uint64_t)slot;
    fi->direct_io = 1; /* fresh value on every read */
    fuse_reply_open(req, fi);
}

static void srv_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    char buf[32];
    pthread_mutex_lock(&srv.lock);
    int n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)srv.gen);
    srv.seen[fi->fh] = srv.gen;
    pthread_mutex_unlock(&srv.lock);
    if (off >= n)
        fuse_reply_buf(req, NULL, 0);
    else
        fuse_reply_buf(req, buf + off,
                       (size_t)n - (size_t)off < size ? (size_t)n - (size_t)off : size);
}

static void srv_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
                     struct fuse_pollhandle *ph)
{
    (void)ino;
    unsigned revents = 0;
    pthread_mutex_lock(&srv.lock);
    if (srv.gen != srv.seen[fi->fh])
        revents = POLLIN;
    if (ph != NULL) {
        if (srv.ph[fi->fh] != NULL)
            fuse_pollhandle_destroy(srv.ph[fi->fh]);
        srv.ph[fi->fh] = ph;
    }
    pthread_mutex_unlock(&srv.lock);
    fuse_reply_poll(req, revents);
}

static void srv_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    pthread_mutex_lock(&srv.lock);
    srv.used[fi->fh] = false;
    if (srv.ph[fi->fh] != NULL)
        fuse_pollhandle_destroy(srv.ph[fi->fh]);
    srv.ph[fi->fh] = NULL;
    pthread_mutex_unlock(&srv.lock);
    fuse_reply_err(req, 0);
}

/* Each byte on the control pipe bumps the generation and wakes the pollers. */
static void *srv_control(void *arg)
{
    (void)arg;
    char c;
    while (read(srv.ctl, &c, 1) == 1) {
        pthread_mutex_lock(&srv.lock);
        srv.gen++;
        for (int i = 0; i < MAX_OPEN; i++)
            if (srv.ph[i] != NULL) {
                fuse_lowlevel_notify_poll(srv.ph[i]);
                fuse_pollhandle_destroy(srv.ph[i]);
                srv.ph[i] = NULL;
            }
        pthread_mutex_unlock(&srv.lock);
    }
    return NULL;
}

static void serve(const char *mnt, int ctl, bool with_poll)
{
    struct fuse_lowlevel_ops ops = {
        .lookup = srv_lookup,
        .getattr = srv_getattr,
        .open = srv_open,
        .read = srv_read,
        .poll = with_poll ? srv_poll : NULL,
        .release = srv_release,
    };
    char *argv[] = {"test_fakehw_watch", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(1, argv);
    srv.gen = 1;
    srv.ctl = ctl;
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
    if (se == NULL || fuse_session_mount(se, mnt) != 0)
        _exit(3);
    pthread_t t;
    if (pthread_create(&t, NULL, srv_control, NULL) != 0)
        _exit(4);
    fuse_session_loop(se);
    _exit(0);
}

/* Forks a server on f->root; false when FUSE is not available here. */
static bool start_server(struct fixture *f, bool with_poll)
{
    int p[2];
    pid_t pid = fork_piped(p, 0);
    if (pid == 0)
        serve(f->root, p[0], with_poll);
    f->server = pid;
    f->ctl = p[1];
    for (int i = 0; i < 500; i++) {
        struct statfs s;
        if (statfs(f->root, &s) == 0 && s.f_type == FUSE_MAGIC)
            return true;
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            f->server = 0;
            return false;
        }
        sleep_ms(10);
    }
    fail_msg("the test FUSE server did not mount %s", f->root);
    return false;
}

static bool fuse_usable(void)
{
    return geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0;
}

/* A watch of f->root served by the test FUSE server; the test is skipped
 * (cmocka's skip() leaves it) where FUSE is not usable. */
static struct fakehw_watch *watch_on_fuse_server(struct fixture *f, bool with_poll)
{
    if (!fuse_usable() || !start_server(f, with_poll))
        skip();
    return open_watch(f, -1);
}

static void bump(struct fixture *f)
{
    assert_int_equal(write(f->ctl, "b", 1), 1);
}

/* One bump of the server's counter is one change, to generation gen. */
static void expect_bump_seen(struct fixture *f, struct fakehw_watch *w, uint64_t gen)
{
    bump(f);
    expect(w, FAKEHW_WATCH_CHANGED);
    assert_int_equal(fakehw_watch_generation(w), gen);
}

/* Nothing happens for a while, and the watch is then in mode. */
static void expect_quiet_in_mode(struct fakehw_watch *w, const char *mode)
{
    expect_quiet(w);
    assert_string_equal(fakehw_watch_mode(w), mode);
}

static void test_fuse_poll_kill_and_remount(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = watch_on_fuse_server(f, true);
    assert_string_equal(fakehw_watch_mode(w), "fuse-poll");
    assert_int_equal(fakehw_watch_generation(w), 1);
    /* Blocking in poll, not spinning: a spinning wait would have switched
     * to fuse-interval after a few wakes. */
    expect_quiet(w);
    expect_quiet_in_mode(w, "fuse-poll");
    expect_bump_seen(f, w, 2);
    bump(f);
    bump(f);
    expect(w, FAKEHW_WATCH_CHANGED);
    sleep_ms(50);
    if (fakehw_watch_generation(w) != 4)
        expect(w, FAKEHW_WATCH_CHANGED);
    assert_int_equal(fakehw_watch_generation(w), 4);
    expect_quiet(w);

    /* A killed daemon leaves a mount that answers ENOTCONN. */
    stop_server(f);
    expect(w, FAKEHW_WATCH_GONE);
    assert_non_null(strstr(fakehw_watch_down_reason(w), "Transport endpoint is not connected"));
    expect_quiet(w);
    assert_false(fakehw_watch_up(w));
    /* The reader gets the same answer as an error, at once. */
    uint64_t gen;
    struct error err;
    assert_int_equal(fakehw_tree_read_generation(f->root, &gen, &err), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_non_null(strstr(err.msg, "/generation: Transport endpoint is not connected"));

    /* Unmounted, then fakehw restarted on the same path: back on the new mount. */
    assert_int_equal(umount2(f->root, MNT_DETACH), 0);
    expect_quiet(w);
    assert_true(start_server(f, true));
    expect(w, FAKEHW_WATCH_BACK);
    assert_string_equal(fakehw_watch_mode(w), "fuse-poll");
    expect_bump_seen(f, w, 2);
}

static void test_fuse_without_poll_support(void **state)
{
    struct fixture *f = *state;
    struct fakehw_watch *w = watch_on_fuse_server(f, false);
    /* The kernel reports the fd always ready: the watch must notice and
     * fall back to reading the counter every retry_ms. */
    expect_quiet_in_mode(w, "fuse-interval");
    expect_bump_seen(f, w, 2);
    expect_quiet(w);
    stop_server(f);
    expect(w, FAKEHW_WATCH_GONE);
}

TEST_MAIN_LIST("fakehw_watch",
               cmocka_unit_test_setup_teardown(test_quiet_tree_times_out, setup_tree, teardown),
               cmocka_unit_test_setup_teardown(test_writes_wake_the_wait, setup_tree, teardown),
               cmocka_unit_test_setup_teardown(test_atomic_replace_wakes_once_renamed, setup_tree,
                                               teardown),
               cmocka_unit_test_setup_teardown(test_device_set_changes, setup_tree, teardown),
               cmocka_unit_test_setup_teardown(test_gone_and_back, setup_tree, teardown),
               cmocka_unit_test_setup_teardown(test_root_renamed_away_and_back, setup_tree,
                                               teardown),
               cmocka_unit_test_setup_teardown(test_starts_down_when_missing, setup, teardown),
               cmocka_unit_test_setup_teardown(test_wake_interrupts_wait, setup_tree, teardown),
               cmocka_unit_test_setup_teardown(test_resync_period, setup_tree, teardown),
               cmocka_unit_test(test_open_errors),
               cmocka_unit_test_setup_teardown(test_fuse_poll_kill_and_remount, setup, teardown),
               cmocka_unit_test_setup_teardown(test_fuse_without_poll_support, setup, teardown))
