// SPDX-License-Identifier: Apache-2.0
/* Mount point checks and stale mount clearing: see mountpoint.h. */
#include "mountpoint.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "log.h"

#define FUSE_SUPER_MAGIC 0x65735546

int mountpoint_detach(const char *dir, struct error *err)
{
    if (umount2(dir, MNT_DETACH) == 0)
        return 0;
    if (errno != EPERM && errno != EACCES)
        return error_set_errno(err, errno, "unmounting %s", dir);
    /* Unprivileged: the setuid helper may unmount our own FUSE mounts. */
    pid_t pid = fork();
    if (pid < 0)
        return error_set_errno(err, errno, "unmounting %s: fork", dir);
    if (pid == 0) {
        execlp("fusermount3", "fusermount3", "-u", "-z", dir, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return error_set_errno(err, errno, "unmounting %s: waitpid", dir);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return error_set(err, "unmounting %s: fusermount3 -u -z failed (status %d)", dir,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* True when dir is the root of a mount (its device differs from its
 * parent's). */
static bool is_mount_root(const char *dir, const struct stat *st)
{
    char parent[PATH_MAX];
    struct stat pst;
    if (snprintf(parent, sizeof(parent), "%s/..", dir) >= (int)sizeof(parent))
        return false;
    return stat(parent, &pst) == 0 && (pst.st_dev != st->st_dev || pst.st_ino == st->st_ino);
}

bool mountpoint_busy(const char *dir)
{
    struct stat st;
    struct statfs fs;
    return stat(dir, &st) == 0 && statfs(dir, &fs) == 0 && fs.f_type == FUSE_SUPER_MAGIC &&
           is_mount_root(dir, &st);
}

int mountpoint_prepare(const char *dir, bool clear_stale, struct error *err)
{
    struct stat st;
    if (stat(dir, &st) < 0) {
        int e = errno;
        if (e == ENOENT)
            return mkdir_p(dir, 0755, err);
        if (e != ENOTCONN)
            return error_set_errno(err, e, "mount point %s", dir);
        if (!clear_stale)
            return error_set(err,
                             "mount point %s: a stale FUSE mount is left there by a fakehw that "
                             "is gone (Transport endpoint is not connected); clear it with "
                             "`fusermount3 -u -z %s` (or `umount -l %s`), or start fakehw with "
                             "--clear-stale",
                             dir, dir, dir);
        LOG_W("mount point %s: clearing a stale FUSE mount (--clear-stale)", dir);
        if (mountpoint_detach(dir, err) < 0)
            return error_prefix(err, "clearing the stale mount");
        if (stat(dir, &st) < 0)
            return error_set_errno(err, errno, "mount point %s after clearing the stale mount",
                                   dir);
    }
    if (!S_ISDIR(st.st_mode))
        return error_set(err, "mount point %s is not a directory", dir);
    if (mountpoint_busy(dir))
        return error_set(err,
                         "mount point %s already has a FUSE filesystem mounted (another fakehw "
                         "running?); stop it, or unmount it with `fusermount3 -u %s`",
                         dir, dir);
    return 0;
}
