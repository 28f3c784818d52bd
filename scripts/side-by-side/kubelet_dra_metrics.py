# SPDX-License-Identifier: Apache-2.0
"""Reads the kubelet's DRA gRPC histogram from its /metrics text.

The kubelet times every call it makes to a DRA plugin, on its side of the
socket, in the histogram dra_grpc_operations_duration_seconds (labels
driver_name, method_name, grpc_status_code; pkg/kubelet/metrics). Its _sum
and _count per driver and method, read before and after an operation, give
the exact duration of the calls in between: that is what a pod waits on.
"""
import re

# kubelet_dra_grpc_operations_duration_seconds or, in some releases, without
# the subsystem prefix.
SAMPLE = re.compile(
    r"^(?:kubelet_)?dra_grpc_operations_duration_seconds_(sum|count)\{([^}]*)\}\s+(\S+)$"
)
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
METHODS = ("NodePrepareResources", "NodeUnprepareResources")


class MetricsError(Exception):
    pass


def parse(text):
    """{(driver, method): (sum_seconds, count)} summed over status codes.

    method is the short name (NodePrepareResources); calls of every API
    version the kubelet speaks (v1, v1beta1) count together."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line.strip())
        if not m:
            continue
        kind, labels, value = m.groups()
        lab = dict(LABEL.findall(labels))
        method = lab.get("method_name", "").rsplit("/", 1)[-1]
        if method not in METHODS or "driver_name" not in lab:
            continue
        key = (lab["driver_name"], method)
        s, c = out.get(key, (0.0, 0))
        try:
            v = float(value)
        except ValueError as e:
            raise MetricsError(f"bad sample value in {line!r}") from e
        if kind == "sum":
            s += v
        else:
            c += int(v)
        out[key] = (s, c)
    return out


def delta(before, after, driver, method):
    """(seconds, calls) between two parses for one driver and method."""
    s0, c0 = before.get((driver, method), (0.0, 0))
    s1, c1 = after.get((driver, method), (0.0, 0))
    if c1 < c0 or s1 < s0 - 1e-9:
        raise MetricsError(
            f"{driver} {method}: the histogram went backwards ({c0} -> {c1} calls); "
            "did the kubelet restart?"
        )
    return s1 - s0, c1 - c0
