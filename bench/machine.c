// SPDX-License-Identifier: Apache-2.0
#include "machine.h"

#include <curl/curl.h>
#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The value of the first "key<tabs>: value" line of a /proc file. */
static void proc_value(const char *path, const char *key, char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[4096];
    size_t klen = strlen(key);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, klen) != 0 ||
            (line[klen] != ':' && line[klen] != '\t' && line[klen] != ' '))
            continue;
        char *v = strchr(line, ':');
        if (v == NULL)
            continue;
        v++;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(buf, len, "%s", v);
        break;
    }
    fclose(f);
}

/* The file system type of the longest mount point that holds path. */
static void fs_of(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/self/mounts", "r");
    if (f == NULL)
        return;
    char dev[512], mnt[1024], type[64];
    size_t best = 0;
    while (fscanf(f, "%511s %1023s %63s %*[^\n]", dev, mnt, type) == 3) {
        size_t m = strlen(mnt);
        bool under =
            !strcmp(mnt, "/") || (!strncmp(path, mnt, m) && (path[m] == '/' || path[m] == '\0'));
        if (under && m >= best) {
            best = m;
            snprintf(buf, len, "%s on %s (%s)", type, mnt, dev);
        }
    }
    fclose(f);
}

void machine_loadavg(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL)
        return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

void machine_describe(struct report *r, const char *work_dir, const char *cdi_dir)
{
    char buf[512], flags[8192];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", &tm);
    report_meta(r, "date", "%s", buf);
    report_meta(r, "CPUs (nproc)", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    proc_value("/proc/cpuinfo", "model name", buf, sizeof(buf));
    proc_value("/proc/cpuinfo", "flags", flags, sizeof(flags));
    report_meta(r, "CPU", "%s%s", buf, strstr(flags, " hypervisor") ? " (virtual machine)" : "");
    struct utsname u;
    if (uname(&u) == 0)
        report_meta(r, "kernel", "%s %s %s", u.sysname, u.release, u.machine);
    proc_value("/proc/meminfo", "MemTotal", buf, sizeof(buf));
    report_meta(r, "memory", "%.1f GiB", strtod(buf, NULL) / 1024 / 1024);
    fs_of(work_dir, buf, sizeof(buf));
    report_meta(r, "file system of the plugin directory (checkpoint, metadata)", "%s", buf);
    fs_of(cdi_dir, buf, sizeof(buf));
    report_meta(r, "file system of the CDI root", "%s", buf);
    report_meta(r, "grpc core", "%s", grpc_version_string());
    report_meta(r, "libcurl", "%s", curl_version_info(CURLVERSION_NOW)->version);
    machine_loadavg(buf, sizeof(buf));
    report_meta(r, "load average at start (1, 5, 15 min)", "%s", buf);
}
