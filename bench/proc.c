// SPDX-License-Identifier: Apache-2.0
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t now_real_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

int64_t now_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* The end of a log file, on one line, for error messages (static buffer). */
static const char *log_tail(const char *path)
{
    static char buf[600];
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "(no log)";
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    for (char *c = buf; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return buf;
}

int proc_spawn(struct proc *p, const char *name, char *const argv[], const char *log_path,
               int64_t *t_ns, struct error *err)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->log, sizeof(p->log), "%s", log_path);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return error_set(err, "starting %s: out of memory", name);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    /* The children get a clean signal mask whatever this thread blocks. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    if (t_ns)
        *t_ns = now_real_ns();
    int rc = posix_spawn(&p->pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        p->pid = 0;
        return error_set_errno(err, rc, "starting %s (%s)", name, argv[0]);
    }
    return 0;
}

/* True while it runs; reaps it (and records wstatus) once it exited. */
static bool proc_running(struct proc *p)
{
    if (p->pid <= 0)
        return false;
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == 0)
        return true;
    if (r == p->pid)
        p->wstatus = st;
    p->pid = 0;
    return false;
}

static bool wait_exit(struct proc *p, int timeout_ms)
{
    int64_t end = now_mono_ns() + (int64_t)timeout_ms * 1000000;
    while (proc_running(p)) {
        if (now_mono_ns() >= end)
            return false;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return true;
}

int proc_stop(struct proc *p, int timeout_ms, struct error *err)
{
    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        if (!wait_exit(p, timeout_ms)) {
            kill(p->pid, SIGKILL);
            wait_exit(p, 5000);
            return error_set(err, "%s did not stop within %d ms of SIGTERM (killed); log: %s",
                             p->name, timeout_ms, p->log);
        }
    }
    if (WIFEXITED(p->wstatus) && WEXITSTATUS(p->wstatus) == 0)
        return 0;
    if (WIFSIGNALED(p->wstatus))
        return error_set(err, "%s died of signal %d; log %s: %s", p->name, WTERMSIG(p->wstatus),
                         p->log, log_tail(p->log));
    return error_set(err, "%s exited with status %d; log %s: %s", p->name, WEXITSTATUS(p->wstatus),
                     p->log, log_tail(p->log));
}

/* Reads a small /proc file whole into buf. */
static int read_small(const char *path, char *buf, size_t len, struct error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "%s", path);
    ssize_t n = read(fd, buf, len - 1);
    int saved = errno;
    close(fd);
    if (n < 0)
        return error_set_errno(err, saved, "reading %s", path);
    buf[n] = '\0';
    return 0;
}

static long status_field(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

int proc_mem(pid_t pid, struct proc_mem *m, struct error *err)
{
    char path[64], buf[8192];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (read_small(path, buf, sizeof(buf), err) < 0)
        return -1;
    m->hwm_kib = status_field(buf, "\nVmHWM:");
    m->rss_kib = status_field(buf, "\nVmRSS:");
    m->rss_anon_kib = status_field(buf, "\nRssAnon:");
    m->rss_file_kib = status_field(buf, "\nRssFile:");
    m->threads = status_field(buf, "\nThreads:");
    if (m->hwm_kib < 0)
        return error_set(err, "%s has no VmHWM (a zombie?)", path);
    return 0;
}

int proc_cpu_ticks(pid_t pid, unsigned long long *ticks, struct error *err)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_small(path, buf, sizeof(buf), err) < 0)
        return -1;
    /* The command name may hold spaces and parentheses: fields start after
     * the last ')'; utime and stime are fields 14 and 15. */
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return error_set(err, "%s: cannot parse utime/stime", path);
    *ticks = ut + st;
    return 0;
}

