// SPDX-License-Identifier: Apache-2.0
#include "atomic_file.h"

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

#include "cleanup.h"

int fsync_dir(const char *dir, struct error *err)
{
    cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "opening directory %s", dir);
    if (fsync(fd) < 0)
        return error_set_errno(err, errno, "fsync of directory %s", dir);
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

/* The umask the process started with: files are created with their final
 * mode, and a chmod follows only when the umask takes bits away.  Read
 * before main, while there is one thread (umask() cannot only read it). */
static mode_t start_umask = 077;
__attribute__((constructor)) static void read_umask(void)
{
    start_umask = umask(022);
    umask(start_umask);
}

bool umask_strips(mode_t mode)
{
    return (mode & start_umask) != 0;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Data and mode of a file just created with mode (less the umask). */
static int fill(int fd, const char *name, const void *data, size_t len, mode_t mode,
                struct error *err)
{
    if (write_all(fd, data, len) < 0)
        return error_set_errno(err, errno, "writing %s", name);
    if (umask_strips(mode) && fchmod(fd, mode) < 0)
        return error_set_errno(err, errno, "chmod %s", name);
    return 0;
}

/* Creates the temporary file of path, ".<base>.tmp.<pid>.<n>" next to it. */
static int open_temp(const char *path, mode_t mode, char *tmp, size_t size, struct error *err)
{
    static atomic_uint seq; /* unique within the process; a leftover name is skipped */
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    for (int tries = 0; tries < 8; tries++) {
        unsigned n = atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed) + 1;
        if (snprintf(tmp, size, "%.*s.%s.tmp.%d.%u", dirlen, path, base, (int)getpid(), n) >=
            (int)size)
            return error_set(err, "path too long: %s", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd
                           : error_set_errno(err, errno, "creating temporary file for %s", path);
    }
    return error_set(err, "creating temporary file for %s: all names taken", path);
}

/* Writes, syncs and closes the temporary file fd, which it takes: closed
 * here either way. */
static int finish_temp(int taken, const char *tmp, const void *data, size_t len, mode_t mode,
                       bool durable, struct error *err)
{
    cleanup_close int fd = taken;
    if (fill(fd, tmp, data, len, mode, err) < 0)
        return -1;
    if (durable && fsync(fd) < 0)
        return error_set_errno(err, errno, "fsync %s", tmp);
    if (close(steal_fd(&fd)) < 0)
        return error_set_errno(err, errno, "closing %s", tmp);
    return 0;
}

static int replace_file(const char *path, const void *data, size_t len, mode_t mode, bool durable,
                        struct error *err)
{
    char tmp[PATH_MAX];
    int fd = open_temp(path, mode, tmp, sizeof(tmp), err);
    if (fd < 0)
        return -1;
    if (finish_temp(fd, tmp, data, len, mode, durable, err) < 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        error_set_errno(err, errno, "renaming %s to %s", tmp, path);
        unlink(tmp);
        return -1;
    }
    return durable ? fsync_dir_of(path, err) : 0;
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

int atomic_create_file_quiet(const char *path, const void *data, size_t len, mode_t mode,
                             struct error *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL ||
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
        return atomic_write_file_nosync(path, data, len, mode, err);
    cleanup_close int fd = open(dir[0] ? dir : "/", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0) /* no O_TMPFILE here (EOPNOTSUPP, EISDIR), or a real error, reported there */
        return atomic_write_file_nosync(path, data, len, mode, err);
    if (fill(fd, path, data, len, mode, err) < 0)
        return -1;
    /* linkat of the descriptor itself needs CAP_DAC_READ_SEARCH; through
     * /proc it does not. */
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    int e = errno;
    if (e == EEXIST || e == ENOENT) /* replace it; or no /proc */
        return atomic_write_file_nosync(path, data, len, mode, err);
    return error_set_errno(err, e, "creating %s", path);
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
