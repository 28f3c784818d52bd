// SPDX-License-Identifier: Apache-2.0
#include "serialize_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "owned_files.h"

int serialize_lock_acquire(const char *path, struct error *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ELOOP)
        return owned_link_error(AT_FDCWD, path, path, err);
    if (fd < 0)
        return error_set_errno(err, errno, "opening %s", path);
    int rc;
    do
        rc = flock(fd, LOCK_EX);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        error_set_errno(err, errno, "locking %s", path);
        close(fd);
        return -1;
    }
    return fd;
}

void serialize_lock_release(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the lock */
}
