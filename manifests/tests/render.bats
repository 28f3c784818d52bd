#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The kustomizations render, and what they render fits the programs: paths
# match the driver's flags, RBAC covers exactly the API calls the plugin
# makes, the DeviceClasses and the admission policy name the driver, and the
# nvidia-compat overlay leaves nothing of the default name behind.

load helpers

# Renders the base and every overlay once for the whole file (when kubectl
# can); the tests below read the results and say so when they are missing.
setup_file() {
    cd "$REPO" || return 1
    if command -v kubectl >/dev/null 2>&1 && kubectl version --client 2>/dev/null | grep -q '^Kustomize Version: v[5-9]'; then
        render manifests/base "$BATS_FILE_TMPDIR/base.yaml"
        local o
        for o in $(overlays); do
            render "manifests/overlays/$o" "$BATS_FILE_TMPDIR/$o.yaml"
        done
    fi
}

setup() {
    cd "$REPO" || return 1
}

# rendered NAME: the file setup_file rendered for base or an overlay.
rendered() {
    [[ -s $BATS_FILE_TMPDIR/$1.yaml ]] || fail "kubectl kustomize of $1 failed in setup_file"
    echo "$BATS_FILE_TMPDIR/$1.yaml"
}

# refused_by_check BASE SED WANT...: BASE edited by the sed script SED fails
# `check rendered`, and what the check says holds every WANT.
refused_by_check() {
    local base=$1 script=$2 bad=$BATS_TEST_TMPDIR/bad.yaml want
    shift 2
    sed "$script" "$base" >"$bad"
    run check rendered --driver "$DEFAULT_DRIVER" "$bad"
    ((status != 0)) || fail "the check passed the base edited by sed '$script'"
    for want in "$@"; do
        [[ $output == *"$want"* ]] ||
            fail "$(printf 'the base edited by sed %s: the check did not say\n  %s\nit said:\n%s' "'$script'" "$want" "$output")"
    done
}

