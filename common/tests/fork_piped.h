// SPDX-License-Identifier: Apache-2.0
/* For the unit tests: a child process joined to the test by a pipe.
 * Include after <cmocka.h>. */
#ifndef FAKEHW_TESTS_FORK_PIPED_H
#define FAKEHW_TESTS_FORK_PIPED_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* Forks with a pipe fds between the two: the child keeps fds[child_end],
 * the parent the other end, each side's unused end is closed.  stdio is
 * flushed first, so nothing buffered is written twice.  Returns fork's
 * pid: 0 in the child. */
static inline pid_t fork_piped(int fds[2], int child_end)
{
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    close(fds[pid == 0 ? 1 - child_end : child_end]);
    return pid;
}

#endif
