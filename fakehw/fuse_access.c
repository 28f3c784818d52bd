// SPDX-License-Identifier: Apache-2.0
/* What stops a FUSE mount: see fuse_access.h. */
#include "fuse_access.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* CAP_SYS_ADMIN's bit in /proc/self/status's CapEff (linux/capability.h). */
#define CAP_SYS_ADMIN_BIT 21

const char *fuse_mount_advice(int open_errno, bool may_mount)
{
    switch (open_errno) {
    case 0:
        if (!may_mount)
            return "a permission problem: mounting needs root or CAP_SYS_ADMIN, or a setuid "
                   "fusermount3 that accepts the mount point (see the libfuse message above); in "
                   "a container, run it privileged";
        return "the mount itself was refused (see the libfuse message above)";
    case ENOENT:
    case ENODEV:
    case ENXIO:
        return "there is no FUSE device: load the fuse module (modprobe fuse); in a container, "
               "give it the host's " FUSE_DEVICE " (run it privileged)";
    case EACCES:
    case EPERM:
        return "a permission problem, not a missing device: run fakehw as root or with "
               "CAP_SYS_ADMIN; in a container, run it privileged (or allow the device " FUSE_DEVICE
               " and add CAP_SYS_ADMIN)";
    default:
        return "see the libfuse message above";
    }
}

/* Root with CAP_SYS_ADMIN in its effective set. */
static bool may_mount(void)
{
    if (geteuid() != 0)
        return false;
    FILE *f = fopen("/proc/self/status", "re");
    if (f == NULL)
        return true; /* no /proc: assume root can */
    char line[256];
    unsigned long long eff = ~0ULL;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            break;
    fclose(f);
    return (eff >> CAP_SYS_ADMIN_BIT) & 1;
}

void fuse_mount_diagnose(const char *device, char *buf, size_t size)
{
    int fd = open(device, O_RDWR | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    const char *advice = fuse_mount_advice(e, may_mount());
    if (e != 0)
        snprintf(buf, size, "opening %s: %s: %s", device, strerror(e), advice);
    else
        snprintf(buf, size, "%s opens: %s", device, advice);
}
