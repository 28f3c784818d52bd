#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares what `helm template` renders from manifests/helm/fakehw-dra with
what kustomize renders from manifests/base (or an overlay): the same objects,
field for field, once the differences that belong to each tool are taken
out.

  compare_helm.py KUSTOMIZE_OUTPUT HELM_OUTPUT

Taken out before comparing:
  - the labels helm adds (helm.sh/chart, app.kubernetes.io/instance,
    app.kubernetes.io/managed-by) and the pod template's
    checksum/fakehw-config annotation (helm's way to roll the pods);
  - the hash suffix kustomize's configMapGenerator puts on the inventory
    ConfigMap's name (fakehw-config-<hash>), in the ConfigMap and where the
    DaemonSet refers to it;
  - document order.
Prints one line per difference (kind/name: path: kustomize value vs helm
value) and exits 1 when there is any."""
import re
import sys

import yaml

HELM_LABELS = {"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"}
HELM_ANNOTATIONS = {"checksum/fakehw-config"}
CONFIGMAP_HASH = re.compile(r"^(fakehw-config)-[a-z0-9]{10}$")


def load(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def strip_meta(md):
    for key, drop in (("labels", HELM_LABELS), ("annotations", HELM_ANNOTATIONS)):
        if key in md:
            md[key] = {k: v for k, v in md[key].items() if k not in drop}
            if not md[key]:
                del md[key]


def unhash(value):
    if isinstance(value, dict):
        return {k: unhash(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unhash(v) for v in value]
    if isinstance(value, str):
        m = CONFIGMAP_HASH.match(value)
        return m.group(1) if m else value
    return value


def normalise(docs):
    out = {}
    for d in docs:
        d = unhash(d)
        strip_meta(d.setdefault("metadata", {}))
        tmpl = d.get("spec", {}).get("template", {}) if isinstance(d.get("spec"), dict) else {}
        if "metadata" in tmpl:
            strip_meta(tmpl["metadata"])
            if not tmpl["metadata"]:
                del tmpl["metadata"]
        key = f"{d.get('kind')}/{d['metadata'].get('name')}"
        if key in out:
            print(f"{key}: rendered twice", file=sys.stderr)
            sys.exit(1)
        out[key] = d
    return out


def diff(path, a, b, found):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                found.append(f"{path}.{k}: only in helm: {b[k]!r}")
            elif k not in b:
                found.append(f"{path}.{k}: only in kustomize: {a[k]!r}")
            else:
                diff(f"{path}.{k}", a[k], b[k], found)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(f"{path}[{i}]", x, y, found)
    elif a != b:
        found.append(f"{path}: kustomize {a!r} vs helm {b!r}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    k, h = normalise(load(sys.argv[1])), normalise(load(sys.argv[2]))
    found = []
    for key in sorted(set(k) | set(h)):
        if key not in h:
            found.append(f"{key}: rendered by kustomize only")
        elif key not in k:
            found.append(f"{key}: rendered by helm only")
        else:
            diff(key, k[key], h[key], found)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
