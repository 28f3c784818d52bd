#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shown commands are single-quoted on purpose: they run as shown.
# shellcheck disable=SC2016
#
# The README's tour, run for real on this machine with no cluster: fakehw
# with the tour's config, the API server and kubelet stand-ins of the node
# suite, the kubelet plugin, a claim allocated and prepared, a health flip
# seen as a slice taint and a claim condition, and a container (podman, as
# the node suite runs it) that lists its GPUs with fakegpu-smi.
#
#   scripts/demo.sh              the tour as a terminal transcript (make demo)
#   scripts/demo.sh --markdown   the same as the README's markdown (make readme-tour)
#
# Every command is shown as a user types it (from the repository's top
# directory, after `make`) and then run exactly so, in a new temp directory;
# everything started is stopped and unmounted at the end.  Needs root (FUSE,
# device nodes, podman); without a working podman the container step says
# why and is skipped.
#
# Environment: FAKEHW_BIN  the programs (default build/bin of this repository)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${FAKEHW_BIN:-$REPO/build/bin}
MARKDOWN=0
case ${1-} in
--markdown) MARKDOWN=1 ;;
"") ;;
*)
    sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p;}' "$0" >&2
    exit 2
    ;;
esac

for p in fakehw fakehw-kubelet-plugin fakegpu-smi apiserver-standin kubelet-standin; do
    [[ -x $BIN/$p ]] || {
        echo "demo: $BIN/$p is missing: run make first" >&2
        exit 1
    }
done
for tool in curl jq fusermount3; do
    command -v "$tool" >/dev/null || {
        echo "demo: $tool is not installed (make deps)" >&2
        exit 1
    }
done
((EUID == 0)) || {
    echo "demo: run as root (FUSE with allow_other, device nodes, podman)" >&2
    exit 1
}

# --- transcript ----------------------------------------------------------------

IN_CODE=0
code_open() {
    if ((MARKDOWN && !IN_CODE)); then
        printf '```\n'
    fi
    IN_CODE=1
}
code_close() {
    if ((MARKDOWN && IN_CODE)); then
        printf '```\n'
    fi
    IN_CODE=0
}

# say TEXT...: prose between the commands.
say() {
    code_close
    if ((MARKDOWN)); then
        printf '\n%s\n\n' "$*"
    else
        printf '\n%s\n' "$*" | fold -s -w 78 | sed 's/^/# /; s/ *$//'
    fi
}

# show CMD: prints "$ CMD", then runs CMD in this shell (so variables and
# background jobs stay), its stderr with its stdout.
show() {
    code_open
    printf '$ %s\n' "$1"
    eval "$1" 2>&1
}

# --- clean-up --------------------------------------------------------------------

WORK=''
PLUGIN_PID='' API_PID=''
cleanup() {
    local pid
    for pid in $PLUGIN_PID $API_PID; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $PLUGIN_PID $API_PID; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n $WORK ]]; then
        if mountpoint -q "$WORK/mnt" 2>/dev/null; then
            fusermount3 -u -z "$WORK/mnt" 2>/dev/null || umount -l "$WORK/mnt" 2>/dev/null || true
        fi
        cd / && rm -rf "$WORK"
    fi
}
trap cleanup EXIT

# until_true SECONDS CMD...: a bounded wait for what the shown loops wait for.
until_true() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || {
            echo "demo: timed out waiting for: $*" >&2
            return 1
        }
        sleep 0.05
    done
}

# claim_has_condition: the flip reached the claim's status too (the shown
# loop waits for the taint only).
claim_has_condition() {
    curl -s "$API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1" | grep -q XID79
}

# --- the tour --------------------------------------------------------------------

