#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Wire check of the plugin's gRPC services with an independent client.

Uses python3-grpcio with raw bytes (no generated code, no .proto files):
requests are encoded and answers decoded by hand from the field numbers of
the kubelet APIs, so a wrong method path, field number or wire type in our
.proto files or C code shows up here as a failure.

Usage: wire_check.py REGISTRATION_SOCKET DRA_SOCKET DRIVER_NAME
The server must be grpc-test-server (fake prepare) with the health list
"node-a gpu-0 healthy 1700000000" and
"node-a gpu-1 unhealthy 1700000100 timeout=60 ECC errors".
"""
import os
import sys

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests"))
from protowire import LEN, field, parse  # noqa: E402


def text(v):
    return v.decode("utf-8")  # strict: the kubelet rejects invalid UTF-8


def require(cond, what):
    if not cond:
        raise AssertionError(what)


def check(cond, what):
    require(cond, what)
    print(f"ok: {what}")


def only_fields(fields, allowed, what):
    nums = {f[0] for f in fields}
    require(nums <= set(allowed), f"{what}: field numbers {sorted(nums)}, want {sorted(allowed)}")


def unary(channel, path, req, timeout=5):
    return channel.unary_unary(path)(req, timeout=timeout)


def claim(ns, uid, name):
    return field(1, field(1, ns) + field(2, uid) + field(3, name))


def decode_prepare(resp, version):
    """Map<uid, {devices, error}> from a NodePrepareResourcesResponse."""
    out = {}
    top = parse(resp)
    only_fields(top, [1], f"{version} NodePrepareResourcesResponse")
    for num, wt, entry in top:
        require(wt == LEN, f"{version} claims map entry is length-delimited")
        kv = parse(entry)
        only_fields(kv, [1, 2], f"{version} map entry (key=1, value=2)")
        key = text([v for n, _, v in kv if n == 1][0])
        value = parse(([v for n, _, v in kv if n == 2] or [b""])[0])
        only_fields(value, [1, 2], f"{version} NodePrepareResourceResponse")
        devices, error = [], ""
        for n, _, v in value:
            if n == 2:
                error = text(v)
            else:
                dev = {"requests": [], "cdi": [], "share_id": None}
                for dn, dwt, dv in parse(v):
                    require(dwt == LEN, f"{version} Device field {dn} is a string")
                    if dn == 1:
                        dev["requests"].append(text(dv))
                    elif dn == 2:
                        dev["pool"] = text(dv)
                    elif dn == 3:
                        dev["device"] = text(dv)
                    elif dn == 4:
                        dev["cdi"].append(text(dv))
                    elif dn == 5:
                        dev["share_id"] = text(dv)
                    else:
                        raise AssertionError(f"unknown Device field {dn}")
                devices.append(dev)
        out[key] = {"devices": devices, "error": error}
    return out


def registration(reg_sock, dra_sock, driver):
    ch = grpc.insecure_channel("unix:" + reg_sock)
    info = parse(unary(ch, "/pluginregistration.Registration/GetInfo", b"", timeout=1))
    only_fields(info, [1, 2, 3, 4], "PluginInfo")
    check([(n, text(v)) for n, _, v in info if n in (1, 2, 3)] ==
          [(1, "DRAPlugin"), (2, driver), (3, dra_sock)],
          "PluginInfo type=1 DRAPlugin, name=2 driver, endpoint=3 absolute DRA socket")
    check([text(v) for n, _, v in info if n == 4] ==
          ["v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth",
           "v1alpha1.DRAResourceHealth"],
          "PluginInfo supported_versions=4 in order v1, v1beta1, v1 health, v1alpha1 health")
    resp = unary(ch, "/pluginregistration.Registration/NotifyRegistrationStatus", field(1, 1))
    check(resp == b"", "NotifyRegistrationStatus(plugin_registered=1 true) -> empty response")
    try:
        unary(ch, "/pluginregistration.Registration/NotifyRegistrationStatus",
              field(1, 0) + field(2, "driver name mismatch"))
        check(False, "a refusal is answered with an error")
    except grpc.RpcError as e:
        check("driver name mismatch" in e.details(),
              f"NotifyRegistrationStatus(false, error=2) echoes the reason ({e.code().name})")
    ch.close()


def dra(dra_sock):
    ch = grpc.insecure_channel("unix:" + dra_sock)
    req = (claim("ns", "u1", "c1") + claim("ns", "u2", "fail-c2") +
           claim("ns", "u3", "shared-c3") + claim("ns", "u5", "failutf8-c5"))
    v1 = decode_prepare(unary(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
                              req), "v1")
    check(sorted(v1) == ["u1", "u2", "u3", "u5"], "v1 prepare answers every claim, keyed by uid")
    d = v1["u1"]["devices"]
    check(len(d) == 1 and d[0]["pool"] == "node-a" and d[0]["device"] == "gpu-0" and
          d[0]["requests"] == ["gpu"] and
          d[0]["cdi"] == ["k8s.gpu.fakehw.example.com/gpu=u1-gpu-0"] and
          d[0]["share_id"] is None and v1["u1"]["error"] == "",
          "v1 Device request_names=1 pool_name=2 device_name=3 cdi_device_ids=4, no share_id")
    check(v1["u2"]["error"].endswith("fake failure") and not v1["u2"]["devices"],
          "v1 failed claim has error=2 and no devices")
    check(v1["u3"]["devices"][0]["share_id"] == "share-u3", "v1 Device share_id=5")
    check("fake failure" in v1["u5"]["error"], "error text with bad bytes arrives as valid UTF-8")

    b1 = decode_prepare(unary(ch,
                              "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
                              claim("ns", "u3", "shared-c3")), "v1beta1")
    check(b1["u3"]["devices"][0]["share_id"] is None, "v1beta1 Device has no field 5")

    resp = unary(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
                 claim("ns", "u1", "c1") + claim("ns", "u2", "fail-c2"))
    entries = {}
    for _, _, e in parse(resp):
        kv = parse(e)
        value = parse(([v for n, _, v in kv if n == 2] or [b""])[0])
        only_fields(value, [1], "NodeUnprepareResourceResponse")
        entries[text([v for n, _, v in kv if n == 1][0])] = "".join(text(v) for _, _, v in value)
    check(sorted(entries) == ["u1", "u2"] and entries["u1"] == "" and
          entries["u2"].endswith("fake failure"),
          "v1 unprepare answers every claim, error=1 only for the failed one")

    try:
        unary(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NoSuchMethod", b"")
        check(False, "unknown method fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNIMPLEMENTED, "unknown method -> UNIMPLEMENTED")
    try:
        unary(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
              b"\x0a\x05\x0a\x09")
        check(False, "truncated request fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "undecodable request -> INVALID_ARGUMENT")
    ch.close()


def health(dra_sock, package):
    ch = grpc.insecure_channel("unix:" + dra_sock)
    stream = ch.unary_stream(f"/{package}.DRAResourceHealth/NodeWatchResources")(b"", timeout=5)
    first = next(iter(stream))
    devices = []
    for num, wt, dh in parse(first):
        require(num == 1 and wt == LEN, "NodeWatchResourcesResponse devices=1")
        f = parse(dh)
        only_fields(f, [1, 2, 3, 4, 5], "DeviceHealth")
        ident = dict((n, text(v)) for n, _, v in parse([v for n, _, v in f if n == 1][0]))
        vals = {n: v for n, _, v in f}
        devices.append((ident.get(1), ident.get(2), vals.get(2, 0), vals.get(3, 0),
                        vals.get(4, 0), text(vals[5]) if 5 in vals else ""))
    check(devices == [("node-a", "gpu-0", 1, 1700000000, 0, ""),
                      ("node-a", "gpu-1", 2, 1700000100, 60, "ECC errors")],
          "DeviceHealth device=1{pool_name=1, device_name=2} health=2 (HEALTHY=1, UNHEALTHY=2) "
          f"last_updated_time=3 health_check_timeout_seconds=4 message=5 ({package})")
    stream.cancel()
    ch.close()


def main():
    reg_sock, dra_sock, driver = sys.argv[1:4]
    registration(reg_sock, dra_sock, driver)
    dra(dra_sock)
    health(dra_sock, "v1")
    health(dra_sock, "v1alpha1")
    print("wire check passed")


def run(main_function):
    """Runs a check program's main: a failed check prints FAIL and exits 1."""
    try:
        main_function()
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    run(main)
