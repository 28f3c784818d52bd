#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the cluster suite's TAP reports of several Kubernetes versions into
the scenario x version matrix of docs/compatibility.md.

    matrix_table.py [--doc FILE] VERSION=TAPFILE...

Prints the Markdown table (ok, skip, FAIL; the skip reasons listed below it)
or, with --doc, replaces what lies between the matrix markers of FILE:
<!-- conformance-matrix:begin --> and <!-- conformance-matrix:end -->.
A report that is missing, empty or cut short (fewer results than its plan
line announces) is an error: a matrix must not hide a run that died.
"""
import re
import sys

BEGIN = "<!-- conformance-matrix:begin -->"
END = "<!-- conformance-matrix:end -->"
RESULT = re.compile(r"^(ok|not ok) (\d+) (.*)$")
PLAN = re.compile(r"^1\.\.(\d+)$")
SKIP = re.compile(r"^(.*?)(?: in \d+ms)? # skip(?: \((.*)\)| (.*))?$")
TIMING = re.compile(r" in \d+ms$")


class ReportError(Exception):
    pass


def read_tap(path):
    """Returns [(name, status, reason)] in report order."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from e
    plan, results = None, []
    for n, line in enumerate(lines, 1):
        m = PLAN.match(line)
        if m:
            plan = int(m.group(1))
            continue
        m = RESULT.match(line)
        if not m:
            continue
        verdict, rest = m.group(1), m.group(3)
        s = SKIP.match(rest)
        if verdict == "ok" and s:
            reason = s.group(2) or s.group(3) or ""
            results.append((s.group(1).strip(), "skip", reason.strip()))
        elif verdict == "ok":
            results.append((TIMING.sub("", rest).strip(), "ok", ""))
        else:
            results.append((TIMING.sub("", rest).strip(), "fail", ""))
    if plan is None:
        raise ReportError(f"{path}: no TAP plan line (1..N): the run did not start or the file is not TAP")
    if len(results) != plan:
        raise ReportError(f"{path}: {len(results)} results for a plan of {plan}: the run was cut short")
    return results


def table(runs):
    versions = [v for v, _ in runs]
    names, cells = [], {}
    for v, results in runs:
        for name, status, reason in results:
            if name not in cells:
                names.append(name)
                cells[name] = {}
            cells[name][v] = (status, reason)
    out = ["| scenario | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    shown = {"ok": "ok", "skip": "skip", "fail": "**FAIL**"}
    for name in names:
        row = [shown[cells[name][v][0]] if v in cells[name] else "not run" for v in versions]
        out.append(f"| {name.replace('|', '/')} | " + " | ".join(row) + " |")
    totals = []
    for v, results in runs:
        count = {s: sum(1 for r in results if r[1] == s) for s in ("ok", "skip", "fail")}
        totals.append(f"{count['ok']} ok, {count['skip']} skip, {count['fail']} fail")
    out.append("| **total** | " + " | ".join(totals) + " |")
    reasons = []
    for name in names:
        by_reason = {}
        for v in versions:
            status, reason = cells[name].get(v, ("", ""))
            if status == "skip":
                by_reason.setdefault(reason or "no reason given", []).append(v)
        for reason, vs in by_reason.items():
            reasons.append(f"- {name} ({', '.join(vs)}): {reason}")
    if reasons:
        out += ["", "Why skipped:", ""] + reasons
    return "\n".join(out) + "\n"


def main(argv):
    doc = None
    args = argv[1:]
    if args[:1] == ["--doc"]:
        if len(args) < 2:
            raise ReportError("--doc needs a file")
        doc, args = args[1], args[2:]
    if not args:
        raise ReportError("usage: matrix_table.py [--doc FILE] VERSION=TAPFILE...")
    runs = []
    for a in args:
        version, sep, path = a.partition("=")
        if not sep or not version or not path:
            raise ReportError(f"{a!r}: expected VERSION=TAPFILE")
        runs.append((version, read_tap(path)))
    text = table(runs)
    if doc is None:
        sys.stdout.write(text)
        return
    with open(doc, encoding="utf-8") as f:
        content = f.read()
    if content.count(BEGIN) != 1 or content.count(END) != 1 or content.index(BEGIN) > content.index(END):
        raise ReportError(f"{doc}: needs exactly one {BEGIN} followed by one {END}")
    head, rest = content.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + text + END + tail
    tmp = doc + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new)
    import os

    os.replace(tmp, doc)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except ReportError as e:
        print(f"matrix_table: {e}", file=sys.stderr)
        sys.exit(1)
