#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A fake kubelet PodResources server (v1 List and Get) for the tests of
fakehw-podresources: python3-grpcio with raw bytes, no generated code, so
the messages are encoded here from the field numbers of the kubelet's
api.proto, independently of our .proto file and C code.

  fake_podresources.py SOCKET PODS_JSON

PODS_JSON is a list of pods:
  [{"namespace": "ns", "name": "p", "containers": [{"name": "c",
    "devices": [{"resource": "example.com/x", "ids": ["a"]}],
    "claims": [{"namespace": "ns", "name": "claim", "resources": [
      {"driver": "d", "pool": "p", "device": "gpu-0", "shareID": "...",
       "cdi": ["k8s.d/gpu=x"]}]}]}]}]
Get answers NOT_FOUND for an unknown pod, like the kubelet.  Prints
"listening" once the socket is up; SIGTERM stops it.
"""
import json
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests"))
from protowire import LEN, field, parse  # noqa: E402


def claim_resource(r):
    out = b"".join(field(1, field(1, name)) for name in r.get("cdi", []))
    out += field(2, r["driver"]) + field(3, r["pool"]) + field(4, r["device"])
    if "shareID" in r:
        out += field(5, r["shareID"])
    return out


def dynamic_resource(c):
    # Field 1 (the class name) was removed upstream: never sent.
    out = field(2, c["name"]) + field(3, c["namespace"])
    return out + b"".join(field(4, claim_resource(r)) for r in c.get("resources", []))


def container(c):
    out = field(1, c["name"])
    for d in c.get("devices", []):
        out += field(2, field(1, d["resource"]) + b"".join(field(2, i) for i in d["ids"]))
    return out + b"".join(field(5, dynamic_resource(k)) for k in c.get("claims", []))


def pod(p):
    out = field(1, p["name"]) + field(2, p["namespace"])
    return out + b"".join(field(3, container(c)) for c in p.get("containers", []))


def parse_fields(data):
    """{field number: string} of a message of string fields."""
    out = {}
    for num, wt, v in parse(data):
        if wt != LEN:
            raise ValueError("unexpected wire type %d" % wt)
        out[num] = v.decode()
    return out


def main():
    sock, pods_file = sys.argv[1], sys.argv[2]
    with open(pods_file) as f:
        pods = json.load(f)

    def list_pods(request, context):
        if request:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "List takes an empty request")
        return b"".join(field(1, pod(p)) for p in pods)

    def get_pod(request, context):
        want = parse_fields(request)
        for p in pods:
            if p["name"] == want.get(1) and p["namespace"] == want.get(2):
                return field(1, pod(p))
        context.abort(grpc.StatusCode.NOT_FOUND,
                      "pod %s not found in %s" % (want.get(1), want.get(2)))

    ident = lambda b: b  # noqa: E731
    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(list_pods, ident, ident),
        "Get": grpc.unary_unary_rpc_method_handler(get_pod, ident, ident),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + sock)
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("listening", flush=True)
    stop.wait()
    server.stop(0)


if __name__ == "__main__":
    main()
