#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Calls on the plugin's DRA socket with a raw HTTP/2 client, to see frames.

grpcio hides how an answer is framed and written; this client speaks HTTP/2
itself (the standard library only), notes in which read() from the socket
each frame arrived, and checks:

  one-write    a unary answer (NodePrepareResources, also one whose handler
               takes FAKE_PREPARE_SLOW_MS, and NodeUnprepareResources) comes
               in one write: its response HEADERS, DATA and trailers arrive
               in the same read, and the answer decodes; the server sends
               no PING of its own (a bandwidth-delay probe the client would
               have to answer in the middle of every call)
  no-message   a registered unary call half-closed without a request message
               is INVALID_ARGUMENT "the client half-closed without sending a
               request message"; an empty one is a prepare of no claims; an
               unknown method is UNIMPLEMENTED, with or without a message
  stream       a health stream gets its response HEADERS before the first
               message, and the first message within a few seconds

Usage: h2_calls.py DRA_SOCKET CHECK...
The server must be grpc-test-server (fake prepare).
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire_check import claim, decode_prepare, check, require, run  # noqa: E402

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
WATCH = "/v1.DRAResourceHealth/NodeWatchResources"

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, CONTINUATION = 0, 1, 3, 4, 6, 7, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# RFC 7541 appendix A.
STATIC_TABLE = [
    (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"),
    (":path", "/index.html"), (":scheme", "http"), (":scheme", "https"), (":status", "200"),
    (":status", "204"), (":status", "206"), (":status", "304"), (":status", "400"),
    (":status", "404"), (":status", "500"), ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""),
    ("accept", ""), ("access-control-allow-origin", ""), ("age", ""), ("allow", ""),
    ("authorization", ""), ("cache-control", ""), ("content-disposition", ""),
    ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
    ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""),
    ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
    ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
    ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""),
    ("max-forwards", ""), ("proxy-authenticate", ""), ("proxy-authorization", ""),
    ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""), ("server", ""),
    ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
    ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
]


def hpack_int(value, prefix_bits, first_byte):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte | value])
    out = bytearray([first_byte | limit])
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_literal(name, value):
    """Literal header field without indexing, new name, no Huffman coding."""
    out = b"\x00"
    for s in (name.encode(), value.encode()):
        out += hpack_int(len(s), 7, 0) + s
    return out


