#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Mounts a FUSE filesystem whose daemon is already gone, on the given
directory: the kernel answers every access with ENOTCONN, as it does after
the fakehw daemon was killed.  Needs root and /dev/fuse."""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/fuse", os.O_RDWR)
opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0".encode()
if libc.mount(b"fakehw-dead", sys.argv[1].encode(), b"fuse", 0, opts) != 0:
    err = ctypes.get_errno()
    sys.exit(f"mount {sys.argv[1]}: {os.strerror(err)}")
os.close(fd)  # no daemon behind the mount any more
