#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the cluster conformance suite as a Job in the cluster of the current
# kubeconfig (make conformance-job): the fakehw-dra/conformance image (make
# conformance-image) in a namespace of its own, as a ServiceAccount with the
# suite's permissions (manifests/conformance-job).  It follows the Job's log,
# takes the reports out of it (the image prints them as a base64 tar.gz after
# the run), writes them into CONFORMANCE_REPORT_DIR, prints the summary and
# removes what it created.
#
#   conformance-job.sh [run]   the above; exits 1 when the verdict is failed,
#                              2 when no report came back, else 0
#   conformance-job.sh render  prints the manifests that run applies
#   conformance-job.sh delete  removes the namespace, ClusterRole and binding
#
#   CONFORMANCE_KIT_IMAGE          the image (default fakehw-dra/conformance:dev);
#                                  the nodes must have it or be able to pull it
#   CONFORMANCE_JOB_NAMESPACE      the Job's namespace (default fakehw-dra-conformance),
#                                  also the name of its ClusterRole and binding
#   CONFORMANCE_JOB_KIND_CLUSTER   kind cluster to load the image into first
#                                  (kind load docker-image); empty: do not load
#   CONFORMANCE_JOB_TIMEOUT        seconds the run may take (default 7200), the
#                                  Job's activeDeadlineSeconds
#   CONFORMANCE_JOB_START_TIMEOUT  seconds for the pod to start (default 300)
#   CONFORMANCE_JOB_KEEP           true: leave the namespace, Job and RBAC in place
#   CONFORMANCE_REPORT_DIR         where the reports go here (default conformance/reports),
#                                  with the pod's log as job.log
#   CONFORMANCE_JUNIT              the JUnit file here (default <report dir>/cluster-junit.xml)
#   CONFORMANCE_KUBECTL, CONFORMANCE_KUBE_CONTEXT
#                                  the kubectl and context this script uses
# Every other CONFORMANCE_* variable is a parameter of the suite
# (docs/conformance.md) and is passed to the Job as it is.
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RESULTS_BEGIN='# fakehw-dra conformance results: base64 tar.gz begins'
RESULTS_END='# fakehw-dra conformance results: end'
DEFAULT_NAME=fakehw-dra-conformance
JOB=conformance
CONTAINER=conformance
MANIFESTS=$REPO_ROOT/manifests/conformance-job

# Variables that belong to this side (paths, the local kubectl, the job's own
# settings) and are not passed to the Job.
LOCAL_ONLY=(CONFORMANCE_REPORT_DIR CONFORMANCE_JUNIT CONFORMANCE_KUBECTL CONFORMANCE_KUBE_CONTEXT
    CONFORMANCE_DRY_RUN CONFORMANCE_KIT_IMAGE CONFORMANCE_BASE_IMAGE CONFORMANCE_RESULTS_TO_LOG
    CONFORMANCE_KIT_SUITE CONFORMANCE_KIT_SA_DIR CONFORMANCE_TEMPLATES CONFORMANCE_LOCK_FILE)

image=${CONFORMANCE_KIT_IMAGE:-fakehw-dra/conformance:dev}
namespace=${CONFORMANCE_JOB_NAMESPACE:-$DEFAULT_NAME}
timeout=${CONFORMANCE_JOB_TIMEOUT:-7200}
start_timeout=${CONFORMANCE_JOB_START_TIMEOUT:-300}
keep=${CONFORMANCE_JOB_KEEP:-false}
report_dir=${CONFORMANCE_REPORT_DIR:-$REPO_ROOT/conformance/reports}
kind_cluster=${CONFORMANCE_JOB_KIND_CLUSTER:-}

