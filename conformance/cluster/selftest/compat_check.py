#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps docs/compatibility.md, the scenarios' metadata and the suite's
feature detection in step.

Every @test of conformance/cluster/[0-9]*.bats has one line in the comment
block above it:

    # requires: none
    # requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints

with entries gate=<feature gate>, minor=<N> (Kubernetes 1.N or newer),
api=devicetaintrules (the DeviceTaintRule API), param=<CONFORMANCE_*>,
fake-driver, driver=<name>.  The gate, minor, api and param entries must be
exactly what the test's body (and the file's own functions it calls) checks
with require_gate, require_server_minor, require_taint_rule_api and
require_param.

For each minor 1.34-1.38 the expected outcome of every version-dependent
requirement on the kind cluster of kind/cluster-1.N.yaml follows from that
config and from the release defaults the suite itself uses
(GATE_DEFAULT_SINCE in lib/features.bash); docs/compatibility.md must list
exactly those rows.

Usage: compat_check.py REPO            check, one line per problem, exit 1
       compat_check.py REPO --print M  print the scenario table for 1.M"""
import glob
import os
import re
import sys

import yaml

MINORS = (34, 35, 36, 37, 38)
KEYS = {"gate", "minor", "api", "param", "fake-driver", "driver"}
CHECKED = {"gate", "minor", "api", "param"}   # what require_* calls prove
VERSIONED = ("minor", "api", "gate")          # what depends on the release
# The version serving DeviceTaintRule per minor and the gate that must be on
# for it (v1 is on by default from 1.37).
TAINT_RULE_API = {34: ("resource.k8s.io/v1alpha3", "DRADeviceTaints"),
                  35: ("resource.k8s.io/v1alpha3", "DRADeviceTaintRules"),
                  36: ("resource.k8s.io/v1beta2", "DRADeviceTaintRules"),
                  37: ("resource.k8s.io/v1", "DRADeviceTaintRules"),
                  38: ("resource.k8s.io/v1", "DRADeviceTaintRules")}
HEADER = "| requirement | scenarios | on the kind cluster |"

TEST_RE = re.compile(r"^\s*@test\s+(['\"])(.*)\1\s*\{")
FUNC_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(\)\s*\{")
CALLS = [(re.compile(r"\brequire_gate\s+(\w+)"), "gate"),
         (re.compile(r"\brequire_server_minor\s+(\d+)"), "minor"),
         (re.compile(r"\brequire_taint_rule_api\b()"), "api"),
         (re.compile(r"\brequire_param\s+(\w+)"), "param")]


def blocks(lines, start):
    """The lines of the {...} block opening at line start (to the first
    line that is a lone "}" at column 0)."""
    out = []
    for line in lines[start + 1:]:
        if line.startswith("}"):
            break
        out.append(line)
    return out


def checked_requirements(body, funcs, seen=None):
    seen = seen or set()
    found = set()
    text = "\n".join(body)
    for rx, key in CALLS:
        for m in rx.finditer(text):
            found.add(f"{key}=devicetaintrules" if key == "api" else f"{key}={m.group(1)}")
    for name, fbody in funcs.items():
        if name not in seen and re.search(rf"(^|[\s;(|&]){re.escape(name)}(\s|$|\))", text, re.M):
            found |= checked_requirements(fbody, funcs, seen | {name})
    return found


def scenarios(repo, problems):
    """[(file, line, name, [entries])] of every scenario test."""
    tests = []
    for path in sorted(glob.glob(os.path.join(repo, "conformance/cluster/[0-9]*.bats"))):
        rel = os.path.relpath(path, repo)
        lines = open(path).read().split("\n")
        funcs = {m.group(1): blocks(lines, i) for i, l in enumerate(lines) if (m := FUNC_RE.match(l))}
        for i, line in enumerate(lines):
            m = TEST_RE.match(line)
            if not m:
                continue
            name = m.group(2)
            above = []
            for l in reversed(lines[:i]):
                if not l.startswith("#"):
                    break
                above.append(l)
            reqs = [l for l in above if l.startswith("# requires:")]
            if len(reqs) != 1:
                problems.append(f"{rel}:{i + 1}: test \"{name}\" needs one \"# requires:\" line above it, has {len(reqs)}")
                continue
            text = reqs[0][len("# requires:"):].strip()
            entries = [] if text == "none" else [e.strip() for e in text.split(",")]
            for e in entries:
                if e.split("=", 1)[0] not in KEYS or (e != "fake-driver" and "=" not in e):
                    problems.append(f"{rel}:{i + 1}: test \"{name}\": unknown requirement \"{e}\"")
            declared = {e for e in entries if e.split("=", 1)[0] in CHECKED}
            actual = checked_requirements(blocks(lines, i), funcs)
            if declared != actual:
                problems.append(f"{rel}:{i + 1}: test \"{name}\": \"# requires:\" says {sorted(declared)}, "
                                f"the test checks {sorted(actual)}")
            tests.append((os.path.basename(path), i + 1, name, entries))
    return tests


def gate_defaults(repo):
    text = open(os.path.join(repo, "conformance/cluster/lib/features.bash")).read()
    block = re.search(r"GATE_DEFAULT_SINCE=\((.*?)\n\)", text, re.S).group(1)
    never = re.search(r"^GATE_NEVER_DEFAULT=(\d+)$", text, re.M).group(1)
    block = block.replace("$GATE_NEVER_DEFAULT", never)
    return {g: int(v) for g, v in re.findall(r"\[(\w+)\]=(\d+)", block)}


def outcome(entry, minor, kind, defaults):
    key, _, value = entry.partition("=")
    gates = kind.get("featureGates") or {}
    runtime = kind.get("runtimeConfig") or {}

    def gate_on(g):
        return gates.get(g) is True or minor >= defaults.get(g, 999)

    if key == "gate":
        if value not in defaults:
            return f"unknown: {value} is not in GATE_DEFAULT_SINCE"
        if minor >= defaults[value]:
            return "runs (on by default)"
        if gates.get(value) is True:
            return "runs (the kind config turns it on)"
        return f"skips: feature gate {value} is off"
    if key == "minor":
        return "runs" if minor >= int(value) else f"skips: needs Kubernetes 1.{value} or newer"
    if key == "api":
        api, gate = TAINT_RULE_API[minor]
        served = gate_on(gate) and (api == "resource.k8s.io/v1" or runtime.get(api) == "true")
        return f"runs ({api})" if served else "skips: no DeviceTaintRule API served"
    return "?"


def table(repo, minor, tests, defaults):
    with open(os.path.join(repo, f"kind/cluster-1.{minor}.yaml")) as f:
        kind = yaml.safe_load(f)
    rows = {}
    for file, _, _, entries in tests:
        versioned = [e for e in entries if e.split("=", 1)[0] in VERSIONED] or ["none"]
        for e in versioned:
            rows.setdefault(e, {}).setdefault(file, 0)
            rows[e][file] += 1

    def order(e):
        return (["none", "minor", "api", "gate"].index(e.split("=", 1)[0]), e)

    out = [HEADER, "|---|---|---|"]
    for e in sorted(rows, key=order):
        files = ", ".join(f"{f} ({n})" for f, n in sorted(rows[e].items()))
        status = "runs" if e == "none" else outcome(e, minor, kind, defaults)
        out.append(f"| `{e}` | {files} | {status} |")
    return out


def doc_tables(repo, problems):
    path = os.path.join(repo, "docs/compatibility.md")
    found = {}
    minor = None
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^## Kubernetes 1\.(\d+)\s*$", line)
        if m:
            minor = int(m.group(1))
        if line.strip() == HEADER:
            if minor is None:
                problems.append(f"docs/compatibility.md:{i + 1}: scenario table outside a \"## Kubernetes 1.N\" section")
                continue
            rows = []
            for l in lines[i:]:
                if not l.startswith("|"):
                    break
                rows.append(l.rstrip())
            found[minor] = (i + 1, rows)
    return found


def main(argv):
    repo = argv[1]
    problems = []
    tests = scenarios(repo, problems)
    defaults = gate_defaults(repo)
    if len(argv) == 4 and argv[2] == "--print":
        print("\n".join(table(repo, int(argv[3]), tests, defaults)))
        return 0
    docs = doc_tables(repo, problems)
    for minor in MINORS:
        want = table(repo, minor, tests, defaults)
        if minor not in docs:
            problems.append(f"docs/compatibility.md: no scenario table for Kubernetes 1.{minor}")
            continue
        line, have = docs[minor]
        for row in sorted(set(want) - set(have)):
            problems.append(f"docs/compatibility.md:{line}: 1.{minor}: missing or different row: {row}")
        for row in sorted(set(have) - set(want)):
            problems.append(f"docs/compatibility.md:{line}: 1.{minor}: row the suite does not agree with: {row}")
    for extra in sorted(set(docs) - set(MINORS)):
        problems.append(f"docs/compatibility.md:{docs[extra][0]}: a table for 1.{extra}, which the suite does not cover")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
