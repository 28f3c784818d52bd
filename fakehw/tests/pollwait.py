#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Waits on a fakehw generation file the way the driver does: open, read,
poll(2) for POLLIN|POLLPRI, read again.  No busy polling.

  pollwait.py wait GENERATION_FILE TIMEOUT_S READY_FILE
      Reads the counter, creates READY_FILE, polls; prints
      "woke OLD NEW" (exit 0) or "timeout OLD" (exit 1).
  pollwait.py latency MOUNT DEVICE ROUNDS
      A waiter thread polls while the main thread flips DEVICE by writing its
      health file; prints "median_ms MAX_MS" over ROUNDS flips.
"""
import os
import select
import statistics
import sys
import threading
import time

MASK = select.POLLIN | select.POLLPRI


def read_gen(fd):
    return int(os.pread(fd, 64, 0))


def wait(path, timeout_s, ready):
    fd = os.open(path, os.O_RDONLY)
    old = read_gen(fd)
    p = select.poll()
    p.register(fd, MASK)
    with open(ready, "w") as f:
        f.write("%d\n" % old)
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not p.poll(left * 1000):
            print("timeout %d" % old)
            return 1
        new = read_gen(fd)
        if new != old:
            print("woke %d %d" % (old, new))
            return 0
        # A wake without a change is the busy-polling bug this guards against.
        print("spurious wake at %d" % old)
        return 2


def latency(mount, device, rounds):
    fd = os.open(os.path.join(mount, "generation"), os.O_RDONLY)
    health = os.path.join(mount, "devices", device, "health")
    p = select.poll()
    p.register(fd, MASK)
    samples = []
    for i in range(rounds):
        old = read_gen(fd)
        woke = {}

        def waiter():
            if p.poll(5000):
                woke["t"] = time.monotonic()

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.05)  # let the waiter block in poll first
        t0 = time.monotonic()
        with open(health, "w") as f:
            f.write("unhealthy round %d\n" % i if i % 2 == 0 else "healthy\n")
        t.join()
        if "t" not in woke or read_gen(fd) == old:
            print("no wake in round %d" % i)
            return 1
        samples.append((woke["t"] - t0) * 1000)
    print("%.2f %.2f" % (statistics.median(samples), max(samples)))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "wait":
        sys.exit(wait(sys.argv[2], float(sys.argv[3]), sys.argv[4]))
    sys.exit(latency(sys.argv[2], sys.argv[3], int(sys.argv[4])))