cd "$REPO"
# ls -x fills 80 columns when its output is no terminal.
export COLUMNS=80
say "Everything below runs on one machine as root, with no cluster, from the
repository's top directory after \`make\`: the programs are in \`build/bin\`
(\`make install\` copies the four user programs to \`/usr/local/bin\`). This
transcript is the real output of \`make demo\` (\`scripts/demo.sh\`), which runs
these same commands; \`make readme-tour\` regenerates it and \`make test\`
checks that it still matches."
code_open
printf '$ %s\n' 'export PATH=$PWD/build/bin:$PATH REPO=$PWD'
export PATH=$BIN:$PATH
show 'cd "$(mktemp -d)"'
WORK=$PWD

say "A config asks for GPUs by catalogue profile ([docs/fakehw.md](docs/fakehw.md)):"
show "cat >fakehw.yaml <<'EOF'
nodes:
  - name: worker-1
    devices:
      - count: 2
        profile: H100-SXM5-80GB
      - count: 2
        profile: L4
EOF"

say "fakehw serves them as a tree of small files (it returns once the tree is
mounted), with one null character device per GPU:"
show 'fakehw --config fakehw.yaml --mount mnt --dev-dir dev --node worker-1'
show 'ls -x mnt mnt/devices dev'
show 'head -4 mnt/snapshot     # every device in one file, one generation: what the plugin reads'
show 'cat mnt/devices/gpu-0/{productName,memory,uuid,health}'
show 'fakegpu-smi --root mnt -L'

say "The plugin publishes them. Here the API server is the node suite's
stand-in (\`apiserver-standin\`, in memory) and the kubelet's part is played by
\`kubelet-standin\`; in a cluster the DaemonSet does this
([docs/install.md](docs/install.md)). Path flags may be relative."
show 'apiserver-standin --node worker-1 --port-file api.port >api.log 2>&1 & API_PID=$!'
show 'until [ -s api.port ]; do sleep 0.1; done; API=http://127.0.0.1:$(cat api.port)'
show 'printf '\''apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "%s"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: s, context: {cluster: s, user: u}}]\ncurrent-context: s\n'\'' "$API" >kubeconfig'
show 'fakehw-kubelet-plugin --node-name worker-1 --kubeconfig kubeconfig --fakehw-root mnt \
    --kubelet-registrar-directory-path reg --kubelet-plugins-directory-path plugins \
    --cdi-root cdi --fakegpu-smi "$(command -v fakegpu-smi)" --ready-file ready >plugin.log 2>&1 & PLUGIN_PID=$!'
show 'kubelet-standin register --registry-dir reg'
show 'until [ -e ready ]; do sleep 0.1; done; cat ready'
show 'curl -s $API/apis/resource.k8s.io/v1/resourceslices | jq -c '\''.items[].spec.devices[] | [.name, .attributes.productName.string, .capacity.memory.value]'\'''

say "A claim for two GPUs, allocated as the scheduler would (its status is
written directly here: the stand-in has no scheduler):"
show 'curl -s -X POST -H "Content-Type: application/json" $API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims \
    -d '\''{"metadata": {"name": "c1"}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.fakehw.example.com", "count": 2}}]}}}'\'' |
    jq -r .metadata.uid | tee c1.uid'
show 'curl -s -X PATCH -H "Content-Type: application/merge-patch+json" $API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1/status \
    -d '\''{"status": {"allocation": {"devices": {"results": [
      {"request": "gpu", "driver": "gpu.fakehw.example.com", "pool": "worker-1", "device": "gpu-1"},
      {"request": "gpu", "driver": "gpu.fakehw.example.com", "pool": "worker-1", "device": "gpu-2"}]}}}}'\'' |
    jq -c .status.allocation.devices.results[].device'

say "The kubelet's prepare call writes a CDI spec for the claim and answers with
its CDI device ids ([docs/prepare.md](docs/prepare.md)):"
show 'kubelet-standin prepare --endpoint plugins/gpu.fakehw.example.com/dra.sock default/c1/$(cat c1.uid) | tee prepare.out'
show 'ls cdi'

say "A health flip reaches the API within a fraction of a second, as a slice
taint and a condition in the claim's device status:"
show 'fakehw flip --mount mnt gpu-2 unhealthy --reason "XID 79: GPU has fallen off the bus"'
show 'until curl -s $API/apis/resource.k8s.io/v1/resourceslices | grep -q taints; do sleep 0.05; done'
until_true 10 claim_has_condition
show 'curl -s $API/apis/resource.k8s.io/v1/resourceslices | jq -c '\''.items[].spec.devices[] | select(.taints) | {name, taints}'\'''
show 'curl -s $API/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1 | jq -c '\''.status.devices[] | {device, conditions: [.conditions[] | {type, status, reason, message}]}'\'''

say "A container given the claim's CDI devices sees exactly its two GPUs. The
runtime here is podman with the node suite's harness
(\`conformance/node/lib/runtime.bash\`: a busybox image, the spec directory
\`cdi\` bind-mounted where podman reads specs); in a cluster containerd or
CRI-O do the same from the kubelet's answer:"
# shellcheck source=conformance/node/lib/runtime.bash
source "$REPO/conformance/node/lib/runtime.bash"
if reason=$(runtime_unavailable_reason); then
    code_close
    say "(Skipped on this machine: no container runtime: $reason.)"
else
    show 'source $REPO/conformance/node/lib/runtime.bash'
    show 'run_with_cdi cdi $(sed -n '\''s/.* cdi=//p'\'' prepare.out | tr , " ") -- fakegpu-smi --query-gpu=index,name,uuid,health --format=csv'
fi

say "Unprepare answers once the checkpoint records it; the claim's CDI spec and
its device metadata (the metadata spec and directory) go some 50 ms after;
stopping the plugin and unmounting the tree ends the tour:"
show 'kubelet-standin unprepare --endpoint plugins/gpu.fakehw.example.com/dra.sock default/c1/$(cat c1.uid)'
show 'until [ -z "$(ls cdi)" ]; do sleep 0.01; done; ls cdi'
show 'kill $PLUGIN_PID $API_PID; wait; fusermount3 -u mnt'
wait "$PLUGIN_PID" 2>/dev/null || true
wait "$API_PID" 2>/dev/null || true
PLUGIN_PID='' API_PID=''
code_close
