// SPDX-License-Identifier: Apache-2.0
/* apiserver-standin as a child process of a test; see standin_proc.h. */
#include "standin_proc.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/tests/tmp_dir.h"

static int binary_path(char *out, size_t size)
{
    const char *env = getenv("APISERVER_STANDIN_BIN");
    if (env && env[0]) {
        snprintf(out, size, "%s", env);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    snprintf(out, size, "%s/apiserver-standin", self);
    return 0;
}

static void print_log(const struct standin *s)
{
    char p[128], line[512];
    snprintf(p, sizeof(p), "%s/log", s->dir);
    FILE *f = fopen(p, "r");
    while (f && fgets(line, sizeof(line), f))
        fprintf(stderr, "standin log: %s", line);
    if (f)
        fclose(f);
}

int standin_start(struct standin *s, const char *const *extra)
{
    memset(s, 0, sizeof(*s));
    char bin[PATH_MAX], port_file[128];
    if (binary_path(bin, sizeof(bin)) < 0 || access(bin, X_OK) < 0) {
        fprintf(stderr, "standin: cannot find apiserver-standin next to the test binary\n");
        return -1;
    }
    if (!tmp_dir_make(s->dir, sizeof(s->dir), "kube-test"))
        return -1;
    snprintf(port_file, sizeof(port_file), "%s/port", s->dir);
    const char *argv[32] = {bin, "--port-file", port_file};
    int argc = 3;
    for (int i = 0; extra && extra[i] && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    s->pid = fork();
    if (s->pid < 0)
        return -1;
    if (s->pid == 0) {
        /* Keep the test's output clean: the URL line goes away, the log
         * into <dir>/log (printed when the start fails). */
        char log[128];
        snprintf(log, sizeof(log), "%s/log", s->dir);
        if (freopen("/dev/null", "w", stdout) == NULL || freopen(log, "w", stderr) == NULL)
            _exit(127);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            int ok = fscanf(f, "%d", &s->port);
            fclose(f);
            if (ok == 1 && s->port > 0) {
                bool tls = false;
                for (int j = 0; extra && extra[j]; j++)
                    tls = tls || !strcmp(extra[j], "--tls-cert-file");
                snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", tls ? "https" : "http",
                         s->port);
                return 0;
            }
        }
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "standin: apiserver-standin exited early (status %d)\n", status);
            s->pid = 0;
            print_log(s);
            standin_stop(s);
            return -1;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "standin: no port file after 10 s\n");
    print_log(s);
    standin_stop(s);
    return -1;
}

int standin_stop(struct standin *s)
{
    int rc = -1;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int status = 0;
        for (int i = 0; i < 1000; i++) {
            pid_t r = waitpid(s->pid, &status, WNOHANG);
            if (r == s->pid) {
                rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                break;
            }
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        if (rc == -1 && waitpid(s->pid, &status, WNOHANG) == 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
        }
        s->pid = 0;
    }
    if (s->dir[0]) {
        if (rc != 0)
            print_log(s);
        char p[128];
        snprintf(p, sizeof(p), "%s/port", s->dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/log", s->dir);
        unlink(p);
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
    return rc;
}