# check_table ROWS: refused_by_check on the assembled base for each row of
# ROWS ("SED => WANT [=> WANT...]"; blank lines and # comments skipped).
check_table() {
    local base=$BATS_TEST_TMPDIR/base.yaml row script n=0
    local -a wants
    check assemble manifests/base >"$base"
    while IFS= read -r row; do
        [[ -n $row && $row != '#'* ]] || continue
        script=${row%% => *}
        row=${row#* => }
        wants=()
        while [[ $row == *' => '* ]]; do
            wants+=("${row%% => *}")
            row=${row#* => }
        done
        wants+=("$row")
        refused_by_check "$base" "$script" "${wants[@]}"
        n=$((n + 1))
    done <<<"$1"
    ((n > 0)) || fail "check_table: no rows"
}

@test "yamllint: manifests, kind configs and .yamllint itself are clean" {
    command -v yamllint >/dev/null || fail "yamllint not installed (make deps)"
    run yamllint --strict -c .yamllint .yamllint manifests kind
    assert_success
}

@test "kustomize renders manifests/base" {
    require_kustomize
    run render manifests/base "$BATS_TEST_TMPDIR/base.yaml"
    assert_success
    run grep '^kind: ' "$BATS_TEST_TMPDIR/base.yaml"
    assert_line "kind: DaemonSet"
    assert_line "kind: ConfigMap"
    assert_line "kind: ValidatingAdmissionPolicyBinding"
}

@test "kustomize renders every overlay" {
    require_kustomize
    local o n=0
    for o in $(overlays); do
        run render "manifests/overlays/$o" "$BATS_TEST_TMPDIR/$o.yaml"
        assert_success
        n=$((n + 1))
    done
    ((n >= 1)) || fail "no overlays found under manifests/overlays"
}

@test "base: DaemonSet paths, RBAC, admission policy and DeviceClasses fit $DEFAULT_DRIVER" {
    require_kustomize
    run check rendered --driver "$DEFAULT_DRIVER" "$(rendered base)"
    assert_success
    assert_output ""
}

@test "the metrics check refuses a scrape Service that does not match the plugin" {
    check_table "$(cat <<'ROWS'
s|prometheus.io/port: ['"]9400['"]|prometheus.io/port: '9401'| => Service fakehw-dra-metrics annotation prometheus.io/port is '9401', want '9400'
s|value: ['"]\{0,1\}:9400['"]\{0,1\}$|value: 127.0.0.1:9400| => METRICS_ADDRESS 127.0.0.1:9400 must listen on every interface
ROWS
)"
}

@test "base, assembled without kustomize: the same checks (runs where no kubectl is installed)" {
    check assemble manifests/base >"$BATS_TEST_TMPDIR/plain.yaml"
    run check rendered --driver "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/plain.yaml"
    assert_success
    assert_output ""
    run check examples --driver "$DEFAULT_DRIVER" --rendered "$BATS_TEST_TMPDIR/plain.yaml" manifests/examples/*.yaml
    assert_success
    assert_output ""
    # A kustomization that needs kustomize is refused, not half-rendered.
    run check assemble manifests/overlays/nvidia-compat
    assert_failure
    assert_output --partial "uses ['components', 'patches']; only kustomize itself can render that"
}

@test "base: the DaemonSet's env agrees with the --help of the built programs" {
    require_kustomize
    [[ -x $BIN/fakehw && -x $BIN/fakehw-kubelet-plugin ]] ||
        skip "fakehw and fakehw-kubelet-plugin are not built in $BIN (make all)"
    # A clean environment: --help shows the built-in defaults, not env overrides.
    env -i "$BIN/fakehw" --help >"$BATS_TEST_TMPDIR/fakehw.help"
    env -i "$BIN/fakehw-kubelet-plugin" --help >"$BATS_TEST_TMPDIR/plugin.help"
    run check rendered --driver "$DEFAULT_DRIVER" --plugin-help "$BATS_TEST_TMPDIR/plugin.help" \
        --fakehw-help "$BATS_TEST_TMPDIR/fakehw.help" "$(rendered base)"
    assert_success
    assert_output ""
}

@test "every overlay renames the driver everywhere and leaves no $DEFAULT_DRIVER behind" {
    require_kustomize
    local o driver
    for o in $(overlays); do
        driver=$(overlay_driver "$o")
        [[ -n $driver ]] || fail "overlay $o: no driverName in driver-name.yaml"
        run check rendered --driver "$driver" --forbid "$DEFAULT_DRIVER" "$(rendered "$o")"
        assert_success
        assert_output ""
    done
}

@test "nvidia-compat is gpu.nvidia.com" {
    run overlay_driver nvidia-compat
    assert_output gpu.nvidia.com
}

# extended_resource_classes FILE: "name extendedResourceName" of each
# DeviceClass of FILE that has one.
extended_resource_classes() {
    python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "DeviceClass" and "extendedResourceName" in d["spec"]:
        print(d["metadata"]["name"], d["spec"]["extendedResourceName"])' "$1"
}

@test "the all-GPUs class carries the extended resource: <driver>/gpu in the base, nvidia.com/gpu in nvidia-compat" {
    require_kustomize
    run extended_resource_classes "$(rendered base)"
    assert_output "$DEFAULT_DRIVER $DEFAULT_DRIVER/gpu"
    run extended_resource_classes "$(rendered nvidia-compat)"
    assert_output "gpu.nvidia.com nvidia.com/gpu"
}

@test "nvidia-compat runs the nvidia personality with NVIDIA's three DeviceClasses" {
    require_kustomize
    run python3 -c 'import sys, yaml
out = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    if not d:
        continue
    if d["kind"] == "DeviceClass" and d["metadata"]["name"].endswith("nvidia.com"):
        out.append(d["metadata"]["name"] + " " +
                   " && ".join(s["cel"]["expression"] for s in d["spec"]["selectors"]))
    if d["kind"] == "DaemonSet":
        env = {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
        out.append("PERSONALITY " + env["PERSONALITY"])
print("\n".join(sorted(out)))' "$(rendered nvidia-compat)"
    assert_success
    assert_output "$(printf '%s\n' \
        'PERSONALITY nvidia' \
        'gpu.nvidia.com device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"' \
        'mig.nvidia.com device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"' \
        'vfio.gpu.nvidia.com device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "vfio"')"
}

# mount_tree_itself FILE: FILE with the plugin container mounting the host's
# /var/run/fakehw at /host/run/fakehw instead of /var/run at /host/run.
mount_tree_itself() {
    local py
    py=$(python_for_checks) || return 1
    "$py" - "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "DaemonSet":
        spec = d["spec"]["template"]["spec"]
        for m in spec["containers"][0]["volumeMounts"]:
            if m["name"] == "host-run":
                m.update(name="tree", mountPath="/host/run/fakehw")
        spec["volumes"].append({"name": "tree", "hostPath": {"path": "/var/run/fakehw"}})
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
PY
}

@test "the checks catch broken manifests" {
    check_table "$(cat <<'ROWS'
s|value: /var/run/cdi$|value: /etc/cdi| => CDI_ROOT=/etc/cdi, but the plugin's documented default is /var/run/cdi
/- name: POD_UID$/,+3d; /- name: FAKEHW_TAKEOVER_TIMEOUT$/,+1d => maxSurge 1 without POD_UID from metadata.uid in the plugin's env => maxSurge 1 with FAKEHW_TAKEOVER_TIMEOUT 0 on the fakehw sidecar
s|^  - delete$|  - delete\n  - escalate| => allows escalate on resourceslices
s|^  - nodes$|  - nodes/status| => does not allow get on nodes
s|mountPropagation: Bidirectional|mountPropagation: HostToContainer| => needs mountPropagation Bidirectional
s|path: /var/run/cdi$|path: /run/other| => /var/run/cdi is host path /run/other: the kubelet and the runtime need the same path
# The plugin's CDI specs must name the tree's host path, not where the
# plugin reads it.
/- name: FAKEHW_HOST_ROOT$/,+1d => the tree's host path (FAKEHW_HOST_ROOT, else FAKEHW_ROOT) is /host/run/fakehw => FAKEHW_MOUNT /var/run/fakehw is not the tree's host path in the plugin's CDI specs, /host/run/fakehw
s|mountPropagation: HostToContainer|mountPropagation: None| => /host/run/fakehw needs mountPropagation HostToContainer
s|mountPath: /var/run$|mountPath: /var/run/fakehw|; s|path: /var/run$|path: /var/run/fakehw| => mounts /var/run/fakehw itself
s|has(request.userInfo.extra) \&\& || => variable nodeName must test has(request.userInfo.extra) first
s|extendedResourceName: gpu.fakehw.example.com/gpu|extendedResourceName: example.kubernetes.io/gpu| => extendedResourceName 'example.kubernetes.io/gpu' is not an extended resource name
ROWS
)"
    local base=$BATS_TEST_TMPDIR/base.yaml bad=$BATS_TEST_TMPDIR/bad.yaml

    # The plugin mounting the tree's mount point (the layout that keeps a
    # dead tree after a fakehw restart or takeover).
    mount_tree_itself "$base" >"$bad"
    run check rendered --driver "$DEFAULT_DRIVER" "$bad"
    assert_failure
    assert_output --partial "mounts the tree's mount point /host/run/fakehw itself"
    refute_output --partial "is host path"

    run check rendered --driver gpu.nvidia.com --forbid "$DEFAULT_DRIVER" "$base"
    assert_failure
    assert_output --partial "still names $DEFAULT_DRIVER"
    assert_output --partial "DRIVER_NAME is $DEFAULT_DRIVER, want gpu.nvidia.com"
}

@test "examples: working request forms, the driver's domain, classes and claims that exist" {
    require_kustomize
    run check examples --driver "$DEFAULT_DRIVER" --rendered "$(rendered base)" manifests/examples/*.yaml
    assert_success
    assert_output ""
}

@test "the examples check refuses short request forms that an API server refuses" {
    check assemble manifests/base >"$BATS_TEST_TMPDIR/base.yaml"
    local example script want
    while IFS='|' read -r example script want; do
        sed "$script" "manifests/examples/$example" >"$BATS_TEST_TMPDIR/bad-$example"
        run check examples --driver "$DEFAULT_DRIVER" --rendered "$BATS_TEST_TMPDIR/base.yaml" "$BATS_TEST_TMPDIR/bad-$example"
        assert_failure
        assert_output --partial "$want"
    done <<'ROWS'
match-attribute.yaml|s/matchAttribute: gpu.fakehw.example.com\/productName/matchAttribute: productName/|matchAttribute productName must be fully qualified
all-devices.yaml|s/^          exactly:$/          all:/|unknown fields ['all']
ROWS
}

@test "fakehw config: the kind workers get different inventories" {
    run check fakehw-config manifests/base/fakehw.yaml
    assert_success
    assert_output ""
}

@test "fakehw check accepts the config for both kind workers and any other node" {
    [[ -x $BIN/fakehw ]] || skip "fakehw is not built in $BIN (make all)"
    run "$BIN/fakehw" check --config manifests/base/fakehw.yaml --node fakehw-dra-worker
    assert_success
    assert_output --partial "6 devices"
    assert_output --partial "NVIDIA A100-SXM4-80GB"
    assert_output --partial "NVIDIA GB200"
    run "$BIN/fakehw" check --config manifests/base/fakehw.yaml --node fakehw-dra-worker2
    assert_success
    assert_output --partial "NVIDIA H100"
    assert_output --partial "NVIDIA L4"
    run "$BIN/fakehw" check --config manifests/base/fakehw.yaml --node some-other-node
    assert_success
    assert_output --partial "2 devices"
}

# The updateStrategy, the plugin's POD_UID and the fakehw sidecar's
# FAKEHW_TAKEOVER_TIMEOUT of a rendered file, as "maxSurge maxUnavailable
# fieldPath seconds" ("-" for a variable that is not set).
surge_fields() {
    local py
    py=$(python_for_checks) || return 1
    "$py" - "$1" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "DaemonSet":
        ru = d["spec"]["updateStrategy"]["rollingUpdate"]
        env = {e["name"]: e for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
        uid = env.get("POD_UID", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "-")
        fakehw = {e["name"]: e for e in d["spec"]["template"]["spec"]["initContainers"][1]["env"]}
        takeover = fakehw.get("FAKEHW_TAKEOVER_TIMEOUT", {}).get("value", "-")
        print(ru["maxSurge"], ru["maxUnavailable"], uid, takeover)
PY
}

# with_no_surge DIR NAME: a kustomization NAME beside a copy of the base and
# the components that adds components/no-surge to DIR (../base or an
# overlay copied there); prints its directory.
with_no_surge() {
    local k=$BATS_TEST_TMPDIR/$2
    mkdir -p "$k"
    cp -r manifests/base manifests/components manifests/overlays "$BATS_TEST_TMPDIR/"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\ncomponents: [../components/no-surge]\n' "$1" >"$k/kustomization.yaml"
    echo "$k"
}

@test "the base surges: maxSurge 1, maxUnavailable 0, POD_UID from metadata.uid, fakehw takes over; components/no-surge replaces" {
    require_kustomize
    run surge_fields "$(rendered base)"
    assert_output "1 0 metadata.uid 300"
    run render "$(with_no_surge ../base no-surge)" "$BATS_TEST_TMPDIR/no-surge.yaml"
    assert_success
    run surge_fields "$BATS_TEST_TMPDIR/no-surge.yaml"
    assert_output "0 1 - -"
    run check rendered --driver "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/no-surge.yaml"
    assert_success
    assert_output ""
    # Nothing else changes: the same objects as the base once the three
    # fields are put back.
    run "$(python_for_checks)" - "$(rendered base)" "$BATS_TEST_TMPDIR/no-surge.yaml" <<'PY'
import sys, yaml
base, patched = ([d for d in yaml.safe_load_all(open(p)) if d] for p in sys.argv[1:])
for d in patched:
    if d["kind"] == "DaemonSet":
        d["spec"]["updateStrategy"]["rollingUpdate"] = {"maxUnavailable": 0, "maxSurge": 1}
        spec = d["spec"]["template"]["spec"]
        spec["containers"][0]["env"].insert(2, {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}})
        spec["initContainers"][1]["env"].insert(5, {"name": "FAKEHW_TAKEOVER_TIMEOUT", "value": "300"})
print("same" if base == patched else "different")
PY
    assert_output same
}

@test "components/no-surge composes with every overlay" {
    require_kustomize
    local o driver
    for o in $(overlays); do
        driver=$(overlay_driver "$o")
        run render "$(with_no_surge "../overlays/$o" "no-surge-$o")" "$BATS_TEST_TMPDIR/no-surge-$o.yaml"
        assert_success
        run surge_fields "$BATS_TEST_TMPDIR/no-surge-$o.yaml"
        assert_output "0 1 - -"
        run check rendered --driver "$driver" --forbid "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/no-surge-$o.yaml"
        assert_success
        assert_output ""
    done
}
