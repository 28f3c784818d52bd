#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that fakehw's snapshot file is one consistent generation while
health flips happen, however it is read.

  snapshot_check.py MOUNT CHANGES CHUNK

A child process makes CHANGES health changes, one write each, round robin
over the devices (all healthy at generation 1): change i toggles device
(i - 1) % K, with the reason "step i" when it turns unhealthy.  Meanwhile
the parent opens MOUNT/snapshot again and again, reads it CHUNK bytes per
read(2) (so one pass spans many FUSE requests, and flips), and checks that
the state of every device is what the snapshot's own generation line says
it must be.  Prints "SNAPSHOTS GENERATIONS" (how many were read, how many
distinct generations they showed); exit 1 with the first mismatch.
"""
import os
import sys


def parse(text):
    """The generation and {device: (health, reason)} of a snapshot."""
    lines = text.split("\n")
    if lines[-1] != "" or not lines[-2].startswith("end "):
        raise ValueError("no end line: %r" % lines[-2:])
    lines = lines[:-1]
    key, gen = lines[0].split(" ", 1)
    if key != "generation":
        raise ValueError("line 1 is %r" % lines[0])
    devices, order, current = {}, [], None
    for line in lines[2:-1]:
        key, value = line.split(" ", 1)
        if key == "device":
            current = value
            order.append(value)
            devices[value] = {}
        else:
            devices[current][key] = value
    if int(lines[-1].split(" ", 1)[1]) != len(order):
        raise ValueError("end line %r for %d devices" % (lines[-1], len(order)))
    return int(gen), order, devices


def expected(order, gen):
    """What every device must show after gen - 1 changes."""
    k, n = gen - 1, len(order)
    want = {}
    for d, name in enumerate(order):
        toggles = (k - d - 1) // n + 1 if k > d else 0
        if toggles % 2:
            want[name] = ("unhealthy", "step %d" % (d + 1 + (toggles - 1) * n))
        else:
            want[name] = ("healthy", "")
    return want


def read_snapshot(path, chunk):
    fd = os.open(path, os.O_RDONLY)
    parts = []
    try:
        while True:
            b = os.read(fd, chunk)
            if not b:
                break
            parts.append(b)
    finally:
        os.close(fd)
    return b"".join(parts).decode()


def flip(mount, order, changes):
    n = len(order)
    for i in range(1, changes + 1):
        name = order[(i - 1) % n]
        toggles = (i - 1) // n + 1  # this device's toggles so far, this one included
        cmd = "unhealthy step %d" % i if toggles % 2 else "healthy"
        fd = os.open("%s/devices/%s/health" % (mount, name), os.O_WRONLY)
        os.write(fd, cmd.encode())
        os.close(fd)


def main():
    mount, changes, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    path = mount + "/snapshot"
    gen, order, _ = parse(read_snapshot(path, 1 << 20))
    if gen != 1:
        print("the mount must start at generation 1, it is at %d" % gen)
        return 1
    child = os.fork()
    if child == 0:
        try:
            flip(mount, order, changes)
        finally:
            os._exit(0)
    seen, reads, done = set(), 0, False
    while not done:
        done = os.waitpid(child, os.WNOHANG)[0] != 0
        gen, _, devices = parse(read_snapshot(path, chunk))
        reads += 1
        seen.add(gen)
        for name, (health, reason) in expected(order, gen).items():
            got = (devices[name]["health"], devices[name]["healthReason"])
            if got != (health, reason):
                print("generation %d: %s is %r, must be %r" % (gen, name, got, (health, reason)))
                return 1
    if max(seen) != 1 + changes:
        print("last snapshot at generation %d, want %d" % (max(seen), 1 + changes))
        return 1
    print(reads, len(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
