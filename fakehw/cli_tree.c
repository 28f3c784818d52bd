// SPDX-License-Identifier: Apache-2.0
/* Reading and writing one file of a running fakehw tree for the commands
 * (flip, attach): see cli.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fakehw_tree.h"

int cli_read_line(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
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
        fprintf(stderr, "%s: %s is not a fakehw tree (no %s)\n", cmd, mount, devices);
    else
        fprintf(stderr, "%s: %s: %s\n", cmd, path, cli_explain(e));
}
