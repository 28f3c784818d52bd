#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile requests against the plugin's DRA socket, with raw bytes.

Usage: hostile_requests.py DRA_SOCKET CHECK
CHECK is one of:
  nul-uid       a uid "<uid>\\0junk" is refused INVALID_ARGUMENT naming the
                claim field, never prepared as "<uid>"
  claim-limit   more claims than the per-request limit are refused naming the
                limit; exactly the limit is served
  streams       open health streams up to their budget: a prepare still gets
                through; one stream more is RESOURCE_EXHAUSTED
  unary-limit   with the server's one worker held by a slow prepare, unary
                calls up to their budget queue; one more is RESOURCE_EXHAUSTED
                at once (the server must run with --workers 1; kill it after)
  no-message    a unary call (the client's stream_unary) half-closed without a
                request message is INVALID_ARGUMENT naming that, a health
                stream too; an empty message is a request with no claims
The server must be grpc-test-server (fake prepare).
"""
import os
import sys
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire_check import claim, decode_prepare, check  # noqa: E402

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
WATCH = "/v1alpha1.DRAResourceHealth/NodeWatchResources"
CLAIM_LIMIT = 1024
STREAM_LIMIT = 256
UNARY_LIMIT = 256


def call(ch, req, timeout=20):
    return ch.unary_unary(PREPARE)(req, timeout=timeout)


def refused(ch, req):
    try:
        call(ch, req)
    except grpc.RpcError as e:
        return e.code(), e.details()
    return None, None


def nul_uid(ch):
    code, details = refused(ch, claim("ns", "uid-1\0junk", "c1"))
    check(code == grpc.StatusCode.INVALID_ARGUMENT,
          f"a uid with a NUL byte is refused INVALID_ARGUMENT ({code})")
    check(details is not None and 'claims[0].uid "uid-1" has a NUL byte at byte 5 of 10' in details,
          f"the error names the claim and the field: {details}")
    code, details = refused(ch, claim("ns", "u2", "c2") + claim("n\0s", "u3", "c3"))
    check(code == grpc.StatusCode.INVALID_ARGUMENT and "claims[1].namespace" in details,
          f"a NUL in the second claim's namespace is named: {details}")
    ok = decode_prepare(call(ch, claim("ns", "uid-1", "c1")), "v1")
    check(list(ok) == ["uid-1"], "the same claim without the NUL is prepared")


def claim_limit(ch):
    over = b"".join(claim("ns", f"u{i}", f"c{i}") for i in range(CLAIM_LIMIT + 1))
    code, details = refused(ch, over)
    check(code == grpc.StatusCode.INVALID_ARGUMENT,
          f"{CLAIM_LIMIT + 1} claims are refused INVALID_ARGUMENT ({code})")
    check(details is not None and f"the limit is {CLAIM_LIMIT}" in details,
          f"the error names the limit: {details}")
    at = b"".join(claim("ns", f"u{i % 512}", "") for i in range(CLAIM_LIMIT))
    res = decode_prepare(call(ch, at), "v1")
    check(len(res) == 512 and all("name is empty" in r["error"] for r in res.values()),
          f"{CLAIM_LIMIT} claims (512 distinct, all without a name) are answered once each")


def streams(ch):
    calls = []
    for _ in range(STREAM_LIMIT):
        calls.append(ch.unary_stream(WATCH)(b"", timeout=30))
    for c in calls:  # every stream is open once its first message came
        next(c)
    check(True, f"{STREAM_LIMIT} health streams open")
    res = decode_prepare(call(ch, claim("ns", "u1", "c1")), "v1")
    check(res["u1"]["error"] == "", "a prepare still gets through with every stream slot taken")
    extra = ch.unary_stream(WATCH)(b"", timeout=10)
    try:
        next(extra)
        check(False, "one stream more is refused")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
              f"too many streams open (limit {STREAM_LIMIT})" in e.details(),
              f"one stream more is RESOURCE_EXHAUSTED naming the limit: {e.details()}")
    for c in calls:
        c.cancel()


def unary_limit(ch):
    # Three slow claims hold the one worker for 4.5 s, long enough for every
    # call to arrive; the calls behind it wait in the queue and count.
    slow = b"".join(claim("ns", f"u-slow{i}", f"slow-{i}") for i in range(3))
    calls = [ch.unary_unary(PREPARE).future(slow, timeout=60) for _ in range(UNARY_LIMIT + 1)]
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and not any(c.done() for c in calls):
        time.sleep(0.01)
    time.sleep(0.2)  # a second refusal, were there one, would come now
    done = [c for c in calls if c.done()]
    check(len(done) == 1, f"one call of {UNARY_LIMIT + 1} ended at once ({len(done)})")
    e = done[0].exception()
    check(e is not None and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
          e.details() == f"too many calls in progress (limit {UNARY_LIMIT})",
          f"it is RESOURCE_EXHAUSTED naming the limit: {e and e.details()}")
    for c in calls:
        c.cancel()


def no_message(ch):
    half_closed = "the client half-closed without sending a request message"
    for path in (PREPARE, UNPREPARE):
        try:
            ch.stream_unary(path)(iter([]), timeout=10)
            check(False, f"{path}: a call without a request message fails")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details() == half_closed,
                  f"{path}: no request message is INVALID_ARGUMENT ({e.code()}: {e.details()})")
    try:
        next(ch.stream_stream(WATCH)(iter([]), timeout=10))
        check(False, "a health stream without a request message fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details() == half_closed,
              f"a health stream without a request message is INVALID_ARGUMENT ({e.details()})")
    check(call(ch, b"") == b"", "an empty prepare request is answered OK with an empty map")
    check(ch.unary_unary(UNPREPARE)(b"", timeout=10) == b"",
          "an empty unprepare request is answered OK with an empty map")
    res = decode_prepare(call(ch, claim("ns", "u1", "c1")), "v1")
    check(res["u1"]["error"] == "", "the server still serves a prepare afterwards")


def main():
    sock, what = sys.argv[1:3]
    ch = grpc.insecure_channel("unix:" + sock,
                               options=[("grpc.max_send_message_length", 64 << 20)])
    {"nul-uid": nul_uid, "claim-limit": claim_limit, "streams": streams,
     "no-message": no_message, "unary-limit": unary_limit}[what](ch)
    ch.close()
    print(f"{what} passed")


if __name__ == "__main__":
    main()