int proc_ctx_switches(pid_t pid, unsigned long long *n, struct error *err)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (d == NULL)
        return error_set_errno(err, errno, "%s", dir);
    unsigned long long total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[128], buf[8192];
        snprintf(path, sizeof(path), "%s/%s/status", dir, e->d_name);
        if (read_small(path, buf, sizeof(buf), NULL) < 0)
            continue; /* the thread just exited */
        long v = status_field(buf, "\nvoluntary_ctxt_switches:");
        long nv = status_field(buf, "\nnonvoluntary_ctxt_switches:");
        total += (unsigned long long)(v > 0 ? v : 0) + (unsigned long long)(nv > 0 ? nv : 0);
    }
    closedir(d);
    *n = total;
    return 0;
}

int wait_for_path(const char *path, int timeout_ms, struct proc *owner, int64_t *t_ns,
                  struct error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    bool watching = false;
    int64_t end = now_mono_ns() + (int64_t)timeout_ms * 1000000;
    int rc = -1;
    for (;;) {
        if (!watching && in >= 0)
            watching = inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) >= 0;
        if (access(path, F_OK) == 0) {
            if (t_ns)
                *t_ns = now_real_ns();
            rc = 0;
            break;
        }
        if (owner && !proc_running(owner)) {
            error_set(err, "%s exited before %s appeared; log %s: %s", owner->name, path,
                      owner->log, log_tail(owner->log));
            break;
        }
        int64_t left = end - now_mono_ns();
        if (left <= 0) {
            error_set(err, "%s did not appear within %d ms", path, timeout_ms);
            break;
        }
        /* Inotify wakes at once; the short cap notices an exited owner, or
         * a directory that did not exist yet. */
        int cap = watching ? 50 : 1;
        int ms = left / 1000000 < cap ? (int)(left / 1000000) + 1 : cap;
        struct pollfd pfd = {in, POLLIN, 0};
        if (in >= 0 && watching) {
            if (poll(&pfd, 1, ms) > 0) {
                char ev[4096];
                while (read(in, ev, sizeof(ev)) > 0)
                    ;
            }
        } else {
            struct timespec ts = {0, (long)ms * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    if (in >= 0)
        close(in);
    return rc;
}

/* True once pid sleeps in a pipe write (its wait channel says so). */
static bool blocked_in_pipe_write(pid_t pid)
{
    char path[64], buf[128];
    snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
    if (read_small(path, buf, sizeof(buf), NULL) < 0)
        return false;
    return strstr(buf, "pipe_write") != NULL;
}

int proc_peak_at_output(char *const argv[], long *kib, double *ms, struct error *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return error_set_errno(err, errno, "pipe");
    /* Shrink the pipe to one page and fill it; the write end goes back to
     * blocking before the child shares it. */
    fcntl(fds[1], F_SETPIPE_SZ, 4096);
    int fl = fcntl(fds[1], F_GETFL);
    fcntl(fds[1], F_SETFL, fl | O_NONBLOCK);
    char fill[4096];
    memset(fill, '.', sizeof(fill));
    while (write(fds[1], fill, sizeof(fill)) > 0)
        ;
    fcntl(fds[1], F_SETFL, fl);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int64_t t0 = now_mono_ns();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return error_set_errno(err, rc, "starting %s", argv[0]);
    }
    int ret = -1;
    struct proc_mem m = {0};
    int64_t end = t0 + 10 * (int64_t)1000000000;
    for (;;) {
        if (blocked_in_pipe_write(pid)) {
            *ms = (double)(now_mono_ns() - t0) / 1e6;
            ret = proc_mem(pid, &m, err);
            break;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            close(fds[0]);
            return error_set(err, "%s exited (wait status %d) before it wrote to stdout", argv[0],
                             st);
        }
        if (now_mono_ns() > end) {
            error_set(err, "%s did not write to stdout within 10 s", argv[0]);
            break;
        }
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
    /* Let it write the rest and exit. */
    char drain[4096];
    while (read(fds[0], drain, sizeof(drain)) > 0)
        ;
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (ret == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
        ret = error_set(err, "%s exited with wait status %d", argv[0], st);
    if (ret == 0)
        *kib = m.hwm_kib;
    return ret;
}
