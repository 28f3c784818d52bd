#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures NodePrepareResources and NodeUnprepareResources of two or more
DRA drivers side by side on one real node, as the kubelet sees them.

    side_by_side.py --node NODE --driver NAME=CLASS --driver NAME=CLASS
                    [--sequential 30] [--batches 3] [--batch-size 10]
                    [--image IMAGE] [--namespace NS] [--kubeconfig FILE]
                    [--out results.json]

Every driver must already run on NODE and publish devices that its
DeviceClass CLASS selects. Runs are interleaved: each round gives every
driver one pod, in an order that alternates, so a slow moment of the
machine falls on all of them alike.

  sequential  one pod at a time: create, wait until Running, delete, wait
              until the kubelet has unprepared. The kubelet's histogram
              dra_grpc_operations_duration_seconds, read before and after,
              gives that one call's duration.
  batches     batch-size pods at once per driver; the histogram gives the
              mean of the batch's calls.

Prints a Markdown table and, with --out, writes every per-pod figure as
JSON. Needs kubectl, and RBAC to read nodes/proxy (the node's /metrics).
"""
import argparse
import json
import random
import statistics
import subprocess
import sys
import time

import kubelet_dra_metrics as km

PREPARE, UNPREPARE = km.METHODS


class RunError(Exception):
    pass


class Cluster:
    def __init__(self, kubeconfig, namespace, node):
        self.base = ["kubectl"] + (["--kubeconfig", kubeconfig] if kubeconfig else [])
        self.ns = namespace
        self.node = node

    def kubectl(self, *args, stdin=None, check=True):
        p = subprocess.run(self.base + list(args), input=stdin, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RunError(f"kubectl {' '.join(args)}: {p.stderr.strip()}")
        return p.stdout

    def apply(self, obj):
        self.kubectl("apply", "-f", "-", stdin=json.dumps(obj))

    def metrics(self):
        return km.parse(self.kubectl("get", "--raw", f"/api/v1/nodes/{self.node}/proxy/metrics"))

    def pods_running(self, names):
        out = self.kubectl("get", "pods", "-n", self.ns, "-o", "json")
        phase = {p["metadata"]["name"]: p.get("status", {}).get("phase") for p in json.loads(out)["items"]}
        bad = [n for n in names if phase.get(n) in ("Failed", "Succeeded")]
        if bad:
            raise RunError(f"pod {bad[0]} ended instead of running; see kubectl describe pod -n {self.ns} {bad[0]}")
        return all(phase.get(n) == "Running" for n in names)


def wait(what, cond, timeout):
    end = time.monotonic() + timeout
    delay = 0.05
    while True:
        if cond():
            return
        if time.monotonic() > end:
            raise RunError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def template(ns, key, device_class):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"sbs-{key}", "namespace": ns},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}},
    }


def pod(ns, name, key, node, image):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "side-by-side"}},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "tolerations": [{"operator": "Exists"}],
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 5,
            "containers": [{
                "name": "c",
                "image": image,
                "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
                "resources": {"claims": [{"name": "gpu"}]},
            }],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"sbs-{key}"}],
        },
    }


def one_round(cl, drivers, names_of, image, timeout):
    """Creates pods (names_of(driver) each), waits, deletes, waits; returns
    {driver: {"prepare": (s, n), "unprepare": (s, n)}}."""
    out = {}
    for drv in drivers:
        names = names_of(drv)
        before = cl.metrics()
        cl.apply({"apiVersion": "v1", "kind": "List",
                  "items": [pod(cl.ns, n, drv["key"], cl.node, image) for n in names]})
        wait(f"{len(names)} pod(s) of {drv['name']} Running", lambda: cl.pods_running(names), timeout)
        wait(f"{len(names)} prepare call(s) of {drv['name']} in the kubelet's metrics",
             lambda: km.delta(before, cl.metrics(), drv["name"], PREPARE)[1] >= len(names), timeout)
        mid = cl.metrics()
        cl.kubectl("delete", "pod", "-n", cl.ns, "--wait=false", *names)
        wait(f"{len(names)} unprepare call(s) of {drv['name']}",
             lambda: km.delta(mid, cl.metrics(), drv["name"], UNPREPARE)[1] >= len(names), timeout)
        after = cl.metrics()
        wait(f"the pods of {drv['name']} gone",
             lambda: cl.kubectl("get", "pods", "-n", cl.ns, "-l", "app=side-by-side", "-o", "name").strip() == "",
             timeout)
        out[drv["name"]] = {"prepare": km.delta(before, mid, drv["name"], PREPARE),
                            "unprepare": km.delta(mid, after, drv["name"], UNPREPARE)}
    return out


def ms(x):
    return round(x * 1000.0, 3)


def summary(values):
    v = sorted(values)
    if not v:
        return {}
    return {"median": ms(statistics.median(v)), "p90": ms(v[min(len(v) - 1, int(0.9 * len(v)))]),
            "min": ms(v[0]), "max": ms(v[-1]), "n": len(v)}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--node", required=True)
    ap.add_argument("--driver", action="append", required=True, metavar="NAME=CLASS")
    ap.add_argument("--sequential", type=int, default=30)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=10)
    ap.add_argument("--image", default="fakehw-dra/busybox:1.35.0")
    ap.add_argument("--namespace", default="side-by-side")
    ap.add_argument("--kubeconfig")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per wait")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured sequential rounds first")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if len(a.driver) < 2:
        ap.error("give at least two --driver NAME=CLASS")
    if not (0 <= a.sequential <= 1000 and 0 <= a.batches <= 100 and 1 <= a.batch_size <= 100):
        ap.error("--sequential 0..1000, --batches 0..100, --batch-size 1..100")
    drivers = []
    for i, spec in enumerate(a.driver):
        name, sep, cls = spec.partition("=")
        if not sep or not name or not cls:
            ap.error(f"--driver {spec!r}: want NAME=CLASS")
        drivers.append({"name": name, "class": cls, "key": f"d{i}"})

    cl = Cluster(a.kubeconfig, a.namespace, a.node)
    cl.kubectl("create", "namespace", a.namespace, check=False)
    for d in drivers:
        # A template's spec is immutable: one left by a run with another
        # driver list would keep the other class.
        cl.kubectl("delete", "resourceclaimtemplate", "-n", a.namespace, "--ignore-not-found",
                   f"sbs-{d['key']}")
        cl.apply(template(a.namespace, d["key"], d["class"]))
    cl.metrics()  # fails early without nodes/proxy access

    res = {d["name"]: {"prepare": [], "unprepare": [], "batch_prepare": [], "batch_unprepare": []}
           for d in drivers}
    rng = random.Random(1)
    seq = 0
    for r in range(a.warmup + a.sequential):
        order = drivers[:] if r % 2 == 0 else drivers[::-1]
        seq += 1
        got = one_round(cl, order, lambda d: [f"sbs-{d['key']}-s{seq}"], a.image, a.timeout)
        if r < a.warmup:
            continue
        for name, v in got.items():
            for op in ("prepare", "unprepare"):
                s, n = v[op]
                if n != 1:
                    raise RunError(f"{name}: {n} {op} calls for one pod")
                res[name][op].append(s)
        print(f"sequential {r - a.warmup + 1}/{a.sequential}: " + ", ".join(
            f"{n} {ms(v['prepare'][0])}/{ms(v['unprepare'][0])} ms" for n, v in got.items()), file=sys.stderr)
    for b in range(a.batches):
        order = drivers[:]
        rng.shuffle(order)
        got = one_round(cl, order, lambda d: [f"sbs-{d['key']}-b{b}-{i}" for i in range(a.batch_size)],
                        a.image, a.timeout)
        for name, v in got.items():
            for op in ("prepare", "unprepare"):
                s, n = v[op]
                res[name]["batch_" + op].append(s / n)
        print(f"batch {b + 1}/{a.batches}: " + ", ".join(
            f"{n} mean {ms(v['prepare'][0] / v['prepare'][1])}/{ms(v['unprepare'][0] / v['unprepare'][1])} ms"
            for n, v in got.items()), file=sys.stderr)

    table = {name: {k: summary(v) for k, v in r.items()} for name, r in res.items()}
    names = [d["name"] for d in drivers]
    rows = [("NodePrepareResources, sequential, median", "prepare", "median"),
            ("NodePrepareResources, sequential, p90", "prepare", "p90"),
            ("NodeUnprepareResources, sequential, median", "unprepare", "median"),
            ("NodeUnprepareResources, sequential, p90", "unprepare", "p90"),
            (f"NodePrepareResources, batches of {a.batch_size}, mean per call (median of batches)",
             "batch_prepare", "median"),
            (f"NodeUnprepareResources, batches of {a.batch_size}, mean per call (median of batches)",
             "batch_unprepare", "median")]
    print("| figure (ms, as the kubelet measures) | " + " | ".join(names) + " | ratio |")
    print("|---|" + "---:|" * (len(names) + 1))
    for label, key, stat in rows:
        vals = [table[n][key].get(stat) for n in names]
        ratio = f"{vals[0] / vals[1]:.2f}" if None not in vals[:2] and vals[1] else ""
        print(f"| {label} | " + " | ".join("" if v is None else f"{v:.3f}" for v in vals) + f" | {ratio} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"node": a.node, "drivers": drivers, "sequential": a.sequential,
                       "batches": a.batches, "batch_size": a.batch_size,
                       "seconds": res, "summary_ms": table}, f, indent=1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RunError, km.MetricsError) as e:
        print(f"side_by_side: {e}", file=sys.stderr)
        sys.exit(1)
