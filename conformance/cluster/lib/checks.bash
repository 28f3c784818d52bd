# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The suite's preconditions, checked once before any scenario (setup_suite.bash).
# Each check fails with a message that says what is missing and what to do,
# so a run against a broken or foreign cluster stops in seconds instead of
# timing out scenario by scenario.

check_tools() {
    local tool missing=()
    for tool in "$CONFORMANCE_KUBECTL" jq flock; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    ((${#missing[@]} == 0)) || {
        fail "missing tools: ${missing[*]} (the suite needs kubectl, jq and flock on PATH)"
        return 1
    }
}

# The kubectl client version the suite needs (docs/install.md).
KUBECTL_MIN_MINOR=34

# check_kubeconfig: a kubeconfig file exists (KUBECONFIG's files, else
# ~/.kube/config), or the suite runs in a pod with a service account.
check_kubeconfig() {
    local f files=()
    [[ -z ${KUBERNETES_SERVICE_HOST:-} ]] || return 0
    if [[ -n ${KUBECONFIG:-} ]]; then
        IFS=: read -ra files <<<"$KUBECONFIG"
        for f in "${files[@]}"; do
            [[ -z $f || ! -f $f ]] || return 0
        done
        fail "KUBECONFIG=$KUBECONFIG names no existing file. No cluster yet? make kind-up creates a" \
            "kind cluster with the driver and writes its kubeconfig"
        return 1
    fi
    [[ ! -f ${HOME:-/nonexistent}/.kube/config ]] || return 0
    fail "no kubeconfig: ${HOME:-~}/.kube/config does not exist and KUBECONFIG is not set. No cluster" \
        "yet? make kind-up creates a kind cluster with the driver and writes its kubeconfig;" \
        "else set KUBECONFIG to your cluster's"
}

# check_kubectl_version: the client is 1.34 or newer (older ones lack the
# resource.k8s.io/v1 kinds in kubectl explain and print them differently).
check_kubectl_version() {
    local json version minor
    json=$(kc version -o json 2>/dev/null) || true
    version=$(jq -er '.clientVersion | "\(.major | gsub("[^0-9]"; "")) \(.minor | gsub("[^0-9]"; "")) \(.gitVersion // "?")"' <<<"$json" 2>/dev/null) || {
        fail "cannot read the kubectl client version from \"$CONFORMANCE_KUBECTL version -o json\""
        return 1
    }
    read -r _ minor version <<<"$version"
    [[ $minor =~ ^[0-9]+$ ]] && ((minor >= KUBECTL_MIN_MINOR)) && return 0
    fail "kubectl $version ($(command -v "$CONFORMANCE_KUBECTL")) is too old: the suite needs kubectl" \
        "1.$KUBECTL_MIN_MINOR or newer (docs/install.md); put a newer one first on PATH or" \
        "set CONFORMANCE_KUBECTL"
}

check_cluster_reachable() {
    detect_server_version
}

check_dra_api() {
    local versions
    versions=$(kc api-versions 2>&1) || {
        fail "kubectl api-versions failed: $versions"
        return 1
    }
    grep -qxF resource.k8s.io/v1 <<<"$versions" && return 0
    local served
    served=$(grep '^resource\.k8s\.io/' <<<"$versions" | tr '\n' ' ')
    fail "the API server does not serve resource.k8s.io/v1 (DRA is GA from Kubernetes 1.34;" \
        "server ${CONFORMANCE_SERVER_VERSION:-?} serves: ${served:-no resource.k8s.io version})"
}

check_device_class() {
    local out classes
    out=$(kc get deviceclass "$CONFORMANCE_DEVICE_CLASS" -o name 2>&1) && return 0
    classes=$(kc get deviceclasses -o name 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')
    fail "DeviceClass $CONFORMANCE_DEVICE_CLASS not found ($out)." \
        "Deploy the driver (make deploy) or set CONFORMANCE_DEVICE_CLASS; classes here: ${classes:-none}"
}

# check_slices: the driver publishes node-local devices, at least
# CONFORMANCE_MIN_DEVICES on one schedulable node, each with the expected
# attributes and capacities.  Prints "<node>\t<count>" of the test node.
check_slices() {
    local slices counts nodes picked
    slices=$(driver_slices 2>&1) || {
        fail "cannot list ResourceSlices: $slices"
        return 1
    }
    if [[ $(jq 'length' <<<"$slices") == 0 ]]; then
        fail "no ResourceSlice is published by driver $CONFORMANCE_DRIVER. Is its kubelet plugin running?" \
            "(kubectl -n $CONFORMANCE_DRIVER_NAMESPACE get pods -l $CONFORMANCE_DRIVER_POD_SELECTOR)"
        return 1
    fi
    counts=$(node_device_counts <<<"$slices")
    [[ -n $counts ]] || {
        fail "driver $CONFORMANCE_DRIVER publishes no node-local devices (no slice has spec.nodeName);" \
            "the scenarios need devices that belong to one node"
        return 1
    }
    local missing
    missing=$(missing_device_fields "$slices")
    [[ -z $missing ]] || {
        fail "devices of $CONFORMANCE_DRIVER lack expected fields (CONFORMANCE_EXPECTED_ATTRIBUTES /" \
            "CONFORMANCE_EXPECTED_CAPACITY):"$'\n'"$missing"
        return 1
    }
    nodes=$(kc get nodes -o json | schedulable_nodes) || return 1
    local node n
    while IFS=$'\t' read -r node n; do
        grep -qxF -- "$node" <<<"$nodes" || continue
        if ((n >= CONFORMANCE_MIN_DEVICES)); then
            picked=$node$'\t'$n
            break
        fi
    done <<<"$counts"
    [[ -n ${picked:-} ]] || {
        fail "no schedulable node has at least $CONFORMANCE_MIN_DEVICES devices of $CONFORMANCE_DRIVER" \
            "(CONFORMANCE_MIN_DEVICES). Devices per node: $(awk -F'\t' '{printf "%s%s: %s", (NR > 1 ? ", " : ""), $1, $2}' <<<"$counts");" \
            "schedulable nodes: $(paste -sd' ' <<<"$nodes")"
        return 1
    }
    printf '%s\n' "$picked"
}

# missing_device_fields SLICES: one line per device that lacks an expected
# attribute or capacity, at most 10 lines.
missing_device_fields() {
    local attrs caps
    attrs=$(jq -cn --arg l "$CONFORMANCE_EXPECTED_ATTRIBUTES" '$l | split(" ") | map(select(. != ""))')
    caps=$(jq -cn --arg l "$CONFORMANCE_EXPECTED_CAPACITY" '$l | split(" ") | map(select(. != ""))')
    jq -r --argjson attrs "$attrs" --argjson caps "$caps" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        [.[] | .spec.pool.name as $pool | .spec.devices[]? | . as $dev |
            ([$attrs[] | select(lookup($dev.attributes // {}; .) == null) | "attribute \(.)"] +
             [$caps[] | select(lookup($dev.capacity // {}; .) == null) | "capacity \(.)"]) as $miss |
            select($miss | length > 0) | "  \($pool)/\($dev.name): no \($miss | join(", "))"] | .[:10][]' <<<"$1"
}

# The driver's pods as JSON ('{"items":[]}' when there are none or the
# namespace is not there).  Not fatal: only restart and health need them.
driver_pods_json() {
    kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" -o json 2>/dev/null ||
        echo '{"items":[]}'
}

# Every driver pod must be Ready; the message names the ones that are not.
check_driver_pods_ready() {
    local not_ready
    not_ready=$(jq -r '.items[] | select([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length == 0)
        | "\(.metadata.name) on \(.spec.nodeName // "-") (\(.status.phase // "?"))"' <<<"$1")
    [[ -z $not_ready ]] || {
        fail "driver pods in $CONFORMANCE_DRIVER_NAMESPACE are not Ready: $(tr '\n' ' ' <<<"$not_ready")"
        return 1
    }
}

# --- the test image -----------------------------------------------------------

IMAGE_CHECK_LABEL=conformance.fakehw.example.com/image-check=true

# image_check_nodes: the nodes the scenarios' pods run on, one a line: those
# with devices of the driver, Ready and not cordoned (taints do not matter:
# some scenarios tolerate them).  Reads driver_slices output on stdin, $1 is
# `kubectl get nodes -o json`.
image_check_nodes() {
    jq -r --argjson nodes "$1" '[.[].spec.nodeName // empty] | unique as $with
        | $nodes.items[] | select(.metadata.name as $n | $with | index($n))
        | select((.spec.unschedulable // false) | not)
        | select([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length == 1)
        | .metadata.name'
}

# start_image_check NAMESPACE NODE...: one pod per node that runs
# CONFORMANCE_IMAGE (templates/image-check-pod.yaml); wait_image_check
# reads the outcome, so the pods start while the gates are decided.
start_image_check() {
    local ns=$1 node manifest='' i=0 pod out
    shift
    for node in "$@"; do
        pod=$(render_template image-check-pod NAMESPACE="$ns" POD="image-check-$i" NODE="$node") || return 1
        manifest+=$pod$'\n---\n'
        i=$((i + 1))
    done
    out=$(kc create -f - <<<"$manifest" 2>&1) || {
        fail "cannot create the pods that check the test image $CONFORMANCE_IMAGE: $out"
        return 1
    }
}

# The state of each image-check pod, one line each: "ok NODE", "wait NODE
# WHY" or "bad NODE WHY".  A pull that failed, or an image that cannot run
# the scenarios' command, is bad at once: no scenario could do better.
# shellcheck disable=SC2016 # jq program
JQ_IMAGE_CHECK='.items[] | .spec.nodeName as $node
    | ((.status.containerStatuses // [])[0].state // {}) as $st
    | if .status.phase == "Succeeded" then "ok \($node)"
      elif .status.phase == "Failed" then
        "bad \($node) the image ran, but sh -c \"cat /dev/null && env\" failed: " +
        ($st.terminated | if . then "\(.reason // "Error"), exit code \(.exitCode)\(if .message then ": " + .message else "" end)"
                          else "pod failed: \(.status.reason // "")" end)
      elif ($st.waiting.reason // "") | test("^(ErrImagePull|ImagePullBackOff|ErrImageNeverPull|InvalidImageName|CreateContainerError|RunContainerError)$") then
        "bad \($node) \($st.waiting.reason): \($st.waiting.message // "")"
      else "wait \($node) \($st.waiting.reason // .status.phase // "Pending")" end'

# load_hint NODE NODES_JSON: how to put the test image on NODE.  kind names
# its nodes' provider kind://<runtime>/<cluster>/<node>.
load_hint() {
    local cluster
    cluster=$(jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .spec.providerID // ""
        | capture("^kind://[^/]+/(?<c>[^/]+)/") | .c' <<<"$2" 2>/dev/null) || cluster=
    if [[ -n $cluster ]]; then
        printf 'kind load docker-image %s --name %s' "$CONFORMANCE_IMAGE" "$cluster"
    else
        printf "import it into the node's container runtime, or push it to a registry the node can pull from"
    fi
}

# wait_image_check NAMESPACE COUNT NODES_JSON: every image-check pod
# succeeded, within CONFORMANCE_TIMEOUT; fails at the first bad one, naming
# the image, the node and how to get the image there.
wait_image_check() {
    local ns=$1 count=$2 nodes_json=$3 json states bad node why deadline=$((SECONDS + CONFORMANCE_TIMEOUT))
    while :; do
        json=$(kc get pods -n "$ns" -l "$IMAGE_CHECK_LABEL" -o json 2>&1) || {
            fail "cannot read the pods that check the test image: $json"
            return 1
        }
        states=$(jq -r "$JQ_IMAGE_CHECK" <<<"$json") || return 1
        bad=$(grep -m1 '^bad ' <<<"$states") || bad=
        if [[ -n $bad ]]; then
            read -r _ node why <<<"$bad"
            fail "the test image $CONFORMANCE_IMAGE (CONFORMANCE_IMAGE) cannot run on node $node: $why." \
                "The scenarios' pods pull it only when the node does not have it (imagePullPolicy IfNotPresent);" \
                "with no registry, put it on every node: $(load_hint "$node" "$nodes_json")" \
                "(scripts/node-image/busybox-image.sh builds one from Debian's busybox-static), or set" \
                "CONFORMANCE_IMAGE to an image the nodes have (sh, cat and env). CONFORMANCE_IMAGE_CHECK=false" \
                "skips this check."
            return 1
        fi
        if (($(grep -c '^ok ' <<<"$states") == count)); then
            return 0
        fi
        if ((SECONDS >= deadline)); then
            fail "the test image $CONFORMANCE_IMAGE (CONFORMANCE_IMAGE) did not run on every node within" \
                "${CONFORMANCE_TIMEOUT}s (CONFORMANCE_TIMEOUT): $(grep -v '^ok ' <<<"$states" | sed 's/^wait //' | paste -sd';' -)." \
                "CONFORMANCE_IMAGE_CHECK=false skips this check."
            return 1
        fi
        sleep "$CONFORMANCE_POLL_INTERVAL"
    done
}

# suite_preflight: everything setup_suite does, in order, failing fast.  Prints
# the parameters and the capability decisions as TAP comments on stdout.
suite_preflight() {
    params_validate || return 1
    check_tools || return 1
    check_kubeconfig || return 1
    check_kubectl_version || return 1
    check_cluster_reachable || return 1
    start_api_proxy "${BATS_RUN_TMPDIR:-${TMPDIR:-/tmp}}"
    check_dra_api || return 1
    check_device_class || return 1

    local pods
    pods=$(driver_pods_json)
    params_resolve_fake "$pods"
    # Health flips need fakehw: in the driver pods, or through
    # CONFORMANCE_FAKEHW_EXEC when fakehw and the plugin run outside pods.
    if is_fake_driver && [[ -z $CONFORMANCE_FAKEHW_EXEC ]]; then
        [[ $(jq '.items | length' <<<"$pods") -gt 0 ]] || {
            fail "the fake driver's pods are not found (kubectl -n $CONFORMANCE_DRIVER_NAMESPACE get pods" \
                "-l $CONFORMANCE_DRIVER_POD_SELECTOR); set CONFORMANCE_DRIVER_NAMESPACE and" \
                "CONFORMANCE_DRIVER_POD_SELECTOR to where it runs, or CONFORMANCE_FAKEHW_EXEC" \
                "when fakehw runs outside pods"
            return 1
        }
    fi
    check_driver_pods_ready "$pods" || return 1

    local picked
    picked=$(check_slices) || return 1

    : "${CONFORMANCE_RUN_ID:=$(LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c 8)}"
    export CONFORMANCE_RUN_ID

    # Probes run in a namespace of their own; dry-run stores nothing in it.
    local probe_ns=$CONFORMANCE_NAMESPACE_PREFIX-probe-$CONFORMANCE_RUN_ID nodes
    if ! create_namespace "$probe_ns" 2>/dev/null; then
        printf '# cannot create namespace %s: feature gates decided without dry-run probes\n' "$probe_ns"
        probe_ns=
    fi
    local slices nodes_json check_nodes=() image_check=$CONFORMANCE_IMAGE_CHECK started
    slices=$(driver_slices)
    nodes=$(jq -r '[.[].spec.nodeName // empty] | unique[]' <<<"$slices")
    # Serial scenarios lock these nodes one by one (lib/scenario.bash).
    # shellcheck disable=SC2086 # one name per word
    write_lock_nodes $nodes
    # The test image must run on the nodes (a cluster with no registry gets
    # it loaded): checked once here, not by every scenario timing out.
    if [[ $image_check == true && -z $probe_ns ]]; then
        printf '# test image %s not checked: no namespace to run its pods in\n' "$CONFORMANCE_IMAGE"
        image_check=false
    fi
    if [[ $image_check == true ]]; then
        nodes_json=$(kc get nodes -o json) || return 1
        mapfile -t check_nodes < <(image_check_nodes "$nodes_json" <<<"$slices")
        started=$SECONDS
        start_image_check "$probe_ns" "${check_nodes[@]}" || image_check=failed
    fi
    # shellcheck disable=SC2086 # one argument per node
    decide_all_gates "$probe_ns" $nodes
    if [[ $image_check == true ]] && ! wait_image_check "$probe_ns" "${#check_nodes[@]}" "$nodes_json"; then
        image_check=failed
    fi
    [[ -z $probe_ns ]] || kc delete namespace "$probe_ns" --wait=false >/dev/null 2>&1 || true
    [[ $image_check != failed ]] || return 1

    params_print | sed 's/^/# param /'
    printf '# api: %s\n' "$API_READS"
    print_capabilities
    printf '# test node: %s (%s devices)\n' "${picked%%$'\t'*}" "${picked#*$'\t'}"
    if [[ $image_check == true ]]; then
        printf '# test image %s runs on %s (%ss)\n' "$CONFORMANCE_IMAGE" "${check_nodes[*]}" "$((SECONDS - started))"
    elif [[ $CONFORMANCE_IMAGE_CHECK == false ]]; then
        printf '# test image %s not checked (CONFORMANCE_IMAGE_CHECK=false)\n' "$CONFORMANCE_IMAGE"
    fi
    local leftovers
    leftovers=$(kc get namespaces -l app.kubernetes.io/part-of=fakehw-dra-conformance -o name 2>/dev/null |
        grep -v "/$CONFORMANCE_NAMESPACE_PREFIX-probe-$CONFORMANCE_RUN_ID\$" | sed 's|.*/||' | tr '\n' ' ')
    if [[ -n $leftovers ]]; then
        printf '# note: namespaces of earlier runs still exist and may hold devices: %s\n' "$leftovers"
        printf '# note: remove them with kubectl delete namespace -l app.kubernetes.io/part-of=fakehw-dra-conformance\n'
    fi
}
