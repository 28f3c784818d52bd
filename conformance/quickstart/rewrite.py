#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrites one of NVIDIA's quickstart specs for the quickstart check
(run.sh): every object as written, but for what the test image cannot run.

Each container of a Pod or of a Deployment's pod template gets the test
image; a command ["bash", "-c"] runs with SHELL instead (busybox has no
bash); args that do not start with "nvidia-smi -L;" (a CUDA sample, a bare
nvidia-smi) become the listing most quickstart containers run,
"nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait".  Nothing else
changes: claims, templates, configs, selectors, tolerations stay.

Prints one JSON object: {"list": a v1 List of the objects, "namespaces":
[the namespaces of its namespaced objects], "pods": the number of pods the
spec makes (Pods, plus replicas of Deployments), "notes": [what was changed
beyond the image, one line each]}.  Exit status 1 with a message naming the
file and object for a spec it cannot check (not YAML, a kind whose pods
it cannot count, a container without a name).

Usage: rewrite.py SPEC IMAGE SHELL
"""
import json
import sys

import yaml

LISTING = "nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait"
# Kinds that make pods: how many, from the object.
POD_KINDS = {
    "Pod": lambda o: 1,
    "Deployment": lambda o: int((o.get("spec") or {}).get("replicas", 1)),
}
# Kinds that make pods the check does not count: refused, not guessed.
OTHER_POD_KINDS = {"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}
CLUSTER_SCOPED = {"Namespace", "DeviceClass", "ClusterRole", "ClusterRoleBinding"}


class SpecError(Exception):
    pass


def pod_spec(obj):
    """The pod spec of a Pod or of a Deployment's template."""
    if obj["kind"] == "Pod":
        return obj.get("spec") or {}
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def rewrite_container(ctr, where, image, shell, notes):
    name = ctr.get("name")
    if not name:
        raise SpecError("%s: a container without a name" % where)
    ctr["image"] = image
    command = ctr.get("command")
    args = ctr.get("args") or []
    shown = " ".join(str(a) for a in (command or []) + args)
    if command and command[0] == "bash":
        command[0] = shell
    script = args[-1] if args else ""
    if not (isinstance(script, str) and script.startswith("nvidia-smi -L;")):
        notes.append("%s container %s ran %s; it runs the listing instead" % (where, name, json.dumps(shown)))
        ctr["command"] = [shell, "-c"]
        ctr["args"] = [LISTING]


def rewrite(path, image, shell):
    try:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        raise SpecError("%s: %s" % (path, e)) from e
    items, namespaces, notes, pods = [], [], [], 0
    for i, obj in enumerate(docs):
        where = "%s: object %d" % (path, i + 1)
        if not isinstance(obj, dict) or "kind" not in obj:
            raise SpecError("%s: not a Kubernetes object" % where)
        kind = obj["kind"]
        meta = obj.get("metadata") or {}
        where = "%s (%s %s)" % (where, kind, meta.get("name", "?"))
        if kind in OTHER_POD_KINDS:
            raise SpecError("%s: the check counts the pods of Pods and Deployments only" % where)
        if kind not in CLUSTER_SCOPED and meta.get("namespace") and meta["namespace"] not in namespaces:
            namespaces.append(meta["namespace"])
        if kind in POD_KINDS:
            pods += POD_KINDS[kind](obj)
            for ctr in pod_spec(obj).get("containers") or []:
                rewrite_container(ctr, where, image, shell, notes)
        items.append(obj)
    if pods == 0:
        raise SpecError("%s: no Pod or Deployment: nothing to check" % path)
    if len(namespaces) != 1:
        raise SpecError("%s: objects in %s: the check takes a spec of one namespace, as the quickstart's are"
                        % (path, ", ".join(namespaces) or "no namespace"))
    return {"list": {"apiVersion": "v1", "kind": "List", "items": items},
            "namespaces": namespaces, "pods": pods, "notes": notes}


def main(argv):
    if len(argv) != 4:
        print("usage: rewrite.py SPEC IMAGE SHELL", file=sys.stderr)
        return 2
    try:
        out = rewrite(argv[1], argv[2], argv[3])
    except SpecError as e:
        print("quickstart: %s" % e, file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
