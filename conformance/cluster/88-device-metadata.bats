#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Device metadata (KEP-5304, Kubernetes 1.36): drivers that support it mount a
# JSON file with the claim's devices and their attributes into the container,
# at /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json,
# or .../resourceclaimtemplates/<pod claim name>/... for generated claims.
# CONFORMANCE_DEVICE_METADATA says whether the driver under test writes it.
# bats file_tags=device-metadata

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

METADATA_ROOT=/var/run/kubernetes.io/dra-device-attributes

# read_metadata NS POD PATH: the first object of the JSON stream in the file
# (the newest version comes first).
read_metadata() {
    local out
    out=$(kc exec -n "$1" "$2" -c ctr -- cat "$3" 2>&1) || {
        fail "cannot read $3 in pod $1/$2: $out"
        return 1
    }
    jq -sce '.[0]' <<<"$out" || fail "$3 in pod $1/$2 is not JSON: $(head -c 300 <<<"$out")"
}

# assert_metadata_describes JSON NS CLAIM: the metadata names the claim and
# lists exactly its allocated devices for request "gpu", with their uuid.
assert_metadata_describes() {
    local json=$1 ns=$2 claim=$3 listed allocated pool device rest
    assert_same "apiVersion of the metadata" metadata.resource.k8s.io/v1alpha1 "$(jq -r .apiVersion <<<"$json")"
    assert_same "kind of the metadata" DeviceMetadata "$(jq -r .kind <<<"$json")"
    assert_same "metadata.name" "$claim" "$(jq -r .metadata.name <<<"$json")"
    assert_same "metadata.namespace" "$ns" "$(jq -r .metadata.namespace <<<"$json")"
    assert_same "metadata.uid" "$(claim_json "$ns" "$claim" | jq -r .metadata.uid)" "$(jq -r .metadata.uid <<<"$json")"
    listed=$(jq -r --arg d "$CONFORMANCE_DRIVER" '.requests[]? | select(.name == "gpu") | .devices[]?
        | select(.driver == $d) | "\(.pool)\t\(.name)"' <<<"$json" | sort)
    allocated=$(claim_devices "$ns" "$claim")
    assert_same "devices listed for request gpu" "$allocated" "$listed"
    while IFS=$'\t' read -r pool device rest; do
        local want got
        want=$(device_uuid "$pool" "$device")
        got=$(jq -c --arg p "$pool" --arg n "$device" '.requests[].devices[] | select(.pool == $p and .name == $n)' <<<"$json" |
            device_attribute uuid)
        assert_same "uuid attribute of $pool/$device in the metadata" "$want" "$got"
    done <<<"$allocated"
}

# requires: minor=36, param=CONFORMANCE_DEVICE_METADATA
# bats test_tags=generic
@test "device metadata: a claim's metadata file is readable in the container" {
    require_server_minor 36
    require_param CONFORMANCE_DEVICE_METADATA "write KEP-5304 device metadata"
    local ns=$TEST_NAMESPACE json
    create_from claim CLAIM=described COUNT=1
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=described
    wait_pod_ready "$ns" pod-a
    json=$(read_metadata "$ns" pod-a "$METADATA_ROOT/resourceclaims/described/gpu/$CONFORMANCE_DRIVER-metadata.json")
    assert_metadata_describes "$json" "$ns" described
}

# requires: minor=36, param=CONFORMANCE_DEVICE_METADATA
# bats test_tags=generic
@test "device metadata: a generated claim's metadata is under the pod claim name" {
    require_server_minor 36
    require_param CONFORMANCE_DEVICE_METADATA "write KEP-5304 device metadata"
    local ns=$TEST_NAMESPACE json claim
    create_from claim-template TEMPLATE=described COUNT=1
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimTemplateName CLAIM=described
    wait_pod_ready "$ns" pod-a
    claim=$(pod_claim_name "$ns" pod-a gpu)
    json=$(read_metadata "$ns" pod-a "$METADATA_ROOT/resourceclaimtemplates/gpu/gpu/$CONFORMANCE_DRIVER-metadata.json")
    assert_same "podClaimName in the metadata" gpu "$(jq -r '.podClaimName // ""' <<<"$json")"
    assert_metadata_describes "$json" "$ns" "$claim"
}
