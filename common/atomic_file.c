// SPDX-License-Identifier: Apache-2.0
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fsync_dir(const char *dir, struct error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "opening directory %s", dir);
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    if (rc < 0)
        return error_set_errno(err, saved, "fsync of directory %s", dir);
    return 0;
}

static int fsync_dir_of(const char *path, struct error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    return fsync_dir(dir, err);
}

static int replace_file(const char *path, const void *data, size_t len, mode_t mode, bool durable,
                        struct error *err)
{
    char tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.XXXXXX", dirlen, path, base) >= (int)sizeof(tmp))
        return error_set(err, "path too long: %s", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "creating temporary file for %s", path);
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            error_set_errno(err, errno, "writing %s", tmp);
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fchmod(fd, mode) < 0) {
        error_set_errno(err, errno, "chmod %s", tmp);
        goto fail;
    }
    if (durable && fsync(fd) < 0) {
        error_set_errno(err, errno, "fsync %s", tmp);
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        error_set_errno(err, errno, "closing %s", tmp);
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        error_set_errno(err, errno, "renaming %s to %s", tmp, path);
        goto fail;
    }
    return durable ? fsync_dir_of(path, err) : 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

int atomic_write_file(const char *path, const void *data, size_t len, mode_t mode,
                      struct error *err)
{
    return replace_file(path, data, len, mode, true, err);
}

int atomic_write_file_nosync(const char *path, const void *data, size_t len, mode_t mode,
                             struct error *err)
{
    return replace_file(path, data, len, mode, false, err);
}

/* Creates buf (a writable copy of the path) and, when its parent is
 * missing, the parent first: one mkdir in the common case. */
static int make_dirs(char *buf, mode_t mode, struct error *err)
{
    if (mkdir(buf, mode) == 0 || errno == EEXIST)
        return 0;
    char *slash = strrchr(buf, '/');
    if (errno != ENOENT || slash == NULL || slash == buf)
        return error_set_errno(err, errno, "creating directory %s", buf);
    *slash = '\0';
    int rc = make_dirs(buf, mode, err);
    *slash = '/';
    if (rc < 0)
        return -1;
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return error_set_errno(err, errno, "creating directory %s", buf);
    return 0;
}

int mkdir_p(const char *path, mode_t mode, struct error *err)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return error_set(err, "path too long: %s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    if (make_dirs(buf, mode, err) < 0)
        return -1;
    struct stat st;
    if (stat(path, &st) < 0)
        return error_set_errno(err, errno, "stat %s", path);
    if (!S_ISDIR(st.st_mode))
        return error_set(err, "%s exists and is not a directory", path);
    return 0;
}