class HpackDecoder:
    """Enough of RFC 7541 for grpc core's answers; Huffman-coded strings are
    refused (grpc core does not code the headers checked here)."""

    def __init__(self):
        self.dynamic = []

    @staticmethod
    def _int(buf, i, prefix_bits):
        limit = (1 << prefix_bits) - 1
        value = buf[i] & limit
        i += 1
        if value < limit:
            return value, i
        shift = 0
        while True:
            b = buf[i]
            i += 1
            value += (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value, i

    def _string(self, buf, i):
        huffman = buf[i] & 0x80
        n, i = self._int(buf, i, 7)
        s = bytes(buf[i:i + n])
        require(not huffman, "a Huffman-coded header string (not decoded by this client)")
        return s.decode("latin-1"), i + n

    def _entry(self, index):
        require(index > 0, "HPACK index 0")
        if index <= len(STATIC_TABLE):
            return STATIC_TABLE[index - 1]
        return self.dynamic[index - len(STATIC_TABLE) - 1]

    def decode(self, block):
        headers, i = [], 0
        while i < len(block):
            b = block[i]
            if b & 0x80:  # indexed
                index, i = self._int(block, i, 7)
                headers.append(self._entry(index))
                continue
            if b & 0xE0 == 0x20:  # dynamic table size update
                _, i = self._int(block, i, 5)
                continue
            incremental = b & 0xC0 == 0x40
            index, i = self._int(block, i, 6 if incremental else 4)
            if index:
                name = self._entry(index)[0]
            else:
                name, i = self._string(block, i)
            value, i = self._string(block, i)
            headers.append((name, value))
            if incremental:
                self.dynamic.insert(0, (name, value))
        return headers


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(
        ">I", stream) + payload


def grpc_message(payload):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.buf = b""
        self.reads = 0
        self.hpack = HpackDecoder()
        self.next_stream = 1
        self.streams = {}  # id -> list of (read number, kind, value)
        self.server_pings = 0

    def close(self):
        self.sock.close()

    def open(self, path):
        """Starts a call: its HEADERS, without END_STREAM.  Returns its id."""
        sid = self.next_stream
        self.next_stream += 2
        block = b"\x83\x86"  # :method POST, :scheme http (static table)
        block += hpack_literal(":path", path) + hpack_literal(":authority", "localhost")
        block += hpack_literal("content-type", "application/grpc") + hpack_literal("te", "trailers")
        self.sock.sendall(frame(HEADERS, END_HEADERS, sid, block))
        self.streams[sid] = []
        return sid

    def send(self, sid, payload, end_stream=True):
        self.sock.sendall(frame(DATA, END_STREAM if end_stream else 0, sid, grpc_message(payload)))

    def half_close(self, sid):
        self.sock.sendall(frame(DATA, END_STREAM, sid))

    def _frames(self):
        """The complete frames in the buffer, removed from it."""
        while len(self.buf) >= 9:
            n = struct.unpack(">I", b"\x00" + self.buf[:3])[0]
            if len(self.buf) < 9 + n:
                return
            ftype, flags = self.buf[3], self.buf[4]
            sid = struct.unpack(">I", self.buf[5:9])[0] & 0x7FFFFFFF
            payload = self.buf[9:9 + n]
            self.buf = self.buf[9 + n:]
            yield ftype, flags, sid, payload

    def _on_frame(self, ftype, flags, sid, payload):
        if ftype == SETTINGS and not flags & ACK:
            self.sock.sendall(frame(SETTINGS, ACK, 0))
        elif ftype == PING and not flags & ACK:
            self.server_pings += 1
            self.sock.sendall(frame(PING, ACK, 0, payload))
        elif ftype == GOAWAY:
            raise AssertionError(f"GOAWAY from the server: {payload[8:]!r}")
        elif ftype in (HEADERS, CONTINUATION) and sid in self.streams:
            require(flags & END_HEADERS, "a header block in one frame")
            if flags & PADDED:
                payload = payload[1:len(payload) - payload[0]]
            if flags & PRIORITY:
                payload = payload[5:]
            headers = dict(self.hpack.decode(payload))
            seen = [k for _, k, _ in self.streams[sid]]
            kind = "trailers" if "headers" in seen or flags & END_STREAM else "headers"
            if kind == "trailers" and "headers" not in seen:
                kind = "trailers-only"
            self.streams[sid].append((self.reads, kind, headers))
        elif ftype == DATA and sid in self.streams:
            self.streams[sid].append((self.reads, "data", payload))
            if flags & END_STREAM:
                self.streams[sid].append((self.reads, "end", None))
        elif ftype == RST_STREAM and sid in self.streams:
            self.streams[sid].append((self.reads, "rst", payload))

    def wait(self, sid, done, timeout=10):
        """Reads until done(frames of sid) is true; returns those frames."""
        deadline = time.monotonic() + timeout
        while not done(self.streams[sid]):
            require(time.monotonic() < deadline, f"stream {sid}: {self.streams[sid]}")
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.sock.recv(1 << 20)
            require(chunk, f"the server closed the connection; stream {sid}: {self.streams[sid]}")
            self.reads += 1
            self.buf += chunk
            for f in list(self._frames()):
                self._on_frame(*f)
        return self.streams[sid]


def ended(frames):
    return any(k in ("trailers", "trailers-only", "end", "rst") for _, k, _ in frames)


def status(frames):
    """(grpc-status, grpc-message) of an ended call."""
    for _, kind, value in frames:
        if kind in ("trailers", "trailers-only"):
            return int(value.get("grpc-status", "-1")), value.get("grpc-message", "")
    raise AssertionError(f"no trailers: {frames}")


def unary(conn, path, payload):
    sid = conn.open(path)
    conn.send(sid, payload)
    return conn.wait(sid, ended)


def answer(frames):
    data = b"".join(v for _, k, v in frames if k == "data")
    require(len(data) >= 5 and data[0] == 0, f"one uncompressed gRPC message: {data!r}")
    n = struct.unpack(">I", data[1:5])[0]
    require(len(data) == 5 + n, f"one gRPC message of {n} bytes: {len(data) - 5}")
    return data[5:]


def check_one_write(conn, what, frames):
    kinds = [k for _, k, _ in frames]
    check(kinds == ["headers", "data", "trailers"],
          f"{what}: response HEADERS, DATA, trailers ({kinds})")
    check(status(frames) == (0, ""), f"{what}: grpc-status 0")
    reads = {r for r, _, _ in frames}
    check(len(reads) == 1, f"{what}: all three arrived in one read (read numbers {sorted(reads)})")


def one_write(sock):
    conn = Conn(sock)
    for name in ("c1", "slow-c2"):
        frames = unary(conn, PREPARE, claim("ns", f"u-{name}", name))
        check_one_write(conn, f"prepare of {name}", frames)
        res = decode_prepare(answer(frames), "v1")
        check(list(res) == [f"u-{name}"] and res[f"u-{name}"]["error"] == "",
              f"prepare of {name}: the answer decodes")
    frames = unary(conn, UNPREPARE, claim("ns", "u-c1", "c1"))
    check_one_write(conn, "unprepare (on the poller)", frames)
    # Several calls in flight on one connection: each answer is one write.
    sids = []
    for i in range(8):
        sids.append(conn.open(PREPARE))
        conn.send(sids[-1], claim("ns", f"u{i}", f"c{i}"))
    for sid in sids:
        check_one_write(conn, f"prepare {sid} of 8 in flight", conn.wait(sid, ended))
    check(conn.server_pings == 0, f"no PING from the server ({conn.server_pings} seen)")
    conn.close()


def no_message(sock):
    conn = Conn(sock)
    for path in (PREPARE, UNPREPARE):
        sid = conn.open(path)
        conn.half_close(sid)
        code, msg = status(conn.wait(sid, ended))
        check(code == 3 and msg == "the client half-closed without sending a request message",
              f"{path.rsplit('/', 1)[1]} half-closed without a message: INVALID_ARGUMENT ({code} {msg})")
    frames = unary(conn, PREPARE, b"")
    check(status(frames) == (0, "") and answer(frames) == b"",
          "an empty request message is a prepare of no claims: OK, empty answer")
    code, msg = status(unary(conn, PREPARE.replace("NodePrepare", "NodeFrobnicate"), b""))
    check(code == 12 and msg == f"unknown method {PREPARE.replace('NodePrepare', 'NodeFrobnicate')}",
          f"an unknown method is UNIMPLEMENTED ({code} {msg})")
    sid = conn.open("/nope.Service/Nope")
    conn.half_close(sid)
    check(status(conn.wait(sid, ended))[0] == 12,
          "an unknown method half-closed without a message is UNIMPLEMENTED")
    conn.close()


def stream(sock):
    conn = Conn(sock)
    t0 = time.monotonic()
    sid = conn.open(WATCH)
    conn.send(sid, b"")
    frames = conn.wait(sid, lambda f: any(k == "data" for _, k, _ in f), timeout=5)
    elapsed = time.monotonic() - t0
    kinds = [k for _, k, _ in frames]
    check(kinds[:2] == ["headers", "data"] and not ended(frames),
          f"health stream: response HEADERS, then the first message, stream open ({kinds})")
    check(elapsed < 3, f"health stream: first message after {elapsed * 1000:.0f} ms")
    check(b"gpu-0" in answer(frames), "health stream: the first message lists the devices")
    conn.sock.sendall(frame(RST_STREAM, 0, sid, struct.pack(">I", 8)))  # CANCEL
    conn.close()


def main():
    sock, checks = sys.argv[1], sys.argv[2:]
    for what in checks:
        {"one-write": one_write, "no-message": no_message, "stream": stream}[what](sock)
        print(f"{what} passed")


if __name__ == "__main__":
    run(main)
