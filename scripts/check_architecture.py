#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds docs/architecture.md against the code.

    check_architecture.py [--graph] [ROOT]

The modules are the top-level folders (but docs/ and hidden ones) and the
folders of driver/ (but tests/); the files directly in driver/ are the module
driver/.  It fails (exit 1, one line per offence) when:

- a module is not named in the first column of the "Where things are"
  table, or that column names a path that does not exist;
- a module with C files has no row in the "What may include what" table,
  or a row names a module that does not exist;
- a C file includes a header of another module that its row does not
  allow, or a row allows an include that no file makes (the table is the
  graph of the code, no more and no less).

An include is resolved as the compiler would find it (-I. -Icommon and the
fragments' -I of a module's own folders): next to the file, from ROOT, in
common/, or the one file of that name in the including module, else the one
in the tree.  A header found nowhere is generated (build/gen): NAME.pb-c.h
is proto/'s when proto/NAME.proto exists, any other counts for no module.  ROOT (default: this
repository) is the tree to check; --graph prints the includes between modules
as the rows of that table instead.
"""
import os
import re
import sys

DOC = "docs/architecture.md"
WHERE = "## Where things are"
ARROWS = "## What may include what"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
PATH = re.compile(r"`([^`]+)`")
SKIP_DIRS = {"build", "docs"}


def tree_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and not (rel == "." and d in SKIP_DIRS))
        for f in filenames:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


def module_of(path):
    parts = path.split("/")
    if len(parts) == 1:
        return None
    if parts[0] == "driver":
        if len(parts) > 2 and parts[1] != "tests":
            return "driver/%s/" % parts[1]
        return "driver/"
    return parts[0] + "/"


def section(lines, title):
    """The table rows (lists of cells) of the section TITLE."""
    rows, inside = [], False
    for line in lines:
        if line.startswith("## "):
            inside = line.strip() == title
            continue
        if inside and line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line.strip()):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:] if rows else rows  # the header row off


def main():
    args = sys.argv[1:]
    graph = args[:1] == ["--graph"]
    args = args[1:] if graph else args
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    files = tree_files(".")
    modules = {module_of(f) for f in files} - {None}
    bad = []
    try:
        lines = open(DOC, encoding="utf-8").read().splitlines()
    except OSError as e:
        print("check-architecture: %s" % e, file=sys.stderr)
        return 1

    # The module list.
    where = section(lines, WHERE)
    if not where:
        bad.append("%s: no table under \"%s\"" % (DOC, WHERE))
    named = set()
    for row in where:
        for p in PATH.findall(row[0]):
            named.add(p)
            if not (os.path.exists(p) or any(f == p or f.startswith(p.rstrip("/") + "/") for f in files)):
                bad.append("%s: \"%s\" names %s, which does not exist" % (DOC, WHERE[3:], p))
    for m in sorted(modules):
        if m.count("/") == 1:  # top level: the folder or a folder in it
            ok = any(n == m or n.startswith(m) for n in named)
        else:
            ok = m in named or m == "driver/"
        if not ok:
            bad.append("%s: \"%s\" does not name the module %s" % (DOC, WHERE[3:], m))

    # The allowed arrows.
    allowed = {}
    rows = section(lines, ARROWS)
    if not rows:
        bad.append("%s: no table under \"%s\"" % (DOC, ARROWS))
    for row in rows:
        mods = PATH.findall(row[0])
        if len(mods) != 1 or len(row) < 2:
            bad.append("%s: \"%s\": a row wants one module and what it may include: %s" % (DOC, ARROWS[3:], " | ".join(row)))
            continue
        targets = set(PATH.findall(row[1]))
        for m in [mods[0]] + sorted(targets):
            if m not in modules:
                bad.append("%s: \"%s\" names %s, which is no module" % (DOC, ARROWS[3:], m))
        allowed[mods[0]] = targets

    # The includes.
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    used = {}
    c_modules = set()
    for f in files:
        if not f.endswith((".c", ".h")):
            continue
        src = module_of(f)
        if src is None:
            continue
        c_modules.add(src)
        with open(f, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(f, src, m.group(1), by_name)
                if target is None or target == src:
                    continue
                used.setdefault(src, set()).add(target)
                if src in allowed and target not in allowed[src]:
                    bad.append("%s:%d: #include \"%s\": %s may not include %s (%s, \"%s\")"
                               % (f, n, m.group(1), src, target, DOC, ARROWS[3:]))
    for m in sorted(c_modules - set(allowed)):
        bad.append("%s: \"%s\" has no row for %s" % (DOC, ARROWS[3:], m))
    for m in sorted(allowed):
        for t in sorted(allowed[m] - used.get(m, set())):
            bad.append("%s: \"%s\" lets %s include %s, which none of its files does" % (DOC, ARROWS[3:], m, t))

    if graph:
        for m in sorted(used):
            print("| `%s` | %s |" % (m, ", ".join("`%s`" % t for t in sorted(used[m]))))
        return 0
    for b in bad:
        print("check-architecture: " + b, file=sys.stderr)
    return 1 if bad else 0


def resolve(f, src, header, by_name):
    here = os.path.normpath(os.path.join(os.path.dirname(f), header))
    for cand in (here, os.path.normpath(header), "common/" + header):
        if os.path.isfile(cand):
            return module_of(cand)
    if header.endswith(".pb-c.h"):  # generated from proto/NAME.proto, or a module's own
        name = os.path.basename(header)[: -len(".pb-c.h")]
        return "proto/" if os.path.isfile("proto/%s.proto" % name) else None
    if "/" in header:
        return None
    same = [p for p in by_name.get(header, []) if module_of(p) == src]
    if same:
        return src
    found = by_name.get(header, [])
    if len(found) == 1:
        return module_of(found[0])
    return None  # generated, or ambiguous: the compiler's -I decides


if __name__ == "__main__":
    sys.exit(main())
