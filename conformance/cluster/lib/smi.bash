# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# What a test container's GPU lister says: CONFORMANCE_SMI (fakegpu-smi for
# the fake driver, nvidia-smi for NVIDIA's driver; empty: none) run with -L
# in the container, which prints nvidia-smi's lines: "GPU 0: <name> (UUID:
# GPU-...)" for a GPU and, under it, "  MIG <profile> Device 0: (UUID:
# MIG-...)" for each of its MIG devices the container was given.

has_smi() {
    [[ -n $CONFORMANCE_SMI ]]
}

# container_smi NS POD CONTAINER: the container's `$CONFORMANCE_SMI -L`.
container_smi() {
    local out
    out=$(kc exec -n "$1" "$2" -c "$3" -- "$CONFORMANCE_SMI" -L 2>&1) || {
        fail "$CONFORMANCE_SMI -L in $1/$2 container $3 failed: $out"
        return 1
    }
    printf '%s\n' "$out"
}

# container_mig_devices NS POD CONTAINER: one line per MIG device the
# container lists, "GPU_UUID MIG_UUID PROFILE" (the GPU it is listed under).
container_mig_devices() {
    local out
    out=$(container_smi "$@") || return 1
    awk '/^GPU [0-9]+: .*\(UUID: [^)]*\)/ { match($0, /UUID: [^)]*/); gpu = substr($0, RSTART + 6, RLENGTH - 6); next }
        /^[[:space:]]+MIG [^ ]+ +Device +[0-9]+: \(UUID: [^)]*\)/ {
            match($0, /UUID: [^)]*/); print (gpu == "" ? "-" : gpu), substr($0, RSTART + 6, RLENGTH - 6), $2 }' <<<"$out"
}

# assert_container_has_mig NS POD CONTAINER GPU_UUID PROFILE [MIG_UUID]:
# the container lists exactly one MIG device, of PROFILE, under the GPU
# GPU_UUID (and with MIG_UUID when given); prints its MIG UUID.
assert_container_has_mig() {
    local migs n gpu uuid profile
    migs=$(container_mig_devices "$1" "$2" "$3") || return 1
    n=$(grep -c . <<<"$migs" || true)
    read -r gpu uuid profile <<<"$migs"
    if ((n != 1)) || [[ $gpu != "$4" || $profile != "$5" || $uuid != MIG-* || (-n ${6-} && $uuid != "$6") ]]; then
        fail "$CONFORMANCE_SMI -L in $1/$2 container $3 lists [${migs//$'\n'/; }]; want one MIG device $5${6:+ $6} under GPU $4"
        return 1
    fi
    printf '%s\n' "$uuid"
}
