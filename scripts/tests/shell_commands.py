#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the commands that bash scripts run on the machine that runs them,
one "NAME FILE:LINE" a line, from shfmt's syntax tree (shfmt --to-json): the
first word of every simple command, in pipelines, lists, $(...), (...) and
function bodies, looking through env, exec, xargs, nohup, setsid, sudo,
command and timeout.  Left out: the functions the files define (they source each other), words that are
not plain literals ("$GO", "$here/x.sh"), and what runs elsewhere: strings
handed to sh -c, bash -c or docker exec, heredoc bodies, and the command
chroot runs in its new root.

Usage: shell_commands.py FILE..."""
import json
import re
import subprocess
import sys

WRAPPERS = {"env", "exec", "xargs", "nohup", "setsid", "sudo", "command", "timeout", "nice"}
# Options of the wrappers that take a value.
WRAPPER_VALUE_OPTS = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "-k", "-u", "-C", "-S"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def literal(word):
    """The word's text when it is one plain literal, else None."""
    parts = word.get("Parts") or []
    if len(parts) == 1 and parts[0].get("Type") == "Lit":
        return parts[0]["Value"]
    return None


def walk(node, out, funcs):
    if isinstance(node, list):
        for item in node:
            walk(item, out, funcs)
        return
    if not isinstance(node, dict):
        return
    if node.get("Type") == "FuncDecl":
        funcs.add(node["Name"]["Value"])
    if node.get("Type") == "CallExpr" and node.get("Args"):
        args = node["Args"]
        i = 0
        while i < len(args):
            name = literal(args[i])
            if name is None:
                break
            out.append((name, args[i]["Pos"]["Line"]))
            if name == "chroot" or name not in WRAPPERS:
                break
            # The command the wrapper runs: after its options and assignments.
            i += 1
            while i < len(args):
                opt = literal(args[i])
                if opt in WRAPPER_VALUE_OPTS:
                    i += 2
                elif opt is not None and (opt.startswith("-") or ASSIGNMENT.match(opt) or
                                          (name == "timeout" and re.match(r"^[0-9.]+[smhd]?$", opt))):
                    i += 1
                else:
                    break
    for key, value in node.items():
        if key in ("Pos", "End"):
            continue
        walk(value, out, funcs)


def main():
    status, found, funcs = 0, [], set()
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            tree = subprocess.run(["shfmt", "--to-json"], stdin=f, capture_output=True)
        if tree.returncode != 0:
            sys.stderr.write(f"{path}: shfmt: {tree.stderr.decode().strip()}\n")
            status = 1
            continue
        out = []
        walk(json.loads(tree.stdout), out, funcs)
        found += [(name, path, line) for name, line in out]
    # The functions of every file given: the scripts source each other.
    for name, path, line in found:
        if name not in funcs:
            print(f"{name} {path}:{line}")
    return status


if __name__ == "__main__":
    sys.exit(main())
