#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""p50 and p99 of the scheduler's own latency histogram across a run.

    quantiles.py BEFORE AFTER [METRIC]

BEFORE and AFTER are two scrapes of the scheduler's /metrics; METRIC
(default scheduler_pod_scheduling_sli_duration_seconds) is summed over its
label sets but le, the difference taken, and the quantiles read as the
upper bound of the bucket they fall in (as histogram_quantile does, with
linear interpolation inside the bucket). Prints "P50 P99" in seconds, or
"- -" when the run added no sample.
"""
import re
import sys

LINE = re.compile(r'^(\w+)_bucket\{(.*)\} ([0-9.eE+-]+)$')


def buckets(path, metric):
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m or m.group(1) != metric:
                continue
            le = re.search(r'(?:^|,)le="([^"]+)"', m.group(2)).group(1)
            bound = float("inf") if le == "+Inf" else float(le)
            out[bound] = out.get(bound, 0.0) + float(m.group(3))
    return out


def quantile(q, cum):
    bounds = sorted(cum)
    total = cum[bounds[-1]]
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for b in bounds:
        if cum[b] >= rank:
            if b == float("inf"):
                return lower
            inside = cum[b] - below
            return lower + (b - lower) * ((rank - below) / inside if inside else 1)
        lower, below = b, cum[b]
    return lower


def main():
    metric = sys.argv[3] if len(sys.argv) > 3 else "scheduler_pod_scheduling_sli_duration_seconds"
    a, b = buckets(sys.argv[1], metric), buckets(sys.argv[2], metric)
    diff = {k: b[k] - a.get(k, 0.0) for k in b}
    if not diff:
        print("- -")
        return
    vals = [quantile(q, diff) for q in (0.5, 0.99)]
    print(" ".join("-" if v is None else "%.3f" % v for v in vals))


if __name__ == "__main__":
    main()
