#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A kubectl stand-in for scripts/conformance-job.sh in conformance-job.bats:
# a cluster with one Job whose pod has already run.  State and answers live
# in $FAKE_JOB_DIR:
#   calls         every call, one per line (written here)
#   applied.yaml  what `apply -f -` was given (written here)
#   ns-phase      the Job namespace's phase; absent: the namespace does not exist
#   pods.json     the answer to `get pods` (the Job's pod and its state)
#   job.json      the answer to `get job -o json` (its conditions)
#   pod.log       the pod's log
# Anything else fails, naming the call.
set -euo pipefail
d=${FAKE_JOB_DIR:?}
printf '%s\n' "$*" >>"$d/calls"
if [[ ${1:-} == --context ]]; then
    shift 2
fi
case "$1 ${2:-}" in
"apply -f")
    cat >"$d/applied.yaml"
    echo "namespace/fakehw-dra-conformance configured"
    ;;
"get namespace")
    [[ -f $d/ns-phase ]] || { echo "Error from server (NotFound): namespaces \"$3\" not found" >&2; exit 1; }
    cat "$d/ns-phase"
    ;;
"delete "*) ;;
"get job")
    if [[ $* == *jsonpath* ]]; then
        echo uid-1
    else
        cat "$d/job.json"
    fi
    ;;
"get pods")
    [[ $* == *"-l batch.kubernetes.io/controller-uid=uid-1"* ]] || { echo "unexpected selector: $*" >&2; exit 1; }
    cat "$d/pods.json"
    ;;
"logs "*) cat "$d/pod.log" ;;
*)
    echo "fake kubectl: unexpected call: kubectl $*" >&2
    exit 1
    ;;
esac
