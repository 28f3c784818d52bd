// SPDX-License-Identifier: Apache-2.0
/* What the commands that act on a running fakehw tree (flip, attach) share:
 * their command line, paths under the tree, reading and writing one of its
 * files, every device of it: see cli.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "dns_names.h"
#include "fakehw_tree.h"
#include "xalloc.h"

/* The default of --mount: a command whose mount is still this pointer and
 * finds no tree there says how to name another (--mount, FAKEHW_MOUNT). */
static const char cli_default_mount[] = FAKEHW_DEFAULT_ROOT;

/* Prints that mount holds no tree, and how to name another when nobody
 * named this one. */
static void report_no_tree(const char *cmd, const char *mount, const char *devices)
{
    if (mount == cli_default_mount)
        fprintf(stderr,
                "%s: no fakehw tree at %s, the default (no %s): give the mount point of a "
                "running fakehw with --mount DIR (or FAKEHW_MOUNT)\n",
                cmd, mount, devices);
    else
        fprintf(stderr, "%s: %s is not a fakehw tree (no %s)\n", cmd, mount, devices);
}

int cli_read_line(const char *path, char *buf, size_t size)
{
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    if (n < 0)
        return -1; /* cleanup_close keeps errno */
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

const char *cli_explain(int e)
{
    switch (e) {
    case ENOTCONN:
        return "the fakehw mount is stale (its daemon is gone)";
    case EINVAL:
        return "fakehw refused the value";
    default:
        return strerror(e);
    }
}

void cli_report_missing(const char *cmd, const char *mount, const char *device, const char *path,
                        int e)
{
    char devices[PATH_MAX];
    snprintf(devices, sizeof(devices), "%s/%s", mount, FAKEHW_DIR_DEVICES);
    if (e == ENOENT && access(devices, F_OK) == 0)
        fprintf(stderr, "%s: no device %s in %s\n", cmd, device, devices);
    else if (e == ENOENT)
        report_no_tree(cmd, mount, devices);
    else
        fprintf(stderr, "%s: %s: %s\n", cmd, path, cli_explain(e));
}

/* cli_parse into *a: its status. */
static int parse_args(const struct cli_command *c, const struct flag *flags, size_t nflags,
                      int argc, char **argv, struct cli_args *a)
{
    size_t n = nflags + 1;
    cleanup_free struct flag *first = xcalloc(n, sizeof(*first));
    first[0] = (struct flag){"mount", "FAKEHW_MOUNT", FLAG_STRING, &a->mount,
                             "where the fakehw tree is mounted"};
    for (size_t i = 0; i < nflags; i++)
        first[i + 1] = flags[i];
    /* Later rounds must not re-apply the environment over the command line. */
    cleanup_free struct flag *later = xcalloc(n, sizeof(*later));
    for (size_t i = 0; i < n; i++) {
        later[i] = first[i];
        later[i].env = NULL;
    }
    struct error err;
    for (int i = 0; i < argc;) {
        int next;
        int rc = flags_parse(i == 0 ? first : later, n, argc - i, argv + i, &next, &err);
        if (rc == FLAGS_HELP) {
            flags_usage(stdout, c->name, c->usage, c->description, first, n);
            return 0;
        }
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", c->name, err.msg);
            return EXIT_USAGE;
        }
        i += next;
        if (i >= argc)
            break;
        if (a->npos == c->maxpos) {
            fprintf(stderr, "%s: unexpected argument \"%s\" (see --help)\n", c->name, argv[i]);
            return EXIT_USAGE;
        }
        a->pos[a->npos++] = argv[i];
        /* argv[i] becomes the argv[0] flags_parse skips on the next round. */
    }
    if (a->npos < c->minpos) {
        fprintf(stderr, "%s: need %s (see --help)\n", c->name, c->need);
        return EXIT_USAGE;
    }
    if (a->npos > 0 && cli_check_device(c->name, a->pos[0], true) != 0)
        return EXIT_USAGE;
    return FLAGS_GO_ON;
}

struct cli_args cli_parse(const struct cli_command *c, const struct flag *flags, size_t nflags,
                          int argc, char **argv)
{
    struct cli_args a = {.mount = cli_default_mount};
    a.status = parse_args(c, flags, nflags, argc, argv, &a);
    return a;
}

int cli_check_device(const char *cmd, const char *device, bool all_ok)
{
    if ((all_ok && !strcmp(device, FLIP_ALL_DEVICES)) || dns_label_valid(device))
        return 0;
    fprintf(stderr,
            "%s: \"%.80s%s\" is not a device name (a DNS label: lowercase letters, digits and '-', "
            "at most 63)%s\n",
            cmd, device, strlen(device) > 80 ? "..." : "", all_ok ? " or \"all\"" : "");
    return EXIT_USAGE;
}

int cli_device_path(char *buf, size_t size, const char *cmd, const char *mount, const char *device,
                    const char *attr)
{
    int n = snprintf(buf, size, "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device, attr);
    if (n >= 0 && (size_t)n < size)
        return 0;
    if (cmd != NULL)
        fprintf(stderr, "%s: path under %s too long\n", cmd, mount);
    return -1;
}

int cli_write_once(const char *cmd, const char *mount, const char *device, const char *path,
                   const char *text)
{
    cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_report_missing(cmd, mount, device, path, errno);
        return CLI_REPORTED;
    }
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    if (n == (ssize_t)len)
        return 0;
    if (n >= 0)
        errno = 0;
    return CLI_WRITE_FAILED;
}

void cli_report_write(const char *cmd, const char *path, const char *text, int e)
{
    fprintf(stderr, "%s: writing \"%.*s\" to %s: %s\n", cmd, (int)strcspn(text, "\n"), text, path,
            e ? cli_explain(e) : "short write");
}

int cli_for_each_device(const char *cmd, const char *mount,
                        int (*fn)(const char *mount, const char *device, void *ctx), void *ctx)
{
    char devices[PATH_MAX];
    snprintf(devices, sizeof(devices), "%s/%s", mount, FAKEHW_DIR_DEVICES);
    DIR *dir = opendir(devices);
    if (dir == NULL) {
        int e = errno;
        if (e == ENOENT)
            report_no_tree(cmd, mount, devices);
        else
            fprintf(stderr, "%s: %s: %s\n", cmd, devices, cli_explain(e));
        return 1;
    }
    int status = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (fn(mount, de->d_name, ctx) < 0)
            status = 1;
    }
    closedir(dir);
    return status;
}
