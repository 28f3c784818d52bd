#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Scheduler throughput against fleet size, from bench/fleet/sched.sh's TSV.

    plot.py RESULTS.tsv OUT.png

One line per mode (dra, taints, mig, ext) and KWOK heartbeat: pods
scheduled per second at each fleet size, solid for the lease heartbeat,
dashed for the status heartbeat (rows without the column ran with it).
Where a fleet size was run more than once, its last row counts (the rows
are appended in the order they ran). Needs python3-matplotlib (Debian).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FIELDS = ["nodes", "mode", "pods", "scheduled", "running", "seconds", "pods_s", "sli_p50",
          "sli_p99", "attempt_p50", "attempt_p99", "rss", "load", "machine", "create_ms",
          "heartbeat"]
LABELS = {"dra": "one claim (whole GPU)", "taints": "one claim, every device tainted",
          "mig": "one claim (MIG 1g.10gb, counters)", "ext": "nvidia.com/gpu: 1 (no DRA)"}


def main():
    series = {}
    with open(sys.argv[1]) as f:
        for row in csv.reader(f, delimiter="\t"):
            if not row or row[0] == "nodes":
                continue
            r = dict(zip(FIELDS, row))
            key = (r["mode"], r.get("heartbeat", "status"))
            series.setdefault(key, {})[int(r["nodes"])] = float(r["pods_s"])
    fig, ax = plt.subplots(figsize=(10, 4.6))
    for i, mode in enumerate(("ext", "dra", "taints", "mig")):
        for heartbeat, style in (("lease", "-"), ("status", "--")):
            pts = sorted(series.get((mode, heartbeat), {}).items())
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle=style,
                        color="C%d" % i, label="%s, %s heartbeat" % (LABELS[mode], heartbeat))
    ax.set_xscale("log")
    ax.set_xlabel("KWOK nodes (8 fake GPUs each)")
    ax.set_ylabel("pods scheduled per second")
    ax.set_title("kube-scheduler 1.37.2 on a fakehw fleet (2 cores, the whole control plane on them)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
