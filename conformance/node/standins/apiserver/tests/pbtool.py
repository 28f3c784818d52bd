#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Kubernetes protobuf bodies for the stand-in's tests, made and read with
protoc from the upstream generated.proto files, independently of the
stand-in's own encoder:

  pbtool.py encode KIND APIVERSION MESSAGE   text format on stdin -> "k8s\\0" + runtime.Unknown
  pbtool.py decode MESSAGE                   enveloped body on stdin -> "kind=K apiVersion=V" + text
  pbtool.py frames MESSAGE                   a watch stream on stdin -> per event "type=T" + text

MESSAGE is a full protobuf name ("k8s.io.api.resource.v1.ResourceSlice").
The .proto tree is $K8SPROTO_SRC."""
import os
import subprocess
import sys

MAGIC = b"k8s\x00"
FILES = {
    "k8s.io.api.core.v1": "k8s.io/api/core/v1/generated.proto",
    "k8s.io.api.coordination.v1": "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io.api.resource.v1": "k8s.io/api/resource/v1/generated.proto",
    "k8s.io.apimachinery.pkg.apis.meta.v1": "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
}


def proto_file(message):
    return FILES[message.rsplit(".", 1)[0]]


def protoc(mode, message, data):
    src = os.environ["K8SPROTO_SRC"]
    r = subprocess.run(
        ["protoc", f"--proto_path={src}", f"--{mode}={message}", proto_file(message)],
        input=data, capture_output=True, check=False)
    if r.returncode != 0:
        sys.exit(f"protoc --{mode}={message}: {r.stderr.decode()}")
    return r.stdout


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def read_varint(b, i):
    r = shift = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return r, i


def fields(b):
    """(number, payload) of every length-delimited field of a message."""
    i = 0
    while i < len(b):
        tag, i = read_varint(b, i)
        if tag & 7 == 0:
            _, i = read_varint(b, i)
            continue
        if tag & 7 != 2:
            sys.exit(f"unexpected wire type {tag & 7}")
        n, i = read_varint(b, i)
        yield tag >> 3, b[i:i + n]
        i += n


def unwrap(body):
    if body[:4] != MAGIC:
        sys.exit(f"no k8s\\0 magic: {body[:8]!r}")
    type_meta, raw = b"", b""
    for num, payload in fields(body[4:]):
        if num == 1:
            type_meta = payload
        elif num == 2:
            raw = payload
    meta = dict(fields(type_meta))
    return meta.get(2, b"").decode(), meta.get(1, b"").decode(), raw


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    data = sys.stdin.buffer.read()
    out = sys.stdout.buffer
    if cmd == "encode" and len(sys.argv) == 5:
        kind, api_version, message = sys.argv[2:]
        raw = protoc("encode", message, data)
        type_meta = field(1, api_version.encode()) + field(2, kind.encode())
        out.write(MAGIC + field(1, type_meta) + field(2, raw) + field(3, b"") + field(4, b""))
    elif cmd == "decode" and len(sys.argv) == 3:
        kind, api_version, raw = unwrap(data)
        out.write(f"kind={kind} apiVersion={api_version}\n".encode())
        out.write(protoc("decode", sys.argv[2], raw))
    elif cmd == "frames" and len(sys.argv) == 3:
        i = 0
        while i < len(data):
            n = int.from_bytes(data[i:i + 4], "big")
            event = dict(fields(data[i + 4:i + 4 + n]))
            i += 4 + n
            obj = dict(fields(event[2]))[1]
            kind, _, raw = unwrap(obj)
            message = sys.argv[2] if kind != "Status" else "k8s.io.apimachinery.pkg.apis.meta.v1.Status"
            out.write(f"type={event[1].decode()} kind={kind}\n".encode())
            out.write(protoc("decode", message, raw))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
