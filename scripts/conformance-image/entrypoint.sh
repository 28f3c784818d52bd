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
set -uo pipefail

RESULTS_BEGIN='# fakehw-dra conformance results: base64 tar.gz begins'
RESULTS_END='# fakehw-dra conformance results: end'

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
