#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cluster suite on every supported Kubernetes minor in turn, each on a
# fresh kind cluster, and the scenario x version matrix written into
# docs/compatibility.md (scripts/matrix_table.py). What CI for a cluster
# upgrade runs.
#
#   MATRIX_VERSIONS   the versions, in order (default: the release each
#                     kind/cluster-<minor>.yaml pins, kind's image or, for
#                     1.38, the make node-image build it names)
#   NODE_IMAGE_REPO   use <repo>:<version> node images (make node-image
#                     builds fakehw-dra/kind-node:<version>); default: the
#                     configs' images
#   MATRIX_DIR        reports: <dir>/<version>/cluster.tap, timings.tsv
#                     (default conformance/reports/matrix)
#   MATRIX_DOC        the document to update (default docs/compatibility.md;
#                     empty: print the table only)
#   JOBS              parallel scenarios per run (default 2)
#   CONFORMANCE_IMAGE the suite's test image; when the local engine has it,
#                     it is loaded into each cluster (no registry needed;
#                     scripts/node-image/busybox-image.sh builds one)
# Every other variable of kind-up and the suite passes through. A failing
# scenario does not stop the matrix; the exit status is 1 if any failed.
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ -z ${MATRIX_VERSIONS:-} ]]; then
    MATRIX_VERSIONS=$(sed -n 's/^[[:space:]]*image:[[:space:]]*\(kindest\|fakehw-dra\)\/\(kind-\)\{0,1\}node:\(v[0-9.]*\(-[a-z]*\.[0-9]*\)\{0,1\}\)\(@.*\)\{0,1\}$/\3/p' \
        "$REPO_ROOT"/kind/cluster-*.yaml | sort -u -V | tr '\n' ' ')
fi
read -r -a versions <<<"$MATRIX_VERSIONS"
((${#versions[@]} > 0)) || die "no versions: set MATRIX_VERSIONS"
dir=${MATRIX_DIR:-$REPO_ROOT/conformance/reports/matrix}
doc=${MATRIX_DOC-$REPO_ROOT/docs/compatibility.md}
jobs=${JOBS:-2}
mkdir -p "$dir"
printf 'version\tkind_up_seconds\tsuite_seconds\tjobs\tsuite_status\n' >"$dir/timings.tsv"

tables=() failed=0
for v in "${versions[@]}"; do
    image_env=()
    [[ -n ${NODE_IMAGE_REPO:-} ]] && image_env=(KIND_NODE_IMAGE="$NODE_IMAGE_REPO:$v")
    log "=== $v: fresh cluster"
    "$REPO_ROOT/scripts/kind-down.sh" >&2 || die "kind-down before $v failed"
    start=$SECONDS
    env "${image_env[@]}" K8S_VERSION="$v" "$REPO_ROOT/scripts/kind-up.sh" >&2 ||
        die "kind-up $v failed; the cluster is left for a look (make kind-down removes it)"
    up=$((SECONDS - start))
    if [[ -n ${CONFORMANCE_IMAGE:-} ]] && docker image inspect "$CONFORMANCE_IMAGE" >/dev/null 2>&1; then
        kind load docker-image "$CONFORMANCE_IMAGE" --name "${KIND_CLUSTER_NAME:-fakehw-dra}" >&2 ||
            die "kind load docker-image $CONFORMANCE_IMAGE failed"
    fi
    log "=== $v: suite (JOBS=$jobs)"
    mkdir -p "$dir/$v"
    start=$SECONDS
    status=0
    CONFORMANCE_JOBS=$jobs CONFORMANCE_REPORT_DIR=$dir/$v "$REPO_ROOT/conformance/cluster/run.sh" \
        >"$dir/$v/run.log" 2>&1 || status=$?
    suite=$((SECONDS - start))
    ((status == 0)) || failed=1
    printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$up" "$suite" "$jobs" "$status" >>"$dir/timings.tsv"
    log "=== $v: kind-up ${up}s, suite ${suite}s, exit $status ($(grep -c '^ok' "$dir/$v/cluster.tap" || true) ok of $(sed -n 's/^1\.\.//p' "$dir/$v/cluster.tap"))"
    tables+=("$v=$dir/$v/cluster.tap")
done
"$REPO_ROOT/scripts/kind-down.sh" >&2 || true

if [[ -n $doc ]]; then
    python3 "$REPO_ROOT/scripts/matrix_table.py" --doc "$doc" "${tables[@]}" ||
        die "writing the matrix into $doc failed"
    log "matrix written into ${doc#"$REPO_ROOT"/}; reports and timings.tsv in $dir"
else
    python3 "$REPO_ROOT/scripts/matrix_table.py" "${tables[@]}"
fi
exit "$failed"
