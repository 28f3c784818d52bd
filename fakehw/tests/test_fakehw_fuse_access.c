// SPDX-License-Identifier: Apache-2.0
/* Unit tests for what fakehw says when the FUSE mount fails: a missing
 * device and a permission problem each get their own advice, read from a
 * real open of the device path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_access.h"
#include "common/tests/as_nobody.h"
#include "common/tests/test_main.h"

static void test_advice(void **state)
{
    (void)state;
    assert_non_null(strstr(fuse_mount_advice(ENOENT, true), "there is no FUSE device"));
    assert_non_null(strstr(fuse_mount_advice(ENODEV, true), "modprobe fuse"));
    assert_non_null(strstr(fuse_mount_advice(EACCES, true), "a permission problem"));
    assert_non_null(strstr(fuse_mount_advice(EPERM, false), "CAP_SYS_ADMIN"));
    assert_null(strstr(fuse_mount_advice(EACCES, true), "no FUSE device"));
    assert_non_null(strstr(fuse_mount_advice(0, false), "a permission problem"));
    assert_non_null(strstr(fuse_mount_advice(0, true), "the mount itself was refused"));
    assert_non_null(strstr(fuse_mount_advice(EIO, true), "libfuse message"));
}

static void test_diagnose_missing(void **state)
{
    (void)state;
    char buf[512];
    fuse_mount_diagnose("/nonexistent/fuse", buf, sizeof(buf));
    assert_non_null(strstr(buf, "opening /nonexistent/fuse: No such file or directory: there is "
                                "no FUSE device"));
}

static bool diagnose(void *path, char *buf, size_t size)
{
    fuse_mount_diagnose(path, buf, size);
    return true;
}

/* A device this process may not open: as root, a child that became nobody
 * opens a file of mode 0600. */
static void test_diagnose_permission(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char path[] = "/tmp/test_fuse_access.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(chmod(path, 0600), 0);
    char buf[512];
    bool told = run_as_nobody(diagnose, path, buf, sizeof(buf));
    unlink(path);
    assert_true(told);
    assert_non_null(strstr(buf, ": Permission denied: a permission problem, not a missing device"));
}

TEST_MAIN("fuse_access", test_advice, test_diagnose_missing, test_diagnose_permission)
