#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Entrypoint of the fakehw-dra/conformance image: runs the cluster suite
# (conformance/cluster/run.sh) against the cluster of KUBECONFIG, or, in a
# pod without one, of the pod's ServiceAccount (kubectl's in-cluster config).
#
#   conformance-entrypoint              the suite; exits with run.sh's status
#   conformance-entrypoint CMD [ARG]    runs CMD instead (kubectl, bash, ...)
#
# The parameters are run.sh's environment variables (docs/conformance.md);
# the reports go to CONFORMANCE_REPORT_DIR (the image's default: /results).
#   CONFORMANCE_RESULTS_TO_LOG  true: after the run, print the report
#                               directory as a base64 tar.gz between two
#                               marker lines, the way the Job hands the
#                               reports back (scripts/conformance-job.sh)
#   CONFORMANCE_KIT_SUITE       the suite (default /opt/fakehw-dra/conformance/cluster)
#
# In a pod with no kubeconfig it writes one for the pod's ServiceAccount
# (server, CA and token file of the in-cluster config): kubectl falls back
# to the in-cluster config only when no flag changes its settings, and the
# suite calls it with --request-timeout, which makes it dial localhost:8080.
set -uo pipefail

RESULTS_BEGIN='# fakehw-dra conformance results: base64 tar.gz begins'
RESULTS_END='# fakehw-dra conformance results: end'

SA_DIR=${CONFORMANCE_KIT_SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}

# in_cluster_kubeconfig FILE: a kubeconfig for the pod's ServiceAccount.
in_cluster_kubeconfig() {
    local host=$KUBERNETES_SERVICE_HOST ns
    [[ $host != *:* ]] || host="[$host]"
    ns=$(cat "$SA_DIR/namespace" 2>/dev/null || echo default)
    cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: in-cluster
    cluster:
      server: https://$host:${KUBERNETES_SERVICE_PORT:-443}
      certificate-authority: $SA_DIR/ca.crt
users:
  - name: service-account
    user:
      tokenFile: $SA_DIR/token
contexts:
  - name: in-cluster
    context:
      cluster: in-cluster
      user: service-account
      namespace: $ns
current-context: in-cluster
KUBECONFIG
}

if [[ -z ${KUBECONFIG:-} && ! -f ${HOME:-/nonexistent}/.kube/config && -n ${KUBERNETES_SERVICE_HOST:-} &&
    -f $SA_DIR/token ]]; then
    kubeconfig=${TMPDIR:-/tmp}/in-cluster.kubeconfig
    if in_cluster_kubeconfig "$kubeconfig"; then
        export KUBECONFIG=$kubeconfig
        printf '# in-cluster: kubeconfig %s for the ServiceAccount of this pod\n' "$kubeconfig"
    fi
fi

if (($# > 0)); then
    exec "$@"
fi

suite=${CONFORMANCE_KIT_SUITE:-/opt/fakehw-dra/conformance/cluster}
export CONFORMANCE_REPORT_DIR=${CONFORMANCE_REPORT_DIR:-/results}
[[ -x $suite/run.sh ]] || {
    printf 'conformance-entrypoint: no suite at %s (CONFORMANCE_KIT_SUITE)\n' "$suite" >&2
    exit 2
}
to_log=${CONFORMANCE_RESULTS_TO_LOG:-false}
case $to_log in
true | false) ;;
*)
    printf 'conformance-entrypoint: CONFORMANCE_RESULTS_TO_LOG=%s: expected true or false\n' \
        "$to_log" >&2
    exit 2
    ;;
esac

"$suite/run.sh"
rc=$?

if [[ $to_log == true ]]; then
    # After everything run.sh printed: nothing else writes to the log now.
    printf '%s\n' "$RESULTS_BEGIN"
    tar -C "$CONFORMANCE_REPORT_DIR" -cz . | base64
    printf '%s exit=%s\n' "$RESULTS_END" "$rc"
fi
exit "$rc"
