#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the conformance Job's ClusterRole against the cluster suite's calls.

  check_conformance_rbac.py [--suite DIR] [--list] RBAC_FILE

Reads every kubectl call of the cluster suite (its `kc` wrapper in
DIR/lib/*.bash, DIR/*.bats and DIR/setup_suite.bash; DIR defaults to
conformance/cluster), turns each into the requests kubectl makes as RBAC
sees them (API group, resource[/subresource], verb, or a non-resource URL),
and checks them against the ClusterRole in RBAC_FILE both ways: every request
granted, every grant used.  Objects created from the suite's templates
(create_from, dry_run_create, dry_run_probe, render_template) are read from the templates'
kinds; the type arguments that only exist at run time are resolved from the
call sites of the functions that feed them (FORWARDED) or from DYNAMIC.

Prints one line per problem ("FILE:LINE: ...") and exits 1 when there is
any; a call it cannot read is a problem too, so a new kind of call needs a
look here and in the ClusterRole.  --list prints every request with the
first call that needs it.  Needs PyYAML.
"""

import argparse
import glob
import os
import re
import sys

import yaml

# kubectl's names of the resources the suite uses: (API group, plural).
RESOURCES = {}
for names, group, plural in [
    (("pod", "pods", "po"), "", "pods"),
    (("namespace", "namespaces", "ns"), "", "namespaces"),
    (("node", "nodes", "no"), "", "nodes"),
    (("event", "events", "ev"), "", "events"),
    (("configmap", "configmaps", "cm"), "", "configmaps"),
    (("daemonset", "daemonsets", "ds"), "apps", "daemonsets"),
    (("resourceclaim", "resourceclaims"), "resource.k8s.io", "resourceclaims"),
    (("resourceclaimtemplate", "resourceclaimtemplates"), "resource.k8s.io", "resourceclaimtemplates"),
    (("deviceclass", "deviceclasses"), "resource.k8s.io", "deviceclasses"),
    (("resourceslice", "resourceslices"), "resource.k8s.io", "resourceslices"),
    (("devicetaintrule", "devicetaintrules"), "resource.k8s.io", "devicetaintrules"),
]:
    for n in names:
        RESOURCES[n] = (group, plural)

# Template kinds: (API group, plural).
KINDS = {
    "Namespace": ("", "namespaces"),
    "Pod": ("", "pods"),
    "ConfigMap": ("", "configmaps"),
    "ResourceClaim": ("resource.k8s.io", "resourceclaims"),
    "ResourceClaimTemplate": ("resource.k8s.io", "resourceclaimtemplates"),
    "DeviceClass": ("resource.k8s.io", "deviceclasses"),
    "DeviceTaintRule": ("resource.k8s.io", "devicetaintrules"),
}

# Type arguments computed at run time, as kubectl resolves them.
DYNAMIC = {
    # 94-device-taint-rules.bats: devicetaintrules.<served version>.resource.k8s.io
    '"$(rule_resource)"': "devicetaintrules.resource.k8s.io",
}

# (function, argument) -> functions whose callers pass the type first:
# is_gone NS-ARGS... is called directly and through wait_gone;
# delete_cluster_objects deletes what track_cluster_object recorded.
FORWARDED = {
    ("is_gone", '"$@"'): ("is_gone", "wait_gone"),
    ("delete_cluster_objects", '"$kind"'): ("track_cluster_object",),
}

# Flags of kubectl that take a separate value.
VALUE_FLAGS = {
    "-n", "--namespace", "-o", "--output", "-l", "--selector", "-c", "--container",
    "--field-selector", "--sort-by", "-f", "--filename", "--context", "--request-timeout",
    "--raw", "--tail", "--since", "-p", "--patch", "--type", "--subresource",
}

TEMPLATE_FUNCS = ("create_from", "dry_run_create", "dry_run_probe", "render_template")


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, where, what):
        self.lines.append(f"{where}: {what}")


def split_words(text):
    """The words of the simple command at the start of TEXT, quotes kept:
    stops at an unquoted |, ;, &, <, > or ) outside $(...)."""
    words, cur, quote, depth, i = [], "", None, 0, 0
    while i < len(text):
        c = text[i]
        if quote == "'":
            cur += c
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\":
            cur += text[i:i + 2]
            i += 2
            continue
        if text.startswith("$(", i):
            depth += 1
            cur += "$("
            i += 2
            continue
        if c == ")" and depth > 0:
            depth -= 1
            cur += c
            i += 1
            continue
        if c in "'\"":
            if quote == c:
                quote = None
            elif quote is None:
                quote = c
            cur += c
            i += 1
            continue
        if quote is None and depth == 0:
            if c in " \t":
                if cur:
                    words.append(cur)
                cur = ""
                i += 1
                continue
            if c in "|;&<>)":
                if c in "<>" and cur.isdigit():
                    cur = ""  # 2>&1
                break
        cur += c
        i += 1
    if cur:
        words.append(cur)
    return words


def logical_lines(path):
    """(line number, text) of PATH with backslash continuations joined and
    comment lines left out."""
    out, buf, start = [], "", 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not buf:
                start = n
                if line.lstrip().startswith("#"):
                    continue
            if line.endswith("\\"):
                buf += line[:-1] + " "
                continue
            out.append((start, buf + line))
            buf = ""
    if buf:
        out.append((start, buf))
    return out


FUNC_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{")


def suite_files(suite):
    files = sorted(glob.glob(os.path.join(suite, "lib", "*.bash")))
    files += sorted(glob.glob(os.path.join(suite, "*.bats")))
    setup = os.path.join(suite, "setup_suite.bash")
    if os.path.exists(setup):
        files.append(setup)
    return files


def parse_type(word):
    """(group, plural) of a kubectl type word, or None."""
    word = DYNAMIC.get(word, word).strip("'\"")
    if word in RESOURCES:
        return RESOURCES[word]
    # plural.group or plural.version.group
    m = re.match(r"^([a-z]+)\.(?:(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\.)?([a-z0-9.-]+)$", word)
    if m and m.group(1) in RESOURCES and RESOURCES[m.group(1)][0] == m.group(3):
        return RESOURCES[m.group(1)]
    return None


def options(words):
    """(positional words, {flag: value}) of kubectl arguments."""
    pos, flags, i = [], {}, 0
    while i < len(words):
        w = words[i]
        if w == "--":
            pos.append("--")
            pos.extend(words[i + 1:])
            break
        if w.startswith("-") and len(w) > 1:
            if "=" in w:
                k, v = w.split("=", 1)
                flags[k] = v
            elif w in VALUE_FLAGS:
                flags[w] = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            else:
                flags[w] = True
            i += 1
            continue
        pos.append(w)
        i += 1
    return pos, flags


def raw_requests(path, where, problems):
    p = path.strip("'\"")
    if p == "/metrics":
        return [("url", "/metrics", "get")]
    if re.match(r"^/api/v1/nodes/[^/]+/proxy(/|$)", p):
        return [("", "nodes/proxy", "get")]
    # Discovery documents: every authenticated user's (system:discovery).
    if re.match(r"^/(version|api|apis)(/[^/]+(/[^/]+)?)?/?$", p) and not p.startswith("/api/v1/"):
        return []
    problems.add(where, f"kubectl get --raw {path}: no rule to map this path; add one to check_conformance_rbac.py")
    return []


def type_requests(type_word, names, verb_by_names, where, problems):
    reqs = []
    # kubectl takes several types at once: "pods,resourceclaims".
    for word in type_word.split(","):
        t = parse_type(word)
        if t is None:
            problems.add(where, f"cannot tell the resource of kubectl type {word}; "
                                "add it to RESOURCES or DYNAMIC in check_conformance_rbac.py")
            continue
        reqs += [(t[0], t[1], v) for v in verb_by_names(bool(names))]
    return reqs


def template_kinds(suite, name, where, problems):
    path = os.path.join(suite, "templates", name if name.endswith(".yaml") else name + ".yaml")
    if not os.path.exists(path):
        problems.add(where, f"template {name} not found in {os.path.dirname(path)}")
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for doc in yaml.safe_load_all(f):
            if not doc:
                continue
            kind = doc.get("kind")
            if kind not in KINDS:
                problems.add(where, f"template {name}: kind {kind} is not in KINDS of check_conformance_rbac.py")
                continue
            out.append(KINDS[kind])
    return out


def collect(suite, problems):
    """{request: first 'FILE:LINE: call'} of every call of the suite."""
    requests = {}
    files = suite_files(suite)
    parsed = {f: logical_lines(f) for f in files}
    rel = lambda f: os.path.relpath(f, os.path.dirname(os.path.dirname(suite)))

    def need(req, where):
        requests.setdefault(req, where)

    # Call sites of functions, for FORWARDED: {function: [(where, args)]}.
    calls = {}
    call_re = re.compile(r"(?<![\w-])(" + "|".join(
        sorted({f for fs in FORWARDED.values() for f in fs} | set(TEMPLATE_FUNCS))) + r")\s+(.*)")
    for f in files:
        for n, text in parsed[f]:
            if FUNC_RE.match(text):
                continue
            for m in call_re.finditer(text):
                args = split_words(m.group(2))
                if not args or args[0] in ('"$@"', '"$1"'):
                    continue  # forwarding inside the wrappers themselves
                calls.setdefault(m.group(1), []).append((f"{rel(f)}:{n}", args))

    for fn in TEMPLATE_FUNCS:
        for where, args in calls.get(fn, []):
            if not re.match(r"^[a-z0-9-]+(\.yaml)?$", args[0]):
                problems.add(where, f"{fn} {args[0]}: the template is not named literally; "
                                    "check_conformance_rbac.py cannot tell what it creates")
                continue
            for g, r in template_kinds(suite, args[0], where, problems):
                need((g, r, "create"), f"{where}: {fn} {args[0]}")

    kc_re = re.compile(r"(?<![\w$-])kc\s+(.*)")
    for f in files:
        func = None
        for n, text in parsed[f]:
            m = FUNC_RE.match(text)
            if m:
                func = m.group(1)
                if m.group(1) == "kc":
                    continue
            for m in kc_re.finditer(text):
                where = f"{rel(f)}:{n}"
                words = split_words(m.group(1))
                label = f"{where}: kc {' '.join(words)}"
                if not words:
                    continue
                sub, rest = words[0], words[1:]
                pos, flags = options(rest)
                reqs = []
                if sub in ("version", "api-versions"):
                    reqs = []
                elif sub == "get" and "--raw" in flags:
                    reqs = raw_requests(flags["--raw"], where, problems)
                elif sub in ("get", "delete", "label", "annotate", "patch"):
                    if not pos:
                        problems.add(where, f"kc {sub} without a type")
                        continue
                    if sub == "get":
                        def verbs(named):
                            return ["get"] if named else ["list"]
                    elif sub == "delete":
                        def verbs(named):
                            return ["delete"]
                    elif sub == "patch":
                        def verbs(named):
                            return ["patch"]
                    else:
                        def verbs(named):
                            return ["get", "patch"]
                    key = (func, pos[0])
                    if key in FORWARDED:
                        for feeder in FORWARDED[key]:
                            for cwhere, args in calls.get(feeder, []):
                                cpos, _ = options(args)
                                for g, r, v in type_requests(cpos[0], cpos[1:], verbs, cwhere, problems):
                                    need((g, r, v), f"{cwhere}: {feeder} {' '.join(args)} (kc {sub} in {func})")
                        continue
                    if pos[0].startswith('"$') and pos[0] not in DYNAMIC:
                        problems.add(where, f"kc {sub} {pos[0]}: a type known only at run time; add its "
                                            "feeders to FORWARDED or it to DYNAMIC in check_conformance_rbac.py")
                        continue
                    reqs = type_requests(pos[0], pos[1:], verbs, where, problems)
                    if sub == "patch" and isinstance(flags.get("--subresource"), str):
                        reqs = [(g, f"{r}/{flags['--subresource']}", v) for g, r, v in reqs]
                elif sub == "create":
                    if "-f" in flags or "--filename" in flags:
                        src = flags.get("-f", flags.get("--filename"))
                        if src != "-":
                            problems.add(where, f"kc create -f {src}: only manifests from the templates "
                                                "(create_from) are understood")
                        # The objects: the templates' kinds, at their call sites.
                        reqs = []
                    elif pos:
                        reqs = type_requests(pos[0], pos[1:], lambda named: ["create"], where, problems)
                    else:
                        problems.add(where, "kc create of nothing this check understands")
                elif sub == "exec":
                    reqs = [("", "pods", "get"), ("", "pods/exec", "create")]
                elif sub == "logs":
                    reqs = [("", "pods", "get"), ("", "pods/log", "get")]
                else:
                    problems.add(where, f"kc {sub}: a kubectl command check_conformance_rbac.py does not "
                                        "know; teach it which requests it makes")
                    continue
                for req in reqs:
                    need(req, label)
    return requests


def grants(rbac_file):
    """Every (group, resource, verb) and ("url", path, verb) the ClusterRole grants."""
    with open(rbac_file, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    roles = [d for d in docs if d.get("kind") == "ClusterRole"]
    if len(roles) != 1:
        raise SystemExit(f"{rbac_file}: expected one ClusterRole, found {len(roles)}")
    out = set()
    for rule in roles[0].get("rules") or []:
        verbs = rule.get("verbs") or []
        if rule.get("resourceNames"):
            continue  # names the suite makes up at run time never match
        for url in rule.get("nonResourceURLs") or []:
            for v in verbs:
                out.add(("url", url, v))
        for g in rule.get("apiGroups") or []:
            for r in rule.get("resources") or []:
                for v in verbs:
                    out.add((g, r, v))
    return out


def granted(req, have):
    g, r, v = req
    for hg, hr, hv in have:
        if hg == "url":
            if g == "url" and (hr == r or (hr.endswith("*") and r.startswith(hr[:-1]))) and hv in (v, "*"):
                return True
            continue
        if g != "url" and hg in (g, "*") and hr in (r, "*") and hv in (v, "*"):
            return True
    return False


def show(req):
    g, r, v = req
    if g == "url":
        return f"{v} {r}"
    return f"{v} {g or 'core'}/{r}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=os.path.join(here, "..", "..", "conformance", "cluster"))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("rbac")
    a = ap.parse_args()
    suite = os.path.abspath(a.suite)
    problems = Problems()
    requests = collect(suite, problems)
    have = grants(a.rbac)
    if a.list:
        for req in sorted(requests):
            print(f"{show(req)}\t{requests[req]}")
    for req in sorted(requests):
        if not granted(req, have):
            problems.add(requests[req], f"needs {show(req)}, which {a.rbac} does not grant")
    for h in sorted(have):
        if h not in requests:
            problems.add(a.rbac, f"grants {show(h)}, which no call of the suite needs")
    for line in problems.lines:
        print(line)
    return 1 if problems.lines else 0


if __name__ == "__main__":
    sys.exit(main())
