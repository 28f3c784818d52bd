#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks rendered scenario manifests against the resource.k8s.io/v1 and
core/v1 shapes the suite uses, the way a kube-apiserver with strict field
validation would: unknown fields, one-of rules, enum values, name formats,
and references between requests, constraints, config and containers.
A whitelist of the fields the suite writes, not the whole API: a template
that needs a new field adds it here, after checking the API reference.

Usage: check_manifests.py FILE...   (prints one line per problem, exit 1)"""
import re
import sys

import yaml

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")

# field -> nested schema (dict), "leaf", or ("list", schema)
SELECTOR = {"cel": {"expression": "leaf"}}
TOLERATION = {"key": "leaf", "operator": "leaf", "value": "leaf", "effect": "leaf", "tolerationSeconds": "leaf"}
SUBREQUEST_FIELDS = {"name": "leaf", "deviceClassName": "leaf", "selectors": ("list", SELECTOR),
                     "allocationMode": "leaf", "count": "leaf", "tolerations": ("list", TOLERATION),
                     "capacity": {"requests": "leaf"}}
EXACT = {"deviceClassName": "leaf", "selectors": ("list", SELECTOR), "allocationMode": "leaf", "count": "leaf",
         "adminAccess": "leaf", "tolerations": ("list", TOLERATION), "capacity": {"requests": "leaf"}}
REQUEST = {"name": "leaf", "exactly": EXACT, "firstAvailable": ("list", SUBREQUEST_FIELDS)}
OPAQUE = {"driver": "leaf", "parameters": "leaf"}
CLAIM_SPEC = {"devices": {"requests": ("list", REQUEST),
                          "constraints": ("list", {"requests": "leaf", "matchAttribute": "leaf",
                                                   "distinctAttribute": "leaf"}),
                          "config": ("list", {"requests": "leaf", "opaque": OPAQUE})}}
METADATA = {"name": "leaf", "namespace": "leaf", "labels": "leaf", "annotations": "leaf"}
NODE_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": (
    "list", {"matchFields": "leaf", "matchExpressions": "leaf"})}}
CONTAINER = {"name": "leaf", "image": "leaf", "imagePullPolicy": "leaf", "command": "leaf", "args": "leaf",
             "resources": {"claims": ("list", {"name": "leaf", "request": "leaf"}),
                           "requests": "leaf", "limits": "leaf"},
             "volumeMounts": ("list", {"name": "leaf", "mountPath": "leaf", "readOnly": "leaf"})}
# DeviceTaintRule: the same spec in v1alpha3 (1.35), v1beta2 (1.36) and v1
# (1.37); from 1.35 on the selector has only driver, pool and device.
TAINT_RULE = {"metadata": METADATA, "spec": {
    "deviceSelector": {"driver": "leaf", "pool": "leaf", "device": "leaf"},
    "taint": {"key": "leaf", "value": "leaf", "effect": "leaf"}}}
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
KINDS = {
    ("v1", "Namespace"): {"metadata": METADATA},
    ("v1", "Pod"): {"metadata": METADATA, "spec": {
        "terminationGracePeriodSeconds": "leaf", "affinity": {"nodeAffinity": NODE_AFFINITY},
        "nodeSelector": "leaf", "nodeName": "leaf", "restartPolicy": "leaf", "tolerations": ("list", TOLERATION),
        "volumes": ("list", {"name": "leaf", "hostPath": {"path": "leaf", "type": "leaf"}}),
        "resourceClaims": ("list", {"name": "leaf", "resourceClaimName": "leaf", "resourceClaimTemplateName": "leaf"}),
        "containers": ("list", CONTAINER)}},
    ("resource.k8s.io/v1", "ResourceClaim"): {"metadata": METADATA, "spec": CLAIM_SPEC},
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): {"metadata": METADATA, "spec": {
        "metadata": METADATA, "spec": CLAIM_SPEC}},
    ("resource.k8s.io/v1", "DeviceClass"): {"metadata": METADATA, "spec": {
        "selectors": ("list", SELECTOR), "config": ("list", {"opaque": OPAQUE}), "extendedResourceName": "leaf"}},
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"): TAINT_RULE,
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"): TAINT_RULE,
    ("resource.k8s.io/v1", "DeviceTaintRule"): TAINT_RULE,
}


def walk(value, schema, path, problems):
    if schema == "leaf":
        return
    if isinstance(schema, tuple):
        if not isinstance(value, list):
            problems.append(f"{path}: must be a list")
            return
        for i, item in enumerate(value):
            walk(item, schema[1], f"{path}[{i}]", problems)
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: must be a mapping")
        return
    for key, sub in value.items():
        if key not in schema:
            problems.append(f'{path}: unknown field "{key}"')
        else:
            walk(sub, schema[key], f"{path}.{key}" if path else key, problems)


def qualified(name):
    if "/" in name:
        domain, ident = name.split("/", 1)
        return bool(DNS_SUBDOMAIN.match(domain)) and bool(C_IDENT.match(ident))
    return False


def check_selectors(selectors, path, problems):
    for i, sel in enumerate(selectors or []):
        expr = sel.get("cel", {}).get("expression")
        if not isinstance(expr, str) or not expr.strip():
            problems.append(f"{path}.selectors[{i}].cel.expression: must be a non-empty string")


def check_tolerations(tolerations, path, problems):
    for i, t in enumerate(tolerations or []):
        tpath = f"{path}.tolerations[{i}]"
        op = t.get("operator", "Equal")
        if op not in ("Exists", "Equal"):
            problems.append(f'{tpath}.operator: "{op}" is not Exists or Equal')
        if op == "Exists" and t.get("value"):
            problems.append(f"{tpath}.value: must be empty with operator Exists")
        if "effect" in t and t["effect"] not in TAINT_EFFECTS:
            problems.append(f'{tpath}.effect: "{t["effect"]}" is not one of {", ".join(TAINT_EFFECTS)}')
        if "tolerationSeconds" in t and t.get("effect") != "NoExecute":
            problems.append(f"{tpath}.tolerationSeconds: only with effect NoExecute")


def extended_resource_name(name):
    """v1helper.IsExtendedResourceName: domain/name outside kubernetes.io."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    domain, short = name.split("/", 1)
    return bool(DNS_SUBDOMAIN.match(domain)) and bool(re.match(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", short))


def check_count(req, path, problems):
    mode = req.get("allocationMode", "ExactCount")
    if mode not in ("ExactCount", "All"):
        problems.append(f'{path}.allocationMode: "{mode}" is not ExactCount or All')
    if "count" in req:
        if mode != "ExactCount":
            problems.append(f"{path}.count: only with allocationMode ExactCount")
        if not isinstance(req["count"], int) or isinstance(req["count"], bool) or req["count"] < 1:
            problems.append(f"{path}.count: must be a whole number >= 1")


def check_claim_spec(spec, path, problems):
    devices = spec.get("devices", {})
    names = set()
    for i, req in enumerate(devices.get("requests", [])):
        rpath = f"{path}.devices.requests[{i}]"
        name = req.get("name", "")
        if not DNS_LABEL.match(str(name)):
            problems.append(f'{rpath}.name: "{name}" is not a DNS label')
        names.add(name)
        if ("exactly" in req) == ("firstAvailable" in req):
            problems.append(f"{rpath}: exactly one of exactly or firstAvailable is required")
        if "exactly" in req:
            ex = req["exactly"]
            if not ex.get("deviceClassName"):
                problems.append(f"{rpath}.exactly.deviceClassName: required")
            check_count(ex, f"{rpath}.exactly", problems)
            check_selectors(ex.get("selectors"), f"{rpath}.exactly", problems)
            check_tolerations(ex.get("tolerations"), f"{rpath}.exactly", problems)
        for j, sub in enumerate(req.get("firstAvailable", [])):
            spath = f"{rpath}.firstAvailable[{j}]"
            if not DNS_LABEL.match(str(sub.get("name", ""))):
                problems.append(f"{spath}.name: not a DNS label")
            if not sub.get("deviceClassName"):
                problems.append(f"{spath}.deviceClassName: required")
            check_count(sub, spath, problems)
            check_selectors(sub.get("selectors"), spath, problems)
            names.add(f"{name}/{sub.get('name')}")
    for i, con in enumerate(devices.get("constraints", [])):
        cpath = f"{path}.devices.constraints[{i}]"
        attrs = [k for k in ("matchAttribute", "distinctAttribute") if k in con]
        if len(attrs) != 1:
            problems.append(f"{cpath}: exactly one of matchAttribute or distinctAttribute is required")
        for k in attrs:
            if not qualified(str(con[k])):
                problems.append(f'{cpath}.{k}: "{con[k]}" is not a fully qualified name (domain/name)')
        for r in con.get("requests", []):
            if r not in names:
                problems.append(f'{cpath}.requests: "{r}" is not a request of the claim')
    for i, cfg in enumerate(devices.get("config", [])):
        cpath = f"{path}.devices.config[{i}]"
        check_opaque(cfg, cpath, problems)
        for r in cfg.get("requests", []):
            if r not in names:
                problems.append(f'{cpath}.requests: "{r}" is not a request of the claim')


def check_opaque(cfg, path, problems):
    opaque = cfg.get("opaque")
    if not isinstance(opaque, dict):
        problems.append(f"{path}.opaque: required")
        return
    if not DNS_SUBDOMAIN.match(str(opaque.get("driver", ""))):
        problems.append(f"{path}.opaque.driver: not a driver name")
    if not isinstance(opaque.get("parameters"), dict):
        problems.append(f"{path}.opaque.parameters: must be an object")


def check_pod(spec, path, problems):
    claims = set()
    for i, rc in enumerate(spec.get("resourceClaims", [])):
        sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if k in rc]
        if len(sources) != 1:
            problems.append(f"{path}.resourceClaims[{i}]: exactly one of resourceClaimName, resourceClaimTemplateName")
        claims.add(rc.get("name"))
    for i, ctr in enumerate(spec.get("containers", [])):
        if not ctr.get("image"):
            problems.append(f"{path}.containers[{i}].image: required")
        res = ctr.get("resources", {})
        for j, cl in enumerate(res.get("claims", [])):
            if cl.get("name") not in claims:
                problems.append(f'{path}.containers[{i}].resources.claims[{j}]: "{cl.get("name")}" is not a pod claim')
        # The suite asks only for extended resources, which must be whole
        # numbers and equal in requests and limits.
        for part in ("requests", "limits"):
            for name, qty in (res.get(part) or {}).items():
                if not extended_resource_name(str(name)):
                    problems.append(f'{path}.containers[{i}].resources.{part}: "{name}" is not an extended resource name')
                if not isinstance(qty, int) or isinstance(qty, bool) or qty < 1:
                    problems.append(f"{path}.containers[{i}].resources.{part}[{name}]: must be a whole number >= 1")
        if res.get("requests", {}) != res.get("limits", res.get("requests", {})):
            problems.append(f"{path}.containers[{i}].resources: extended resources need requests equal to limits")


def check(doc, where, problems):
    key = (doc.get("apiVersion"), doc.get("kind"))
    schema = KINDS.get(key)
    if schema is None:
        problems.append(f"{where}: unexpected apiVersion/kind {key}")
        return
    found = []
    rest = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind")}
    walk(rest, schema, "", found)
    problems.extend(f"{where}: {p}" for p in found)
    name = doc.get("metadata", {}).get("name", "")
    pattern = DNS_SUBDOMAIN if key[1] in ("DeviceClass", "DeviceTaintRule") else DNS_LABEL
    if not pattern.match(str(name)):
        problems.append(f'{where}: metadata.name "{name}" is not a valid {key[1]} name')
    spec = doc.get("spec", {})
    if key[1] == "ResourceClaim":
        check_claim_spec(spec, f"{where}: spec", problems)
    elif key[1] == "ResourceClaimTemplate":
        check_claim_spec(spec.get("spec", {}), f"{where}: spec.spec", problems)
    elif key[1] == "DeviceClass":
        check_selectors(spec.get("selectors"), f"{where}: spec", problems)
        for i, cfg in enumerate(spec.get("config", [])):
            check_opaque(cfg, f"{where}: spec.config[{i}]", problems)
    elif key[1] == "Pod":
        check_pod(spec, f"{where}: spec", problems)
    elif key[1] == "DeviceTaintRule":
        sel = spec.get("deviceSelector") or {}
        if not DNS_SUBDOMAIN.match(str(sel.get("driver", ""))):
            problems.append(f"{where}: spec.deviceSelector.driver: not a driver name")
        taint = spec.get("taint") or {}
        key = str(taint.get("key", ""))
        prefix, _, short = key.rpartition("/")
        if (prefix and not DNS_SUBDOMAIN.match(prefix)) or not re.match(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", short):
            problems.append(f'{where}: spec.taint.key: "{key}" is not a label key')
        if taint.get("effect") not in TAINT_EFFECTS:
            problems.append(f'{where}: spec.taint.effect: "{taint.get("effect")}" is not one of {", ".join(TAINT_EFFECTS)}')


def main(files):
    problems = []
    for path in files:
        with open(path) as f:
            for n, doc in enumerate(yaml.safe_load_all(f)):
                if doc is not None:
                    check(doc, f"{path}#{n}", problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
