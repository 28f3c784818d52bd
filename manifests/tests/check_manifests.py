#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks fakehw-dra's deployment files against what the programs need.

  check_manifests.py rendered --driver NAME [--plugin-help FILE] [--fakehw-help FILE]
                     [--forbid TEXT] FILE
      FILE is `kubectl kustomize` output of manifests/base or an overlay.
  check_manifests.py examples --driver NAME --rendered FILE EXAMPLE...
  check_manifests.py kind-config FILE...
  check_manifests.py fakehw-config FILE
  check_manifests.py assemble DIR
      prints the resources of a kustomization that uses only `resources` and
      `configMapGenerator` (manifests/base), as kustomize would but without
      the name hash, so the checks above run where no kubectl is installed.

Prints one line per problem ("FILE: where: what") and exits 1 when there is
any, 0 otherwise.  Needs PyYAML; TOML is read with the standard tomllib.
"""

import argparse
import fnmatch
import os
import re
import sys
import tomllib

import yaml

# --- what the programs expect ------------------------------------------------

NAMESPACE = "fakehw-dra"
DAEMONSET = "fakehw-dra-kubelet-plugin"
SERVICE_ACCOUNT = "fakehw-dra-kubelet-plugin"
POLICY = "fakehw-dra-resourceslices"
DEFAULT_DRIVER = "gpu.fakehw.example.com"
# The pod label the conformance suite selects the driver's pods by.
POD_LABEL = ("app.kubernetes.io/name", "fakehw-dra")

# Flag defaults of fakehw-kubelet-plugin and fakehw (the project's fixed
# names).  When the built programs are at hand their --help is compared too.
PLUGIN_PATH_DEFAULTS = {
    "KUBELET_REGISTRAR_DIRECTORY_PATH": "/var/lib/kubelet/plugins_registry",
    "KUBELET_PLUGINS_DIRECTORY_PATH": "/var/lib/kubelet/plugins",
    "CDI_ROOT": "/var/run/cdi",
    "FAKEGPU_SMI": "/var/lib/fakehw/bin/fakegpu-smi",
}
FAKEHW_PATH_DEFAULTS = {"FAKEHW_MOUNT": "/var/run/fakehw"}
# The tree on the host: fakehw's mount and the plugin's FAKEHW_HOST_ROOT
# (or FAKEHW_ROOT when that is unset), whose default is this path; the
# plugin may read it elsewhere in its container (FAKEHW_ROOT).
TREE_HOST_PATH = "/var/run/fakehw"

# Every call fakehw-kubelet-plugin makes to the API server, as RBAC sees it:
# (API group, resource[/subresource], verb).  resourceclaims/driver is the
# 1.36 synthetic subresource for writing status.devices; it is checked with
# the driver as resource name.
API_CALLS = [
    ("", "nodes", "get"),  # GET /api/v1/nodes/{node}
    ("resource.k8s.io", "resourceclaims", "get"),  # GET .../resourceclaims/{name}
    ("resource.k8s.io", "resourceclaims", "list"),  # the binder (binding conditions)
    ("resource.k8s.io", "resourceclaims", "watch"),
    ("resource.k8s.io", "resourceclaims/status", "patch"),  # PATCH .../status
    ("resource.k8s.io", "resourceclaims/driver", "associated-node:patch"),
    ("resource.k8s.io", "resourceslices", "list"),  # with field selector
    ("resource.k8s.io", "resourceslices", "watch"),
    ("resource.k8s.io", "resourceslices", "create"),
    ("resource.k8s.io", "resourceslices", "update"),
    ("resource.k8s.io", "resourceslices", "delete"),
]
NAMED_RESOURCES = {"resourceclaims/driver"}  # must be limited to the driver

CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "DeviceClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}

# Feature gates by release (each release's pkg/features/kube_features.go):
# the gates of interest to a DRA cluster that exist in each minor, and those
# locked on (GA) there, which a config must not name.  Each minor's gates
# are the previous minor's, with those it adds, less those it removes.
GATES = {
    "1.34": {
        "DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList",
        "DRAResourceClaimDeviceStatus", "DRADeviceTaints", "DRAConsumableCapacity",
        "DRAExtendedResource", "DRAPartitionableDevices", "DRADeviceBindingConditions",
        "ResourceHealthStatus",
    },
}
GATES["1.35"] = GATES["1.34"] | {"DRADeviceTaintRules"}
GATES["1.36"] = GATES["1.35"] | {
    "ResourceHealthStatusMessage", "DRAResourceClaimGranularStatusAuthorization",
    "DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAResourcePoolStatus",
    "DRAWorkloadResourceClaims",
}
# kubernetes v1.37.2 pkg/features/kube_features.go
GATES["1.37"] = GATES["1.36"] | {
    "DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAFractionalCapacityRange",
    "DRAOptionalNodeOperations", "DRAPartitionableDevicesType", "DRASchedulerFilterTimeout",
}
# kubernetes v1.38.0-beta.0 pkg/features/kube_features.go: the
# DynamicResourceAllocation gate is removed (a component given it refuses
# to start).
GATES["1.38"] = GATES["1.37"] - {"DynamicResourceAllocation"}
LOCKED_GATES = {
    "1.34": set(),
    "1.35": {"DynamicResourceAllocation"},
    "1.36": {"DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList"},
    "1.37": {"DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList",
             "DRAExtendedResource", "DRAResourceClaimDeviceStatus"},
    "1.38": {"DRAAdminAccess", "DRAPrioritizedList", "DRAExtendedResource",
             "DRAResourceClaimDeviceStatus", "DRADeviceBindingConditions", "DRADeviceTaints",
             "DRADeviceTaintRules", "DRAPartitionableDevices"},
}
# resource.k8s.io versions the API server can serve per release (v1 is on).
RUNTIME_APIS = {
    "1.34": {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"},
    "1.35": {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"},
    "1.36": {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"},
    "1.37": {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"},
    # pkg/controlplane/instance.go of v1.38.0-beta.0: all three still off by default.
    "1.38": {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"},
}
# The API version serving DeviceTaintRule, needed when the taint gates are on.
TAINT_RULE_API = {
    "1.34": "resource.k8s.io/v1alpha3",
    "1.35": "resource.k8s.io/v1alpha3",
    "1.36": "resource.k8s.io/v1beta2",
    "1.37": "resource.k8s.io/v1",  # GA: served by default, nothing to turn on
    "1.38": "resource.k8s.io/v1",
}
KIND_CLUSTER_KEYS = {
    "kind", "apiVersion", "name", "nodes", "networking", "featureGates", "runtimeConfig",
    "kubeadmConfigPatches", "kubeadmConfigPatchesJSON6902", "containerdConfigPatches",
    "containerdConfigPatchesJSON6902",
}
KIND_NODE_KEYS = {
    "role", "image", "labels", "extraMounts", "extraPortMappings", "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
}
# Where containerd reads enable_cdi, by containerd config version.
CONTAINERD_CRI_PLUGIN = {2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}

# resource.k8s.io/v1 request fields; anything else is refused by the API
# server's strict decoding (e.g. a bare `all:` request).
DEVICE_REQUEST_KEYS = {"name", "exactly", "firstAvailable"}
EXACT_REQUEST_KEYS = {
    "deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
    "capacity",
}

# --- reporting -------------------------------------------------------------------

problems = []


def fail(where, what):
    problems.append(f"{where}: {what}")


def load_all(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        fail(path, f"not YAML: {e}")
        return text, []
    return text, docs


def index(docs):
    return {(d.get("kind"), d.get("metadata", {}).get("name")): d for d in docs}


def parse_help(path):
    """env variable -> default (None when the flag has none) from a --help text."""
    flags = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"\[([A-Z0-9_]+)\](?: \(default (?:\"(.*)\"|(\S+))\))?\s*$", line)
            if m:
                flags[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    if not flags:
        fail(path, "no flags with environment variables found in this --help output")
    return flags


# --- the rendered DaemonSet --------------------------------------------------


def env_of(container):
    out = {}
    for e in container.get("env", []):
        if "value" in e:
            out[e["name"]] = e["value"]
        else:
            ref = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            out[e["name"]] = ("fieldRef", ref)
    return out


def mount_for(container, volumes, path):
    """The volumeMount whose mountPath is path or its nearest parent, with its volume."""
    best = None
    for m in container.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best[0]["mountPath"]):
                best = (m, volumes.get(m["name"], {}))
    return best


def check_host_path(where, container, volumes, path, writable, propagation=None, host=None):
    """path must be a host path mounted at the same path in the container
    (or host path host, when given, mounted at path)."""
    found = mount_for(container, volumes, path)
    if found is None:
        fail(where, f"{path} is not under any volumeMount")
        return
    m, vol = found
    hp = vol.get("hostPath", {}).get("path")
    if hp is None:
        fail(where, f"{path} is under volume {m['name']}, which is not a hostPath")
        return
    host_path = hp.rstrip("/") + path[len(m["mountPath"].rstrip("/")):]
    if host is not None and host_path != host:
        fail(where, f"{path} is host path {host_path}, not {host}")
    elif host is None and host_path != path:
        fail(where, f"{path} is host path {host_path}: the kubelet and the runtime need the same path")
    if writable and m.get("readOnly"):
        fail(where, f"{path} is mounted read-only but is written to")
    if propagation and m.get("mountPropagation") != propagation:
        fail(where, f"{path} needs mountPropagation {propagation}, has {m.get('mountPropagation', 'None')}")


def probe_command(probe):
    return (probe or {}).get("exec", {}).get("command", [])


def check_env_against_help(where, env, help_flags, path_defaults, driver):
    for name, value in env.items():
        if name not in help_flags:
            fail(where, f"env {name} is no flag of the program (its --help does not list it)")
        elif name in path_defaults and help_flags[name] != value:
            fail(where, f"env {name}={value}, but the program's default is {help_flags[name]}")
    # No DRIVER_NAME default: the default personality's driver name.
    personality_driver = {"fakehw": DEFAULT_DRIVER, "nvidia": "gpu.nvidia.com"}
    default = help_flags.get("DRIVER_NAME") or personality_driver.get(help_flags.get("PERSONALITY"))
    if "DRIVER_NAME" in help_flags and driver == DEFAULT_DRIVER and default != driver:
        fail(where, f"the plugin's default driver name is {default}, not {driver}")


# The new pod's fakehw waits for the old pod to become unneeded (the new pod
# ready, minReadySeconds) and to stop (terminationGracePeriodSeconds).
TAKEOVER_MIN_SECONDS = 60


def pod_uid_passed(spec):
    """The plugin container gets its pod's UID as POD_UID (surge rolling
    updates, docs/driver.md)."""
    for c in spec.get("containers", []):
        if c.get("name") != "plugin":
            continue
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("fieldRef", {})
            if e.get("name") == "POD_UID" and ref.get("fieldPath") == "metadata.uid":
                return True
    return False


def check_daemonset(f, objs, driver, plugin_help, fakehw_help):
    ds = objs.get(("DaemonSet", DAEMONSET))
    if ds is None:
        fail(f, f"no DaemonSet {DAEMONSET}")
        return
    w = f"{f}: DaemonSet {DAEMONSET}"
    if ds["metadata"].get("namespace") != NAMESPACE:
        fail(w, f"namespace is {ds['metadata'].get('namespace')}, not {NAMESPACE}")
    spec = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    if labels.get(POD_LABEL[0]) != POD_LABEL[1]:
        fail(w, f"pods lack the label {POD_LABEL[0]}={POD_LABEL[1]} the conformance suite selects them by")
    for k, v in ds["spec"]["selector"].get("matchLabels", {}).items():
        if labels.get(k) != v:
            fail(w, f"selector {k}={v} does not match the pod template's labels")
    surge = ds["spec"].get("updateStrategy", {}).get("rollingUpdate", {}).get("maxSurge", 0)
    if surge not in (0, "0", "0%") and not pod_uid_passed(spec):
        fail(w, f"maxSurge {surge} without POD_UID from metadata.uid in the plugin's env: "
                "two instances on a node would share their socket names")
    sa = spec.get("serviceAccountName")
    if sa != SERVICE_ACCOUNT or ("ServiceAccount", sa) not in objs:
        fail(w, f"serviceAccountName {sa} is not the ServiceAccount {SERVICE_ACCOUNT} of the manifests")
    # The plugin's shutdown deadline is 2 s (docs/reliability.md), then the
    # sidecar unmounts: less than 5 s could kill either half-way.
    if not spec.get("terminationGracePeriodSeconds", 30) >= 5:
        fail(w, "terminationGracePeriodSeconds must leave the plugin its 2 s shutdown "
                "and fakehw time to unmount (at least 5)")

    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    inits = spec.get("initContainers", [])
    init_names = [c["name"] for c in inits]
    if init_names != ["install-fakegpu-smi", "fakehw"]:
        fail(w, f"init containers are {init_names}, want install-fakegpu-smi, then the fakehw sidecar")
    by_name = {c["name"]: c for c in inits + spec.get("containers", [])}
    if [c["name"] for c in spec.get("containers", [])] != ["plugin"]:
        fail(w, "the only regular container must be plugin")
    plugin, fakehw, installer = by_name.get("plugin"), by_name.get("fakehw"), by_name.get("install-fakegpu-smi")
    if not (plugin and fakehw and installer):
        return

    images = {c.get("image") for c in by_name.values()}
    if len(images) != 1:
        fail(w, f"containers use different images: {sorted(images)}")
    for c in by_name.values():
        res = c.get("resources", {})
        for kind_, keys in (("requests", ("cpu", "memory")), ("limits", ("memory",))):
            for k in keys:
                if k not in res.get(kind_, {}):
                    fail(w, f"container {c['name']} has no resources.{kind_}.{k}")

    surge = ds["spec"].get("updateStrategy", {}).get("rollingUpdate", {}).get("maxSurge", 0)
    takeover = env_of(fakehw).get("FAKEHW_TAKEOVER_TIMEOUT", "0")
    if surge not in (0, "0", "0%") and not (isinstance(takeover, str) and takeover.isdigit()
                                            and int(takeover) >= TAKEOVER_MIN_SECONDS):
        fail(w, f"maxSurge {surge} with FAKEHW_TAKEOVER_TIMEOUT {takeover} on the fakehw sidecar: the "
                "new pod's fakehw must wait (at least "
                f"{TAKEOVER_MIN_SECONDS} s) for the old pod's to unmount, not refuse")

    # plugin
    wp = f"{w}: container plugin"
    env = env_of(plugin)
    if env.get("DRIVER_NAME") != driver:
        fail(wp, f"DRIVER_NAME is {env.get('DRIVER_NAME')}, want {driver}")
    if env.get("NODE_NAME") != ("fieldRef", "spec.nodeName"):
        fail(wp, "NODE_NAME must come from the downward API (fieldRef spec.nodeName)")
    for name, default in PLUGIN_PATH_DEFAULTS.items():
        if env.get(name) != default:
            fail(wp, f"{name}={env.get(name)}, but the plugin's documented default is {default}")
    registrar = env.get("KUBELET_REGISTRAR_DIRECTORY_PATH", "")
    plugins_dir = env.get("KUBELET_PLUGINS_DIRECTORY_PATH", "")
    check_host_path(wp, plugin, volumes, registrar, writable=True)
    check_host_path(wp, plugin, volumes, f"{plugins_dir}/{driver}", writable=True)
    check_host_path(wp, plugin, volumes, env.get("CDI_ROOT", ""), writable=True)
    # The plugin reads the tree at FAKEHW_ROOT; CDI specs name its host path,
    # FAKEHW_HOST_ROOT (FAKEHW_ROOT when unset).  Writable: the binder asks
    # fakehw to attach a device by writing its attach file (binding
    # conditions, docs/driver.md).
    tree = env.get("FAKEHW_ROOT", "")
    tree_host = env.get("FAKEHW_HOST_ROOT") or tree
    if tree_host != TREE_HOST_PATH:
        fail(wp, f"the tree's host path (FAKEHW_HOST_ROOT, else FAKEHW_ROOT) is {tree_host}, "
                 f"but the plugin's documented default is {TREE_HOST_PATH}")
    check_host_path(wp, plugin, volumes, tree, writable=True, propagation="HostToContainer", host=tree_host)
    found = mount_for(plugin, volumes, tree)
    if found and found[0]["mountPath"].rstrip("/") == tree.rstrip("/"):
        fail(wp, f"mounts the tree's mount point {tree} itself: fakehw's unmount and a new mount "
                 "there (a restart, a takeover) do not reach it, and it keeps the dead tree; mount "
                 "a parent with HostToContainer")
    smi = env.get("FAKEGPU_SMI", "")
    check_host_path(wp, plugin, volumes, os.path.dirname(smi), writable=False)
    ready = env.get("READY_FILE")
    if not ready:
        fail(wp, "READY_FILE is not set: nothing tells the readiness probe the plugin is registered")
    else:
        found = mount_for(plugin, volumes, os.path.dirname(ready))
        if found is None or "emptyDir" not in found[1] or found[0].get("readOnly"):
            fail(wp, f"READY_FILE {ready} must be in a writable emptyDir, not left over from an old pod")
        if ready not in probe_command(plugin.get("readinessProbe")):
            fail(wp, f"the readiness probe does not test READY_FILE {ready}: {probe_command(plugin.get('readinessProbe'))}")
    sc = plugin.get("securityContext", {})
    if sc.get("privileged"):
        fail(wp, "must not be privileged")
    if sc.get("allowPrivilegeEscalation") is not False:
        fail(wp, "allowPrivilegeEscalation must be false")
    if "ALL" not in sc.get("capabilities", {}).get("drop", []) or sc.get("capabilities", {}).get("add"):
        fail(wp, "must drop ALL capabilities and add none")
    if fakehw_dev := env_of(fakehw).get("FAKEHW_DEV_DIR"):
        check_host_path(wp, plugin, volumes, fakehw_dev, writable=False)
    if plugin_help:
        check_env_against_help(wp, env, plugin_help, PLUGIN_PATH_DEFAULTS, driver)
        if plugin_help.get("FAKEHW_ROOT") != TREE_HOST_PATH:
            fail(wp, f"the plugin's default FAKEHW_ROOT is {plugin_help.get('FAKEHW_ROOT')}, not {TREE_HOST_PATH}")

    # fakehw sidecar
    wf = f"{w}: container fakehw"
    fenv = env_of(fakehw)
    if fakehw.get("restartPolicy") != "Always":
        fail(wf, "must be a sidecar (init container with restartPolicy Always), so the plugin starts after the mount")
    for name, default in FAKEHW_PATH_DEFAULTS.items():
        if fenv.get(name) != default:
            fail(wf, f"{name}={fenv.get(name)}, but fakehw's documented default is {default}")
    mount = fenv.get("FAKEHW_MOUNT", "")
    if mount != tree_host:
        fail(wf, f"FAKEHW_MOUNT {mount} is not the tree's host path in the plugin's CDI specs, {tree_host}")
    check_host_path(wf, fakehw, volumes, mount, writable=True, propagation="Bidirectional")
    found = mount_for(fakehw, volumes, mount)
    if found and found[0]["mountPath"].rstrip("/") == mount.rstrip("/"):
        fail(wf, f"mounts {mount} itself: after a crash its dead FUSE mount cannot be bind-mounted again; mount a parent")
    if fenv.get("FAKEHW_CLEAR_STALE") != "true":
        fail(wf, "FAKEHW_CLEAR_STALE must be true, or a restart after a crash fails on the dead mount")
    if not fakehw.get("securityContext", {}).get("privileged"):
        fail(wf, "Bidirectional mount propagation is allowed only in a privileged container")
    if fenv.get("FAKEHW_DEV_DIR"):
        check_host_path(wf, fakehw, volumes, fenv["FAKEHW_DEV_DIR"], writable=True)
    else:
        fail(wf, "FAKEHW_DEV_DIR is not set: no device nodes for the CDI specs")
    if fenv.get("NODE_NAME") != ("fieldRef", "spec.nodeName"):
        fail(wf, "NODE_NAME must come from the downward API (fieldRef spec.nodeName)")
    if fenv.get("FAKEHW_FOREGROUND") != "true":
        fail(wf, "FAKEHW_FOREGROUND must be true: a container's process must not daemonize")
    startup = probe_command(fakehw.get("startupProbe"))
    if f"{mount}/generation" not in startup:
        fail(wf, f"the startup probe must wait for {mount}/generation, has {startup}")
    config = fenv.get("FAKEHW_CONFIG", "")
    found = mount_for(fakehw, volumes, os.path.dirname(config))
    cm_name = found[1].get("configMap", {}).get("name") if found else None
    cm = objs.get(("ConfigMap", cm_name))
    if cm is None:
        fail(wf, f"FAKEHW_CONFIG {config} is not in a mounted ConfigMap of the manifests")
    elif os.path.basename(config) not in cm.get("data", {}):
        fail(wf, f"ConfigMap {cm_name} has no key {os.path.basename(config)}")
    if fakehw_help:
        check_env_against_help(wf, fenv, fakehw_help, FAKEHW_PATH_DEFAULTS, driver)

    # the installer of fakegpu-smi
    wi = f"{w}: init container install-fakegpu-smi"
    check_host_path(wi, installer, volumes, os.path.dirname(smi), writable=True)
    script = " ".join(installer.get("command", []) + installer.get("args", []))
    if smi not in script:
        fail(wi, f"does not write {smi}, where the plugin's CDI specs mount fakegpu-smi from")


# --- RBAC and the admission policy ------------------------------------------------


def check_rbac(f, objs, driver):
    roles = [o for (k, _), o in objs.items() if k in ("ClusterRole", "Role")]
    if len(roles) != 1 or roles[0]["kind"] != "ClusterRole":
        fail(f, f"want exactly one ClusterRole, found {[(r['kind'], r['metadata']['name']) for r in roles]}")
        return
    role = roles[0]
    w = f"{f}: ClusterRole {role['metadata']['name']}"
    granted = set()
    for i, rule in enumerate(role.get("rules", [])):
        names = rule.get("resourceNames")
        for g in rule.get("apiGroups") or []:
            for r in rule.get("resources") or []:
                for v in rule.get("verbs") or []:
                    if "*" in (g, r, v):
                        fail(w, f"rules[{i}] uses a wildcard")
                    if r in NAMED_RESOURCES and names != [driver]:
                        fail(w, f"rules[{i}]: {r} must be limited to resourceNames [{driver}], has {names}")
                    if r not in NAMED_RESOURCES and names:
                        fail(w, f"rules[{i}]: {r} with resourceNames {names} would not cover list/watch or every object")
                    granted.add((g, r, v))
    needed = set(API_CALLS)
    for g, r, v in sorted(needed - granted):
        fail(w, f"does not allow {v} on {r}{' in group ' + g if g else ''}, which the plugin calls")
    for g, r, v in sorted(granted - needed):
        fail(w, f"allows {v} on {r}{' in group ' + g if g else ''}, which the plugin never calls")

    binding = objs.get(("ClusterRoleBinding", role["metadata"]["name"]))
    if binding is None:
        fail(f, f"no ClusterRoleBinding {role['metadata']['name']}")
    else:
        ref = binding.get("roleRef", {})
        if (ref.get("kind"), ref.get("name")) != ("ClusterRole", role["metadata"]["name"]):
            fail(f, f"ClusterRoleBinding refers to {ref}, not the ClusterRole")
        subject = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
        if subject not in binding.get("subjects", []):
            fail(f, f"ClusterRoleBinding does not bind ServiceAccount {NAMESPACE}/{SERVICE_ACCOUNT}")

    policy = objs.get(("ValidatingAdmissionPolicy", POLICY))
    w = f"{f}: ValidatingAdmissionPolicy {POLICY}"
    if policy is None:
        fail(f, f"no ValidatingAdmissionPolicy {POLICY}")
        return
    spec = policy["spec"]
    if spec.get("failurePolicy") != "Fail":
        fail(w, "failurePolicy must be Fail")
    rules = spec.get("matchConstraints", {}).get("resourceRules", [])
    ops = {op for r in rules if "resourceslices" in r.get("resources", []) for op in r.get("operations", [])}
    if not {"CREATE", "UPDATE", "DELETE"} <= ops:
        fail(w, f"must match CREATE, UPDATE and DELETE of resourceslices, matches {sorted(ops)}")
    user = f'"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"'
    if not any(user in c.get("expression", "") for c in spec.get("matchConditions", [])):
        fail(w, f"no matchCondition on the plugin's service account {user}")
    variables = {v["name"]: v["expression"] for v in spec.get("variables", [])}
    if variables.get("driverName") != f'"{driver}"':
        fail(w, f"variable driverName is {variables.get('driverName')}, want \"{driver}\"")
    if "authentication.kubernetes.io/node-name" not in variables.get("nodeName", ""):
        fail(w, "variable nodeName must come from the token's authentication.kubernetes.io/node-name")
    # Without it, credentials that carry no extra at all fail the lookup with
    # "no such key: extra" (seen on a 1.35 API server) instead of our message.
    if not variables.get("nodeName", "").startswith("has(request.userInfo.extra) &&"):
        fail(w, "variable nodeName must test has(request.userInfo.extra) first")
    exprs = " ".join(v.get("expression", "") for v in spec.get("validations", []))
    for needle in ("spec.nodeName == variables.nodeName", "spec.driver == variables.driverName"):
        if needle not in exprs:
            fail(w, f"no validation checks {needle}")
    pb = objs.get(("ValidatingAdmissionPolicyBinding", POLICY))
    if pb is None or pb["spec"].get("policyName") != POLICY or "Deny" not in pb["spec"].get("validationActions", []):
        fail(f, f"no ValidatingAdmissionPolicyBinding {POLICY} that denies")


# --- DeviceClasses ------------------------------------------------------------------

DOMAIN_REF = re.compile(r'device\.(attributes|capacity)\["([^"]*)"\]')


def check_device_classes(f, objs, driver):
    classes = {n: o for (k, n), o in objs.items() if k == "DeviceClass"}
    if driver not in classes:
        fail(f, f"no DeviceClass named {driver} for all of the driver's devices")
    want_first = f'device.driver == "{driver}"'
    for name, dc in classes.items():
        w = f"{f}: DeviceClass {name}"
        exprs = [s.get("cel", {}).get("expression", "").strip() for s in dc["spec"].get("selectors", [])]
        if not exprs or exprs[0] != want_first:
            fail(w, f"the first selector must be {want_first}, so that later ones only see this driver's devices")
        for e in exprs:
            for _, domain in DOMAIN_REF.findall(e):
                if domain != driver:
                    fail(w, f"selector reads the {domain} domain, not the driver's ({driver}): {e}")
        # The nvidia personality's gpu.nvidia.com takes whole GPUs only, as
        # NVIDIA's chart has it (its MIG devices have a class of their own).
        whole_gpus = [want_first, f'device.attributes["{driver}"].type == "gpu"']
        if name == driver and len(exprs) != 1 and exprs != whole_gpus:
            fail(w, "the all-devices class must select on the driver only (or, as NVIDIA's "
                    "gpu.nvidia.com, on whole GPUs)")
        ern = dc["spec"].get("extendedResourceName")
        if name == driver:
            if not is_extended_resource_name(ern):
                fail(w, f"extendedResourceName {ern!r} is not an extended resource name "
                        "(domain/name outside kubernetes.io, as a pod's resources.limits key)")
        elif ern is not None:
            fail(w, f"extendedResourceName {ern} belongs on the all-devices class only "
                    "(two classes with one name: the API server picks the newer)")


# v1helper.IsExtendedResourceName (k8s.io/kubernetes v1.37): not native
# (unprefixed or *kubernetes.io/), not "requests.", and "requests." + name a
# qualified name.
QUALIFIED_NAME = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def is_extended_resource_name(name):
    if not isinstance(name, str) or "/" not in name or "kubernetes.io/" in name:
        return False
    if name.startswith("requests."):
        return False
    prefix, _, short = ("requests." + name).rpartition("/")
    return (QUALIFIED_NAME.fullmatch("requests." + name) is not None and len(prefix) <= 253
            and len(short) <= 63)


METRICS_SERVICE = "fakehw-dra-metrics"


def check_metrics(f, objs):
    """The plugin's METRICS_ADDRESS, its container port and the scrape Service
    agree; without METRICS_ADDRESS there must be no Service either."""
    ds = objs.get(("DaemonSet", DAEMONSET))
    if ds is None:
        return
    plugin = next((c for c in ds["spec"]["template"]["spec"].get("containers", []) if c["name"] == "plugin"), None)
    if plugin is None:
        return
    addr = env_of(plugin).get("METRICS_ADDRESS")
    svc = objs.get(("Service", METRICS_SERVICE))
    w = f"{f}: metrics"
    if not addr:
        if svc is not None:
            fail(w, f"Service {METRICS_SERVICE} exists but the plugin has no METRICS_ADDRESS")
        return
    m = re.fullmatch(r"(.*):([0-9]+)", addr)
    if m is None or m.group(1) not in ("", "0.0.0.0", "[::]"):
        fail(w, f"METRICS_ADDRESS {addr} must listen on every interface (:PORT) to be scraped")
        return
    port = int(m.group(2))
    ports = {p.get("name"): p for p in plugin.get("ports", [])}
    if ports.get("metrics", {}).get("containerPort") != port:
        fail(w, f"the plugin container has no port named metrics with containerPort {port}")
    if svc is None:
        fail(w, f"no Service {METRICS_SERVICE} for METRICS_ADDRESS {addr}")
        return
    ann = svc["metadata"].get("annotations", {})
    want = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
    for k, v in want.items():
        if ann.get(k) != v:
            fail(w, f"Service {METRICS_SERVICE} annotation {k} is {ann.get(k)!r}, want {v!r}")
    sel = svc["spec"].get("selector", {})
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        fail(w, f"Service {METRICS_SERVICE} selector {sel} does not select the DaemonSet's pods")
    sp = svc["spec"].get("ports", [])
    if not any(p.get("targetPort") in ("metrics", port) for p in sp):
        fail(w, f"Service {METRICS_SERVICE} does not target the metrics port")


def check_rendered(args):
    f = args.file
    text, docs = load_all(f)
    objs = index(docs)
    if len(objs) != len(docs):
        fail(f, "two objects share a kind and name")
    for d in docs:
        kind, md = d.get("kind"), d.get("metadata", {})
        if kind in CLUSTER_SCOPED and "namespace" in md:
            fail(f, f"{kind} {md.get('name')} is cluster-scoped but has namespace {md['namespace']}")
        if kind not in CLUSTER_SCOPED and md.get("namespace") != NAMESPACE:
            fail(f, f"{kind} {md.get('name')} is not in namespace {NAMESPACE}")
    ns = objs.get(("Namespace", NAMESPACE))
    if ns is None:
        fail(f, f"no Namespace {NAMESPACE}")
    elif ns["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") != "privileged":
        fail(f, f"Namespace {NAMESPACE} must allow privileged pods (pod-security.kubernetes.io/enforce)")
    plugin_help = parse_help(args.plugin_help) if args.plugin_help else None
    fakehw_help = parse_help(args.fakehw_help) if args.fakehw_help else None
    check_daemonset(f, objs, args.driver, plugin_help, fakehw_help)
    check_rbac(f, objs, args.driver)
    check_device_classes(f, objs, args.driver)
    check_metrics(f, objs)
    for forbidden in args.forbid or []:
        for n, line in enumerate(text.splitlines(), 1):
            if forbidden in line:
                fail(f"{f}:{n}", f"still names {forbidden}: {line.strip()}")


# --- examples ------------------------------------------------------------------------


def check_claim_spec(w, spec, driver, classes):
    devices = spec.get("devices", {})
    names = set()
    for i, req in enumerate(devices.get("requests", [])):
        wr = f"{w}: requests[{i}]"
        names.add(req.get("name"))
        if set(req) - DEVICE_REQUEST_KEYS:
            fail(wr, f"unknown fields {sorted(set(req) - DEVICE_REQUEST_KEYS)} (All mode is exactly.allocationMode: All)")
        if ("exactly" in req) == ("firstAvailable" in req):
            fail(wr, "needs exactly one of exactly or firstAvailable")
        subs = [req["exactly"]] if "exactly" in req else req.get("firstAvailable", [])
        for sub in subs:
            extra = set(sub) - EXACT_REQUEST_KEYS - ({"name"} if "firstAvailable" in req else set())
            if extra:
                fail(wr, f"unknown fields {sorted(extra)}")
            if sub.get("deviceClassName") not in classes:
                fail(wr, f"deviceClassName {sub.get('deviceClassName')} is none of the manifests' classes {sorted(classes)}")
            for s in sub.get("selectors", []):
                for _, domain in DOMAIN_REF.findall(s.get("cel", {}).get("expression", "")):
                    if domain != driver:
                        fail(wr, f"selector reads the {domain} domain, not the driver's ({driver})")
    for i, c in enumerate(devices.get("constraints", [])):
        wc = f"{w}: constraints[{i}]"
        for key in ("matchAttribute", "distinctAttribute"):
            if key in c:
                attr = c[key]
                if "/" not in attr:
                    fail(wc, f"{key} {attr} must be fully qualified ({driver}/{attr}); the API server refuses it")
                elif attr.split("/", 1)[0] != driver:
                    fail(wc, f"{key} {attr} is not in the driver's domain {driver}")
        for r in c.get("requests", []):
            if r not in names:
                fail(wc, f"names request {r}, which the claim does not have")


def check_examples(args):
    _, rendered = load_all(args.rendered)
    classes = {o["metadata"]["name"] for o in rendered if o.get("kind") == "DeviceClass"}
    for f in args.files:
        _, docs = load_all(f)
        namespaces = [d["metadata"]["name"] for d in docs if d.get("kind") == "Namespace"]
        if len(namespaces) != 1:
            fail(f, "each example creates exactly one Namespace, so `kubectl delete -f` cleans it all up")
        claims = set()
        templates = set()
        for d in docs:
            kind, name = d.get("kind"), d.get("metadata", {}).get("name")
            w = f"{f}: {kind} {name}"
            if kind != "Namespace" and d["metadata"].get("namespace") not in namespaces:
                fail(w, "is not in the example's Namespace")
            if kind == "ResourceClaim":
                claims.add(name)
                check_claim_spec(w, d["spec"], args.driver, classes)
            elif kind == "ResourceClaimTemplate":
                templates.add(name)
                check_claim_spec(w, d["spec"]["spec"], args.driver, classes)
        for d in docs:
            kind = d.get("kind")
            pod = d.get("spec", {}) if kind == "Pod" else d.get("spec", {}).get("template", {}).get("spec")
            if not pod or "containers" not in pod:
                continue
            w = f"{f}: {kind} {d['metadata']['name']}"
            pod_claims = {}
            for rc in pod.get("resourceClaims", []):
                pod_claims[rc["name"]] = rc
                if rc.get("resourceClaimName") and rc["resourceClaimName"] not in claims:
                    fail(w, f"refers to ResourceClaim {rc['resourceClaimName']}, which the example does not create")
                if rc.get("resourceClaimTemplateName") and rc["resourceClaimTemplateName"] not in templates:
                    fail(w, f"refers to ResourceClaimTemplate {rc['resourceClaimTemplateName']}, which the example does not create")
            for c in pod["containers"]:
                for cl in c.get("resources", {}).get("claims", []):
                    if cl["name"] not in pod_claims:
                        fail(w, f"container {c['name']} uses claim {cl['name']}, not in spec.resourceClaims")


# --- kind configs ---------------------------------------------------------------------


def check_kind_config(path):
    m = re.search(r"cluster-(1\.\d+)\.yaml$", path)
    if not m:
        fail(path, "name must be kind/cluster-<major>.<minor>.yaml")
        return
    minor = m.group(1)
    if minor not in GATES:
        fail(path, f"no feature-gate table for Kubernetes {minor} in this test; add one from the release's gate list")
        return
    _, docs = load_all(path)
    if len(docs) != 1:
        fail(path, "must hold exactly one YAML document")
        return
    c = docs[0]
    if (c.get("kind"), c.get("apiVersion")) != ("Cluster", "kind.x-k8s.io/v1alpha4"):
        fail(path, "must be kind: Cluster, apiVersion: kind.x-k8s.io/v1alpha4")
    for key in sorted(set(c) - KIND_CLUSTER_KEYS):
        fail(path, f"{key} is no field of kind's v1alpha4 Cluster (kind refuses unknown fields)")

    gates = c.get("featureGates", {}) or {}
    for gate, on in gates.items():
        if gate not in GATES[minor]:
            fail(path, f"feature gate {gate} does not exist in Kubernetes {minor}; components refuse to start")
        elif gate in LOCKED_GATES[minor]:
            fail(path, f"feature gate {gate} is GA and locked in {minor}; do not name it")
        if on is not True:
            fail(path, f"feature gate {gate}: {on!r}; this config only turns gates on")
    runtime = c.get("runtimeConfig", {}) or {}
    for api, value in runtime.items():
        if api not in RUNTIME_APIS[minor]:
            fail(path, f"runtimeConfig {api} is not an API version Kubernetes {minor} can serve")
        if value != "true":
            fail(path, f"runtimeConfig {api}: {value!r}; must be the string \"true\"")
    if gates.get("DRADeviceTaints") or gates.get("DRADeviceTaintRules"):
        if TAINT_RULE_API[minor] != "resource.k8s.io/v1" and TAINT_RULE_API[minor] not in runtime:
            fail(path, f"device taint gates are on but {TAINT_RULE_API[minor]} (DeviceTaintRule) is not served")

    nodes = c.get("nodes", [])
    roles = sorted(n.get("role") for n in nodes)
    if roles != ["control-plane", "worker", "worker", "worker"]:
        fail(path, f"want 1 control-plane and 3 workers, have {roles}")
    # The third worker (MIG and shared GPUs) carries the taint that keeps the
    # other scenarios' pods off it; the DaemonSet tolerates it.
    workers = [n for n in nodes if n.get("role") == "worker"]
    if len(workers) == 3 and "fakehw.example.com/partitions" not in str(
            workers[2].get("kubeadmConfigPatches", "")):
        fail(path, "the third worker needs the NoSchedule taint fakehw.example.com/partitions")
    images = set()
    for i, n in enumerate(nodes):
        for key in sorted(set(n) - KIND_NODE_KEYS):
            fail(path, f"nodes[{i}].{key} is no field of kind's v1alpha4 Node")
        images.add(n.get("image"))
    if len(images) != 1:
        fail(path, f"all nodes must use one image, have {sorted(map(str, images))}")
    for image in images:
        # kind's published image, pinned by digest; or, for a release kind has
        # no image of, the one `make node-image` builds here (never pulled).
        m2 = (re.fullmatch(r"kindest/node:v(\d+\.\d+)\.\d+@sha256:[0-9a-f]{64}", str(image)) or
              re.fullmatch(r"fakehw-dra/kind-node:v(\d+\.\d+)\.\d+(?:-(?:alpha|beta|rc)\.\d+)?",
                           str(image)))
        if not m2:
            fail(path, f"image {image} is not kindest/node:vX.Y.Z@sha256:<digest> (pin tag and digest)"
                 " nor fakehw-dra/kind-node:vX.Y.Z[-beta.N] (make node-image)")
        elif m2.group(1) != minor:
            fail(path, f"image {image} is not Kubernetes {minor}")

    versions = set()
    for i, patch in enumerate(c.get("containerdConfigPatches", [])):
        try:
            t = tomllib.loads(patch)
        except tomllib.TOMLDecodeError as e:
            fail(path, f"containerdConfigPatches[{i}] is not TOML: {e}")
            continue
        v = t.get("version")
        if v not in CONTAINERD_CRI_PLUGIN:
            fail(path, f"containerdConfigPatches[{i}] must set version 2 or 3 (kind applies it to that config only)")
            continue
        versions.add(v)
        cri = t.get("plugins", {}).get(CONTAINERD_CRI_PLUGIN[v], {})
        if cri.get("enable_cdi") is not True:
            fail(path, f"containerdConfigPatches[{i}] (version {v}) does not set {CONTAINERD_CRI_PLUGIN[v]}.enable_cdi")
        if "/var/run/cdi" not in cri.get("cdi_spec_dirs", []):
            fail(path, f"containerdConfigPatches[{i}] (version {v}) does not read CDI specs from /var/run/cdi")
    if 2 not in versions:
        fail(path, "no containerd patch for config version 2, the version of kind's node images")


# --- fakehw config -----------------------------------------------------------------


def check_fakehw_config(path):
    """The inventory must tell kind's two workers apart (the real validation is
    `fakehw check`, run by the bats suite when fakehw is built)."""
    _, docs = load_all(path)
    if len(docs) != 1:
        fail(path, "must hold one YAML document")
        return
    cfg = docs[0]

    def devices_for(node):
        for entry in cfg.get("nodes", []):
            if fnmatch.fnmatchcase(node, entry["name"]):
                return entry.get("devices", [])
        return cfg.get("defaults", {}).get("devices", [])

    def profiles(devs):
        return {d["profile"]: d.get("count", 1) for d in devs}

    w1, w2 = profiles(devices_for("fakehw-dra-worker")), profiles(devices_for("fakehw-dra-worker2"))
    if not w1 or not w2:
        fail(path, "both kind workers (fakehw-dra-worker, fakehw-dra-worker2) need devices")
    if w1 == w2:
        fail(path, "the kind workers get the same inventory; selectors and constraints need different ones")
    if len(w2) < 2 and len(w1) < 2:
        fail(path, "one worker should mix products, for matchAttribute and All mode with a selector")
    if not any(n >= 2 for n in list(w1.values()) + list(w2.values())):
        fail(path, "some product should come at least twice on one node (matchAttribute, All mode)")


def assemble(directory):
    """The objects of DIR's kustomization: its resource files in order, then
    one ConfigMap per configMapGenerator entry.  Anything else kustomize would
    do is refused, so the output is never silently different."""
    path = os.path.join(directory, "kustomization.yaml")
    with open(path, encoding="utf-8") as f:
        k = yaml.safe_load(f)
    extra = set(k) - {"apiVersion", "kind", "resources", "configMapGenerator"}
    if extra:
        fail(path, f"uses {sorted(extra)}; only kustomize itself can render that")
        return []
    objs = []
    for res in k.get("resources", []):
        _, docs = load_all(os.path.join(directory, res))
        objs.extend(docs)
    for gen in k.get("configMapGenerator", []):
        extra = set(gen) - {"name", "namespace", "files", "options"}
        if extra or set(gen.get("options", {})) - {"labels"}:
            fail(path, f"configMapGenerator {gen.get('name')}: only name, namespace, files and options.labels are supported here")
            continue
        data = {}
        for fname in gen.get("files", []):
            with open(os.path.join(directory, fname), encoding="utf-8") as f:
                data[os.path.basename(fname)] = f.read()
        md = {"name": gen["name"], "labels": gen.get("options", {}).get("labels", {})}
        if "namespace" in gen:
            md["namespace"] = gen["namespace"]
        objs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data})
    return objs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rendered")
    r.add_argument("--driver", required=True)
    r.add_argument("--plugin-help")
    r.add_argument("--fakehw-help")
    r.add_argument("--forbid", action="append")
    r.add_argument("file")
    e = sub.add_parser("examples")
    e.add_argument("--driver", required=True)
    e.add_argument("--rendered", required=True)
    e.add_argument("files", nargs="+")
    k = sub.add_parser("kind-config")
    k.add_argument("files", nargs="+")
    fc = sub.add_parser("fakehw-config")
    fc.add_argument("file")
    a = sub.add_parser("assemble")
    a.add_argument("dir")
    args = p.parse_args()

    if args.cmd == "assemble":
        objs = assemble(args.dir)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        yaml.safe_dump_all(objs, sys.stdout, sort_keys=False)
        return 0

    if args.cmd == "rendered":
        check_rendered(args)
    elif args.cmd == "examples":
        check_examples(args)
    elif args.cmd == "kind-config":
        for f in args.files:
            check_kind_config(f)
    elif args.cmd == "fakehw-config":
        check_fakehw_config(args.file)
    for line in dict.fromkeys(problems):  # each problem once, in order
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
