// SPDX-License-Identifier: Apache-2.0
#include "owned_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

int owned_link_error(int dirfd, const char *name, const char *path, struct error *err)
{
    char target[PATH_MAX];
    ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
    if (n < 0)
        snprintf(target, sizeof(target), "?");
    else
        target[n] = '\0';
    return error_set(err,
                     "%s is a symbolic link (to %s); the plugin does not follow links in its own "
                     "directories: remove it",
                     path, target);
}

int owned_open_dir(int dirfd, const char *name, const char *path, struct error *err)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    int e = errno;
    struct stat sb;
    if ((e == ELOOP || e == ENOTDIR) && fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode))
        return owned_link_error(dirfd, name, path, err);
    return error_set_errno(err, e, "opening directory %s", path);
}

/* Writes data to fd and closes it.  0, or -1 with err (fd closed). */
static int fill_and_close(int fd, const char *path, const char *data, size_t len, mode_t mode,
                          struct error *err)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            error_set_errno(err, errno, "writing %s", path);
            close(fd);
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    if (umask_strips(mode) && fchmod(fd, mode) < 0) {
        error_set_errno(err, errno, "chmod %s", path);
        close(fd);
        return -1;
    }
    if (close(fd) < 0)
        return error_set_errno(err, errno, "closing %s", path);
    return 0;
}

/* Writes data to name in dirfd through a temporary file and a rename, which
 * replaces whatever name is (a planted link included) without following it. */
static int write_at(int dirfd, const char *name, const char *path, const char *data, size_t len,
                    mode_t mode, struct error *err)
{
    static atomic_uint seq; /* unique names within the process; a leftover is skipped */
    char tmp[NAME_MAX + 1];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        unsigned r = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed) + 1;
        if (snprintf(tmp, sizeof(tmp), ".%.200s.tmp.%d.%u", name, (int)getpid(), r) >=
            (int)sizeof(tmp))
            return error_set(err, "file name too long: %s", path);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            return error_set_errno(err, errno, "creating a temporary file for %s", path);
    }
    if (fd < 0)
        return error_set(err, "creating a temporary file for %s: all names taken", path);
    int rc = fill_and_close(fd, path, data, len, mode, err);
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = error_set_errno(err, errno, "renaming a temporary file to %s", path);
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

/* Writes data to name in a directory made just now, which no one reads yet:
 * in place, one directory operation fewer than write_at.  A crash halfway
 * leaves a part of a file whose directory no checkpoint line owns (the
 * line comes after the files), so the next start removes it. */
static int write_new_at(int dirfd, const char *name, const char *path, const char *data, size_t len,
                        mode_t mode, struct error *err)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return error_set_errno(err, errno, "creating %s", path);
    if (fill_and_close(fd, path, data, len, mode, err) < 0) {
        unlinkat(dirfd, name, 0);
        return -1;
    }
    return 0;
}

int owned_write_file(const char *root, const char *rel, const char *data, size_t len, mode_t mode,
                     struct error *err)
{
    char path[PATH_MAX], part[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path) ||
        snprintf(part, sizeof(part), "%s", rel) >= (int)sizeof(part))
        return error_set(err, "path %s/%s is too long", root, rel);
    /* The root's parent is the plugin directory, which exists. */
    if (mkdir(root, 0755) < 0 && errno != EEXIST)
        return error_set_errno(err, errno, "creating directory %s", root);
    int dfd = owned_open_dir(AT_FDCWD, root, root, err);
    if (dfd < 0)
        return -1;
    char *name = part, *slash;
    int rc = 0;
    /* Each directory level: create it if missing, then open it without
     * following a link. */
    bool fresh = false; /* the file's directory was made just now */
    while (rc == 0 && (slash = strchr(name, '/')) != NULL) {
        *slash = '\0';
        char shown[PATH_MAX];
        snprintf(shown, sizeof(shown), "%s/%.*s", root, (int)(slash - part), rel);
        fresh = mkdirat(dfd, name, 0755) == 0;
        if (!fresh && errno != EEXIST) {
            rc = error_set_errno(err, errno, "creating directory %s", shown);
            break;
        }
        int next = owned_open_dir(dfd, name, shown, err);
        close(dfd);
        dfd = next;
        if (dfd < 0)
            return -1;
        name = slash + 1;
    }
    if (rc == 0)
        rc = fresh ? write_new_at(dfd, name, path, data, len, mode, err)
                   : write_at(dfd, name, path, data, len, mode, err);
    close(dfd);
    return rc;
}