[[ $namespace =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ && ${#namespace} -le 63 ]] ||
    die "CONFORMANCE_JOB_NAMESPACE=$namespace is not a namespace name (lower-case letters, digits, '-', at most 63)"
[[ -n $image && $image != *[[:space:]]* ]] || die "CONFORMANCE_KIT_IMAGE=\"$image\" is not an image reference"
for v in timeout start_timeout; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "CONFORMANCE_JOB_${v^^}=${!v} is not a positive whole number of seconds"
done
[[ $keep == true || $keep == false ]] || die "CONFORMANCE_JOB_KEEP=$keep: expected true or false"

kube=("${CONFORMANCE_KUBECTL:-kubectl}")
[[ -n ${CONFORMANCE_KUBE_CONTEXT:-} ]] && kube+=(--context "$CONFORMANCE_KUBE_CONTEXT")
k() {
    "${kube[@]}" "$@"
}

# The names of the suite's parameters in this environment, sorted.
job_parameters() {
    local name skip
    while IFS= read -r name; do
        [[ $name == CONFORMANCE_JOB_* ]] && continue
        for skip in "${LOCAL_ONLY[@]}"; do
            [[ $name == "$skip" ]] && continue 2
        done
        printf '%s\n' "$name"
    done < <(compgen -e CONFORMANCE_ | LC_ALL=C sort)
}

# The env entries of the parameters, as YAML under the container's env.
env_entries() {
    local name names
    names=$(job_parameters)
    for name in $names; do
        [[ $name =~ ^CONFORMANCE_[A-Z0-9_]+$ ]] || die "$name: not a parameter name"
        [[ ${!name} != *$'\n'* ]] || die "$name holds a newline; a parameter is one line"
        printf '            - name: %s\n              value: %s\n' "$name" "$(jq -Rn --arg v "${!name}" '$v')"
    done
}

# The manifests run applies: job.yaml, then rbac.yaml, with the namespace
# and the cluster-scoped names, the image, the deadline and the parameters.
render() {
    local env marker='            # conformance-job.sh: the suite'"'"'s parameters go after this line.'
    env=$(env_entries)
    grep -qxF "$marker" "$MANIFESTS/job.yaml" || die "$MANIFESTS/job.yaml lost its env marker line"
    {
        cat "$MANIFESTS/job.yaml"
        echo "---"
        cat "$MANIFESTS/rbac.yaml"
    } | while IFS= read -r line; do
        if [[ $line =~ ^(\ *)(name|namespace):\ $DEFAULT_NAME$ ]]; then
            line="${BASH_REMATCH[1]}${BASH_REMATCH[2]}: $namespace"
        elif [[ $line =~ ^(\ *)image:\ fakehw-dra/conformance:dev$ ]]; then
            line="${BASH_REMATCH[1]}image: $image"
        elif [[ $line =~ ^(\ *)activeDeadlineSeconds:\ [0-9]+$ ]]; then
            line="${BASH_REMATCH[1]}activeDeadlineSeconds: $timeout"
        fi
        printf '%s\n' "$line"
        [[ $line != "$marker" || -z $env ]] || printf '%s\n' "$env"
    done
}

delete_all() {
    k delete namespace "$namespace" --ignore-not-found --wait=false >/dev/null || true
    k delete clusterrolebinding "$namespace" --ignore-not-found >/dev/null || true
    k delete clusterrole "$namespace" --ignore-not-found >/dev/null || true
}

namespace_phase() {
    k get namespace "$namespace" -o jsonpath='{.status.phase}' 2>/dev/null || true
}

namespace_not_terminating() {
    [[ $(namespace_phase) != Terminating ]]
}

# pod_state UID: "<pod> <state> [<reason>: <message>]" of the Job's pod:
# state none (no pod yet), Pending, Waiting, Running or Terminated.
pod_state() {
    k get pods -n "$namespace" -l "batch.kubernetes.io/controller-uid=$1" -o json | jq -r '
        [.items[] | select(.metadata.deletionTimestamp == null)] | sort_by(.metadata.creationTimestamp) | last
        | if . == null then "- none"
          else .metadata.name + " " + (
            (.status.containerStatuses // [])[0].state as $s
            | if $s == null then "Pending " + ([.status.conditions[]? | select(.status == "False") | .message // .reason // empty] | join("; "))
              elif $s.running then "Running"
              elif $s.terminated then "Terminated " + ($s.terminated.exitCode | tostring)
              else "Waiting " + ($s.waiting.reason // "") + (if ($s.waiting.message // "") == "" then "" else ": " + $s.waiting.message end)
              end)
          end'
}

# job_outcome: Complete, Failed <reason> or nothing while the Job runs.
job_outcome() {
    k get job "$JOB" -n "$namespace" -o json | jq -r '
        [.status.conditions[]? | select(.status == "True" and (.type == "Complete" or .type == "Failed"))][0]
        | if . == null then "" elif .type == "Complete" then "Complete" else "Failed " + (.reason // "") end'
}

# show_log: the log on stdout without the results block.
show_log() {
    awk -v b="$RESULTS_BEGIN" -v e="$RESULTS_END" '
        index($0, e) == 1 { inside = 0; next }
        $0 == b { inside = 1; next }
        !inside { print; fflush() }'
}

# extract_results LOG DIR: the report files of the results block into DIR.
extract_results() {
    grep -q "^$RESULTS_END" "$1" || return 1
    awk -v b="$RESULTS_BEGIN" -v e="$RESULTS_END" 'index($0, e) == 1 { exit } inside { print } $0 == b { inside = 1 }' "$1" |
        base64 -d | tar -xz -C "$2"
}

image_hint() {
    if [[ -n $kind_cluster ]]; then
        echo "kind load docker-image $image --name $kind_cluster failed to help?"
    else
        echo "load it into the nodes (CONFORMANCE_JOB_KIND_CLUSTER=<kind cluster>, or kind load docker-image $image) or push it where they pull from"
    fi
}

interrupted() {
    trap - INT TERM
    log "interrupted"
    if [[ $keep == false ]]; then
        log "deleting namespace $namespace; test namespaces of the run may be left: kubectl delete namespace -l app.kubernetes.io/part-of=fakehw-dra-conformance"
        delete_all
    fi
    exit 130
}

run() {
    require_tools "${kube[0]}" jq base64 tar
    if [[ -n $kind_cluster ]]; then
        require_tools kind
        log "loading $image into the nodes of kind cluster $kind_cluster"
        kind load docker-image "$image" --name "$kind_cluster" >&2 || die "kind load docker-image $image --name $kind_cluster failed"
    fi
    local manifests
    manifests=$(render)

    # A namespace left by an earlier run may still be going away.
    if [[ $(namespace_phase) == Terminating ]]; then
        wait_until "namespace $namespace of an earlier run to be deleted" 300 namespace_not_terminating ||
            die "namespace $namespace is still terminating"
    fi
    # The Job's pod template cannot change in place; an earlier Job goes first.
    k delete job "$JOB" -n "$namespace" --ignore-not-found --cascade=foreground --wait=true >/dev/null 2>&1 || true
    trap interrupted INT TERM
    log "applying the Job in namespace $namespace (image $image)"
    k apply -f - <<<"$manifests" >&2 || die "kubectl apply of the Job's manifests failed (see above)"
    local uid
    uid=$(k get job "$JOB" -n "$namespace" -o jsonpath='{.metadata.uid}') || uid=''
    [[ -n $uid ]] || die "the Job $namespace/$JOB is not there after apply"

    # The pod: started, or a clear reason why not.
    local state pod='' deadline=$((SECONDS + start_timeout)) last=''
    log "waiting up to ${start_timeout}s for the Job's pod to start"
    while :; do
        state=$(pod_state "$uid") || state='- none'
        pod=${state%% *}
        state=${state#* }
        case $state in
        Running | Terminated*) break ;;
        "Waiting ErrImagePull"* | "Waiting ImagePullBackOff"* | "Waiting ErrImageNeverPull"* | "Waiting InvalidImageName"*)
            die "pod $namespace/$pod cannot get image $image (${state#Waiting }): $(image_hint)"
            ;;
        "Waiting CreateContainerConfigError"* | "Waiting CreateContainerError"*)
            die "pod $namespace/$pod cannot start: ${state#Waiting }"
            ;;
        esac
        [[ $state == "$last" ]] || { log "  pod ${pod/#-/(none yet)}: $state"; last=$state; }
        ((SECONDS < deadline)) || die "the Job's pod did not start within ${start_timeout}s: ${pod/#-/no pod} $state"
        sleep 2
    done

    # The log as it comes; again, whole, once the Job has ended.
    local log_file shown=0 outcome=''
    mkdir -p "$report_dir" || die "cannot create $report_dir"
    log_file=$(mktemp "${TMPDIR:-/tmp}/conformance-job.XXXXXX")
    # shellcheck disable=SC2064 # the file's name now
    trap "rm -f '$log_file'" EXIT
    log "following pod $namespace/$pod"
    k logs -f -n "$namespace" "$pod" -c "$CONTAINER" 2>/dev/null | tee "$log_file" | show_log || true
    shown=$(show_log <"$log_file" | wc -l)
    deadline=$((SECONDS + timeout + 60))
    while :; do
        outcome=$(job_outcome 2>/dev/null) || outcome=''
        [[ -z $outcome ]] || break
        ((SECONDS < deadline)) || die "the Job did not end within CONFORMANCE_JOB_TIMEOUT=${timeout}s"
        sleep 2
    done
    if k logs -n "$namespace" "$pod" -c "$CONTAINER" >"$log_file.full" 2>/dev/null && [[ -s $log_file.full ]]; then
        mv "$log_file.full" "$log_file"
        # What the followed stream missed, if it broke off.
        show_log <"$log_file" | tail -n "+$((shown + 1))"
    fi
    rm -f "$log_file.full"
    local final
    final=$(pod_state "$uid" 2>/dev/null) || final=''
    final=${final#* }
    log "Job $namespace/$JOB: $outcome${final:+ (pod: $final)}"

    local f
    for f in cluster.tap cluster-junit.xml cluster-report.json summary.md job.log; do
        rm -f "${report_dir:?}/$f"
    done
    show_log <"$log_file" >"$report_dir/job.log"
    local got=0
    extract_results "$log_file" "$report_dir" && got=1
    if [[ $keep == false ]]; then
        log "deleting namespace $namespace and the Job's ClusterRole and binding"
        delete_all
    else
        log "kept namespace $namespace (CONFORMANCE_JOB_KEEP=true); remove it with: $0 delete"
    fi
    trap - INT TERM
    if ((!got)) || [[ ! -s $report_dir/cluster-report.json ]]; then
        log "no report came back from the Job ($outcome${final:+, pod $final}); its log is in $report_dir/job.log"
        log "a pod killed mid-run (its node restarted, evicted) leaves test namespaces: kubectl delete namespace -l app.kubernetes.io/part-of=fakehw-dra-conformance"
        return 2
    fi
    if [[ -n ${CONFORMANCE_JUNIT:-} && $CONFORMANCE_JUNIT != "$report_dir/cluster-junit.xml" ]]; then
        mkdir -p "$(dirname "$CONFORMANCE_JUNIT")"
        cp "$report_dir/cluster-junit.xml" "$CONFORMANCE_JUNIT"
    fi
    echo
    cat "$report_dir/summary.md"
    echo
    log "reports in $report_dir: cluster.tap cluster-junit.xml cluster-report.json summary.md job.log"
    local verdict
    verdict=$(jq -r '.verdict // "unknown"' "$report_dir/cluster-report.json")
    log "verdict: $verdict"
    [[ $verdict != failed ]] || return 1
}

case ${1:-run} in
run) run ;;
render)
    require_tools jq
    render
    ;;
delete)
    delete_all
    log "deleted namespace $namespace (in the background), ClusterRole and ClusterRoleBinding $namespace"
    ;;
*) die "usage: $0 [run|render|delete]" ;;
esac
