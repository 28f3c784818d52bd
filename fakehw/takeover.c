// SPDX-License-Identifier: Apache-2.0
/* Waiting for the predecessor's mount to go: see takeover.h. */
#include "takeover.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "log.h"
#include "monotonic.h"
#include "mountpoint.h"

int takeover_wait(const char *dir, long timeout_s, const sigset_t *stop, int *sig,
                  struct error *err)
{
    if (!mountpoint_busy(dir))
        return 0;
    LOG_I("mount point %s: another fakehw serves it; waiting up to %ld s for it to unmount "
          "(--takeover-timeout)",
          dir, timeout_s);
    int64_t start = monotonic_ms();
    int64_t deadline = start + (int64_t)timeout_s * 1000;
    for (;;) {
        /* Sleeping in sigtimedwait: a SIGTERM ends the wait at once. */
        struct timespec tick = {.tv_sec = 0, .tv_nsec = TAKEOVER_POLL_MS * 1000000L};
        int s = sigtimedwait(stop, NULL, &tick);
        if (s > 0) {
            *sig = s;
            return TAKEOVER_STOPPED;
        }
        if (s < 0 && errno != EAGAIN && errno != EINTR)
            return error_set_errno(err, errno, "waiting for the mount point %s", dir);
        if (!mountpoint_busy(dir)) {
            LOG_I("mount point %s: the other fakehw unmounted after %lld ms; taking over", dir,
                  (long long)(monotonic_ms() - start));
            return 0;
        }
        if (monotonic_ms() >= deadline)
            return error_set(err,
                             "mount point %s: another fakehw still serves it after %ld s "
                             "(--takeover-timeout); stop it, or unmount it with `fusermount3 "
                             "-u %s`",
                             dir, timeout_s, dir);
    }
}
